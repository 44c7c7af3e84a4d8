// libFuzzer target for the model reader and everything that runs on what it returns
// (lifetimes, kernel prediction, both planners, the checker, the arena replay). Any input must end in a
// ModelError or a valid plan: a crash, a sanitizer report or an invalid plan is a bug.
//   Built by planner/fuzz/CMakeLists.txt, run for a bounded time by tests/integration/
// test_planner_fuzz.py (ctest planner_fuzz); by hand: tools/fuzz.sh reader SECONDS (docs/fuzzing.md).
#include <cstdlib>

#include "arenascope/planner/arena.h"
#include "arenascope/planner/kernels.h"
#include "arenascope/planner/plan.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    using namespace arenascope::planner;
    try {
        const Model model = read_model(data, size);
        const KernelPrediction kernels = predict_kernels(model, abi_named("cortex-m"));
        const Lifetimes lifetimes = build_lifetimes(model, kernels.requests);
        if (lifetimes.buffers.size() > 2000) return 0;  // the checker is quadratic; keep runs fast
        const Plan greedy = plan_tflm_greedy(lifetimes.buffers);
        for (const char *abi : {"cortex-m", "host"}) {
            const ArenaModel arena =
                allocation_steps(model, lifetimes, predict_kernels(model, abi_named(abi)), abi_named(abi), greedy.head);
            const MinimumArena m = minimum_arena(arena.steps);
            if (!m.at_minimum.ok || m.bytes < greedy.head || (m.bytes > 0 && replay(arena.steps, m.bytes - 1).ok))
                std::abort();
        }
        const Plan best = plan_best(lifetimes.buffers);
        // An offline plan whose own buffers overlap is the model's fault: make_budget rejects it with
        // a ModelError (budget.cpp), and no plan that keeps those offsets can pass the checker.
        for (const Buffer &x : lifetimes.buffers)
            for (const Buffer &y : lifetimes.buffers)
                if (x.id < y.id && x.offline_offset >= 0 && y.offline_offset >= 0 && live_together(x, y) &&
                    x.offline_offset < y.offline_offset + y.size && y.offline_offset < x.offline_offset + x.size)
                    return 0;
        if (!check_plan(lifetimes.buffers, greedy).empty() || !check_plan(lifetimes.buffers, best).empty() ||
            best.head > greedy.head || best.head < lower_bound(lifetimes.buffers).bytes)
            std::abort();
    } catch (const ModelError &) {
    }
    return 0;
}
