// What TFLM's CMSIS-NN kernels allocate in the arena (see kernels.h). A CMSIS-NN build
// (OPTIMIZED_KERNEL_DIR=cmsis_nn) replaces the reference kernels of the same name with
// tensorflow/lite/micro/kernels/cmsis_nn/*.cc (tflite-micro 90b983c2); their Prepare asks
// CMSIS-NN (ARM-software/CMSIS-NN 4ab83cc3, the commit TFLM pins) for scratch sizes through the
// arm_*_get_buffer_size* functions, whose answers depend on the code path the CPU compiles:
// MVE (ARM_MATH_MVEI), DSP (ARM_MATH_DSP) or plain C. Each rule cites its TFLM file and CMSIS-NN
// function. Assumptions, as TFLM's Makefile builds (tools/make/Makefile):
//  - KERNELS_OPTIMIZED_FOR_SPEED (OPTIMIZE_KERNELS_FOR's default): MVE kernel sums of constant
//    weights go in persistent buffers instead of scratch;
//  - arm-none-eabi-gcc, not armclang: arm_convolve_1x1_s8_fast_get_buffer_size_dsp is 0, and
//    CONVERT_DW_CONV_WITH_ONE_INPUT_CH_AND_OUTPUT_CH_ABOVE_THRESHOLD is 1
//    (Include/arm_nnsupportfunctions.h).
// OpData sizes are sizeof on arm-none-eabi-g++ 12.2 (-mcpu=cortex-m3/m4/m55, the same on each),
// probed by compiling each cmsis_nn/*.cc with a sizeof export. The other kernels of a CMSIS-NN
// build are the reference ones (kernels_reference.cpp); ADD, MUL, MAXIMUM, MINIMUM, PAD and
// TRANSPOSE have CMSIS-NN files but allocate as the reference kernels do (add.cc's OpData is 60 B
// like OpDataAdd; mul.cc, pad.cc and transpose.cc reuse the reference Init and Prepare;
// maximum_minimum.cc has neither).
#include <algorithm>

#include "kernel_rules.h"

namespace arenascope::planner::rules {

namespace {

constexpr int kOptionsConv = 1, kOptionsDepthwise = 2, kOptionsSvdf = 6, kOptionsTransposeConv = 49;

// cmsis_nn_dims {n, h, w, c} and the parts of cmsis_nn_conv_params the size functions read.
struct Dims {
    int64_t n = 0, h = 0, w = 0, c = 0;
};
struct ConvGeometry {
    int64_t stride_w = 0, stride_h = 0, pad_w = 0, pad_h = 0, dilation_w = 0, dilation_h = 0;
};

// tensorflow/lite/kernels/padding.h ComputePaddingHeightWidth for one dimension: the output size
// TFLM computes (ComputeOutSizeChecked) and the padding before it (ComputePaddingWithOffsetChecked);
// 0 when the arguments are invalid (the unchecked wrappers return 0 then). Padding: the schema's
// Padding (SAME 0, VALID 1), as ParseConv2D/ParsePool's ConvertPadding maps it.
int64_t padding_of(int padding, int64_t in, int64_t filter, int64_t stride, int64_t dilation)
{
    if ((padding != 0 && padding != 1) || in < 0 || filter <= 0 || stride <= 0 || dilation <= 0) return 0;
    const int64_t effective = (filter - 1) * dilation + 1;
    const int64_t out = padding == 0 ? (in + stride - 1) / stride : (in + stride - effective) / stride;
    if (out < 0) return 0;
    const int64_t total = (out - 1) * stride + effective - in;
    return total > 0 ? total / 2 : 0;
}

const Tensor *nhwc(const Tensor *t)
{
    return t && t->shape.size() == 4 ? t : nullptr;
}

// Source/ConvolutionFunctions/arm_convolve_get_buffer_sizes_s8.c arm_convolve_s8_get_buffer_size
// (MVE: arm_convolve_s8_get_buffer_size_mve).
int64_t convolve_s8(const Cpu &cpu, const Dims &in, const Dims &filter)
{
    const int64_t cols = in.c * filter.w * filter.h;
    if (cpu.mve) return 4 * ((cols + 15) / 16) * 16;
    return 2 * ((cols + 3) / 4 * 4) * 2;
}

// arm_convolve_get_buffer_sizes_s8.c arm_convolve_1_x_n_s8_get_buffer_size(_mve).
int64_t convolve_1_x_n_s8(const Cpu &cpu, const ConvGeometry &g, const Dims &in, const Dims &filter, const Dims &out)
{
    if (!cpu.mve) return convolve_s8(cpu, in, filter);
    const int64_t total_pad = (out.w - 1) * g.stride_w + filter.w - in.w;
    const int64_t asym_pad = total_pad % 2;
    const int64_t right =
        g.pad_w + asym_pad != 0 ? std::max<int64_t>(1, (g.pad_w + asym_pad + g.stride_w - 1) / g.stride_w) : 0;
    const int64_t left = g.pad_w != 0 ? std::max<int64_t>(1, (g.pad_w + g.stride_w - 1) / g.stride_w) : 0;
    const int64_t no_pad = std::max<int64_t>(out.w - (right + left), 0);
    if (right + no_pad + left != out.w) return convolve_s8(cpu, in, filter);
    const int64_t pad_left = g.pad_w * in.c;
    const int64_t pad_right = asym_pad ? right * in.c : pad_left;
    const int64_t elem_left = filter.w * in.c;
    const int64_t elem_right = elem_left - in.c;
    return std::max(elem_left + pad_left, elem_right + pad_right);
}

// arm_convolve_get_buffer_sizes_s8.c arm_convolve_wrapper_s8_get_buffer_size (and its _mve and
// _dsp forms, which pick the same paths), with arm_nnsupportfunctions.h arm_nn_is_convolve_1x1,
// arm_nn_is_convolve_1x1_fast and arm_nn_is_convolve_1_x_n. A 1x1 convolution needs no buffer
// with gcc on any core (arm_convolve_1x1_s8_fast_get_buffer_size is 0 but for armclang's DSP path).
int64_t convolve_wrapper_s8(const Cpu &cpu, const ConvGeometry &g, const Dims &in, const Dims &filter, const Dims &out)
{
    const bool is_1x1 = g.pad_w == 0 && g.pad_h == 0 && filter.w == 1 && filter.h == 1 && g.dilation_w == 1 &&
                        g.dilation_h == 1 && in.c == filter.c;
    if (is_1x1) return 0;
    const bool is_1_x_n =
        in.h == 1 && g.dilation_w == 1 && filter.h == 1 && (g.stride_w * in.c) % 4 == 0 && in.c == filter.c;
    if (is_1_x_n) return convolve_1_x_n_s8(cpu, g, in, filter, out);
    return convolve_s8(cpu, in, filter);
}

// Source/ConvolutionFunctions/arm_convolve_get_buffer_sizes_s16.c
// arm_convolve_wrapper_s16_get_buffer_size = arm_convolve_s16_get_buffer_size(_mve).
int64_t convolve_wrapper_s16(const Cpu &cpu, const Dims &in, const Dims &filter)
{
    const int64_t cols = in.c * filter.w * filter.h;
    if (cpu.mve) return 4 * ((cols + 7) / 8) * 8 * 2;
    return 2 * cols * 2;
}

// cmsis_nn/conv.cc Init (OpData {OpDataConv; int buffer_idx}: 60 B) and Prepare: input, filter,
// output (the bias goes through AllocateTempOutputTensor(node, kConvBiasTensor), which is null
// for a one-output node, so bias_type is kTfLiteNoType); per-channel multipliers and shifts for
// int8/int16 input; CalculateOpDataConv (conv_common.cc: input, filter, bias, output again and
// the padding); then arm_convolve_wrapper_s8/_s16_get_buffer_size of scratch when above 0.
bool conv(Kernel &k)
{
    k.builtin({28, 4}, {28, 4}, "TfLiteConvParams");
    k.init(60, 60, "OpData (cmsis_nn/conv.cc)");
    const Tensor *in = nhwc(k.input(0)), *filter = nhwc(k.input(1)), *out = nhwc(k.output(0));
    if (!in || !filter || !out) return false;
    k.temp(in);
    k.temp(filter);
    k.temp(out);
    const bool quantized = in->type == kTypeInt8 || in->type == kTypeInt16;
    if (quantized) {
        k.per_channel(filter->shape[0]);
    }
    k.temp_inputs({0, 1, 2});
    k.temp(out);
    if (!quantized) return true;
    const int padding = k.option(kOptionsConv, 0);
    ConvGeometry g;
    g.stride_w = k.option(kOptionsConv, 1);
    g.stride_h = k.option(kOptionsConv, 2);
    if (g.stride_w <= 0 || g.stride_h <= 0) return false;  // the MVE 1 x n size divides by the stride
    g.dilation_w = k.option(kOptionsConv, 4);
    g.dilation_h = k.option(kOptionsConv, 5);
    const Dims id{in->shape[0], in->shape[1], in->shape[2], in->shape[3]};
    const Dims fd{1, filter->shape[1], filter->shape[2], filter->shape[3]};
    const Dims od{out->shape[0], out->shape[1], out->shape[2], out->shape[3]};
    g.pad_h = padding_of(padding, id.h, fd.h, g.stride_h, g.dilation_h);
    g.pad_w = padding_of(padding, id.w, fd.w, g.stride_w, g.dilation_w);
    const int64_t bytes = in->type == kTypeInt8 ? convolve_wrapper_s8(k.build.cpu, g, id, fd, od)
                                                : convolve_wrapper_s16(k.build.cpu, id, fd);
    if (bytes > 0)
        k.scratch(bytes, "CMSIS-NN convolution buffer (arm_convolve_wrapper_" +
                             std::string(in->type == kTypeInt8 ? "s8" : "s16") + "_get_buffer_size)");
    return true;
}

// Source/ConvolutionFunctions/arm_depthwise_conv_get_buffer_sizes_s8.c and _s4.c
// arm_depthwise_conv_s8_opt_get_buffer_size: MVE 4 x CH_IN_BLOCK_MVE (124) x kernel area; DSP
// input channels x kernel area x int16; plain C 0 (the s4 form takes the DSP size without DSP).
int64_t depthwise_opt(const Cpu &cpu, const Dims &in, const Dims &filter, bool int4)
{
    if (cpu.mve) return 4 * 124 * filter.w * filter.h;
    if (cpu.dsp || int4) return in.c * filter.w * filter.h * 2;
    return 0;
}

// cmsis_nn/depthwise_conv.cc Init (OpData {OpDataConv; int buffer_idx}: 60 B) and Prepare:
// input, filter, output; per-channel multipliers and shifts for int8/int16 input;
// CalculateOpDataDepthwiseConv (depthwise_conv_common.cc: input, filter, bias, output again);
// for int8 input the scratch of arm_depthwise_conv_wrapper_s8_get_buffer_size (int4 filter:
// _s4_). Its cmsis_nn_dw_conv_params carries padding and dilation only: stride is left
// uninitialized in Prepare, which matters to the MVE one-input-channel path through
// arm_convolve_wrapper_s8_get_buffer_size_mve's 1 x n case only; that case is not modelled.
bool depthwise(Kernel &k, bool &scratch_ok)
{
    k.builtin({28, 4}, {28, 4}, "TfLiteDepthwiseConvParams");
    k.init(60, 60, "OpData (cmsis_nn/depthwise_conv.cc)");
    const Tensor *in = nhwc(k.input(0)), *filter = nhwc(k.input(1)), *out = nhwc(k.output(0));
    if (!in || !filter || !out) return scratch_ok = false;
    k.temp(in);
    k.temp(filter);
    k.temp(out);
    if (in->type == kTypeInt8 || in->type == kTypeInt16) {
        k.per_channel(filter->shape[3]);
    }
    k.temp_inputs({0, 1, 2});
    k.temp(out);
    if (in->type != kTypeInt8) return true;
    const Cpu &cpu = k.build.cpu;
    const int padding = k.option(kOptionsDepthwise, 0);
    const int64_t stride_w = k.option(kOptionsDepthwise, 1), stride_h = k.option(kOptionsDepthwise, 2);
    const int64_t dil_w = k.option(kOptionsDepthwise, 5), dil_h = k.option(kOptionsDepthwise, 6);
    const Dims id{in->shape[0], in->shape[1], in->shape[2], in->shape[3]};
    const Dims fd{1, filter->shape[1], filter->shape[2], out->shape[3]};
    const Dims od{out->shape[0], out->shape[1], out->shape[2], out->shape[3]};
    const int64_t pad_h = padding_of(padding, id.h, fd.h, stride_h, dil_h);
    const int64_t pad_w = padding_of(padding, id.w, fd.w, stride_w, dil_w);
    const bool int4 = filter->type == kTypeInt4;
    if (filter->type != kTypeInt8 && !int4) return true;  // "Filter type ... not supported": Prepare fails
    const bool opt = id.c == od.c && id.n == 1 && dil_w == 1 && dil_h == 1;
    int64_t bytes = 0;
    if (!int4 && cpu.mve && id.c == 1 && od.c > 1) {
        // arm_deptwise_conv_s8_one_in_ch_get_buffer_size_mve: the depthwise convolution as a
        // convolution of filter {n = channels, h, w, c = 1}, plus the reordered filter.
        const Dims conv_filter{fd.c, fd.h, fd.w, 1};
        const bool is_1x1 = pad_w == 0 && pad_h == 0 && fd.w == 1 && fd.h == 1 && dil_w == 1 && dil_h == 1;
        if (!is_1x1 && id.h == 1 && dil_w == 1 && fd.h == 1) {
            scratch_ok = false;  // the 1 x n test reads the uninitialized stride
            return true;
        }
        bytes = (is_1x1 ? 0 : convolve_s8(cpu, id, conv_filter)) + fd.c * fd.h * fd.w;
    } else if (opt) {
        // arm_depthwise_conv_wrapper_s8_get_buffer_size: without MVE, a 3x3 kernel with padding
        // <= 1 takes arm_depthwise_conv_3x3_s8, which needs no buffer (not so for int4).
        const bool three_by_three = !cpu.mve && !int4 && fd.w == 3 && fd.h == 3 && pad_h <= 1 && pad_w <= 1;
        bytes = three_by_three ? 0 : depthwise_opt(cpu, id, fd, int4);
    }
    if (bytes > 0)
        k.scratch(bytes, "CMSIS-NN depthwise buffer (arm_depthwise_conv_wrapper_" + std::string(int4 ? "s4" : "s8") +
                             "_get_buffer_size)");
    return true;
}

// cmsis_nn/fully_connected.cc Init (OpData {OpDataFullyConnected; 2 buffer indices; int32_t*
// kernel_sums; batches, accum_depth, output_depth}: 72 B) and Prepare: input, filter, bias,
// output; CalculateOpDataFullyConnected (fully_connected_common.cc: per-channel multipliers and
// shifts for a quantized per-channel filter); then for int8 input with an int8 filter:
//  - output rank > 2 and accum_depth % 4 == 0 (the 1x1-convolution path): a per-tensor filter
//    gets output_depth x 2 x int32 of scratch; arm_convolve_1x1_s8_fast_get_buffer_size is 0;
//  - else arm_fully_connected_s8_get_buffer_size (FullyConnectedFunctions/
//    arm_fully_connected_get_buffer_sizes_s8.c: MVE output_depth x int32, else 0), which with a
//    constant filter and bias becomes a persistent buffer of kernel sums (arm_vector_sum_s8);
// int16 input: arm_fully_connected_s16_get_buffer_size is 0. No INT4 unpacking buffer: CMSIS-NN
// takes INT4 weights as they are.
bool fully_connected(Kernel &k)
{
    k.builtin({5, 1}, {16, 4}, "TfLiteFullyConnectedParams");
    k.init(72, 72, "OpData (cmsis_nn/fully_connected.cc)");
    const Tensor *in = k.input(0), *filter = k.input(1), *bias = k.input(2), *out = k.output(0);
    if (!in || !filter || !out || filter->shape.empty() || out->shape.size() < 2) return false;
    k.temp_inputs({0, 1, 2});
    k.temp(out);
    const bool per_channel = in->type != kTypeFloat32 && filter->quant_channels > 1;
    if (per_channel) {
        k.per_channel(filter->quant_channels);
    }
    if (in->type != kTypeInt8 || filter->type == kTypeInt4) return true;
    const int64_t accum_depth = filter->shape.back(), output_depth = out->shape.back();
    if (out->shape.size() > 2 && accum_depth % 4 == 0) {
        if (!per_channel) k.scratch(output_depth * 4 * 2, "per-channel quantization for the 1x1 path");
        return true;
    }
    if (!k.build.cpu.mve) return true;
    const int64_t bytes = output_depth * 4;
    if (filter->has_data && (!bias || bias->has_data))
        k.persistent(bytes, "kernel sums (arm_vector_sum_s8)");
    else
        k.scratch(bytes, "CMSIS-NN fully connected buffer (arm_fully_connected_s8_get_buffer_size)");
    return true;
}

// cmsis_nn/pooling.cc Init (OpData {OpDataPooling; int buffer_idx}: 36 B); MaxPrepare and
// AveragePrepare run PoolingPrepare (pooling_common.cc: input, output); AveragePrepare takes
// input and output again and, for int8/int16, requests arm_avgpool_s8/_s16_get_buffer_size
// (PoolingFunctions/arm_avgpool_get_buffer_sizes_s8.c, _s16.c: DSP without MVE channels x int32,
// else 0).
bool pooling(Kernel &k, bool average)
{
    k.builtin({40, 4}, {40, 4}, "TfLitePoolParams");
    k.init(36, 36, "OpData (cmsis_nn/pooling.cc)");
    inspect(k, {0});
    if (!average) return true;
    inspect(k, {0});
    const Tensor *in = nhwc(k.input(0));
    if (!in) return false;
    if ((in->type == kTypeInt8 || in->type == kTypeInt16) && k.build.cpu.dsp && !k.build.cpu.mve)
        k.scratch(4LL * in->shape[3], "CMSIS-NN average pool buffer (arm_avgpool_get_buffer_size)");
    return true;
}

// cmsis_nn/softmax.cc Init (CMSISNNSoftmaxParams {SoftmaxParams; num_rows; row_size}: 64 B) and
// Prepare: input, output, then CalculateSoftmaxParams (softmax_common.cc: the two int16 lookup
// tables for int16 input, as the reference kernel).
bool softmax(Kernel &k)
{
    k.builtin({4, 4}, {4, 4}, "TfLiteSoftmaxParams");
    k.init(64, 64, "CMSISNNSoftmaxParams");
    inspect(k, {0});
    k.softmax_int16_tables();
    return true;
}

// cmsis_nn/svdf.cc Init (CmsisNnOpDataSvdf: 40 B) and CmsisNnPrepareSvdf: input,
// weights_feature, weights_time, bias, activation_state, output; int8: scratch batch x
// num_filters x int32 and batch x (num_filters / rank) x int32, then
// arm_svdf_s8_get_buffer_size (SVDFunctions/arm_svdf_get_buffer_sizes_s8.c: MVE num_filters x
// int32, else 0) as persistent kernel sums; float: scratch batch x num_filters x float.
bool svdf(Kernel &k)
{
    k.builtin({8, 4}, {12, 4}, "TfLiteSVDFParams");
    k.init(40, 40, "CmsisNnOpDataSvdf");
    const Tensor *in = k.input(0), *wf = k.input(1);
    const int64_t rank = k.option(kOptionsSvdf, 0);
    if (!in || !wf || in->shape.size() != 2 || wf->shape.size() != 2 || rank <= 0) return false;
    k.temp_inputs({0, 1, 2, 3, 4});
    k.temp(k.output(0));
    const int64_t batch = in->shape[0], filters = wf->shape[0];
    k.scratch(batch * filters * 4, "SVDF scratch");
    if (in->type == kTypeInt8) {
        k.scratch(batch * (filters / rank) * 4, "SVDF output scratch");
        if (k.build.cpu.mve) k.persistent(filters * 4, "kernel sums (arm_vector_sum_s8)");
    }
    return true;
}

// cmsis_nn/unidirectional_sequence_lstm.cc Init (OpData {OpDataLSTM; cmsis_nn_lstm_params}: 912 B)
// and Prepare: LstmTensors (inputs 0..23, output), PrepareGateParametersInteger's per-channel
// multipliers and shifts (as the reference kernel, lstm_eval_common.cc); for int8 or int16
// activations with an int16 cell state CMSIS_NN_PortOpData keeps 8 kernel sums of
// state_dimension x int32 (int8) or x int64 (int16) and 3 scratch buffers, else 4; each scratch
// is batch x state_dimension x sizeof(cell state).
bool lstm(Kernel &k)
{
    k.builtin({16, 4}, {16, 4}, "TfLiteUnidirectionalSequenceLSTMParams");
    k.init(912, 912, "OpData (cmsis_nn/unidirectional_sequence_lstm.cc)");
    const Tensor *in = k.input(0), *cell = k.input(19);
    if (!in || !cell || cell->shape.size() != 2 || (cell->type != kTypeInt16 && cell->type != kTypeFloat32))
        return false;
    for (size_t i = 0; i < 24; ++i) k.temp(k.input(i));
    k.temp(k.output(0));
    if (cell->type == kTypeInt16) k.lstm_gate_per_channel();
    const int64_t state = cell->shape[1];
    int buffers = 4;
    if (cell->type == kTypeInt16 && (in->type == kTypeInt8 || in->type == kTypeInt16)) {
        buffers = 3;
        const int64_t sum = in->type == kTypeInt8 ? 4 : 8;
        for (int i = 0; i < 8; ++i) k.persistent(state * sum, "LSTM kernel sums");
    }
    const int64_t bytes = int64_t{cell->shape[0]} * state * type_size(cell->type);
    for (int i = 0; i < buffers; ++i) k.scratch(bytes, "LSTM gate scratch");
    return true;
}

// Source/ConvolutionFunctions/arm_transpose_conv_get_buffer_sizes_s8.c: with stride <= 2 both
// ways and more than REVERSE_TCOL_EFFICIENT_THRESHOLD (16) input channels, the reverse
// convolution's buffer (arm_convolve_s8_get_buffer_size of the input upsampled by the stride) and
// the reversed filter (channels x kernel area x output channels); else a column buffer of
// ((input w - 1) x stride_w + max(filter w, stride_h)) x output channels x max(filter h, stride_h)
// x int32 (stride_h twice, as the source has it) and no reversed filter.
struct TransposeBuffers {
    int64_t scratch = 0, reverse = 0;
};
TransposeBuffers transpose_conv_s8(const Cpu &cpu, int64_t stride_w, int64_t stride_h, const Dims &in,
                                   const Dims &filter, const Dims &out)
{
    if (stride_w <= 2 && stride_h <= 2 && in.c > 16)
        return {convolve_s8(cpu, Dims{in.n, in.h * stride_h, in.w * stride_w, in.c}, filter),
                in.c * filter.w * filter.h * filter.n};
    const int64_t buf_x = ((in.w - 1) * stride_w + std::max(filter.w, stride_h)) * out.c;
    return {buf_x * std::max(filter.h, stride_h) * 4, 0};
}

// cmsis_nn/transpose_conv.cc Init (OpData {ConvParams; 3 buffer indices; 2 pointers}: 76 B) and
// Prepare: output, input (input 2), filter (input 1); per-channel multipliers and shifts for the
// filter's dim 0 whatever the type; int8: the two CMSIS-NN buffers (both requested, even of 0
// bytes); int16: output elements x int64; then CalculateOpData for a quantized type: input,
// filter, bias (input 3), output again, and for an int16 bias bias elements x int64 of scratch.
bool transpose_conv(Kernel &k)
{
    k.builtin({16, 4}, {16, 4}, "TfLiteTransposeConvParams");
    k.init(76, 76, "OpData (cmsis_nn/transpose_conv.cc)");
    const Tensor *out = nhwc(k.output(0)), *in = nhwc(k.input(2)), *filter = nhwc(k.input(1));
    if (!out || !in || !filter) return false;
    k.temp(out);
    k.temp(in);
    k.temp(filter);
    k.per_channel(filter->shape[0]);
    if (in->type == kTypeInt8) {
        const Dims id{in->shape[0], in->shape[1], in->shape[2], in->shape[3]};
        const Dims fd{filter->shape[0], filter->shape[1], filter->shape[2], in->shape[3]};
        const Dims od{out->shape[0], out->shape[1], out->shape[2], filter->shape[0]};
        const TransposeBuffers b = transpose_conv_s8(k.build.cpu, k.option(kOptionsTransposeConv, 1),
                                                     k.option(kOptionsTransposeConv, 2), id, fd, od);
        k.scratch(b.scratch, "CMSIS-NN transpose convolution buffer (arm_transpose_conv_s8_get_buffer_size)");
        k.scratch(b.reverse, "reversed filter (arm_transpose_conv_s8_get_reverse_conv_buffer_size)");
    }
    int64_t out_elements = 1;
    for (int32_t d : out->shape) out_elements *= d;
    if (in->type == kTypeInt16) k.scratch(out_elements * 8, "int64 accumulators (output elements x int64)");
    if (in->type != kTypeFloat32) {
        k.temp_inputs({2, 1, 3});
        k.temp(out);
        const Tensor *bias = k.input(3);
        if (in->type == kTypeInt16 && bias && bias->type == kTypeInt16) {
            int64_t bias_elements = 1;
            for (int32_t d : bias->shape) bias_elements *= d;
            k.scratch(bias_elements * 8, "bias widened to int64");
        }
    }
    return true;
}

}  // namespace

bool cmsis_nn_kernel(Kernel &k, bool &modelled, bool &scratch_ok)
{
    const std::string &n = k.op.op_name;
    scratch_ok = true;
    if (n == "CONV_2D")
        modelled = scratch_ok = conv(k);
    else if (n == "DEPTHWISE_CONV_2D")
        modelled = depthwise(k, scratch_ok) && scratch_ok;
    else if (n == "FULLY_CONNECTED")
        modelled = scratch_ok = fully_connected(k);
    else if (n == "AVERAGE_POOL_2D" || n == "MAX_POOL_2D")
        modelled = scratch_ok = pooling(k, n == "AVERAGE_POOL_2D");
    else if (n == "SOFTMAX")
        modelled = softmax(k);
    else if (n == "SVDF")
        modelled = scratch_ok = svdf(k);
    else if (n == "UNIDIRECTIONAL_SEQUENCE_LSTM")
        modelled = scratch_ok = lstm(k);
    else if (n == "TRANSPOSE_CONV")
        modelled = scratch_ok = transpose_conv(k);
    else if (n == "BATCH_MATMUL")
        modelled = scratch_ok = false;  // cmsis_nn/batch_matmul.cc: not modelled yet
    else
        return false;
    return true;
}

}  // namespace arenascope::planner::rules
