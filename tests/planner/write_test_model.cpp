// arenascope-write-test-model: writes a named test model (built with model_builder.h).
//   arenascope-write-test-model greedy-loses OUT.tflite          greedy_loses.h (runs on real TFLM)
//   arenascope-write-test-model random-graph OUT.tflite OPS SEED  for the search's benchmark
// random-graph: random_graph.h.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "greedy_loses.h"
#include "random_graph.h"

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
        bytes =
            test_models::random_graph(static_cast<int>(ops), static_cast<unsigned>(std::strtoul(argv[4], nullptr, 10)));
    } else {
        std::fprintf(stderr, "usage: arenascope-write-test-model greedy-loses OUT.tflite\n"
                             "       arenascope-write-test-model random-graph OUT.tflite OPS SEED\n");
        return 2;
    }
    if (!test_models::save(argv[2], bytes)) {
        std::fprintf(stderr, "arenascope-write-test-model: cannot write %s\n", argv[2]);
        return 1;
    }
    return 0;
}
