// What TFLM's signal library's streaming kernels and SignalIrfft allocate in the arena (custom operators, no
// Parse step; signal/micro/kernels/*.cc at tflite-micro 90b983c2). Each keeps its parameters in
// Init and one circular buffer or frame state per outer row; a CircularBuffer state is
// sizeof(CircularBuffer) + 2 x capacity x int16 (signal/src/circular_buffer.cc
// CircularBufferGetNeededMemory). Sizes {cortex-m, x86-64} are sizeof checked with probes
// compiled against TFLM's headers (docs/arena-budget.md, "Operators modelled"). Options are
// read as the kernels read them: FlexbufferWrapper ElementAs*(index), by key order.
#include "kernels_reference_families.h"

namespace arenascope::planner::rules {

namespace {

int64_t circular_buffer(const Kernel &k, int64_t capacity)
{
    return (k.ilp32 ? 24 : 40) + 4 * capacity;
}

// outer_dims x (a pointer to the state, a pointer to its CircularBuffer), then each row's state.
void rows(Kernel &k, int64_t outer, int64_t capacity)
{
    const int64_t ptr = k.ilp32 ? 4 : 8;
    k.persistent(outer * ptr, "state buffer pointers (outer dims x pointer)");
    k.persistent(outer * ptr, "CircularBuffer pointers (outer dims x pointer)");
    for (int64_t i = 0; i < outer; ++i) k.persistent(circular_buffer(k, capacity), "CircularBuffer state");
}

// SignalIrfft (signal/micro/kernels/irfft.cc IrfftInitAll, T = option 0 'T': int16, int32 or
// float32; fft_length = option 1): TfLiteAudioFrontendIrfftParams, then the state
// Irfft<T>GetNeededMemory(fft_length) (signal/src/irfft_*.cc): kiss_fftr_alloc's size, the
// same as SignalRfft's (kernels_reference.cpp rfft: kiss_fftr_state 12 / 24 + kiss_fft_state
// 268 for int16 else 272 + cpx x (N/2 - 1) + cpx x (N/2 x 3/2), cpx 4 for int16 else 8), plus
// IrfftFloatState {int32, pointer} (8 / 16, by hand: its header needs kissfft) for float32.
// IrfftPrepare takes input and output and requests no scratch.
bool irfft(Kernel &k)
{
    const int64_t type = flex_int(k.op, 0), n = flex_int(k.op, 1);
    if ((type != kTypeInt16 && type != kTypeInt32 && type != kTypeFloat32) || n <= 0 || n % 2) return false;
    const bool i16 = type == kTypeInt16;
    const int64_t cpx = i16 ? 4 : 8;
    int64_t state = (k.ilp32 ? 12 : 24) + (i16 ? 268 : 272) + cpx * (n / 2 - 1) + cpx * (n / 2 * 3 / 2);
    if (type == kTypeFloat32) state += k.ilp32 ? 8 : 16;
    k.init(24, 32, "TfLiteAudioFrontendIrfftParams");
    k.init(state, state, "kiss_fftr state");
    inspect(k, {0});
    return true;
}

}  // namespace

bool signal_stream_kernel(Kernel &k, bool &modelled, bool &scratch_ok)
{
    const std::string &n = k.op.op_name;
    if (k.op.opcode != kBuiltinCustom || (n != "SignalDelay" && n != "SignalFramer" && n != "SignalStacker" &&
                                          n != "SignalOverlapAdd" && n != "SignalIrfft"))
        return false;
    scratch_ok = true;  // none of them requests scratch
    if (n == "SignalIrfft") return modelled = irfft(k), true;
    modelled = false;
    const Tensor *in = k.input(0);
    if (!in || in->shape.empty() || elements(in) < 0) return true;
    const int64_t inner = in->shape.back(), flat = elements(in);
    if (n == "SignalDelay") {
        // delay.cc DelayInit (TFLMSignalFrontendDelayParams), DelayPrepare: input, output; rows
        // of capacity frame_size (the input's last dim) + delay_length (option 0).
        const int64_t delay = flex_int(k.op, 0);
        if (delay < 0 || inner <= 0) return true;
        k.init(20, 32, "TFLMSignalFrontendDelayParams");
        inspect(k, {0});
        rows(k, flat / inner, inner + delay);
    } else if (n == "SignalFramer") {
        // framer.cc FramerInit (TFLMSignalFramerParams), FramerPrepare: input, output, output
        // valid; rows of capacity frame_size rounded up to frame_step (options 0, 1).
        const int64_t size = flex_int(k.op, 0), step = flex_int(k.op, 1);
        if (size < 0 || step <= 0 || inner <= 0) return true;
        k.init(28, 40, "TFLMSignalFramerParams");
        inspect(k, {0});
        k.temp(k.output(1));
        rows(k, flat / inner, (size + step - 1) / step * step);
    } else if (n == "SignalStacker") {
        // stacker.cc StackerInit: TFLMSignalStackerParams and a circular buffer of num_channels
        // x (left + right context + 1) (options 0, 1, 2); StackerPrepare: input, output, valid.
        const int64_t ch = flex_int(k.op, 0), left = flex_int(k.op, 1), right = flex_int(k.op, 2);
        if (ch < 0 || left < 0 || right < 0) return true;
        k.init(36, 56, "TFLMSignalStackerParams");
        k.init(circular_buffer(k, ch * (left + right + 1)), circular_buffer(k, ch * (left + right + 1)),
               "CircularBuffer state");
        inspect(k, {0});
        k.temp(k.output(1));
    } else {
        // overlap_add.cc OverlapAddInitAll (TFLMSignalOverlapAddParams<T>, T = option "T":
        // int16 or float32), OverlapAddPrepare: input, output; outer_dims pointers, then a
        // frame_size (last dim) x sizeof(T) state per row.
        const int64_t type = flex_int(k.op, 0);
        if ((type != kTypeInt16 && type != kTypeFloat32) || in->shape.size() < 2) return true;
        const int64_t frames = in->shape[in->shape.size() - 2];
        if (inner <= 0 || frames <= 0) return true;
        k.init(24, 32, "TFLMSignalOverlapAddParams");
        inspect(k, {0});
        const int64_t outer = flat / (inner * frames);
        k.persistent(outer * (k.ilp32 ? 4 : 8), "state buffer pointers (outer dims x pointer)");
        for (int64_t i = 0; i < outer; ++i) k.persistent(inner * type_size(static_cast<int>(type)), "frame state");
    }
    modelled = true;
    return true;
}

}  // namespace arenascope::planner::rules
