// arenascope-write-chain: writes a long chain model for the planner's scale benchmark
// (tools/bench_planner.py) and tests, built with the tests' model builder (model_builder.h).
//   arenascope-write-chain OUT.tflite OPS
// OPS operators (1..10,000,000) in one subgraph: operator i computes t(i+1) = t(i) + t(i-1) (ADD,
// MUL every third operator; operator 0 adds t0 to itself), every tensor int8 [1, 8, 8, 8]
// (512 bytes), so that each activation lives three scopes and the greedy plan has real work.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "model_builder.h"

int main(int argc, char **argv)
{
    char *end = nullptr;
    const long ops = argc == 3 ? std::strtol(argv[2], &end, 10) : 0;
    if (argc != 3 || !end || *end || ops < 1 || ops > 10000000) {
        std::fprintf(stderr, "usage: arenascope-write-chain OUT.tflite OPS (1..10000000)\n");
        return 2;
    }
    constexpr int kAdd = 0, kMul = 18;
    test_models::SG sg;
    sg.tensors.assign(static_cast<size_t>(ops) + 1, test_models::T{{1, 8, 8, 8}});
    for (long i = 0; i < ops; ++i) {
        const int32_t a = static_cast<int32_t>(i), b = static_cast<int32_t>(i ? i - 1 : 0);
        sg.ops.push_back({i % 3 == 2 ? kMul : kAdd, {a, b}, {a + 1}});
    }
    sg.inputs = {0};
    sg.outputs = {static_cast<int32_t>(ops)};
    const std::vector<uint8_t> bytes = test_models::build({sg});
    if (!test_models::save(argv[1], bytes)) {
        std::fprintf(stderr, "arenascope-write-chain: cannot write %s\n", argv[1]);
        return 1;
    }
    return 0;
}
