// arenascope-write-dscnn: writes the project's own DS-CNN keyword-spotting model as a real
// .tflite (identifier "TFL3", full-integer int8), for the demo and the tests.
//
// The graph is the DS-CNN of "Hello Edge: Keyword Spotting on Microcontrollers" (Zhang et al.,
// 2017) as MLPerf Tiny's KWS benchmark uses it: a 49x10 MFCC input; CONV_2D 64 filters 10x4,
// stride 2, SAME, ReLU -> 25x5x64; four depthwise-separable blocks (DEPTHWISE_CONV_2D 3x3 + ReLU,
// CONV_2D 1x1 64 + ReLU); AVERAGE_POOL_2D 25x5; RESHAPE to 64; FULLY_CONNECTED 12; SOFTMAX.
// Weights and biases are generated (a fixed linear congruential sequence): the memory plan
// depends on shapes, types and the graph, not on weight values.
//   arenascope-write-dscnn OUT.tflite [--blocks N]
// --blocks N: N depthwise-separable blocks instead of 4 (1..500): a deeper model with more tensors
// and operators (tools/bench_live.py builds a 200-region arena from it).
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "tflite_subset_generated.h"

namespace fb = arenascope::tflite;

namespace {

constexpr int8_t kInt8 = 9, kInt32 = 2;
constexpr int kConv = 3, kDepthwise = 4, kAvgPool = 1, kReshape = 22, kFullyConnected = 9, kSoftmax = 25;
constexpr uint8_t kConvOptions = 1, kDepthwiseOptions = 2, kPoolOptions = 5, kFcOptions = 8, kSoftmaxOptions = 9,
                  kReshapeOptions = 17;
constexpr int8_t kSame = 0, kValid = 1, kNone = 0, kRelu = 1;
// Every activation and weight has scale 0.02; a bias's scale is input x filter scale, as TFLM
// checks (kernel_util.cc GetQuantizedConvolutionMultipler).
constexpr float kBiasScale = 0.02f * 0.02f;

struct Writer {
    flatbuffers::FlatBufferBuilder b{1 << 16};
    std::vector<flatbuffers::Offset<fb::Buffer>> buffers;
    std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
    std::vector<flatbuffers::Offset<fb::Operator>> ops;
    std::vector<int> opcodes;
    uint32_t lcg = 12345;

    Writer() { buffers.push_back(fb::CreateBuffer(b)); }

    uint8_t next()
    {
        lcg = lcg * 1664525u + 1013904223u;
        return static_cast<uint8_t>(lcg >> 24);
    }

    // A tensor; constant when data is given. Per-tensor int8 quantization (one scale), or
    // per-channel with `channels` scales (weights), zero point 0 for weights and biases.
    int tensor(const std::string &name, std::vector<int32_t> shape, int8_t type, std::vector<uint8_t> data = {},
               int channels = 1, int64_t zero_point = -128, float scale = 0.02f, int32_t quantized_dimension = 0)
    {
        uint32_t buffer = 0;
        if (!data.empty()) {
            b.ForceVectorAlignment(data.size(), 1, 16);  // force_align 16, as the schema asks
            const auto vec = b.CreateVector(data);
            buffers.push_back(fb::CreateBuffer(b, vec));
            buffer = static_cast<uint32_t>(buffers.size() - 1);
        }
        std::vector<float> scales(static_cast<size_t>(channels), scale);
        std::vector<int64_t> zeros(static_cast<size_t>(channels), data.empty() ? zero_point : 0);
        const auto vscale = b.CreateVector(scales);
        const auto vzero = b.CreateVector(zeros);
        // QuantizationParameters by field id (the project's schema subset leaves out the union before
        // quantized_dimension): scale id 2, zero_point id 3, quantized_dimension id 6. TFLM checks the
        // per-channel dimension against the filter's channels (kernel_util.cc
        // PopulateConvolutionQuantizationParams): 3 for DEPTHWISE_CONV_2D's 1xHxWxC filter, else 0.
        const auto start = b.StartTable();
        b.AddOffset(8, vscale);
        b.AddOffset(10, vzero);
        b.AddElement<int32_t>(16, quantized_dimension, 0);
        const flatbuffers::Offset<fb::QuantizationParameters> q(b.EndTable(start));
        tensors.push_back(fb::CreateTensor(b, b.CreateVector(shape), type, buffer, b.CreateString(name), q, false));
        return static_cast<int>(tensors.size() - 1);
    }

    std::vector<uint8_t> random_bytes(size_t n)
    {
        std::vector<uint8_t> v(n);
        for (auto &x : v) x = next();
        return v;
    }
    std::vector<uint8_t> bias(int n)
    {  // int32 biases, small values
        std::vector<uint8_t> v(static_cast<size_t>(n) * 4, 0);
        for (int i = 0; i < n; ++i) v[static_cast<size_t>(i) * 4] = next() >> 2;
        return v;
    }

    void op(int code, std::vector<int32_t> in, std::vector<int32_t> out, uint8_t options_type,
            flatbuffers::Offset<void> options)
    {
        uint32_t index = 0;
        while (index < opcodes.size() && opcodes[index] != code) ++index;
        if (index == opcodes.size()) opcodes.push_back(code);
        auto vin = b.CreateVector(in), vout = b.CreateVector(out);
        const auto start = b.StartTable();
        b.AddElement<uint32_t>(4, index, 0);
        b.AddOffset(6, vin);
        b.AddOffset(8, vout);
        b.AddElement<uint8_t>(10, options_type, 0);
        b.AddOffset(12, options);
        ops.push_back(flatbuffers::Offset<fb::Operator>(b.EndTable(start)));
    }
};

}  // namespace

#ifndef ARENASCOPE_VERSION  // the build defines it from VERSION; a compile outside CMake says so
#define ARENASCOPE_VERSION "unknown"
#endif

constexpr const char *kUsage = "usage: arenascope-write-dscnn OUT.tflite [--blocks N]   (N: 1..500, default 4)\n"
                               "       arenascope-write-dscnn --version\n";

int usage(const std::string &why)
{
    std::fprintf(stderr, "arenascope-write-dscnn: %s\n%s", why.c_str(), kUsage);
    return 2;
}

// The command line: -1 to go on with *blocks and *out_path set, else the exit status.
int parse_args(int argc, char **argv, int *blocks, const char **out_path)
{
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help" || a == "-h") {
            std::fputs(kUsage, stdout);
            return 0;
        }
        if (a == "--version") {
            std::printf("arenascope-write-dscnn %s\n", ARENASCOPE_VERSION);
            return 0;
        }
        if (a == "--blocks") {
            if (i + 1 >= argc) return usage("--blocks needs a number");
            char *end = nullptr;
            const long n = std::strtol(argv[++i], &end, 10);
            if (*argv[i] == '\0' || *end != '\0' || n < 1 || n > 500)
                return usage(std::string("--blocks ") + argv[i] + ": give a whole number from 1 to 500");
            *blocks = static_cast<int>(n);
        } else if (!a.empty() && a[0] == '-') {
            return usage("unknown option " + a);
        } else if (*out_path) {
            return usage("one output file only (" + std::string(*out_path) + " and " + a + ")");
        } else {
            *out_path = argv[i];
        }
    }
    return -1;
}

// The model around the operators and tensors written: its operator codes, its one subgraph
// (input and probs its input and output) and its description.
void finish_model(Writer &w, int input, int probs)
{
    std::vector<flatbuffers::Offset<fb::OperatorCode>> codes;
    for (int c : w.opcodes) codes.push_back(fb::CreateOperatorCode(w.b, static_cast<int8_t>(c), 0, 1, c));
    auto sg = fb::CreateSubGraph(w.b, w.b.CreateVector(w.tensors), w.b.CreateVector(std::vector<int32_t>{input}),
                                 w.b.CreateVector(std::vector<int32_t>{probs}), w.b.CreateVector(w.ops),
                                 w.b.CreateString("main"));
    auto model =
        fb::CreateModel(w.b, 3, w.b.CreateVector(codes), w.b.CreateVector(std::vector<decltype(sg)>{sg}),
                        w.b.CreateString("arenascope DS-CNN (generated weights)"), w.b.CreateVector(w.buffers));
    fb::FinishModelBuffer(w.b, model);
}

int main(int argc, char **argv)
{
    int blocks = 4;
    const char *out_path = nullptr;
    if (const int status = parse_args(argc, argv, &blocks, &out_path); status >= 0) return status;
    if (!out_path) return usage("give the output file");
    Writer w;
    const int channels = 64;
    int x = w.tensor("input_mfcc", {1, 49, 10, 1}, kInt8);
    const int input = x;
    // First layer: 64 filters 10x4 (OHWI), stride 2, SAME -> 25x5x64.
    {
        const int f = w.tensor("conv0/weights", {channels, 10, 4, 1}, kInt8, w.random_bytes(64 * 10 * 4), channels);
        const int bias = w.tensor("conv0/bias", {channels}, kInt32, w.bias(channels), channels, 0, kBiasScale);
        const int y = w.tensor("conv0/relu", {1, 25, 5, channels}, kInt8);
        w.op(kConv, {x, f, bias}, {y}, kConvOptions, fb::CreateConv2DOptions(w.b, kSame, 2, 2, kRelu).Union());
        x = y;
    }
    for (int block = 1; block <= blocks; ++block) {
        const std::string n = "block" + std::to_string(block);
        const int dw =
            w.tensor(n + "/dw_weights", {1, 3, 3, channels}, kInt8, w.random_bytes(9 * 64), channels, 0, 0.02f, 3);
        const int dwb = w.tensor(n + "/dw_bias", {channels}, kInt32, w.bias(channels), channels, 0, kBiasScale);
        const int y = w.tensor(n + "/dw_relu", {1, 25, 5, channels}, kInt8);
        w.op(kDepthwise, {x, dw, dwb}, {y}, kDepthwiseOptions,
             fb::CreateDepthwiseConv2DOptions(w.b, kSame, 1, 1, 1, kRelu).Union());
        const int pw =
            w.tensor(n + "/pw_weights", {channels, 1, 1, channels}, kInt8, w.random_bytes(64 * 64), channels);
        const int pwb = w.tensor(n + "/pw_bias", {channels}, kInt32, w.bias(channels), channels, 0, kBiasScale);
        const int z = w.tensor(n + "/pw_relu", {1, 25, 5, channels}, kInt8);
        w.op(kConv, {y, pw, pwb}, {z}, kConvOptions, fb::CreateConv2DOptions(w.b, kSame, 1, 1, kRelu).Union());
        x = z;
    }
    const int pooled = w.tensor("avg_pool", {1, 1, 1, channels}, kInt8);
    w.op(kAvgPool, {x}, {pooled}, kPoolOptions, fb::CreatePool2DOptions(w.b, kValid, 1, 1, 5, 25, kNone).Union());
    std::vector<uint8_t> new_shape{1, 0, 0, 0, 64, 0, 0, 0};  // int32 {1, 64}, little-endian
    const int shape = w.tensor("flatten/shape", {2}, kInt32, new_shape, 1);
    const int flat = w.tensor("flatten", {1, channels}, kInt8);
    w.op(kReshape, {pooled, shape}, {flat}, kReshapeOptions,
         fb::CreateReshapeOptions(w.b, w.b.CreateVector(std::vector<int32_t>{1, 64})).Union());
    const int fcw = w.tensor("fc/weights", {12, channels}, kInt8, w.random_bytes(12 * 64), 1);
    const int fcb = w.tensor("fc/bias", {12}, kInt32, w.bias(12), 1, 0, kBiasScale);
    const int logits = w.tensor("fc/logits", {1, 12}, kInt8);
    w.op(kFullyConnected, {flat, fcw, fcb}, {logits}, kFcOptions, fb::CreateFullyConnectedOptions(w.b, kNone).Union());
    // TFLM's int8 softmax output must be scale 1/256, zero point -128 (softmax_common.cc SoftmaxPrepare).
    const int probs = w.tensor("softmax", {1, 12}, kInt8, {}, 1, -128, 1.0f / 256);
    w.op(kSoftmax, {logits}, {probs}, kSoftmaxOptions, fb::CreateSoftmaxOptions(w.b, 1.0f).Union());

    finish_model(w, input, probs);
    std::ofstream out(out_path, std::ios::binary);
    out.write(reinterpret_cast<const char *>(w.b.GetBufferPointer()), static_cast<std::streamsize>(w.b.GetSize()));
    out.close();
    if (!out) {
        std::fprintf(stderr, "arenascope-write-dscnn: cannot write %s: %s\n", out_path, std::strerror(errno));
        return 1;
    }
    return 0;
}
