// arenascope-plan: the arena budget of a .tflite model before flashing.
//   arenascope-plan MODEL.tflite          budget table
//   arenascope-plan --json MODEL.tflite   the same as JSON (what the GDB plugin reads)
// Exit status: 0 ok; 1 the model cannot be read or planned, or TFLM would reject it (the
// budget is still printed then); 2 bad usage.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "arenascope/planner/report.h"

namespace {
using arenascope::planner::printable;

void usage(FILE* to) {
  std::fprintf(to,
               "usage: arenascope-plan [--json | --header] [--snapshot FILE] [--target cortex-m|host] [--adapter]\n"
               "                       [--margin PCT] MODEL.tflite\n"
               "  Reads a TensorFlow Lite model and prints its tensors' lifetimes, TFLM's greedy memory\n"
               "  plan (the non-persistent head of the arena, byte for byte), a better plan and the lower\n"
               "  bound, then replays TFLM's allocations to predict the whole arena AllocateTensors needs.\n"
               "  --json   print the budget as JSON (schema \"arenascope-plan/1\", docs/arena-budget.md)\n"
               "  --header print a C header for firmware: the head plan as arenascope_region_t entries\n"
               "  --snapshot FILE  also write the predicted arena as an arenascope snapshot (the viewer's\n"
               "           input, docs/snapshot-schema.md): arenascope-viewer FILE shows it with no target\n"
               "  --target the ABI of the tail's structs: cortex-m (32-bit, the default) or host (x86-64)\n"
               "  --adapter  the firmware uses arenascope's TFLM adapter (its planner lives outside the arena)\n"
               "  --margin percent added to the minimum arena for the recommended size (default 10, 0..100)\n"
               "exit status: 0 ok; 1 unreadable model, one TFLM would reject, or output that cannot be written;\n"
               "2 bad usage\n");
}
}  // namespace

int main(int argc, char** argv) {
  bool json = false, header = false, options_done = false;
  std::string target = "cortex-m";
  int margin = 10;
  bool adapter = false;
  const char* snapshot = nullptr;
  const char* path = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (!options_done && !std::strcmp(argv[i], "--")) options_done = true;
    else if (options_done) { if (path) { std::fprintf(stderr, "arenascope-plan: one model at a time\n"); return 2; } path = argv[i]; }
    else if (!std::strcmp(argv[i], "--json")) json = true;
    else if (!std::strcmp(argv[i], "--header")) header = true;
    else if (!std::strcmp(argv[i], "--target")) {
      if (i + 1 >= argc) { std::fprintf(stderr, "arenascope-plan: --target needs cortex-m or host\n"); return 2; }
      target = argv[++i];
      if (target != "cortex-m" && target != "host") {
        std::fprintf(stderr, "arenascope-plan: unknown target '%s': use cortex-m or host\n", target.c_str());
        return 2;
      }
    }
    else if (!std::strcmp(argv[i], "--adapter")) adapter = true;
    else if (!std::strcmp(argv[i], "--snapshot")) {
      if (i + 1 >= argc || !argv[i + 1][0]) { std::fprintf(stderr, "arenascope-plan: --snapshot needs a file name\n"); return 2; }
      snapshot = argv[++i];
    }
    else if (!std::strcmp(argv[i], "--margin")) {
      char* end = nullptr;
      const long v = i + 1 < argc ? std::strtol(argv[i + 1], &end, 10) : -1;
      if (i + 1 >= argc || !end || *end || end == argv[i + 1] || v < 0 || v > 100) {
        std::fprintf(stderr, "arenascope-plan: --margin needs a percentage from 0 to 100\n");
        return 2;
      }
      margin = static_cast<int>(v);
      ++i;
    }
    else if (!std::strcmp(argv[i], "-h") || !std::strcmp(argv[i], "--help")) { usage(stdout); return 0; }
    else if (argv[i][0] == '-' && argv[i][1]) { std::fprintf(stderr, "arenascope-plan: unknown option '%s'\n", argv[i]); usage(stderr); return 2; }
    else if (path) { std::fprintf(stderr, "arenascope-plan: one model at a time ('%s' and '%s')\n", path, argv[i]); return 2; }
    else path = argv[i];
  }
  if (!path) { std::fprintf(stderr, "arenascope-plan: no model given\n"); usage(stderr); return 2; }
  try {
    const auto budget = arenascope::planner::make_budget(path, arenascope::planner::abi_named(target), margin, adapter);
    // Names come from the model and need not be UTF-8: replace bad bytes rather than fail.
    if (json && header) { std::fprintf(stderr, "arenascope-plan: --json or --header, not both\n"); return 2; }
    if (snapshot) {
      // Never write over the model itself (the two paths swapped, or a link to it).
      std::error_code same_error;
      if (std::filesystem::equivalent(snapshot, path, same_error)) {
        std::fprintf(stderr, "arenascope-plan: --snapshot %s is the model file itself: give another file name\n",
                     printable(snapshot, false).c_str());
        return 2;
      }
      std::ofstream out(snapshot);
      out << arenascope::planner::budget_snapshot(budget).dump(1, ' ', false, nlohmann::json::error_handler_t::replace)
          << "\n";
      if (!out.flush()) {
        std::fprintf(stderr, "arenascope-plan: cannot write the snapshot to %s: %s\n", printable(snapshot, false).c_str(),
                     std::strerror(errno));
        return 1;
      }
    }
    if (header) std::cout << arenascope::planner::budget_header(budget);
    else if (json) std::cout << arenascope::planner::budget_json(budget).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    else std::cout << printable(arenascope::planner::budget_table(budget), true);
    if (!std::cout.flush()) {  // a full disk under `> plan.h` must not pass for a header
      std::fprintf(stderr, "arenascope-plan: cannot write the output: %s\n", std::strerror(errno));
      return 1;
    }
    if (!budget.kernels.rejected.empty()) {
      std::fprintf(stderr, "arenascope-plan: %s: TFLM would reject this model (%s)\n", printable(path, false).c_str(),
                   printable(budget.kernels.rejected.front(), false).c_str());
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "arenascope-plan: %s\n", printable(e.what(), false).c_str());
    return 1;
  }
  return 0;
}
