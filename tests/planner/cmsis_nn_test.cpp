// The CMSIS-NN kernel rules (planner/src/kernels_cmsis_nn.cpp) on synthetic models. Every
// expected size is worked out by hand in the comments from TFLM 90b983c2's
// tensorflow/lite/micro/kernels/cmsis_nn/*.cc and CMSIS-NN 4ab83cc3's arm_*_get_buffer_size*
// (Source/*/arm_*_get_buffer_sizes_*.c), not by running the planner. The shared models' figures
// against real builds are in tests/integration/test_planner_cmsis_nn.py.
#include <gtest/gtest.h>

#include <stdexcept>

#include "arenascope/planner/kernels.h"
#include "arenascope/planner/writers.h"
#include "model_builder.h"

using namespace arenascope::planner;
using test_models::Field;
using test_models::Op;
using test_models::SG;
using test_models::T;

namespace {
constexpr int CONV = 3, DW = 4, FC = 9, AVG = 1, MAX = 17;
constexpr int kInt8 = 9, kInt32 = 2;

KernelPrediction predict(const SG &sg, const std::string &cpu)
{
    const std::vector<uint8_t> bytes = test_models::build({sg});
    const Model m = read_model(bytes.data(), bytes.size());
    KernelBuild build;
    if (cpu == "reference") return predict_kernels(m, abi_named("cortex-m"), build);
    build.set = KernelBuild::Set::CmsisNn;
    build.cpu = cpu_named(cpu);
    return predict_kernels(m, abi_named("cortex-m"), build);
}

std::vector<int64_t> scratch(const KernelPrediction &p)
{
    std::vector<int64_t> out;
    for (const ScratchRequest &r : p.requests) out.push_back(r.bytes);
    return out;
}

std::vector<int64_t> persistent(const KernelPrediction &p)  // Init and Prepare, in order
{
    std::vector<int64_t> out;
    for (const auto *pass : {&p.ops[0][0].init, &p.ops[0][0].prepare})
        for (const KernelAlloc &a : *pass)
            if (a.kind == KernelAlloc::Kind::Persistent) out.push_back(a.bytes);
    return out;
}

// An operator with a builtin options table of union type `type`.
Op with_options(int code, std::vector<int32_t> in, std::vector<int32_t> out, int type, std::vector<Field> fields)
{
    Op op{code, std::move(in), std::move(out)};
    op.options_type = type;
    op.options = std::move(fields);
    return op;
}

// Conv2DOptions {padding, stride_w, stride_h, activation, dilation_w, dilation_h}.
std::vector<Field> conv_options(int padding, int stride)
{
    return {{0, 1, padding}, {1, 4, stride}, {2, 4, stride}, {3, 1, 0}, {4, 4, 1}, {5, 4, 1}};
}

SG conv(std::vector<int32_t> in, std::vector<int32_t> filter, std::vector<int32_t> out, int padding)
{
    const int channels = filter[0];
    return {{{in},
             {filter, kInt8, true, false, "filter", {}, std::vector<float>(channels, 0.5f)},
             {{channels}, kInt32, true},
             {out}},
            {with_options(CONV, {0, 1, 2}, {3}, 1, conv_options(padding, 1))},
            {0},
            {3}};
}

}  // namespace

TEST(CmsisNnCpu, ExtensionsFollowGccMcpu)
{
    EXPECT_FALSE(cpu_named("cortex-m0").dsp);
    EXPECT_FALSE(cpu_named("m0plus").dsp);
    EXPECT_FALSE(cpu_named("cortex-m3").dsp);
    EXPECT_TRUE(cpu_named("cortex-m4").dsp);
    EXPECT_FALSE(cpu_named("cortex-m7").mve);
    EXPECT_TRUE(cpu_named("cortex-m33").dsp);
    EXPECT_TRUE(cpu_named("cortex-m55").mve);
    EXPECT_TRUE(cpu_named("m85").mve);
    EXPECT_EQ(cpu_named("m85").name, "cortex-m85");
    EXPECT_THROW(cpu_named("cortex-a53"), std::invalid_argument);
    // gcc 12: -mcpu=cortex-m55 -mfloat-abi=soft defines __ARM_FEATURE_DSP but no __ARM_FEATURE_MVE.
    EXPECT_TRUE(cpu_named("cortex-m55+nomve").dsp);
    EXPECT_FALSE(cpu_named("cortex-m55+nomve").mve);
    EXPECT_FALSE(cpu_named("cortex-m33+nodsp").dsp);
    EXPECT_TRUE(cpu_named("cortex-m55+nofp").mve);
    EXPECT_FALSE(cpu_named("cortex-m23").dsp);
    EXPECT_EQ(cpu_named("m55+nomve").name, "cortex-m55+nomve");
    EXPECT_THROW(cpu_named("cortex-m4+mve"), std::invalid_argument);
    // gcc 12: -mcpu=cortex-m55+nodsp defines neither __ARM_FEATURE_DSP nor __ARM_FEATURE_MVE;
    // it refuses +nomve on a core without MVE and takes +nofp.dp on the M7.
    EXPECT_FALSE(cpu_named("cortex-m55+nodsp").dsp);
    EXPECT_FALSE(cpu_named("cortex-m55+nodsp").mve);
    EXPECT_THROW(cpu_named("cortex-m4+nomve"), std::invalid_argument);
    EXPECT_THROW(cpu_named("cortex-m3+nodsp"), std::invalid_argument);
    EXPECT_TRUE(cpu_named("cortex-m7+nofp.dp").dsp);
    EXPECT_THROW(KernelBuild::set_named("xtensa"), std::invalid_argument);
}

// CONV_2D int8, input [1,10,10,3], filter [8,3,3,3], SAME, stride 1: not 1x1, not 1 x n
// (input h 10), so arm_convolve_s8_get_buffer_size: without MVE 2 x align4(3*3*3 = 27 -> 28) x
// int16 = 112; MVE 4 x ceil(27/16) x 16 = 128. The reference kernel requests none. Persistent:
// OpData 60 (cmsis_nn/conv.cc) against OpDataConv 56, then 8 multipliers and 8 shifts.
TEST(CmsisNnConv, GeneralPathPerCpu)
{
    const SG sg = conv({1, 10, 10, 3}, {8, 3, 3, 3}, {1, 10, 10, 8}, 0);
    EXPECT_EQ(scratch(predict(sg, "cortex-m4")), (std::vector<int64_t>{112}));
    EXPECT_EQ(scratch(predict(sg, "cortex-m3")), (std::vector<int64_t>{112}));
    EXPECT_EQ(scratch(predict(sg, "cortex-m55")), (std::vector<int64_t>{128}));
    EXPECT_TRUE(scratch(predict(sg, "reference")).empty());
    EXPECT_EQ(persistent(predict(sg, "cortex-m4")), (std::vector<int64_t>{60, 32, 32}));
    EXPECT_EQ(persistent(predict(sg, "reference")), (std::vector<int64_t>{56, 32, 32}));
}

// A 1x1 VALID convolution: arm_convolve_1x1_s8_fast_get_buffer_size is 0 with gcc on every core.
TEST(CmsisNnConv, OneByOneNeedsNoBuffer)
{
    const SG sg = conv({1, 6, 6, 4}, {8, 1, 1, 4}, {1, 6, 6, 8}, 1);
    for (const char *cpu : {"cortex-m3", "cortex-m4", "cortex-m55"}) EXPECT_TRUE(scratch(predict(sg, cpu)).empty());
}

// 1 x n: input [1,1,20,4], filter [8,1,3,4], VALID stride 1 (output w 18). Without MVE the
// general size 2 x align4(12) x 2 = 48. MVE arm_convolve_1_x_n_s8_get_buffer_size_mve:
// total_pad = 17 x 1 + 3 - 20 = 0, no padding on either side, so max(3 x 4 + 0, 12 - 4 + 0) = 12.
TEST(CmsisNnConv, OneByNPath)
{
    const SG sg = conv({1, 1, 20, 4}, {8, 1, 3, 4}, {1, 1, 18, 8}, 1);
    EXPECT_EQ(scratch(predict(sg, "cortex-m4")), (std::vector<int64_t>{48}));
    EXPECT_EQ(scratch(predict(sg, "cortex-m55")), (std::vector<int64_t>{12}));
}

// DEPTHWISE_CONV_2D int8, 16 channels, multiplier 1, SAME (padding 1 for 3x3, 2 for 5x5):
// arm_depthwise_conv_wrapper_s8_get_buffer_size. 3x3 with padding <= 1 takes the 3x3 kernel
// without MVE: 0. Else _opt_: DSP 16 x 25 x int16 = 800, MVE 4 x 124 x kernel area (9: 4464;
// 25: 12400), plain C 0.
TEST(CmsisNnDepthwise, OptPathPerCpu)
{
    auto dw = [](int k) {
        const std::vector<Field> options{{0, 1, 0}, {1, 4, 1}, {2, 4, 1}, {3, 4, 1}, {4, 1, 0}, {5, 4, 1}, {6, 4, 1}};
        return SG{{{{1, 8, 8, 16}},
                   {{1, k, k, 16}, kInt8, true, false, "filter", {}, std::vector<float>(16, 0.5f)},
                   {{16}, kInt32, true},
                   {{1, 8, 8, 16}}},
                  {with_options(DW, {0, 1, 2}, {3}, 2, options)},
                  {0},
                  {3}};
    };
    EXPECT_TRUE(scratch(predict(dw(3), "cortex-m4")).empty());
    EXPECT_EQ(scratch(predict(dw(3), "cortex-m55")), (std::vector<int64_t>{4464}));
    EXPECT_EQ(scratch(predict(dw(5), "cortex-m4")), (std::vector<int64_t>{800}));
    EXPECT_EQ(scratch(predict(dw(5), "cortex-m55")), (std::vector<int64_t>{12400}));
    EXPECT_TRUE(scratch(predict(dw(5), "cortex-m3")).empty());
    EXPECT_EQ(persistent(predict(dw(5), "cortex-m4")), (std::vector<int64_t>{60, 64, 64}));
}

// FULLY_CONNECTED int8 [1,32] x [10,32]: OpData 72 B; MVE arm_fully_connected_s8_get_buffer_size
// = 10 x int32 = 40, kept as persistent kernel sums when filter and bias are constant, else
// requested as scratch; DSP and plain C: 0. Output rank 3 with accum_depth 32 % 4 == 0 and a
// per-tensor filter: the 1x1 path's 10 x 2 x int32 = 80 of scratch on every core.
TEST(CmsisNnFullyConnected, KernelSumsAndOneByOnePath)
{
    auto fc = [](bool constant_filter, std::vector<int32_t> in, std::vector<int32_t> out) {
        return SG{
            {{in}, {{10, 32}, kInt8, constant_filter}, {{10}, kInt32, true}, {out}}, {{FC, {0, 1, 2}, {3}}}, {0}, {3}};
    };
    const SG flat = fc(true, {1, 32}, {1, 10});
    EXPECT_EQ(persistent(predict(flat, "cortex-m4")), (std::vector<int64_t>{72}));
    EXPECT_EQ(persistent(predict(flat, "cortex-m55")), (std::vector<int64_t>{72, 40}));
    EXPECT_TRUE(scratch(predict(flat, "cortex-m55")).empty());
    EXPECT_EQ(scratch(predict(fc(false, {1, 32}, {1, 10}), "cortex-m55")), (std::vector<int64_t>{40}));
    EXPECT_EQ(scratch(predict(fc(true, {1, 2, 32}, {1, 2, 10}), "cortex-m4")), (std::vector<int64_t>{80}));
    EXPECT_EQ(scratch(predict(fc(true, {1, 2, 32}, {1, 2, 10}), "cortex-m55")), (std::vector<int64_t>{80}));
}

// AVERAGE_POOL_2D int8 [1,8,8,12]: arm_avgpool_s8_get_buffer_size is 12 x int32 = 48 on a DSP
// core without MVE, 0 on MVE and plain C; MAX_POOL_2D requests none. OpData 36 B.
TEST(CmsisNnPooling, AverageBufferOnDspOnly)
{
    auto pool = [](int code) {
        const std::vector<Field> options{{0, 1, 1}, {1, 4, 2}, {2, 4, 2}, {3, 4, 2}, {4, 4, 2}, {5, 1, 0}};
        return SG{{{{1, 8, 8, 12}}, {{1, 4, 4, 12}}}, {with_options(code, {0}, {1}, 5, options)}, {0}, {1}};
    };
    EXPECT_EQ(scratch(predict(pool(AVG), "cortex-m4")), (std::vector<int64_t>{48}));
    EXPECT_TRUE(scratch(predict(pool(AVG), "cortex-m55")).empty());
    EXPECT_TRUE(scratch(predict(pool(AVG), "cortex-m0")).empty());
    EXPECT_TRUE(scratch(predict(pool(MAX), "cortex-m4")).empty());
    EXPECT_EQ(persistent(predict(pool(MAX), "cortex-m4")), (std::vector<int64_t>{36}));
}

// CMSIS-NN's kernels are for Cortex-M: the host ABI with them is refused before any reading.
TEST(CmsisNnBudget, HostTargetRefused)
{
    KernelBuild build;
    build.set = KernelBuild::Set::CmsisNn;
    EXPECT_THROW(make_budget("/nonexistent.tflite", abi_named("host"), 10, false, 0, build), std::invalid_argument);
    EXPECT_EQ(build.describe(), "CMSIS-NN kernels for cortex-m4 (DSP)");
}

// TRANSPOSE_CONV int8 (inputs: output shape, filter [8,3,3,C], input [1,4,4,C], bias), stride 2:
// arm_transpose_conv_s8_get_buffer_size. C = 20 > 16 with stride <= 2: the reverse convolution,
// arm_convolve_s8_get_buffer_size of 20 x 3 x 3 = 180 columns: without MVE 2 x 180 x 2 = 720,
// MVE 4 x ceil(180/16) x 16 = 768; the reversed filter 20 x 9 x 8 = 1440. C = 8: the column
// buffer ((4 - 1) x 2 + max(3, 2)) x 8 x max(3, 2) x 4 = 864, and a reversed filter of 0 bytes,
// requested all the same. Persistent: OpData 76, then 8 multipliers and 8 shifts.
TEST(CmsisNnTransposeConv, ReverseAndColumnPaths)
{
    auto tconv = [](int c) {
        const std::vector<Field> options{{0, 1, 1}, {1, 4, 2}, {2, 4, 2}, {3, 1, 0}};
        return SG{{{{4}, kInt32, true},
                   {{8, 3, 3, c}, kInt8, true, false, "filter", {}, std::vector<float>(8, 0.5f)},
                   {{1, 4, 4, c}},
                   {{8}, kInt32, true},
                   {{1, 9, 9, 8}}},
                  {with_options(67, {0, 1, 2, 3}, {4}, 49, options)},
                  {2},
                  {4}};
    };
    EXPECT_EQ(scratch(predict(tconv(20), "cortex-m4")), (std::vector<int64_t>{720, 1440}));
    EXPECT_EQ(scratch(predict(tconv(20), "cortex-m55")), (std::vector<int64_t>{768, 1440}));
    EXPECT_EQ(scratch(predict(tconv(8), "cortex-m4")), (std::vector<int64_t>{864, 0}));
    EXPECT_EQ(persistent(predict(tconv(8), "cortex-m4")), (std::vector<int64_t>{76, 32, 32}));
    EXPECT_TRUE(predict(tconv(8), "cortex-m4").unmodelled.empty());
}
