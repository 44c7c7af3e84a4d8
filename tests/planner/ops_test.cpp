// Every reference-kernel operator on a model built for it (issue 16 item 2). The expected
// Cortex-M bytes are worked by hand from TFLM 90b983c2's sources (tensorflow/lite/micro/kernels/,
// core/api/flatbuffer_conversions.cc) with the struct sizes of sizeof probes compiled against
// TFLM's headers (arm-none-eabi-g++ -mcpu=cortex-m4 -mthumb -fshort-enums); `host_used` is
// what MicroInterpreter::arena_used_bytes() reported after AllocateTensors() when the same
// model ran on TFLM's reference kernels built for x86-64 (docs/arena-budget.md, "Operators
// modelled"), -1 where that run could not be made (none now). With ARENASCOPE_OPS_MODELS_DIR set, the
// models are also written there, to run them on TFLM again.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <numeric>

#include <flatbuffers/flexbuffers.h>

#include "arenascope/planner/kernels.h"
#include "arenascope/planner/writers.h"
#include "model_builder.h"

using namespace arenascope::planner;
using test_models::Op;
using test_models::SG;
using test_models::T;

namespace {

constexpr int F32 = 0, I32 = 2, BOOL = 6, I8 = 9;

struct Case {
    const char *name;
    SG sg;
    int64_t parse, init, persistent;  // Cortex-M bytes requested by Parse, Init, Prepare (persistent)
    size_t temps;                     // Prepare's temporary TfLiteTensors
    std::vector<int64_t> scratch;     // Prepare's scratch requests, in order
    int64_t host_used;                // arena_used_bytes() measured on x86-64 TFLM, -1 none
};

T f32(std::vector<int32_t> shape)
{
    return T{std::move(shape), F32};
}
T i8(std::vector<int32_t> shape)
{
    return T{std::move(shape), I8, false, false, {}, {}, {0.5f}};
}
T i32c(std::vector<int32_t> shape, std::vector<int32_t> values)
{
    return T{std::move(shape), I32, true, false, {}, std::move(values)};
}
// A one-operator subgraph: the tensors, the operator on them, inputs and outputs.
SG one(std::vector<T> ts, Op op, std::vector<int32_t> in, std::vector<int32_t> out)
{
    return SG{std::move(ts), {std::move(op)}, std::move(in), std::move(out)};
}
SG unary(int opcode, T in, T out)
{
    return one({in, out}, {opcode, {0}, {1}}, {0}, {1});
}
SG binary(int opcode, T a, T b, T out)
{
    return one({a, b, out}, {opcode, {0, 1}, {2}}, {0, 1}, {2});
}

// The operators LOGISTIC .. GATHER, in the order the test lists them.
std::vector<Case> logistic_to_gather()
{
    const T x = f32({1, 8});
    return {
        // logistic.cc: OpDataLogistic {int32 x4} = 16; input and output.
        {"LOGISTIC", unary(14, x, x), 0, 16, 0, 2, {}, 608},
        // tanh.cc: OpData {int32 x4} = 16; input, then input and output again.
        {"TANH", unary(28, x, x), 0, 16, 0, 3, {}, 608},
        // activations.h ReluOpData {ReluParams: 7 x int32} = 28; Relu6OpData {int8 x2, int16 x2} = 8.
        {"RELU", unary(19, x, x), 0, 28, 0, 2, {}, 624},
        {"RELU6", unary(21, x, x), 0, 8, 0, 1, {}, 592},
        // TfLiteLeakyReluParams {float} = 4; LeakyReluOpData {int32 x6} = 24.
        {"LEAKY_RELU", unary(98, x, x), 4, 24, 0, 2, {}, 624},
        // HardSwishParams {int16 x6, int32 x2} = 20.
        {"HARD_SWISH", unary(117, x, x), 0, 20, 0, 2, {}, 608},
        // PreluParams {int32 x7} = 28; input, alpha, output.
        {"PRELU", binary(54, x, f32({8}), x), 0, 28, 0, 3, {}, 736},
        // elu.cc OpData {int8_t table[256]} = 256.
        {"ELU", unary(111, x, x), 0, 256, 0, 2, {}, 848},
        // TfLiteSubParams {enum (1 B with -fshort-enums), bool} = 2; OpDataSub {bool, 12 x int32} = 52.
        {"SUB", binary(41, x, x, x), 2, 52, 0, 3, {}, 768},
        // squared_difference.cc OpData {bool, ArithmeticParams (int64-aligned)} = 112.
        {"SQUARED_DIFFERENCE", binary(99, x, x, x), 0, 112, 0, 3, {}, 816},
        // elementwise.cc OpDataAbsRsqrt {7 x 4 B} = 28 for ABS and RSQRT; GenericPrepare for the rest.
        {"ABS", unary(101, x, x), 0, 28, 0, 2, {}, 624},
        {"RSQRT", unary(76, x, x), 0, 28, 0, 2, {}, 624},
        {"SQRT", unary(75, x, x), 0, 0, 0, 2, {}, 576},
        {"LOG", unary(73, x, x), 0, 0, 0, 2, {}, 576},
        {"EXP", unary(47, x, x), 0, 0, 0, 2, {}, 576},
        {"NEG", unary(59, x, x), 0, 0, 0, 0, {}, 576},
        // DequantizeOpData {RequantizationParams (double first), int32} = 32.
        {"DEQUANTIZE", unary(6, i8({1, 8}), x), 0, 32, 0, 2, {}, 640},
        // comparisons.cc OpData {ComparisonParams: bool, 7 x int32} = 32; both inputs only.
        {"LESS", binary(58, x, x, T{{1, 8}, BOOL}), 0, 32, 0, 2, {}, 720},
        // TfLiteL2NormParams {enum} = 1; L2NormalizationParams {int32} = 4.
        {"L2_NORMALIZATION", unary(11, x, x), 1, 4, 0, 2, {}, 592},
        // pad_common.cc OpData {PadParams (int8 + 2 x int32[5] + int8), int32} = 56; a PAD has
        // no constant-value input: input, paddings, output.
        {"PAD",
         one({f32({1, 4}), i32c({2, 2}, {0, 0, 1, 1}), f32({1, 6})}, {34, {0, 1}, {2}}, {0}, {2}),
         0,
         56,
         0,
         3,
         {},
         656},
        // transpose.h TransposeContext: input, perm, output.
        {"TRANSPOSE",
         one({f32({2, 3}), i32c({2}, {1, 0}), f32({3, 2})}, {39, {0, 1}, {2}}, {0}, {2}),
         0,
         0,
         0,
         3,
         {},
         608},
        // TfLiteSplitParams {int} = 4; the axis only.
        {"SPLIT",
         one({i32c({}, {1}), x, f32({1, 4}), f32({1, 4})}, {49, {0, 1}, {2, 3}}, {1}, {2, 3}),
         4,
         0,
         0,
         1,
         {},
         704},
        // TfLitePackParams {int x2} = 8; Eval only.
        {"PACK", one({f32({4}), f32({4}), f32({2, 4})}, {83, {0, 1}, {2}}, {0, 1}, {2}), 8, 0, 0, 0, {}, 688},
        // TfLiteGatherParams {int x2} = 8; input, positions, output; output dims 4 + 4 x 2 = 12.
        {"GATHER", one({f32({4, 3}), T{{2}, I32}, f32({2, 3})}, {36, {0, 1}, {2}}, {0, 1}, {2}), 8, 0, 12, 3, {}, 736},
    };
}

// The operators SLICE .. REDUCE_MAX, in the order the test lists them.
std::vector<Case> slice_to_reduce_max()
{
    const T x = f32({1, 8});
    return {
        // slice.cc: input, begin, size, output.
        {"SLICE",
         one({x, i32c({2}, {0, 2}), i32c({2}, {1, 4}), f32({1, 4})}, {65, {0, 1, 2}, {3}}, {0}, {3}),
         0,
         0,
         0,
         4,
         {},
         608},
        // TfLiteSqueezeParams {int32[8], int} = 36.
        {"SQUEEZE", unary(43, x, f32({8})), 36, 0, 0, 2, {}, 624},
        // expand_dims.cc: input, axis, output.
        {"EXPAND_DIMS", one({f32({8}), i32c({}, {0}), x}, {70, {0, 1}, {2}}, {0}, {2}), 0, 0, 0, 3, {}, 608},
        // TfLiteResizeNearestNeighborParams {bool x2} = 2; input, size, output.
        {"RESIZE_NEAREST_NEIGHBOR",
         one({f32({1, 2, 2, 1}), i32c({2}, {4, 4}), f32({1, 4, 4, 1})}, {97, {0, 1}, {2}}, {0}, {2}),
         2,
         0,
         0,
         3,
         {},
         624},
        // TfLiteArgMaxParams {TfLiteType: 1 B} = 1; Eval only.
        {"ARG_MAX", one({x, i32c({}, {1}), T{{1}, I32}}, {56, {0, 1}, {2}}, {0}, {2}), 1, 0, 0, 0, {}, 592},
        // TfLiteMirrorPaddingParams {enum} = 1; OpDataMirrorPad {int32 x5} = 20; input, paddings,
        // output; two scratch buffers of rank 2 x int.
        {"MIRROR_PAD",
         one({f32({1, 4}), i32c({2, 2}, {0, 0, 1, 1}), f32({1, 6})}, {100, {0, 1}, {2}}, {0}, {2}),
         1,
         20,
         0,
         3,
         {8, 8},
         672},
        // TfLiteReducerParams {bool} = 1; OpDataReduce {int32 x11} = 44; float SUM: input, output,
        // axis, scratch rank 4 x int and 2 axes x int, then PrepareSimple's input, axis, output.
        {"SUM",
         one({f32({1, 4, 4, 8}), i32c({2}, {1, 2}), f32({1, 8})}, {74, {0, 1}, {2}}, {0}, {2}),
         1,
         44,
         0,
         6,
         {16, 8},
         1184},
        // int8 MEAN also requests an accumulator of 8 output elements x int32 first.
        {"MEAN",
         one({i8({1, 4, 4, 8}), i32c({2}, {1, 2}), i8({1, 8})}, {40, {0, 1}, {2}}, {0}, {2}),
         1,
         44,
         0,
         6,
         {32, 16, 8},
         880},
        // REDUCE_MAX: PrepareSimple first, then input, output, axis; the same two scratch buffers.
        {"REDUCE_MAX",
         one({f32({1, 4, 4, 8}), i32c({2}, {1, 2}), f32({1, 8})}, {82, {0, 1}, {2}}, {0}, {2}),
         1,
         44,
         0,
         6,
         {16, 8},
         1184},
    };
}

// The operators TRANSPOSE_CONV .. SPACE_TO_BATCH_ND, in the order the test lists them.
std::vector<Case> transpose_conv_to_space_to_batch()
{
    const T x = f32({1, 8});
    return {
        // TfLiteTransposeConvParams {enum, int x2, enum, enum} = 16; OpData {ConvParams 56, int x2,
        // int32* x2} = 72; output, input, filter; 2 channels x int32 x2 = 16; int8 scratch
        // 1x4x4x2 x int32 = 128; then CalculateOpData's input, filter, (no bias), output.
        {"TRANSPOSE_CONV",
         one({i32c({4}, {1, 4, 4, 2}), T{{2, 3, 3, 4}, I8, true, false, {}, {}, {0.5f, 0.5f}}, i8({1, 4, 4, 4}),
              i8({1, 4, 4, 2})},
             {67, {0, 1, 2}, {3}}, {2}, {3}),
         16,
         72,
         16,
         6,
         {128},
         992},
        // TfLiteBatchMatMulParams {bool x3} = 3; OpDataBatchMatmul {2 pointers, bools} = 16;
        // lhs, rhs, output; adj_y false: a transposed rhs (TfLiteEvalTensor 12, dims 4 + 3 x 4,
        // data 12 x float = 48), then the output dims copy 16: 92.
        {"BATCH_MATMUL",
         one({f32({1, 2, 3}), f32({1, 3, 4}), f32({1, 2, 4})}, {126, {0, 1}, {2}}, {0, 1}, {2}),
         3,
         16,
         92,
         3,
         {},
         880},
        // ADD_N float, 3 inputs: input 0, output, inputs 1 and 2; 3 x sizeof(float*) = 12.
        {"ADD_N", one({x, x, x, x}, {106, {0, 1, 2}, {3}}, {0, 1, 2}, {3}), 0, 0, 0, 4, {12}, 880},
        // TfLiteCumsumParams {bool x2} = 2; input, axis, output (OpData for int8 only).
        {"CUMSUM", one({x, i32c({}, {1}), x}, {128, {0, 1}, {2}}, {0}, {2}), 2, 0, 0, 3, {}, 608},
        // select.cc OpData {bool} = 1; condition, x, y, output.
        {"SELECT_V2", one({T{{1, 8}, BOOL}, x, x, x}, {123, {0, 1, 2}, {3}}, {0, 1, 2}, {3}), 0, 1, 0, 4, {}, 832},
        // space_to_batch_nd.cc SpaceToBatchParams {int32} = 4; input, output.
        {"SPACE_TO_BATCH_ND",
         one({f32({1, 4, 4, 1}), i32c({2}, {2, 2}), i32c({2, 2}, {0, 0, 0, 0}), f32({4, 2, 2, 1})},
             {38, {0, 1, 2}, {3}}, {0}, {3}),
         0,
         4,
         0,
         2,
         {},
         704},
    };
}

// The operators FLOOR_DIV .. RESIZE_BILINEAR, in the order the test lists them.
std::vector<Case> floor_div_to_resize_bilinear()
{
    const T x = f32({1, 8});
    const T b8{{1, 8}, BOOL};
    return {
        // floor_div.cc, floor_mod.cc: Init returns nullptr; input 1, input 2, output.
        {"FLOOR_DIV", binary(90, x, x, x), 0, 0, 0, 3, {}, 704},
        {"FLOOR_MOD", binary(95, x, x, x), 0, 0, 0, 3, {}, 704},
        // log_softmax.cc: float keeps no OpData.
        {"LOG_SOFTMAX", unary(50, x, x), 0, 0, 0, 2, {}, 576},
        // int8 (the output scale 16/256 and zero point 127 TFLM requires) keeps
        // LogSoftmaxOpData (7 x 4 B with a size_t) = 28.
        {"LOG_SOFTMAX int8",
         unary(50, i8({1, 8}), T{{1, 8}, I8, false, false, {}, {}, {16.f / 256}, 127}),
         0,
         0,
         28,
         2,
         {},
         656},
        {"CEIL", unary(104, x, x), 0, 0, 0, 2, {}, 576},
        {"ROUND", unary(116, x, x), 0, 0, 0, 2, {}, 576},
        {"SIN", unary(66, x, x), 0, 0, 0, 2, {}, 576},
        {"COS", unary(108, x, x), 0, 0, 0, 2, {}, 576},
        {"SQUARE", unary(92, x, x), 0, 0, 0, 2, {}, 576},
        {"ZEROS_LIKE", unary(93, x, x), 0, 0, 0, 2, {}, 576},
        {"LOGICAL_NOT", unary(87, b8, b8), 0, 0, 0, 2, {}, 544},
        {"LOGICAL_AND", binary(86, b8, b8, b8), 0, 0, 0, 0, {}, 656},
        {"FLOOR", unary(8, x, x), 0, 0, 0, 0, {}, 576},
        {"EQUAL", binary(71, x, x, b8), 0, 32, 0, 2, {}, 720},
        {"GREATER_EQUAL", binary(62, x, x, b8), 0, 32, 0, 2, {}, 720},
        // PADV2's constant value is its third input: four temporaries.
        {"PADV2",
         one({f32({1, 4}), i32c({2, 2}, {0, 0, 1, 1}), T{{}, F32, true}, f32({1, 6})}, {60, {0, 1, 2}, {3}}, {0}, {3}),
         0,
         56,
         0,
         4,
         {},
         672},
        {"UNPACK", one({f32({2, 4}), f32({4}), f32({4})}, {88, {0}, {1, 2}}, {0}, {1, 2}), 8, 0, 0, 0, {}, 672},
        {"ARG_MIN", one({x, i32c({}, {1}), T{{1}, I32}}, {79, {0, 1}, {2}}, {0}, {2}), 1, 0, 0, 0, {}, 592},
        {"SPLIT_V",
         one({x, i32c({2}, {4, 4}), i32c({}, {1}), f32({1, 4}), f32({1, 4})}, {102, {0, 1, 2}, {3, 4}}, {0}, {3, 4}),
         4,
         0,
         0,
         1,
         {},
         720},
        // gather_nd.cc: params, indices, output; output dims 12.
        {"GATHER_ND",
         one({f32({4, 3}), T{{2, 1}, I32}, f32({2, 3})}, {107, {0, 1}, {2}}, {0, 1}, {2}),
         0,
         0,
         12,
         3,
         {},
         720},
        {"RESIZE_BILINEAR",
         one({f32({1, 2, 2, 1}), i32c({2}, {4, 4}), f32({1, 4, 4, 1})}, {23, {0, 1}, {2}}, {0}, {2}),
         2,
         0,
         0,
         3,
         {},
         624},
    };
}

// The operators BATCH_TO_SPACE_ND .. SPACE_TO_DEPTH, in the order the test lists them.
std::vector<Case> batch_to_space_to_space_to_depth()
{
    const T x = f32({1, 8});
    return {
        {"BATCH_TO_SPACE_ND",
         one({f32({4, 2, 2, 1}), i32c({2}, {2, 2}), i32c({2, 2}, {0, 0, 0, 0}), f32({1, 4, 4, 1})},
             {37, {0, 1, 2}, {3}}, {0}, {3}),
         0,
         0,
         0,
         2,
         {},
         688},
        // TfLiteShapeParams {TfLiteType} = 1; ShapePrepare takes no tensor.
        {"SHAPE", unary(77, x, T{{2}, I32}), 1, 0, 0, 0, {}, 576},
        {"FILL", one({i32c({2}, {1, 8}), T{{}, F32, true}, x}, {94, {0, 1}, {2}}, {}, {2}), 0, 0, 0, 3, {}, 496},
        {"BROADCAST_TO", one({x, i32c({2}, {2, 8}), f32({2, 8})}, {130, {0, 1}, {2}}, {0}, {2}), 0, 0, 0, 3, {}, 640},
        {"BROADCAST_ARGS",
         one({i32c({2}, {1, 8}), i32c({2}, {2, 1}), T{{2}, I32}}, {145, {0, 1}, {2}}, {}, {2}),
         0,
         0,
         0,
         3,
         {},
         480},
        {"REVERSE_V2", one({x, i32c({1}, {1}), x}, {105, {0, 1}, {2}}, {0}, {2}), 0, 0, 0, 3, {}, 608},
        {"DYNAMIC_UPDATE_SLICE",
         one({x, f32({1, 2}), i32c({2}, {0, 0}), x}, {151, {0, 1, 2}, {3}}, {0, 1}, {3}),
         0,
         0,
         0,
         4,
         {},
         720},
        {"REDUCE_MIN",
         one({f32({1, 4, 4, 8}), i32c({2}, {1, 2}), f32({1, 8})}, {89, {0, 1}, {2}}, {0}, {2}),
         1,
         44,
         0,
         6,
         {16, 8},
         1184},
        {"REDUCE_ALL",
         one({T{{1, 4, 4, 8}, BOOL}, i32c({2}, {1, 2}), T{{1, 8}, BOOL}}, {140, {0, 1}, {2}}, {0}, {2}),
         1,
         44,
         0,
         6,
         {16, 8},
         784},
        // DepthToSpaceOptions / SpaceToDepthOptions block_size 2 (union types 94, 19):
        // TfLite*Params {int} = 4; input, output; output dims 4 + 4 x 4 = 20.
        {"DEPTH_TO_SPACE",
         one({f32({1, 2, 2, 4}), f32({1, 4, 4, 1})}, {5, {0}, {1}, {}, {}, {}, 94, {}, {{0, 2}}}, {0}, {1}),
         4,
         0,
         20,
         2,
         {},
         672},
        {"SPACE_TO_DEPTH",
         one({f32({1, 4, 4, 1}), f32({1, 2, 2, 4})}, {26, {0}, {1}, {}, {}, {}, 19, {}, {{0, 2}}}, {0}, {1}),
         4,
         0,
         20,
         2,
         {},
         672},
    };
}

// The operators L2_POOL_2D .. BATCH_MATMUL int8, in the order the test lists them.
std::vector<Case> l2_pool_to_batch_matmul_int8()
{
    const T x = f32({1, 8});
    return {
        // Pool2DOptions VALID, strides 1, filter 2x2 (union type 5): TfLitePoolParams 40;
        // output, input; output dims 20.
        {"L2_POOL_2D",
         one({f32({1, 4, 4, 1}), f32({1, 3, 3, 1})},
             {12, {0}, {1}, {}, {}, {}, 5, {1}, {{1, 1}, {2, 1}, {3, 2}, {4, 2}}}, {0}, {1}),
         40,
         0,
         20,
         2,
         {},
         704},
        // embedding_lookup.cc: lookup, value, output; output dims 12, then OpData {float, a
        // pointer} = 8.
        {"EMBEDDING_LOOKUP",
         one({T{{2}, I32}, f32({4, 3}), f32({2, 3})}, {7, {0, 1}, {2}}, {0, 1}, {2}),
         0,
         0,
         20,
         3,
         {},
         736},
        // float TRANSPOSE_CONV: no accumulator and no second pass of temporaries.
        {"TRANSPOSE_CONV float",
         one({i32c({4}, {1, 4, 4, 2}), T{{2, 3, 3, 4}, F32, true}, f32({1, 4, 4, 4}), f32({1, 4, 4, 2})},
             {67, {0, 1, 2}, {3}}, {2}, {3}),
         16,
         72,
         16,
         3,
         {},
         1088},
        // int8 CUMSUM keeps OpData {int32 x9} = 36.
        {"CUMSUM int8",
         one({i8({1, 8}), i32c({}, {1}), i8({1, 8})}, {128, {0, 1}, {2}}, {0}, {2}),
         2,
         0,
         36,
         3,
         {},
         688},
        // int8 ADD_N keeps OpData {int32 x10} = 40 and requests 3 x sizeof(int8_t*) = 12.
        {"ADD_N int8",
         one({i8({1, 8}), i8({1, 8}), i8({1, 8}), i8({1, 8})}, {106, {0, 1, 2}, {3}}, {0, 1, 2}, {3}),
         0,
         0,
         40,
         4,
         {12},
         976},
        // int8 BATCH_MATMUL: QuantizationOpData 28, then the rhs copy 12 + 16 + 12 x 1, dims 16: 84.
        {"BATCH_MATMUL int8",
         one({i8({1, 2, 3}), i8({1, 3, 4}), i8({1, 2, 4})}, {126, {0, 1}, {2}}, {0, 1}, {2}),
         3,
         16,
         84,
         3,
         {},
         912},
    };
}

// TFLite_Detection_PostProcess (custom): 10 boxes, 2 classes (+ background), 3 detections:
// OpData 112; box encodings, class predictions, anchors; scratch 10, 10 x 4 x 4, 10 x 3 x 4,
// 10 x 4, 10 x 4, 3 x 10 x 4, 3 x 10 x 4, 10 x 4, 3 x 10 x 4, max(2, 3) x 10 x 4,
// min(10, 3) x 10 x 4.
std::vector<Case> detection_cases()
{
    std::vector<Case> c;
    flexbuffers::Builder fx;
    fx.Map([&] {
        fx.Int("max_detections", 3);
        fx.Int("max_classes_per_detection", 1);
        fx.Int("num_classes", 2);
        fx.Float("nms_score_threshold", 0.5f);
        fx.Float("nms_iou_threshold", 0.5f);
        fx.Float("y_scale", 10.f);
        fx.Float("x_scale", 10.f);
        fx.Float("h_scale", 5.f);
        fx.Float("w_scale", 5.f);
    });
    fx.Finish();
    Op dp{32, {0, 1, 2}, {3, 4, 5, 6}, {}, "TFLite_Detection_PostProcess", fx.GetBuffer()};
    c.push_back({"TFLite_Detection_PostProcess",
                 one({f32({1, 10, 4}), f32({1, 10, 3}), T{{10, 4}, F32, true}, f32({1, 3, 4}), f32({1, 3}), f32({1, 3}),
                      f32({1})},
                     dp, {0, 1}, {3, 4, 5, 6}),
                 0,
                 112,
                 0,
                 3,
                 {10, 160, 120, 40, 40, 120, 120, 40, 120, 120, 120},
                 2592});
    return c;
}

// Custom options: a flexbuffer map of the integer options given, by key.
std::vector<uint8_t> flex(const std::vector<std::pair<const char *, int64_t>> &kv)
{
    flexbuffers::Builder f;
    f.Map([&] {
        for (const auto &[key, value] : kv) f.Int(key, value);
    });
    f.Finish();
    return f.GetBuffer();
}

// The signal library's streaming kernels (custom, options by key order). SignalDelay,
// int16 [2, 8], delay_length 3: TFLMSignalFrontendDelayParams 20; input, output; 2 x 4 + 2 x
// 4 pointers and 2 CircularBuffer states of 24 + 2 x 2 x (8 + 3): 152.
std::vector<Case> signal_stream_cases()
{
    std::vector<Case> c;
    const T s16{{2, 8}, 7};
    c.push_back({"SignalDelay",
                 one({s16, s16}, {32, {0}, {1}, {}, "SignalDelay", flex({{"delay_length", 3}})}, {0}, {1}),
                 0,
                 20,
                 152,
                 2,
                 {},
                 848});
    // SignalFramer, int16 [1, 16], frame_size 8, frame_step 4: TFLMSignalFramerParams 28; input,
    // output, output valid; 4 + 4 and one state of 24 + 4 x 8: 64.
    c.push_back(
        {"SignalFramer",
         one({T{{1, 16}, 7}, T{{1, 4, 8}, 7}, T{{}, BOOL}},
             {32, {0}, {1, 2}, {}, "SignalFramer", flex({{"frame_size", 8}, {"frame_step", 4}, {"prefill", 0}})}, {0},
             {1, 2}),
         0,
         28,
         64,
         3,
         {},
         880});
    // SignalStacker, 4 channels, contexts 1 + 1: TFLMSignalStackerParams 36 and a CircularBuffer
    // of 24 + 4 x 12 = 72 in Init; input, output, output valid.
    c.push_back({"SignalStacker",
                 one({T{{4}, 7}, T{{12}, 7}, T{{}, BOOL}},
                     {32,
                      {0},
                      {1, 2},
                      {},
                      "SignalStacker",
                      flex({{"num_channels", 4},
                            {"stacker_left_context", 1},
                            {"stacker_right_context", 1},
                            {"stacker_step", 1}})},
                     {0}, {1, 2}),
                 0,
                 108,
                 0,
                 3,
                 {},
                 832});
    // SignalOverlapAdd, int16 [1, 2, 8], frame_step 4: TFLMSignalOverlapAddParams 24; input,
    // output; one pointer 4 and one frame state of 8 x int16: 20.
    c.push_back({"SignalOverlapAdd",
                 one({T{{1, 2, 8}, 7}, T{{1, 8}, 7}},
                     {32, {0}, {1}, {}, "SignalOverlapAdd", flex({{"T", 7}, {"frame_step", 4}})}, {0}, {1}),
                 0,
                 24,
                 20,
                 2,
                 {},
                 640});
    return c;
}

// SignalIrfft and CIRCULAR_BUFFER.
std::vector<Case> irfft_and_buffer_cases()
{
    std::vector<Case> c;
    // SignalIrfft, int16, fft_length 32: TfLiteAudioFrontendIrfftParams 24 and the kiss_fftr
    // state 12 + 268 + 4 x 15 + 4 x 24 = 436 (kiss_fftr.c kiss_fftr_alloc with kiss_fft_alloc
    // of 16, as rfft_int16.cc); input, output. int32 / float32 (cpx 8): 12 + 272 + 8 x 15 + 8 x
    // 24 = 596, float32 also IrfftFloatState 8 (16 on x86-64).
    c.push_back({"SignalIrfft",
                 one({T{{34}, 7}, T{{32}, 7}}, {32, {0}, {1}, {}, "SignalIrfft", flex({{"T", 7}, {"fft_length", 32}})},
                     {0}, {1}),
                 0,
                 460,
                 0,
                 2,
                 {},
                 1152});
    c.push_back({"SignalIrfft float",
                 one({T{{34}, F32}, f32({32})},
                     {32, {0}, {1}, {}, "SignalIrfft", flex({{"T", F32}, {"fft_length", 32}})}, {0}, {1}),
                 0,
                 628,
                 0,
                 2,
                 {},
                 1456});
    // CIRCULAR_BUFFER (custom): OpDataCircularBuffer {int32 x2} = 8; input, output.
    c.push_back({"CIRCULAR_BUFFER",
                 one({i8({1, 1, 1, 8}), i8({1, 4, 1, 8})},
                     {32, {0}, {1}, {}, "CIRCULAR_BUFFER", flex({{"cycles_max", 1}})}, {0}, {1}),
                 0,
                 8,
                 0,
                 2,
                 {},
                 640});
    return c;
}

std::vector<Case> cases()
{
    std::vector<Case> c;
    for (auto group : {logistic_to_gather, slice_to_reduce_max, transpose_conv_to_space_to_batch}) {
        const std::vector<Case> more = group();
        c.insert(c.end(), more.begin(), more.end());
    }
    // BATCH_MATMUL with adj_y (BatchMatMulOptions, union type 101, field 1): no transposed
    // copy, only the output dims: 16.
    Case adj = *std::find_if(c.begin(), c.end(), [](const Case &e) { return std::string(e.name) == "BATCH_MATMUL"; });
    adj.name = "BATCH_MATMUL adj_y";
    adj.sg.tensors[1] = f32({1, 4, 3});
    adj.sg.ops[0].options_type = 101;
    adj.sg.ops[0].option_bytes = {0, 1};
    adj.persistent = 16;
    adj.host_used = 784;
    c.push_back(adj);

    for (auto group : {floor_div_to_resize_bilinear, batch_to_space_to_space_to_depth, l2_pool_to_batch_matmul_int8,
                       detection_cases, signal_stream_cases, irfft_and_buffer_cases}) {
        const std::vector<Case> more = group();
        c.insert(c.end(), more.begin(), more.end());
    }
    return c;
}

int64_t sum(const std::vector<KernelAlloc> &v, KernelAlloc::Kind kind)
{
    int64_t s = 0;
    for (const KernelAlloc &a : v)
        if (a.kind == kind) s += a.bytes;
    return s;
}

std::string write(const std::vector<uint8_t> &bytes, const std::string &dir, const std::string &name)
{
    std::string file = name;
    for (char &ch : file)
        if (ch == ' ') ch = '_';
    const std::string path = dir + "/" + file + ".tflite";
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char *>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return path;
}

}  // namespace

TEST(Ops, EveryOperatorsArenaUseOnCortexM)
{
    const char *dump = std::getenv("ARENASCOPE_OPS_MODELS_DIR");
    for (const Case &c : cases()) {
        SCOPED_TRACE(c.name);
        const std::vector<uint8_t> bytes = test_models::build({c.sg});
        if (dump) write(bytes, dump, c.name);
        const Model m = read_model(bytes.data(), bytes.size());
        ASSERT_EQ(m.subgraphs[0].operators[0].op_name, std::string(c.name).substr(0, std::string(c.name).find(' ')));
        const KernelPrediction p = predict_kernels(m, abi_named("cortex-m"));
        EXPECT_TRUE(p.unmodelled_data.empty());
        EXPECT_TRUE(p.unmodelled.empty());
        const OpKernel &k = p.ops[0][0];
        EXPECT_EQ(sum(k.parse, KernelAlloc::Kind::BuiltinData), c.parse);
        EXPECT_EQ(sum(k.init, KernelAlloc::Kind::Persistent), c.init);
        EXPECT_EQ(sum(k.prepare, KernelAlloc::Kind::Persistent), c.persistent);
        size_t temps = 0;
        std::vector<int64_t> scratch;
        for (const KernelAlloc &a : k.prepare) {
            temps += a.kind == KernelAlloc::Kind::TempTensor;
            if (a.kind == KernelAlloc::Kind::Scratch) scratch.push_back(a.bytes);
        }
        EXPECT_EQ(temps, c.temps);
        EXPECT_EQ(scratch, c.scratch);
    }
}

// The whole arena on x86-64 against real TFLM runs of the same models.
TEST(Ops, ArenaUsedBytesMatchesRealTflmOnHost)
{
    int checked = 0;
    for (const Case &c : cases()) {
        if (c.host_used < 0) continue;
        SCOPED_TRACE(c.name);
        const std::string path = write(test_models::build({c.sg}), ::testing::TempDir(), c.name);
        const Budget b = make_budget(path, abi_named("host"));
        EXPECT_TRUE(b.minimum_exact());
        EXPECT_EQ(b.minimum.arena_used_bytes, c.host_used);
        ++checked;
    }
    if (!checked) GTEST_SKIP() << "no real TFLM measurement recorded";
}

// IF, WHILE, CALL_ONCE (options naming their subgraphs) and VAR_HANDLE, kernel by kernel:
// TfLiteIfParams / TfLiteWhileParams {int x2} = 8, TfLiteCallOnceParams {int} = 4 and their
// OpData {int x2} = 8 (if.cc, while.cc, call_once.cc); IfPrepare takes the condition only
// (IfOptions, union type 92, as real TFLM reads it).
// TfLiteVarHandleParams {const char* x2} = 8, var_handle.cc OpData {int32} = 4.
TEST(Ops, ControlFlowAndVariables)
{
    const SG leaf{{f32({1})}, {}, {0}, {0}};
    struct Expect {
        Op op;
        std::vector<T> tensors;
        int64_t parse, init;
        size_t temps;
    };
    const std::vector<Expect> ops = {
        {{118, {0, 1}, {2}, {1, 2}, {}, {}, 92}, {T{{}, BOOL}, f32({1}), f32({1})}, 8, 8, 1},
        {{119, {0}, {1}, {1, 2}}, {f32({1}), f32({1})}, 8, 8, 0},
        {{129, {}, {}, {1}}, {}, 4, 8, 0},
        {{142, {}, {0}, {}, {}, {}, 0, {0}}, {T{{}, I32}}, 8, 4, 0},
    };
    for (const Expect &e : ops) {
        SCOPED_TRACE(e.op.opcode);
        SG sg{e.tensors, {e.op}, {}, {}};
        if (e.op.opcode == 118) sg.inputs = {0, 1}, sg.outputs = {2};
        const std::vector<uint8_t> bytes = test_models::build({sg, leaf, leaf});
        if (e.op.opcode == 118) {
            // The IF model, with empty branches, on x86-64 TFLM: arena_used_bytes() 768.
            if (const char *dump = std::getenv("ARENASCOPE_OPS_MODELS_DIR")) write(bytes, dump, "IF");
            const Budget b = make_budget(write(bytes, ::testing::TempDir(), "IF"), abi_named("host"));
            EXPECT_TRUE(b.minimum_exact());
            EXPECT_EQ(b.minimum.arena_used_bytes, 768);
        }
        const KernelPrediction p = predict_kernels(read_model(bytes.data(), bytes.size()), abi_named("cortex-m"));
        const OpKernel &k = p.ops[0][0];
        EXPECT_TRUE(p.unmodelled_data.empty());
        EXPECT_EQ(sum(k.parse, KernelAlloc::Kind::BuiltinData), e.parse);
        EXPECT_EQ(sum(k.init, KernelAlloc::Kind::Persistent), e.init);
        EXPECT_EQ(sum(k.prepare, KernelAlloc::Kind::Persistent), 0);
        size_t temps = 0;
        for (const KernelAlloc &a : k.prepare) temps += a.kind == KernelAlloc::Kind::TempTensor;
        EXPECT_EQ(temps, e.temps);
    }
}
