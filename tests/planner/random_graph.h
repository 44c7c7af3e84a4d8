// A random graph model for the search's tests and benchmark (offline_test.cpp,
// arenascope-write-test-model random-graph, tools/bench_search.py): one subgraph of `ops`
// operators, each a FULLY_CONNECTED of one earlier tensor (a new size, 16..256 B in steps of 16)
// or, one time in three where two earlier tensors have the same size, their ADD; the last tensor
// is the output. Planner input only: the weights are placeholders (4 bytes), so it does not run.
#pragma once

#include <random>

#include "model_builder.h"

namespace test_models {

inline std::vector<uint8_t> random_graph(int ops, unsigned seed)
{
    constexpr int kFc = 9, kAdd = 0, kFloat = 0;
    std::mt19937 rng(seed);
    SG sg;
    std::vector<int> tensors{0};  // activations by index
    sg.tensors.push_back(T{{1, 4 * static_cast<int>(1 + rng() % 16)}, kFloat});
    for (int k = 0; k < ops; ++k) {
        const int out = static_cast<int>(sg.tensors.size());
        const int a = tensors[rng() % tensors.size()], b = tensors[rng() % tensors.size()];
        if (rng() % 3 == 0 && a != b && sg.tensors[a].shape == sg.tensors[b].shape) {
            sg.tensors.push_back(T{sg.tensors[a].shape, kFloat});
            sg.ops.push_back({kAdd, {a, b}, {out}});
        } else {
            sg.tensors.push_back(T{{1, 4 * static_cast<int>(1 + rng() % 16)}, kFloat});
            const int w = out + 1;
            sg.tensors.push_back(T{{sg.tensors[out].shape[1], sg.tensors[a].shape[1]}, kFloat, true});
            sg.ops.push_back({kFc, {a, w, -1}, {out}});
        }
        tensors.push_back(out);
    }
    sg.inputs = {0};
    sg.outputs = {tensors.back()};
    return build({sg});
}

}  // namespace test_models
