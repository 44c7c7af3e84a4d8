// What TFLM's reference kernels allocate for the activations and the element-wise operators
// (see kernels.h and kernels_reference.cpp for the rules every kernel shares). Sources are
// tensorflow/lite/micro/kernels/ at tflite-micro 90b983c2; the Parse functions are
// tensorflow/lite/core/api/flatbuffer_conversions.cc Parse<Op> (none of the ones marked "-"
// allocates). Sizes {cortex-m, x86-64} are sizeof checked with probes compiled against TFLM's
// headers (arm-none-eabi-g++ -mcpu=cortex-m4 -mthumb -fshort-enums, x86-64 g++,
// -DTF_LITE_STATIC_MEMORY): see docs/arena-budget.md, "Operators modelled".
#include "kernels_reference_families.h"

namespace arenascope::planner::rules {

namespace {

// clang-format off
const SimpleRule kRules[] = {
    // activations.cc ReluInit (ReluOpData), activations_common.cc ReluPrepare.
    {"RELU", {}, {}, nullptr, 28, 28, "ReluOpData", "i0 o0"},
    // activations.cc Relu6Init (Relu6OpData), activations_common.cc Relu6Prepare: the input only.
    {"RELU6", {}, {}, nullptr, 8, 8, "Relu6OpData", "i0"},
    // logistic.cc LogisticInit (OpDataLogistic), logistic_common.cc
    // CalculateArithmeticOpDataLogistic.
    {"LOGISTIC", {}, {}, nullptr, 16, 16, "OpDataLogistic", "i0 o0"},
    // tanh.cc TanhInit (OpData), TanhPrepare: the input, then CalculateArithmeticOpData's
    // input and output.
    {"TANH", {}, {}, nullptr, 16, 16, "tanh OpData", "i0 i0 o0"},
    // ParseLeakyRelu; leaky_relu.cc LeakyReluInit (LeakyReluOpData), leaky_relu_common.cc
    // CalculateOpDataLeakyRelu.
    {"LEAKY_RELU", {4, 4}, {4, 4}, "TfLiteLeakyReluParams", 24, 24, "LeakyReluOpData", "i0 o0"},
    // hard_swish.cc HardSwishInit (HardSwishParams), hard_swish_common.cc HardSwishPrepare.
    {"HARD_SWISH", {}, {}, nullptr, 20, 20, "HardSwishParams", "i0 o0"},
    // prelu.cc PreluInit (PreluParams), prelu_common.cc PreluPrepare: input, alpha, output.
    {"PRELU", {}, {}, nullptr, 28, 28, "PreluParams", "i0 i1 o0"},
    // elu.cc EluInit (OpData: a 256-entry int8 lookup table), CalculateOpData.
    {"ELU", {}, {}, nullptr, 256, 256, "elu OpData", "i0 o0"},
    // elementwise.cc ElementWiseAbsRsqrtInit (OpDataAbsRsqrt), PrepareAbsRsqrt.
    {"ABS", {}, {}, nullptr, 28, 28, "OpDataAbsRsqrt", "i0 o0"},
    {"RSQRT", {}, {}, nullptr, 28, 28, "OpDataAbsRsqrt", "i0 o0"},
    // elementwise.cc: no Init, GenericPrepare.
    {"SIN", {}, {}, nullptr, 0, 0, nullptr, "i0 o0"},
    {"COS", {}, {}, nullptr, 0, 0, nullptr, "i0 o0"},
    {"LOG", {}, {}, nullptr, 0, 0, nullptr, "i0 o0"},
    {"SQRT", {}, {}, nullptr, 0, 0, nullptr, "i0 o0"},
    {"SQUARE", {}, {}, nullptr, 0, 0, nullptr, "i0 o0"},
    {"LOGICAL_NOT", {}, {}, nullptr, 0, 0, nullptr, "i0 o0"},
    // exp.cc ExpPrepare, ceil.cc CeilPrepare, round.cc RoundPrepare, zeros_like.cc
    // ZerosLikePrepare: no Init.
    {"EXP", {}, {}, nullptr, 0, 0, nullptr, "i0 o0"},
    {"CEIL", {}, {}, nullptr, 0, 0, nullptr, "i0 o0"},
    {"ROUND", {}, {}, nullptr, 0, 0, nullptr, "i0 o0"},
    {"ZEROS_LIKE", {}, {}, nullptr, 0, 0, nullptr, "i0 o0"},
    // floor.cc, neg.cc, logical.cc: Eval only.
    {"FLOOR", {}, {}, nullptr, 0, 0, nullptr, ""},
    {"NEG", {}, {}, nullptr, 0, 0, nullptr, ""},
    {"LOGICAL_AND", {}, {}, nullptr, 0, 0, nullptr, ""},
    {"LOGICAL_OR", {}, {}, nullptr, 0, 0, nullptr, ""},
    // dequantize.cc DequantizeInit (DequantizeOpData), dequantize_common.cc DequantizePrepare.
    {"DEQUANTIZE", {}, {}, nullptr, 32, 32, "DequantizeOpData", "i0 o0"},
    // ParseSub; sub.cc SubInit (OpDataSub), sub_common.cc SubPrepare.
    {"SUB", {2, 1}, {8, 4}, "TfLiteSubParams", 52, 52, "OpDataSub", "i0 i1 o0"},
    // squared_difference.cc SquaredDifferenceInit (OpData), SquaredDifferencePrepare.
    {"SQUARED_DIFFERENCE", {}, {}, nullptr, 112, 112, "squared_difference OpData", "i0 i1 o0"},
    // floor_div.cc / floor_mod.cc: Init returns nullptr (allocates nothing), CalculateOpData.
    {"FLOOR_DIV", {}, {}, nullptr, 0, 0, nullptr, "i0 i1 o0"},
    {"FLOOR_MOD", {}, {}, nullptr, 0, 0, nullptr, "i0 i1 o0"},
    // comparisons.cc Init (OpData), ComparisonsPrepare: both inputs.
    {"EQUAL", {}, {}, nullptr, 32, 32, "comparisons OpData", "i0 i1"},
    {"NOT_EQUAL", {}, {}, nullptr, 32, 32, "comparisons OpData", "i0 i1"},
    {"GREATER", {}, {}, nullptr, 32, 32, "comparisons OpData", "i0 i1"},
    {"GREATER_EQUAL", {}, {}, nullptr, 32, 32, "comparisons OpData", "i0 i1"},
    {"LESS", {}, {}, nullptr, 32, 32, "comparisons OpData", "i0 i1"},
    {"LESS_EQUAL", {}, {}, nullptr, 32, 32, "comparisons OpData", "i0 i1"},
    // select.cc SelectInit (OpData {bool}), SelectPrepare: condition, x, y, output.
    {"SELECT_V2", {}, {}, nullptr, 1, 1, "select OpData", "i0 i1 i2 o0"},
    // ParseL2Normalization; l2norm.cc L2NormInit (L2NormalizationParams), L2NormPrepare.
    {"L2_NORMALIZATION", {1, 1}, {4, 4}, "TfLiteL2NormParams", 4, 4, "L2NormalizationParams", "i0 o0"},
};
// clang-format on

}  // namespace

bool elementwise_kernel(Kernel &k, bool &modelled, bool &scratch_ok)
{
    scratch_ok = true;
    if (k.op.op_name == "LOG_SOFTMAX") {
        // log_softmax.cc: no Init; CalculateOpData takes input and output, and for an int8
        // input keeps LogSoftmaxOpData (SoftmaxParams-like: a size_t member on x86-64).
        inspect(k, {0});
        const Tensor *in = k.input(0);
        if (in && in->type == kTypeInt8) k.persistent(k.ilp32 ? 28 : 40, "LogSoftmaxOpData");
        modelled = in != nullptr;
        return true;
    }
    modelled = apply_table(k, kRules, sizeof kRules / sizeof kRules[0]);
    return modelled;
}

}  // namespace arenascope::planner::rules
