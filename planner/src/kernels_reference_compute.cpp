// What TFLM's reference kernels allocate for the reductions, TRANSPOSE_CONV, BATCH_MATMUL,
// ADD_N, CUMSUM, DETECTION_POSTPROCESS, CIRCULAR_BUFFER, control flow and resource variables
// (see kernels.h and kernels_reference.cpp for the rules every kernel shares). Sources are
// tensorflow/lite/micro/kernels/ at tflite-micro 90b983c2; the Parse functions are
// tensorflow/lite/core/api/flatbuffer_conversions.cc Parse<Op>. Sizes {cortex-m, x86-64} are
// sizeof checked with probes compiled against TFLM's headers (docs/arena-budget.md,
// "Operators modelled").
#include <flatbuffers/flexbuffers.h>

#include <algorithm>

#include "kernels_reference_families.h"

namespace arenascope::planner::rules {

namespace {

// clang-format off
const SimpleRule kRules[] = {
    // ParseReducer; reduce.cc InitReduce (OpDataReduce); Prepare below.
    {"MEAN", {1, 1}, {1, 1}, "TfLiteReducerParams", 44, 44, "OpDataReduce", ""},
    {"SUM", {1, 1}, {1, 1}, "TfLiteReducerParams", 44, 44, "OpDataReduce", ""},
    {"REDUCE_MAX", {1, 1}, {1, 1}, "TfLiteReducerParams", 44, 44, "OpDataReduce", ""},
    {"REDUCE_MIN", {1, 1}, {1, 1}, "TfLiteReducerParams", 44, 44, "OpDataReduce", ""},
    {"REDUCE_ALL", {1, 1}, {1, 1}, "TfLiteReducerParams", 44, 44, "OpDataReduce", ""},
    // ParseTransposeConv; transpose_conv.cc TransposeConvInit (OpData: ConvParams, indices and
    // two pointers); Prepare below.
    {"TRANSPOSE_CONV", {16, 4}, {20, 4}, "TfLiteTransposeConvParams", 72, 80, "transpose_conv OpData", "o0 i2 i1"},
    // ParseBatchMatMul; batch_matmul.cc BatchMatMulInit (OpDataBatchMatmul); Prepare's
    // PrepareOpContext takes lhs, rhs, output; the rest below.
    {"BATCH_MATMUL", {3, 1}, {3, 1}, "TfLiteBatchMatMulParams", 16, 32, "OpDataBatchMatmul", "i0 i1 o0"},
    // add_n.cc: no Init; CalculateOpData takes input 0 and the output, then inputs 1.. (below).
    {"ADD_N", {}, {}, nullptr, 0, 0, nullptr, "i0 o0"},
    // ParseCumsum; cumsum.cc: no Init; CalculateOpData: input, axis, output (OpData below).
    {"CUMSUM", {2, 1}, {2, 1}, "TfLiteCumsumParams", 0, 0, nullptr, "i0 i1 o0"},
    // detection_postprocess.cc DetectionPostProcessInit (OpData), Prepare: box encodings,
    // class predictions, anchors; the scratch buffers below. A custom operator: no Parse.
    {"TFLite_Detection_PostProcess", {}, {}, nullptr, 112, 112, "detection_postprocess OpData", "i0 i1 i2"},
    // circular_buffer.cc CircularBufferInit (OpDataCircularBuffer), circular_buffer_common.cc
    // CircularBufferPrepare: input, output. A custom operator.
    {"CIRCULAR_BUFFER", {}, {}, nullptr, 8, 8, "OpDataCircularBuffer", "i0 o0"},
    // ParseIf; if.cc IfInit (OpData: two subgraph indices), IfPrepare: the condition.
    {"IF", {8, 4}, {8, 4}, "TfLiteIfParams", 8, 8, "if OpData", "i0"},
    // ParseWhile; while.cc WhileInit (OpData), WhilePrepare takes no tensor.
    {"WHILE", {8, 4}, {8, 4}, "TfLiteWhileParams", 8, 8, "while OpData", ""},
    // ParseCallOnce; call_once.cc CallOnceInit (OpData), CallOncePrepare takes no tensor.
    {"CALL_ONCE", {4, 4}, {4, 4}, "TfLiteCallOnceParams", 8, 8, "call_once OpData", ""},
    // ParseVarHandle (two const char*); var_handle.cc VarHandleInit (OpData {int32}); Prepare
    // allocates in the MicroResourceVariables the application passes, not in this arena.
    {"VAR_HANDLE", {8, 4}, {16, 8}, "TfLiteVarHandleParams", 4, 4, "var_handle OpData", ""},
    // read_variable.cc Prepare: the resource id.
    {"READ_VARIABLE", {}, {}, nullptr, 0, 0, nullptr, "i0"},
    // assign_variable.cc: Init only with USE_TFLM_COMPRESSION; Prepare: the value (input 1).
    {"ASSIGN_VARIABLE", {}, {}, nullptr, 0, 0, nullptr, "i1"},
};
// clang-format on

// A custom operator's integer option by key (detection_postprocess.cc Init reads
// m["max_detections"] etc. with flexbuffers); -1 when it is not there.
int64_t flex_key(const Operator &op, const char *key)
{
    const auto &opts = op.custom_options;
    std::vector<uint8_t> reuse;
    if (opts.empty() || !flexbuffers::VerifyBuffer(opts.data(), opts.size(), &reuse)) return -1;
    const flexbuffers::Reference root = flexbuffers::GetRoot(opts.data(), opts.size());
    if (!root.IsMap()) return -1;
    const flexbuffers::Reference v = root.AsMap()[key];
    if (!v.IsIntOrUint()) return -1;
    const int64_t n = v.AsInt64();
    return n >= 0 && n <= (int64_t{1} << 24) ? n : -1;
}

// reduce_common.cc PrepareMeanOrSumHelper (MEAN, SUM), PrepareMinMaxHelper (REDUCE_MAX,
// REDUCE_MIN), PrepareAllHelper (REDUCE_ALL); PrepareSimple takes input, axis, output.
bool reduce(Kernel &k)
{
    const std::string &n = k.op.op_name;
    const Tensor *in = k.input(0), *axis = k.input(1), *out = k.output(0);
    if (!in || !axis || !out) return false;
    const auto simple = [&] {  // PrepareSimple: input, axis, output
        k.temp_inputs({0, 1});
        k.temp(out);
    };
    const auto helper = [&] {  // the helpers: input, output, axis
        k.temp(in);
        k.temp(out);
        k.temp(axis);
    };
    const int64_t rank = static_cast<int64_t>(in->shape.size()), axes = elements(axis);
    if (axes < 0) return false;
    if (n == "MEAN" || n == "SUM") {
        helper();
        if (in->type == kTypeInt8 || in->type == kTypeInt16) {
            const int64_t outputs = elements(out);
            if (outputs < 0) return false;
            k.scratch(4 * outputs, n + " accumulator (output elements x int32)");
        }
        k.scratch(4 * rank, n + " input iterator (rank x int)");
        k.scratch(4 * axes, n + " resolved axes (axis elements x int)");
        simple();
    } else {
        if (n == "REDUCE_ALL") {
            helper();
            simple();
        } else {
            simple();
            helper();
        }
        k.scratch(4 * rank, n + " input iterator (rank x int)");
        k.scratch(4 * axes, n + " resolved axes (axis elements x int)");
    }
    return true;
}

// transpose_conv.cc TransposeConvPrepare (after the output, input and filter): multipliers and
// shifts for filter dim 0 channels; scratch of output elements x int32 (int8) or x int64
// (int16); then for a non-float input CalculateOpData takes input, filter, bias, output, and
// an int16 input with an int16 bias requests bias elements x int64.
bool transpose_conv(Kernel &k)
{
    const Tensor *in = k.input(2), *filter = k.input(1), *bias = k.input(3), *out = k.output(0);
    if (!in || !filter || !out || filter->shape.empty()) return false;
    const int64_t channels = filter->shape[0], outputs = elements(out);
    if (outputs < 0) return false;
    k.per_channel(channels);
    if (in->type == kTypeInt8) k.scratch(4 * outputs, "TRANSPOSE_CONV accumulator (output elements x int32)");
    if (in->type == kTypeInt16) k.scratch(8 * outputs, "TRANSPOSE_CONV accumulator (output elements x int64)");
    if (in->type != kTypeFloat32) {
        k.temp_inputs({2, 1, 3});
        k.temp(out);
        if (in->type == kTypeInt16 && bias && bias->type == kTypeInt16) {
            const int64_t b = elements(bias);
            if (b < 0) return false;
            k.scratch(8 * b, "TRANSPOSE_CONV int64 bias (bias elements x int64)");
        }
    }
    return true;
}

// batch_matmul.cc InitializeTemporaries: the quantization struct for int8/int16; a transposed
// copy of lhs when adj_x and of rhs unless adj_y (AllocInitTransposeTensorFromTfLiteTensor: a
// TfLiteEvalTensor, its dims, its data); batch_matmul_common.cc ReshapeOutputTensor: the
// output dims copy.
bool batch_matmul(Kernel &k)
{
    const Tensor *lhs = k.input(0), *rhs = k.input(1);
    if (!lhs || !rhs) return false;
    const bool adj_x = k.option(101, 0) != 0, adj_y = k.option(101, 1) != 0;  // BatchMatMulOptions
    if (lhs->type == kTypeInt8 || lhs->type == kTypeInt16) k.persistent(28, "batch_matmul QuantizationOpData");
    auto transposed = [&](const Tensor *t, const char *which) {
        k.persistent(k.ilp32 ? 12 : 24, std::string("TfLiteEvalTensor of the transposed ") + which);
        k.persistent(4 + 4 * static_cast<int64_t>(t->shape.size()), std::string("its dims (") + which + ")");
        k.persistent(elements(t) * type_size(t->type), std::string("its data (") + which + ")");
    };
    if (elements(lhs) < 0 || elements(rhs) < 0) return false;
    if (adj_x) transposed(lhs, "lhs");
    if (!adj_y) transposed(rhs, "rhs");
    dims_copy(k, k.output(0));
    return true;
}

// add_n.cc CalculateOpData (after input 0 and the output): inputs 1.. one by one; float32
// requests inputs x sizeof(float*), int8 keeps OpData and requests inputs x sizeof(int8_t*).
bool add_n(Kernel &k)
{
    const Tensor *out = k.output(0);
    if (!out) return false;
    for (size_t i = 1; i < k.op.inputs.size(); ++i) k.temp(k.input(i));
    const int64_t ptrs = static_cast<int64_t>(k.op.inputs.size()) * (k.ilp32 ? 4 : 8);
    if (out->type == kTypeInt8) k.persistent(40, "add_n OpData");
    if (out->type == kTypeFloat32 || out->type == kTypeInt8) k.scratch(ptrs, "ADD_N input pointers");
    return true;
}

// detection_postprocess.cc DetectionPostProcessPrepare: num_boxes = box encodings dim 1,
// max_detections and num_classes from the custom options.
bool detection_postprocess(Kernel &k)
{
    const Tensor *boxes = k.input(0), *classes = k.input(1);
    const int64_t max_det = flex_key(k.op, "max_detections"), num_classes = flex_key(k.op, "num_classes");
    if (!boxes || !classes || boxes->shape.size() != 3 || classes->shape.size() != 3 || max_det < 0 || num_classes < 0)
        return false;
    const int64_t n = boxes->shape[1];
    k.scratch(n, "active candidates (num_boxes x 1)");
    k.scratch(n * 4 * 4, "decoded boxes (num_boxes x 4 x float)");
    k.scratch(int64_t{classes->shape[1]} * classes->shape[2] * 4, "scores (float)");
    k.scratch(n * 4, "score buffer (num_boxes x float)");
    k.scratch(n * 4, "keep scores (num_boxes x float)");
    k.scratch(max_det * n * 4, "scores after regular NMS (float)");
    k.scratch(max_det * n * 4, "sorted values (float)");
    k.scratch(n * 4, "keep indices (num_boxes x int)");
    k.scratch(max_det * n * 4, "sorted indices (int)");
    k.scratch(std::max(num_classes, max_det) * n * 4, "buffer (int)");
    k.scratch(std::min(n, max_det) * n * 4, "selected (int)");
    return true;
}

}  // namespace

bool compute_kernel(Kernel &k, bool &modelled, bool &scratch_ok)
{
    const std::string &n = k.op.op_name;
    if (n == "TFLite_Detection_PostProcess" || n == "CIRCULAR_BUFFER") {
        if (k.op.opcode != kBuiltinCustom) return false;
    }
    if (!apply_table(k, kRules, sizeof kRules / sizeof kRules[0])) return false;
    modelled = true;
    if (n == "MEAN" || n == "SUM" || n.rfind("REDUCE_", 0) == 0)
        modelled = reduce(k);
    else if (n == "TRANSPOSE_CONV")
        modelled = transpose_conv(k);
    else if (n == "BATCH_MATMUL")
        modelled = batch_matmul(k);
    else if (n == "ADD_N")
        modelled = add_n(k);
    else if (n == "TFLite_Detection_PostProcess")
        modelled = detection_postprocess(k);
    else if (n == "CUMSUM" && k.output(0) && k.output(0)->type == kTypeInt8)
        k.persistent(36, "cumsum OpData");  // cumsum.cc CalculateOpData, int8 output only
    // ASSIGN_VARIABLE with a constant resource id allocates the variable's bytes
    // (micro_resource_variable.cc Allocate): not modelled.
    if (n == "ASSIGN_VARIABLE" && k.input(0) && k.input(0)->has_data) modelled = false;
    scratch_ok = modelled;
    return true;
}

}  // namespace arenascope::planner::rules
