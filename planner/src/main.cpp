// arenascope-plan: the arena budget of a .tflite model before flashing.
//   arenascope-plan MODEL.tflite          budget table
//   arenascope-plan --json MODEL.tflite   the same as JSON (what the GDB plugin reads)
// Exit status: 0 ok, 1 the model cannot be read or planned, 2 bad usage.
#include <cstdio>
#include <cstring>
#include <iostream>

#include "arenascope/planner/report.h"

namespace {
void usage(FILE* to) {
  std::fprintf(to,
               "usage: arenascope-plan [--json] MODEL.tflite\n"
               "  Reads a TensorFlow Lite model and prints its tensors' lifetimes, TFLM's greedy memory\n"
               "  plan (the arena head TFLM will use), a better plan and the lower bound.\n"
               "  --json   print the budget as JSON (schema \"arenascope-plan/1\", docs/arena-budget.md)\n");
}
}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  const char* path = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--json")) json = true;
    else if (!std::strcmp(argv[i], "-h") || !std::strcmp(argv[i], "--help")) { usage(stdout); return 0; }
    else if (argv[i][0] == '-' && argv[i][1]) { std::fprintf(stderr, "arenascope-plan: unknown option '%s'\n", argv[i]); usage(stderr); return 2; }
    else if (path) { std::fprintf(stderr, "arenascope-plan: one model at a time ('%s' and '%s')\n", path, argv[i]); return 2; }
    else path = argv[i];
  }
  if (!path) { usage(stderr); return 2; }
  try {
    const auto budget = arenascope::planner::make_budget(path);
    if (json) std::cout << arenascope::planner::budget_json(budget).dump(1) << "\n";
    else std::cout << arenascope::planner::budget_table(budget);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "arenascope-plan: %s\n", e.what());
    return 1;
  }
  return 0;
}
