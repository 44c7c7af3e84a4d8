// arenascope-write-test-model: writes a named test model (built with model_builder.h).
//   arenascope-write-test-model greedy-loses OUT.tflite          greedy_loses.h (runs on real TFLM)
//   arenascope-write-test-model random-graph OUT.tflite OPS SEED  for the search's benchmark
// random-graph: one subgraph of OPS operators (1..100000), each a FULLY_CONNECTED of one earlier
// tensor (a new size, 16..256 floats in steps of 16 B) or, one time in three where two earlier
// tensors have the same size, their ADD; the last tensor is the output. Planner input only: the
// weights are placeholders (4 bytes), so it does not run.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>

#include "greedy_loses.h"

namespace {
std::vector<uint8_t> random_graph(int ops, unsigned seed)
{
    constexpr int kFc = 9, kAdd = 0, kFloat = 0;
    std::mt19937 rng(seed);
    test_models::SG sg;
    std::vector<int> tensors{0};  // activations by index
    sg.tensors.push_back(test_models::T{{1, 4 * static_cast<int>(1 + rng() % 16)}, kFloat});
    for (int k = 0; k < ops; ++k) {
        const int out = static_cast<int>(sg.tensors.size());
        const int a = tensors[rng() % tensors.size()], b = tensors[rng() % tensors.size()];
        if (rng() % 3 == 0 && a != b && sg.tensors[a].shape == sg.tensors[b].shape) {
            sg.tensors.push_back(test_models::T{sg.tensors[a].shape, kFloat});
            sg.ops.push_back({kAdd, {a, b}, {out}});
        } else {
            sg.tensors.push_back(test_models::T{{1, 4 * static_cast<int>(1 + rng() % 16)}, kFloat});
            const int w = out + 1;
            sg.tensors.push_back(test_models::T{{sg.tensors[out].shape[1], sg.tensors[a].shape[1]}, kFloat, true});
            sg.ops.push_back({kFc, {a, w, -1}, {out}});
        }
        tensors.push_back(out);
    }
    sg.inputs = {0};
    sg.outputs = {tensors.back()};
    return test_models::build({sg});
}
}  // namespace

int main(int argc, char **argv)
{
    std::vector<uint8_t> bytes;
    char *end = nullptr;
    if (argc == 3 && !std::strcmp(argv[1], "greedy-loses")) {
        bytes = test_models::greedy_loses_model();
    } else if (argc == 5 && !std::strcmp(argv[1], "random-graph")) {
        const long ops = std::strtol(argv[3], &end, 10);
        if (!end || *end || ops < 1 || ops > 100000) {
            std::fprintf(stderr, "arenascope-write-test-model: OPS must be 1..100000\n");
            return 2;
        }
        bytes = random_graph(static_cast<int>(ops), static_cast<unsigned>(std::strtoul(argv[4], nullptr, 10)));
    } else {
        std::fprintf(stderr, "usage: arenascope-write-test-model greedy-loses OUT.tflite\n"
                             "       arenascope-write-test-model random-graph OUT.tflite OPS SEED\n");
        return 2;
    }
    std::ofstream out(argv[2], std::ios::binary);
    out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!out.flush()) {
        std::fprintf(stderr, "arenascope-write-test-model: cannot write %s\n", argv[2]);
        return 1;
    }
    return 0;
}
