// What TFLM's reference kernels allocate in the arena (see kernels.h). Every rule names its
// TFLM source (tensorflow/lite/micro/kernels/ unless said otherwise; tflite-micro 90b983c2).
// Type sizes are sizeof/alignof checked with probes compiled against TFLM's headers for both
// ABIs (arm-none-eabi-g++ -mcpu=cortex-m4, x86-64 g++, -DTF_LITE_STATIC_MEMORY).
//
// Rules shared by every kernel:
//  - Parse: AllocatePOD<T>() puts the builtin options struct T in the tail at alignof(T)
//    (core/api/flatbuffer_conversions.h, micro_allocator.cc MicroBuiltinDataAllocator).
//  - Init and Prepare: AllocatePersistentBuffer(n) puts n bytes in the tail, 16-byte aligned.
//  - Prepare: every AllocateTemp{Input,Output}Tensor of a present tensor (index >= 0) is a temp
//    TfLiteTensor (plus its quantization); DeallocateTempTfLiteTensor does not give the bytes back
//    before the operator's Prepare ends, so what counts is every call, in order
//    (micro_context.cc, single_arena_buffer_allocator.cc DeallocateTemp).
//  - Scratch requests cost nothing until the plan; they become planned buffers.
#include <flatbuffers/flexbuffers.h>

#include "kernel_rules.h"
#include "kernels_reference_families.h"

namespace arenascope::planner::rules {

namespace {

// The kernels whose Prepare calls RequestScratchBufferInArena and which are not modelled, from
// `git grep RequestScratchBufferInArena` over tensorflow/lite/micro/kernels/*.cc and
// signal/micro/kernels (optimized variants excluded). ADD_N, MIRROR_PAD, MEAN, SUM,
// REDUCE_MAX/MIN/ALL, TRANSPOSE_CONV and TFLite_Detection_PostProcess are modelled
// (kernels_reference_compute.cpp, _shape.cpp); REDUCE_PROD has no TFLM kernel.
bool requests_scratch_unmodelled(const std::string &op)
{
    return op == "ethos-u";  // ethos_u/ethosu.cc
}

// FULLY_CONNECTED: ParseFullyConnected; Init fully_connected.cc (OpDataFullyConnected);
// Prepare fully_connected.cc: input, filter, bias, output, then CalculateOpDataFullyConnected
// (fully_connected_common.cc): per-channel multipliers and shifts for a non-float input with a
// per-channel filter (scale count > 1).
bool fully_connected(Kernel &k)
{
    k.builtin({5, 1}, {16, 4}, "TfLiteFullyConnectedParams");
    k.init(48, 64, "OpDataFullyConnected");
    const Tensor *in = k.input(0), *filter = k.input(1);
    if (!in || !filter) return false;
    k.temp_inputs({0, 1, 2});
    k.temp(k.output(0));
    // Before 2023 TFLM's FULLY_CONNECTED has no INT4 filter (revisions.cpp int4_filter_scratch):
    // what it does with one is not modelled.
    if (filter->type == kTypeInt4 && !k.tflm.int4_filter_scratch) return false;
    k.int4_filter();
    // Per-channel buffers: 2026-08's fully_connected_common.cc; older revisions keep none
    // (revisions.cpp fc_per_channel_buffers).
    if (in->type != kTypeFloat32 && filter->quant_channels > 1 && k.tflm.fc_per_channel_buffers) {
        k.per_channel(filter->quant_channels);
    }
    return true;
}

// CONV_2D (conv_common.cc ConvPrepare) and DEPTHWISE_CONV_2D (depthwise_conv_common.cc
// DepthwiseConvPrepare): output, input, filter; multipliers and shifts for every channel
// (filter dim 0, depthwise dim 3), whatever the type; then CalculateOpData* takes input,
// filter, bias and output again. The INT4 scratch comes after that for CONV_2D and before it
// for DEPTHWISE_CONV_2D, which makes no difference to the arena.
bool conv(Kernel &k, bool depthwise)
{
    if (depthwise)
        k.builtin({28, 4}, {28, 4}, "TfLiteDepthwiseConvParams");
    else
        k.builtin({28, 4}, {28, 4}, "TfLiteConvParams");
    k.init(56, 72, "OpDataConv");
    const Tensor *filter = k.input(1);
    if (!filter || filter->shape.size() != 4) return false;
    if (filter->type == kTypeInt4 && !k.tflm.int4_filter_scratch) return false;  // revisions.cpp
    k.temp(k.output(0));
    k.temp_inputs({0, 1});
    const int64_t channels = filter->shape[depthwise ? 3 : 0];
    k.per_channel(channels);
    k.temp_inputs({0, 1, 2});
    k.temp(k.output(0));
    k.int4_filter();
    return true;
}

// SVDF (svdf.cc, svdf_common.cc PrepareSvdf): input, weights_feature, weights_time, bias,
// activation_state, output; scratch batch x num_filters x 4 bytes (int32 for int8, float for
// float32), and for int8 also batch x num_units x int32 (num_units = output dim 1).
bool svdf(Kernel &k)
{
    k.builtin({8, 4}, {12, 4}, "TfLiteSVDFParams");
    k.init(36, 36, "OpDataSvdf");
    const Tensor *in = k.input(0), *wf = k.input(1), *o = k.output(0);
    if (!in || !wf || !o || in->shape.size() != 2 || wf->shape.size() != 2 || o->shape.size() != 2) return false;
    k.temp_inputs({0, 1, 2, 3, 4});
    k.temp(o);
    const int64_t batch = in->shape[0], filters = wf->shape[0], units = o->shape[1];
    k.scratch(batch * filters * 4, "SVDF scratch");
    if (in->type == kTypeInt8) k.scratch(batch * units * 4, "SVDF output scratch");
    return true;
}

// UNIDIRECTIONAL_SEQUENCE_LSTM (ParseUnidirectionalSequenceLSTM; unidirectional_sequence_lstm.cc
// Init: OpDataLSTM; Prepare: lstm_eval.cc LstmTensors takes every present input 0..23, then the
// output; with an int16 cell state, lstm_eval_common.cc CreateGateParams runs
// CalculateOpDataFullyConnected for the 8 weights, which keeps per-channel multipliers and
// shifts of a per-channel weight; then 4 scratch buffers of batch x n_cell x sizeof(cell state
// type), cell state = input 19 [batch, n_cell].
bool lstm(Kernel &k)
{
    k.builtin({16, 4}, {16, 4}, "TfLiteUnidirectionalSequenceLSTMParams");
    k.init(688, 688, "OpDataLSTM");
    const Tensor *cell = k.input(19);
    if (!cell || cell->shape.size() != 2 || (cell->type != kTypeInt16 && cell->type != kTypeFloat32)) return false;
    for (size_t i = 0; i < 24; ++i) k.temp(k.input(i));
    k.temp(k.output(0));
    if (cell->type == kTypeInt16) k.lstm_gate_per_channel();
    const int64_t bytes = int64_t{cell->shape[0]} * cell->shape[1] * type_size(cell->type);
    for (int i = 0; i < 4; ++i) k.scratch(bytes, "LSTM gate scratch");
    return true;
}

// SignalRfft (signal/micro/kernels/rfft.cc RfftInit / RfftPrepare, T = the input type: int16,
// int32 or float32): Init keeps TfLiteAudioFrontendRfftParams<T> and the kiss_fftr state for
// fft_length N (option 1, 'fft_length' after 'T'): sizeof(kiss_fftr_state) +
// sizeof(kiss_fft_state) + cpx x (N/2 - 1) + cpx x (N/2 x 3/2) (kissfft v130 kiss_fftr.c,
// kiss_fft.c; rfft_int16.cc etc.), cpx 4 bytes for int16 else 8, kiss_fft_state 268 for int16
// else 272, kiss_fftr_state 12 on the Cortex-M and 24 on x86-64; Prepare takes input and
// output, and requests N x sizeof(T) of scratch.
bool rfft(Kernel &k, bool &scratch_ok)
{
    const Tensor *in = k.input(0);
    const int64_t n = flex_int(k.op, 1);
    scratch_ok =
        in && n > 0 && n % 2 == 0 && (in->type == kTypeInt16 || in->type == 2 /* INT32 */ || in->type == kTypeFloat32);
    if (!scratch_ok) return false;
    const bool i16 = in->type == kTypeInt16;
    const int64_t cpx = i16 ? 4 : 8;
    k.init(32, 48, "TfLiteAudioFrontendRfftParams");
    const int64_t state = (i16 ? 268 : 272) + cpx * (n / 2 - 1) + cpx * (n / 2 * 3 / 2);
    k.init(12 + state, 24 + state, "kiss_fftr state");
    k.temp(k.input(0));
    k.temp(k.output(0));
    k.scratch(n * type_size(in->type), "SignalRfft work area (fft_length x input type)");
    return true;
}

// The other signal kernels TFLM's audio front end uses (signal/micro/kernels/*.cc): Init's
// parameter structs and state, and the tensors Prepare takes, in order. Custom operators have
// no Parse step: their options stay in the flatbuffer.
bool signal(Kernel &k)
{
    const std::string &n = k.op.op_name;
    auto temps = [&](std::initializer_list<size_t> in, std::initializer_list<size_t> out) {
        for (size_t i : in) k.temp(k.input(i));
        for (size_t o : out) k.temp(k.output(o));
    };
    if (n == "SignalWindow") {  // window.cc: TFLMSignalWindowParams
        k.init(8, 8, "TFLMSignalWindowParams");
        temps({0, 1}, {0});
    } else if (n == "SignalFftAutoScale") {  // fft_auto_scale_kernel.cc: no Init
        temps({0}, {0, 1});
    } else if (n == "SignalEnergy") {  // energy.cc
        k.init(8, 8, "TFLMSignalEnergyParams");
        temps({0}, {0});
    } else if (n == "SignalFilterBank") {  // filter_bank.cc: params, work area (num_channels+1) x uint64
        const int64_t channels = flex_int(k.op, 0);
        if (channels < 0) return false;
        k.init(36, 64, "TFLMSignalFilterBankParams");
        k.init(8 * (channels + 1), 8 * (channels + 1), "filter bank work area");
        temps({0, 1, 2, 3, 4, 5}, {0});
    } else if (n == "SignalFilterBankSquareRoot") {  // filter_bank_square_root.cc: no Init
        temps({0, 1}, {0});
    } else if (n == "SignalFilterBankSpectralSubtraction") {  // filter_bank_spectral_subtraction.cc
        const int64_t channels = flex_int(k.op, 4);           // 'num_channels', 5th of its 9 keys
        if (channels < 0) return false;
        k.init(44, 56, "TFLMSignalSpectralSubtractionParams");
        k.init(4 * channels, 4 * channels, "noise estimate (num_channels x uint32)");
        temps({0}, {0, 1});
    } else if (n == "SignalPCAN") {  // pcan.cc
        k.init(4, 4, "TfLitePcanParams");
        temps({0, 1, 2}, {0});
    } else if (n == "SignalFilterBankLog") {  // filter_bank_log.cc
        k.init(8, 8, "TFLMSignalLogParams");
        temps({0}, {0});
    } else {
        return false;
    }
    return true;
}

}  // namespace

void apply(Kernel &k, const SimpleRule &r)
{
    if (r.parse_type) k.builtin(r.parse_arm, r.parse_host, r.parse_type);
    if (r.init_type) k.init(r.init_arm, r.init_host, r.init_type);
    for (const char *c = r.temps; c[0] && c[1]; ++c)  // "i0 o0": one digit per index
        if (c[0] == 'i' || c[0] == 'o') {
            const auto index = static_cast<size_t>(c[1] - '0');
            k.temp(c[0] == 'i' ? k.input(index) : k.output(index));
            ++c;
        }
}

bool apply_table(Kernel &k, const SimpleRule *rules, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        if (k.op.op_name == rules[i].op) {
            apply(k, rules[i]);
            return true;
        }
    return false;
}

int64_t elements(const Tensor *t)
{
    int64_t e = 1;
    for (int32_t d : t->shape) {
        if (d < 0) return -1;
        e *= d;
    }
    return e;
}

void dims_copy(Kernel &k, const Tensor *t)
{
    if (t) k.persistent(4 + 4 * static_cast<int64_t>(t->shape.size()), "output dims copy");
}

void inspect(Kernel &k, std::initializer_list<size_t> inputs)
{
    k.temp_inputs(inputs);
    k.temp(k.output(0));
}

int64_t flex_int(const Operator &op, size_t index)
{
    const auto &opts = op.custom_options;
    if (opts.empty()) return -1;
    std::vector<uint8_t> reuse;
    if (!flexbuffers::VerifyBuffer(opts.data(), opts.size(), &reuse)) return -1;
    const flexbuffers::Reference root = flexbuffers::GetRoot(opts.data(), opts.size());
    if (!root.IsMap()) return -1;
    const flexbuffers::Vector values = root.AsMap().Values();
    if (index >= values.size() || !values[index].IsIntOrUint()) return -1;
    const int64_t v = values[index].AsInt64();
    return v >= 0 && v <= (int64_t{1} << 24) ? v : -1;
}

namespace {
// Pooling, RESHAPE and SOFTMAX, whose arena use is modelled and which request no scratch.
// Returns whether the operator is one of them.
bool pool_reshape_softmax(Kernel &k)
{
    const std::string &n = k.op.op_name;
    if (n == "AVERAGE_POOL_2D" || n == "MAX_POOL_2D") {
        // ParsePool; pooling.cc Init (OpDataPooling); pooling_common.cc PoolingPrepare.
        k.builtin({40, 4}, {40, 4}, "TfLitePoolParams");
        k.init(32, 32, "OpDataPooling");
        inspect(k, {0});
        return true;
    }
    if (n == "RESHAPE") {
        // ParseReshape; no Init; reshape_common.cc ReshapeOutput: input, output, and a writable
        // copy of the output dims when the output shape holds a -1 (kernel_util.cc
        // CreateWritableTensorDimsWithCopy).
        k.builtin({36, 4}, {36, 4}, "TfLiteReshapeParams");
        inspect(k, {0});
        const Tensor *o = k.output(0);
        if (o && k.tflm.reshape_dims_copy)  // older TFLM changes the dims in place (revisions.cpp)
            for (int32_t d : o->shape)
                if (d == -1) {
                    k.persistent(4 + 4 * static_cast<int64_t>(o->shape.size()), "output dims copy");
                    break;
                }
        return true;
    }
    if (n == "SOFTMAX") {
        // ParseSoftmax; softmax_common.cc SoftmaxInit (SoftmaxParams), SoftmaxPrepare: int16 input
        // gets two 513-entry int16 lookup tables.
        k.builtin({4, 4}, {4, 4}, "TfLiteSoftmaxParams");
        k.init(56, 80, "SoftmaxParams");
        inspect(k, {0});
        k.softmax_int16_tables();
        return true;
    }
    return false;
}

// ADD, MUL, DIV, QUANTIZE, CAST, STRIDED_SLICE, CONCATENATION, MINIMUM and MAXIMUM: as
// pool_reshape_softmax.
bool arithmetic_and_data(Kernel &k)
{
    const std::string &n = k.op.op_name;
    if (n == "ADD") {  // ParseAdd; add.cc AddInit (OpDataAdd); add_common.cc AddPrepare
        k.builtin({2, 1}, {8, 4}, "TfLiteAddParams");
        k.init(60, 60, "OpDataAdd");
        inspect(k, {0, 1});
        return true;
    }
    if (n == "MUL") {  // ParseMul; mul_common.cc MulInit (OpDataMul), CalculateOpDataMul
        k.builtin({1, 1}, {4, 4}, "TfLiteMulParams");
        k.init(36, 36, "OpDataMul");
        inspect(k, {0, 1});
        return true;
    }
    if (n == "DIV") {  // ParseDiv; div.cc DivInit (OpDataDiv), DivPrepare
        k.builtin({1, 1}, {4, 4}, "TfLiteDivParams");
        k.init(28, 28, "OpDataDiv");
        inspect(k, {0, 1});
        return true;
    }
    if (n == "QUANTIZE") {  // ParseQuantize allocates nothing; quantize.cc Init; quantize_common.cc
        k.init(32, 32, "OpDataQuantizeReference");
        inspect(k, {0});
        return true;
    }
    if (n == "CAST") {  // ParseCast; no Init; cast.cc CastPrepare
        k.builtin({2, 1}, {8, 4}, "TfLiteCastParams");
        inspect(k, {0});
        return true;
    }
    if (n == "STRIDED_SLICE") {
        // ParseStridedSlice; strided_slice_common.cc Init (StridedSliceParams), Prepare's
        // StridedSliceContext: input, begin, end, strides, output.
        k.builtin({24, 4}, {24, 4}, "TfLiteStridedSliceParams");
        k.init(84, 84, "StridedSliceParams");
        inspect(k, {0, 1, 2, 3});
        return true;
    }
    if (n == "CONCATENATION") {
        // ParseConcatenation; concatenation.cc Init (OpData {ConcatenationParams}), Prepare:
        // input 0 and the output, then every input once more.
        k.builtin({8, 4}, {8, 4}, "TfLiteConcatenationParams");
        k.init(24, 40, "concatenation OpData");
        inspect(k, {0});
        for (size_t i = 0; i < k.op.inputs.size(); ++i) k.temp(k.input(i));
        return true;
    }
    if (n == "MINIMUM" || n == "MAXIMUM") return true;  // maximum_minimum.cc: no Parse data, Init or Prepare
    return false;
}
}  // namespace

// Returns whether the operator's arena use is modelled; sets scratch_ok = whether its scratch
// requests are (every kernel not listed as requesting scratch requests none).
bool reference_kernel(Kernel &k, bool &scratch_ok)
{
    const std::string &n = k.op.op_name;
    scratch_ok = true;
    if (n == "FULLY_CONNECTED") return scratch_ok = fully_connected(k);
    if (n == "CONV_2D") return scratch_ok = conv(k, false);
    if (n == "DEPTHWISE_CONV_2D") return scratch_ok = conv(k, true);
    if (n == "SVDF") return scratch_ok = svdf(k);
    if (n == "UNIDIRECTIONAL_SEQUENCE_LSTM") return scratch_ok = lstm(k);
    if (n == "SignalRfft") return rfft(k, scratch_ok);
    if (n.rfind("Signal", 0) == 0 && k.op.opcode == kBuiltinCustom && signal(k)) return true;
    if (pool_reshape_softmax(k) || arithmetic_and_data(k)) return true;
    bool modelled = false;
    if (elementwise_kernel(k, modelled, scratch_ok) || shape_kernel(k, modelled, scratch_ok) ||
        compute_kernel(k, modelled, scratch_ok) || signal_stream_kernel(k, modelled, scratch_ok))
        return modelled;
    scratch_ok = true;
    // Not modelled. Whether it requests scratch is known from the list above; custom operators
    // other than TFLM's signal kernels are unknown.
    scratch_ok = !requests_scratch_unmodelled(n) && n.rfind("BUILTIN_", 0) != 0 &&
                 !(k.op.opcode == kBuiltinCustom && n.rfind("Signal", 0) != 0);
    return false;
}

}  // namespace arenascope::planner::rules
