// arenascope planner, private to kernels*.cpp: one operator being modelled, and the helpers every
// kernel family's rules are written with (see kernels.h for what the passes are).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>

#include "arenascope/planner/kernels.h"

namespace arenascope::planner::rules {

constexpr int kTypeFloat32 = 0, kTypeInt16 = 7, kTypeInt8 = 9, kTypeInt4 = 17;
constexpr int kBuiltinCustom = 32;

// One operator being modelled.
struct Kernel {
    const Subgraph &sg;
    const Operator &op;
    // The data model (abi.h): ilp32 = 4-byte pointers (OpData and TFLM's objects take the Arm
    // figure, which every ILP32 target shares: measured on rv32), short_enums = arm-none-eabi's
    // 1-byte enums (the builtin params structs, which hold no pointer, take the Arm figure; other
    // targets the host's, which rv32 shares: measured).
    bool ilp32;
    bool short_enums;
    const KernelBuild &build;
    OpKernel &out;
    const TflmRevision &tflm;  // the TFLM revision (revisions.h): its flags for the rules that differ

    const Tensor *input(size_t k) const
    {
        return k < op.inputs.size() && op.inputs[k] >= 0 ? &sg.tensors[op.inputs[k]] : nullptr;
    }
    const Tensor *output(size_t k) const
    {
        return k < op.outputs.size() && op.outputs[k] >= 0 ? &sg.tensors[op.outputs[k]] : nullptr;
    }
    // Builtin option field k of union type `type` (model.h Operator::options), 0 when the operator
    // has no such options (TFLM's Parse* leaves its params zero then).
    int32_t option(int type, size_t k) const
    {
        return op.options_type == type && k < op.options.size() ? op.options[k] : 0;
    }
    // Parse: AllocatePOD<T>(), sizes {arm-none-eabi, 4-byte enums (riscv32, xtensa, host)}.
    void builtin(TypeSize arm, TypeSize host, const char *type)
    {
        const TypeSize t = short_enums ? arm : host;
        out.parse.push_back({KernelAlloc::Kind::BuiltinData, t.size, t.align, -1, type});
    }
    void init(int64_t arm, int64_t host, const char *type)
    {
        out.init.push_back({KernelAlloc::Kind::Persistent, ilp32 ? arm : host, 16, -1, type});
    }
    void persistent(int64_t bytes, std::string what)
    {
        out.prepare.push_back({KernelAlloc::Kind::Persistent, bytes, 16, -1, std::move(what)});
    }
    void temp(const Tensor *t)
    {
        if (t) out.prepare.push_back({KernelAlloc::Kind::TempTensor, 0, 0, t->index, "temp TfLiteTensor"});
    }
    void temp_inputs(std::initializer_list<size_t> ks)
    {
        for (size_t k : ks) temp(input(k));
    }
    // The per-channel output multipliers and shifts (channels x int32 each) that conv_common.cc,
    // depthwise_conv_common.cc, fully_connected_common.cc, transpose_conv.cc and their
    // cmsis_nn/ twins keep for a quantized filter.
    void per_channel(int64_t channels, std::string multipliers = "per-channel output multipliers",
                     std::string shifts = "per-channel output shifts")
    {
        persistent(4 * channels, std::move(multipliers));
        persistent(4 * channels, std::move(shifts));
    }
    // softmax_common.cc InitializeLutForInt16: two 513-entry int16 lookup tables for int16 input
    // (reference and cmsis_nn/softmax.cc alike).
    void softmax_int16_tables()
    {
        if (const Tensor *in = input(0); in && in->type == kTypeInt16) {
            persistent(1026, "exp lookup table (513 x int16)");
            persistent(1026, "1/(1+x) lookup table (513 x int16)");
        }
    }
    // lstm_eval_common.cc CreateGateParams with an int16 cell state: CalculateOpDataFullyConnected
    // for the 8 weights (inputs 1..8) keeps the per-channel multipliers and shifts of a
    // per-channel weight (reference and cmsis_nn/unidirectional_sequence_lstm.cc alike).
    void lstm_gate_per_channel()
    {
        for (size_t w = 1; w <= 8; ++w)
            if (const Tensor *weight = input(w); weight && weight->quant_channels > 1)
                per_channel(weight->quant_channels, "per-channel multipliers of weight input " + std::to_string(w),
                            "per-channel shifts of weight input " + std::to_string(w));
    }
    void scratch(int64_t bytes, std::string what)
    {
        out.prepare.push_back({KernelAlloc::Kind::Scratch, bytes, 16, -1, std::move(what)});
    }
    // An INT4 filter is unpacked into a scratch buffer of one byte per element (conv_common.cc,
    // depthwise_conv_common.cc, fully_connected.cc: filter_buffer_index).
    void int4_filter()
    {
        const Tensor *f = input(1);
        if (!f || f->type != kTypeInt4) return;
        int64_t elements = 1;
        for (int32_t d : f->shape) elements *= d;
        scratch(elements, op.op_name + " INT4 filter");
    }
};

// Kernels whose Prepare only inspects some inputs and the output.
void inspect(Kernel &k, std::initializer_list<size_t> inputs);

// A custom operator's option read as the signal kernels read it: FlexbufferWrapper's
// ElementAsInt32(index) takes the flexbuffer map's values by position, that is in key order
// (tensorflow/lite/micro/flatbuffer_utils.cc). -1 when it is not there or not an integer.
int64_t flex_int(const Operator &op, size_t index);

// The reference kernels' rules (kernels_reference.cpp). Returns whether the operator's arena use
// is modelled; sets scratch_ok = whether its scratch requests are.
bool reference_kernel(Kernel &k, bool &scratch_ok);

// CMSIS-NN's kernels (kernels_cmsis_nn.cpp), for the operators TFLM's cmsis_nn folder replaces.
// Returns false, leaving k untouched, for an operator it does not replace (the reference kernel
// runs then); else sets modelled and scratch_ok as reference_kernel returns and sets them.
bool cmsis_nn_kernel(Kernel &k, bool &modelled, bool &scratch_ok);

}  // namespace arenascope::planner::rules
