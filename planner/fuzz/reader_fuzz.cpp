// libFuzzer target for the model reader and everything that runs on what it returns
// (lifetimes, scratch prediction, both planners, the checker). Any input must end in a
// ModelError or a valid plan: a crash, a sanitizer report or an invalid plan is a bug.
//   Built and run for a bounded time by tests/integration/test_planner_fuzz.py; by hand:
//   clang++ -std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -Iplanner/include -I<gen> \
//     planner/fuzz/reader_fuzz.cpp planner/src/*.cpp -o reader_fuzz && ./reader_fuzz -max_total_time=3600 CORPUS/
#include <cstdlib>

#include "arenascope/planner/kernels.h"
#include "arenascope/planner/plan.h"
#include "arenascope/planner/tail.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace arenascope::planner;
  try {
    const Model model = read_model(data, size);
    const ScratchPrediction scratch = predict_scratch(model);
    const Lifetimes lifetimes = build_lifetimes(model, scratch.requests);
    for (const char* abi : {"cortex-m", "host"})
      for (const TailPart& part : known_tail(model, lifetimes, scratch.requests.size(), abi_named(abi)))
        if (part.bytes < 0) std::abort();
    if (lifetimes.buffers.size() > 2000) return 0;  // the checker is quadratic; keep runs fast
    const Plan greedy = plan_tflm_greedy(lifetimes.buffers);
    const Plan best = plan_best(lifetimes.buffers);
    if (!check_plan(lifetimes.buffers, greedy).empty() || !check_plan(lifetimes.buffers, best).empty() ||
        best.head > greedy.head || best.head < lower_bound(lifetimes.buffers).bytes)
      std::abort();
  } catch (const ModelError&) {
  }
  return 0;
}
