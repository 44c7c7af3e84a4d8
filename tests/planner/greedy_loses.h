// A model where TFLM's greedy plan and every ordering plan_best tries miss the lower bound, but
// a plan at the bound exists (offline_test.cpp; arenascope-write-test-model writes it for the CLI
// test and for the check on real TFLM, docs/offline-plan.md). It runs on TFLM's reference
// kernels: float32 FULLY_CONNECTED (weights given, no bias) and ADD.
//
// Tensors t0..t6 float32 [16, n] (a batch of 16; n = 12, 28, 12, 4, 12, 32, 28), one subgraph,
// input t0, output t6:
//   op0 FC t0 -> t1   op1 FC t0 -> t2   op2 FC t2 -> t3
//   op3 ADD t0,t2 -> t4   op4 FC t2 -> t5   op5 FC t3 -> t6
// (t1, t4 and t5 are read by no one.) Sizes 768, 1792, 768, 256, 768, 2048, 1792 B; lifetimes
// (micro_allocation_info.cc: operator i in scope i+1, the input from 0, the output to the last
// scope): t0 0..4, t1 1..1, t2 2..5, t3 3..6, t4 4..4, t5 5..5, t6 6..6.
// Lower bound 3072: scope 5 holds t2 + t3 + t5 = 768 + 256 + 2048.
// TFLM's greedy (size descending, stable from reversed ids: t5, t6, t1, t4, t2, t0, t3): t5, t6,
// t1 and t4 at 0 (none live with another); t2 above t5 -> 2048; t0 above t1 (1792), the 256 B
// gap below t2 is too small -> 2816; t3 above all five it meets -> 3584. Head 3840. The best
// first-fit order, by brute force over all 5040 (a script outside the planner, and
// offline_test.cpp again), gives 3072: the bound. The batch makes the head, not TFLM's working
// space while it plans, set the minimum arena, so the saving shows there too.
#pragma once

#include <cstring>

#include "model_builder.h"

namespace test_models {

inline SG greedy_loses_sg()
{
    constexpr int kFc = 9, kAdd = 0, kFloat = 0;
    const int n[7] = {12, 28, 12, 4, 12, 32, 28};
    SG sg;
    for (int v : n) sg.tensors.push_back(T{{16, v}, kFloat});
    // Weights [out, in], float32 bit patterns as the builder's int32 values.
    auto weights = [&](int out, int in) {
        T w{{out, in}, kFloat, true};
        for (int i = 0; i < out * in; ++i) {
            const float f = static_cast<float>((i * 7) % 11 - 5) / 8.0f;
            int32_t bits;
            std::memcpy(&bits, &f, 4);
            w.values.push_back(bits);
        }
        sg.tensors.push_back(w);
        return static_cast<int32_t>(sg.tensors.size() - 1);
    };
    sg.ops = {{kFc, {0, weights(28, 12), -1}, {1}}, {kFc, {0, weights(12, 12), -1}, {2}},
              {kFc, {2, weights(4, 12), -1}, {3}},  {kAdd, {0, 2}, {4}},
              {kFc, {2, weights(32, 12), -1}, {5}}, {kFc, {3, weights(28, 4), -1}, {6}}};
    sg.inputs = {0};
    sg.outputs = {6};
    return sg;
}
inline std::vector<uint8_t> greedy_loses_model(const ModelExtras &extras = {})
{
    return build({greedy_loses_sg()}, {}, extras);
}
inline constexpr int64_t kGreedyLosesTflmHead = 3840, kGreedyLosesBound = 3072;

}  // namespace test_models
