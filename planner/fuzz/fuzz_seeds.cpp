// arenascope-fuzz-seeds DIR [MODEL.tflite...]: writes the fuzzers' seed corpus into DIR: small
// synthetic .tflite models, and copies of the MODELs given (the build's DS-CNN,
// planner/dscnn_kws.tflite, and ../shared/models when present), so that a CI without ../shared
// still starts from models that plan.
// Each exercises a different path of the planner: a chain, a residual ADD, the kernels with
// scratch or state (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, SVDF with a variable tensor),
// control flow (IF, WHILE, CALL_ONCE), an offline plan, an unknown operator, and names a writer
// must escape. Built with tests/planner/model_builder.h, the planner tests' model builder.
//   arena_size/ seeds are the same models behind the 5-byte prefix arena_size_fuzz.cpp reads.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "model_builder.h"

namespace {

using test_models::Op;
using test_models::SG;
using test_models::T;

// BuiltinOperator codes (tensorflow/lite/schema/schema.fbs).
constexpr int ADD = 0, AVERAGE_POOL_2D = 1, CONV_2D = 3, DEPTHWISE_CONV_2D = 4, FULLY_CONNECTED = 9, RELU = 19,
              RESHAPE = 22, SOFTMAX = 25, SVDF = 27, IF = 118, WHILE = 119, CALL_ONCE = 129;
constexpr int kInt8 = 9, kInt32 = 2, kFloat32 = 0;

struct Seed {
    std::string name;
    std::vector<uint8_t> bytes;
};

std::vector<Seed> seeds()
{
    const SG chain{
        {{{1, 64}}, {{1, 64}}, {{1, 64}}, {{1, 64}}}, {{RELU, {0}, {1}}, {RELU, {1}, {2}}, {RELU, {2}, {3}}}, {0}, {3}};
    const SG residual{{{{1, 32}}, {{1, 32}}, {{1, 32}}}, {{RELU, {0}, {1}}, {ADD, {0, 1}, {2}}}, {0}, {2}};
    const SG conv{{{{1, 8, 8, 4}},
                   {{8, 3, 3, 4}, kInt8, true},
                   {{8}, kInt32, true},
                   {{1, 8, 8, 8}},
                   {{1, 3, 3, 8}, kInt8, true},
                   {{8}, kInt32, true},
                   {{1, 8, 8, 8}},
                   {{1, 512}},
                   {{10, 512}, kInt8, true},
                   {{10}, kInt32, true},
                   {{1, 10}},
                   {{1, 10}}},
                  {{CONV_2D, {0, 1, 2}, {3}},
                   {DEPTHWISE_CONV_2D, {3, 4, 5}, {6}},
                   {RESHAPE, {6}, {7}},
                   {FULLY_CONNECTED, {7, 8, 9}, {10}},
                   {SOFTMAX, {10}, {11}}},
                  {0},
                  {11}};
    const SG svdf{{{{2, 8}},
                   {{24, 8}, kInt8, true},
                   {{24, 4}, kInt8, true},
                   {{24}, kInt32, true},
                   {{2, 96}, kInt8, false, true, "svdf/state"},
                   {{2, 6}}},
                  {{SVDF, {0, 1, 2, 3, 4}, {5}}},
                  {0},
                  {5}};
    const SG pool{{{{1, 8, 8, 4}, kFloat32}, {{1, 1, 1, 4}, kFloat32}}, {{AVERAGE_POOL_2D, {0}, {1}}}, {0}, {1}};
    const SG branch{{{{1, 16}}, {{1, 16}}}, {{RELU, {0}, {1}}}, {0}, {1}};
    const SG if_main{
        {{{1}}, {{1, 16}}, {{1, 16}}, {{1, 16}}}, {{IF, {0, 1}, {2}, {1, 2}}, {RELU, {2}, {3}}}, {0, 1}, {3}};
    const SG while_main{{{{1, 16}}, {{1, 16}}}, {{WHILE, {0}, {1}, {1, 2}}}, {0}, {1}};
    const SG once_main{{{{1, 16}}, {{1, 16}}}, {{CALL_ONCE, {}, {}, {1}}, {RELU, {0}, {1}}}, {0}, {1}};
    const SG unknown{{{{1, 4}}, {{1, 4}}}, {{200, {0}, {1}}}, {0}, {1}};
    const SG names{{{{1, 16}, kInt8, false, false, "in */ \"x\" \\ ?\?= /* \x01\x1b[31m"},
                    {{1, 16}, kInt8, false, false, "out\n#define X\xff\xfe"}},
                   {{RELU, {0}, {1}}},
                   {0},
                   {1}};
    const SG empty{{}, {}, {}, {}};
    return {{"chain", test_models::build({chain})},
            {"residual", test_models::build({residual})},
            {"conv_fc", test_models::build({conv})},
            {"svdf_state", test_models::build({svdf})},
            {"pool_float", test_models::build({pool})},
            {"if", test_models::build({if_main, branch, branch})},
            {"while", test_models::build({while_main, branch, branch})},
            {"call_once", test_models::build({once_main, branch})},
            {"offline_plan", test_models::build({chain}, {0, 64, 0, 64})},
            {"unknown_op", test_models::build({unknown})},
            {"names", test_models::build({names})},
            {"empty", test_models::build({empty})}};
}

bool write(const std::filesystem::path &path, const std::vector<uint8_t> &prefix, const std::vector<uint8_t> &bytes)
{
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char *>(prefix.data()), static_cast<std::streamsize>(prefix.size()));
    out.write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return static_cast<bool>(out.flush());
}

}  // namespace

int main(int argc, char **argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: arenascope-fuzz-seeds DIR [MODEL.tflite...]\n");
        return 2;
    }
    const std::filesystem::path dir = argv[1];
    std::error_code ec;
    std::filesystem::create_directories(dir / "arena_size", ec);
    std::vector<Seed> all = seeds();
    for (int i = 2; i < argc; ++i) {
        std::ifstream in(argv[i], std::ios::binary);
        std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (!in.good() && !in.eof()) {
            std::fprintf(stderr, "arenascope-fuzz-seeds: cannot read %s\n", argv[i]);
            return 1;
        }
        all.push_back({argv[i], std::move(bytes)});
    }
    for (Seed &s : all) {
        const std::string stem = std::filesystem::path(s.name).stem().string();
        s.name = stem;
        // The arena_size seeds: at the minimum minus 1, at it, and 4 KiB above it (arena_size_fuzz.cpp).
        const std::vector<std::vector<uint8_t>> prefixes{{0, 0xff, 0, 0, 0}, {0, 0, 0, 0, 0}, {1, 0, 0x10, 0, 0}};
        bool ok = write(dir / (s.name + ".tflite"), {}, s.bytes);
        for (size_t i = 0; i < prefixes.size(); ++i)
            ok = ok && write(dir / "arena_size" / (s.name + "_" + std::to_string(i)), prefixes[i], s.bytes);
        if (!ok) {
            std::fprintf(stderr, "arenascope-fuzz-seeds: cannot write into %s\n", argv[1]);
            return 1;
        }
    }
    return 0;
}
