// Every operator's arena use (see kernels.h): the kernel build's rules per operator, and what
// TFLM would reject before any kernel runs.
#include "arenascope/planner/kernels.h"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <vector>

#include "kernel_rules.h"

namespace arenascope::planner {

Cpu cpu_named(const std::string &name)
{
    const size_t plus = name.find('+');
    const std::string base = name.substr(0, plus);
    const std::string n = base.rfind("cortex-", 0) == 0 ? base.substr(7) : base;
    Cpu c;
    c.name = "cortex-" + n;
    // The -mcpu feature modifiers arm-none-eabi-gcc 12 takes for each core (checked with
    // `gcc -mcpu=NAME+MOD -E`); m85 is gcc 13's, with m55's.
    std::vector<std::string> mods;
    if (n == "m4")
        c.dsp = true, mods = {"nofp"};
    else if (n == "m7")
        c.dsp = true, mods = {"nofp", "nofp.dp"};
    else if (n == "m33")
        c.dsp = true, mods = {"nodsp", "nofp"};
    else if (n == "m55" || n == "m85")
        c.dsp = c.mve = true, mods = {"nodsp", "nomve", "nofp", "nomve.fp"};
    else if (n != "m0" && n != "m0plus" && n != "m3" && n != "m23")
        throw std::invalid_argument("unknown CPU '" + name +
                                    "': use cortex-m0, m0plus, m3, m23, m4, m7, m33, m55 or m85, optionally with "
                                    "gcc's +nodsp or +nomve");
    for (size_t at = plus; at != std::string::npos;) {
        const size_t next = name.find('+', at + 1);
        const std::string mod = name.substr(at + 1, next == std::string::npos ? std::string::npos : next - at - 1);
        if (std::find(mods.begin(), mods.end(), mod) == mods.end()) {
            std::string valid;
            for (const std::string &m : mods) valid += (valid.empty() ? "+" : ", +") + m;
            throw std::invalid_argument("'+" + mod + "' in '" + name + "' is not a modifier gcc takes for " + c.name +
                                        (valid.empty() ? " (it takes none)" : " (it takes " + valid + ")"));
        }
        // gcc: +nodsp on an MVE core turns MVE off too (no __ARM_FEATURE_MVE); +nofp, +nomve.fp
        // and +nofp.dp leave DSP and integer MVE, all CMSIS-NN's paths look at.
        if (mod == "nodsp") c.dsp = c.mve = false;
        if (mod == "nomve") c.mve = false;
        c.name += "+" + mod;
        at = next;
    }
    return c;
}

KernelBuild::Set KernelBuild::set_named(const std::string &name)
{
    if (name == "reference") return Set::Reference;
    if (name == "cmsis-nn" || name == "cmsis_nn") return Set::CmsisNn;
    throw std::invalid_argument("unknown kernels '" + name + "': use reference or cmsis-nn");
}

std::string KernelBuild::describe() const
{
    if (set == Set::Reference) return "reference kernels";
    return "CMSIS-NN kernels for " + cpu.name + (cpu.mve ? " (MVE)" : cpu.dsp ? " (DSP)" : " (no DSP, no MVE)");
}

namespace {

using rules::Kernel;
using rules::kTypeFloat32;
using rules::kTypeInt4;
using rules::kTypeInt8;

// conv_common.cc, depthwise_conv_common.cc, fully_connected.cc Prepare: "Hybrid models are
// not supported on TFLite Micro." (float32 input with an int8/int4 filter).
void hybrid(const Kernel &k, const std::string &label, std::vector<std::string> &out)
{
    const std::string &name = k.op.op_name;
    if (name != "CONV_2D" && name != "DEPTHWISE_CONV_2D" && name != "FULLY_CONNECTED") return;
    const Tensor *in = k.input(0), *filter = k.input(1);
    if (in && filter && in->type == kTypeFloat32 && (filter->type == kTypeInt8 || filter->type == kTypeInt4))
        out.push_back(
            label + " is hybrid (FLOAT32 input, " + type_name(filter->type) +
            " filter): \"Hybrid models are not supported on TFLite Micro\"; convert with full integer quantization");
}

// The builtin operators TFLM 90b983c2 has a kernel for: the BuiltinOperator_* that
// tensorflow/lite/micro/micro_mutable_op_resolver.h's Add* methods register (100, CUSTOM aside).
// No resolver can register any other builtin, so AllocateTensors fails on it
// (micro_op_resolver.cc GetRegistrationFromOpCode: "Didn't find op for builtin opcode").
const std::set<std::string> kTflmBuiltins{"ABS",
                                          "ADD",
                                          "ADD_N",
                                          "ARG_MAX",
                                          "ARG_MIN",
                                          "ASSIGN_VARIABLE",
                                          "AVERAGE_POOL_2D",
                                          "BATCH_MATMUL",
                                          "BATCH_TO_SPACE_ND",
                                          "BROADCAST_ARGS",
                                          "BROADCAST_TO",
                                          "CALL_ONCE",
                                          "CAST",
                                          "CEIL",
                                          "CONCATENATION",
                                          "CONV_2D",
                                          "COS",
                                          "CUMSUM",
                                          "DEPTHWISE_CONV_2D",
                                          "DEPTH_TO_SPACE",
                                          "DEQUANTIZE",
                                          "DIV",
                                          "DYNAMIC_UPDATE_SLICE",
                                          "ELU",
                                          "EMBEDDING_LOOKUP",
                                          "EQUAL",
                                          "EXP",
                                          "EXPAND_DIMS",
                                          "FILL",
                                          "FLOOR",
                                          "FLOOR_DIV",
                                          "FLOOR_MOD",
                                          "FULLY_CONNECTED",
                                          "GATHER",
                                          "GATHER_ND",
                                          "GREATER",
                                          "GREATER_EQUAL",
                                          "HARD_SWISH",
                                          "IF",
                                          "L2_NORMALIZATION",
                                          "L2_POOL_2D",
                                          "LEAKY_RELU",
                                          "LESS",
                                          "LESS_EQUAL",
                                          "LOG",
                                          "LOGICAL_AND",
                                          "LOGICAL_NOT",
                                          "LOGICAL_OR",
                                          "LOGISTIC",
                                          "LOG_SOFTMAX",
                                          "MAXIMUM",
                                          "MAX_POOL_2D",
                                          "MEAN",
                                          "MINIMUM",
                                          "MIRROR_PAD",
                                          "MUL",
                                          "NEG",
                                          "NOT_EQUAL",
                                          "PACK",
                                          "PAD",
                                          "PADV2",
                                          "PRELU",
                                          "QUANTIZE",
                                          "READ_VARIABLE",
                                          "REDUCE_ALL",
                                          "REDUCE_MAX",
                                          "REDUCE_MIN",
                                          "RELU",
                                          "RELU6",
                                          "RESHAPE",
                                          "RESIZE_BILINEAR",
                                          "RESIZE_NEAREST_NEIGHBOR",
                                          "REVERSE_V2",
                                          "ROUND",
                                          "RSQRT",
                                          "SELECT_V2",
                                          "SHAPE",
                                          "SIN",
                                          "SLICE",
                                          "SOFTMAX",
                                          "SPACE_TO_BATCH_ND",
                                          "SPACE_TO_DEPTH",
                                          "SPLIT",
                                          "SPLIT_V",
                                          "SQRT",
                                          "SQUARE",
                                          "SQUARED_DIFFERENCE",
                                          "SQUEEZE",
                                          "STRIDED_SLICE",
                                          "SUB",
                                          "SUM",
                                          "SVDF",
                                          "TANH",
                                          "TRANSPOSE",
                                          "TRANSPOSE_CONV",
                                          "UNIDIRECTIONAL_SEQUENCE_LSTM",
                                          "UNPACK",
                                          "VAR_HANDLE",
                                          "WHILE",
                                          "ZEROS_LIKE"};

bool tflm_has_kernel(const std::string &op)
{
    return kTflmBuiltins.count(op) != 0;
}

// The revision's sizes for the kernel's builtin data and Init requests that differ from
// 2026-08's (revisions.cpp kernel_sizes), matched by operator, pass and type name.
void revision_sizes(Kernel &k, const TflmRevision &tflm)
{
    for (auto [list, pass] : {std::pair{&k.out.parse, "parse"}, std::pair{&k.out.init, "init"}})
        for (KernelAlloc &a : *list)
            if (const KernelSizeFact *f = tflm.kernel_size(k.op.op_name, pass, a.what)) {
                // Builtin data: by enum size (pointer-free params); Init's OpData: by pointer size.
                const bool arm = a.kind == KernelAlloc::Kind::BuiltinData ? k.short_enums : k.ilp32;
                a.bytes = arm ? f->size.arm_size : f->size.host_size;
                if (a.kind == KernelAlloc::Kind::BuiltinData) a.align = arm ? f->size.arm_align : f->size.host_align;
            }
}

}  // namespace

KernelPrediction predict_kernels(const Model &model, const Abi &abi, const KernelBuild &build)
{
    KernelPrediction p;
    p.ops.resize(model.subgraphs.size());
    for (size_t s = 0; s < model.subgraphs.size(); ++s) {
        const Subgraph &sg = model.subgraphs[s];
        p.ops[s].resize(sg.operators.size());
        for (const Operator &op : sg.operators) {
            const std::string label =
                "subgraph " + std::to_string(s) + " operator " + std::to_string(op.index) + " (" + op.op_name + ")";
            Kernel k{sg, op, abi.pointer == 4, abi.enum_size == 1, build, p.ops[s][op.index], *abi.tflm};
            hybrid(k, label, p.rejected);
            // An operator code outside TFLM's BuiltinOperator enum: no resolver can register it, so
            // AllocateTensors fails ("Failed to get registration from op code").
            if (op.opcode != rules::kBuiltinCustom && op.op_name.rfind("BUILTIN_", 0) != 0 &&
                !tflm_has_kernel(op.op_name))
                p.rejected.push_back(label + " has no TFLM kernel (TFLM 90b983c2's MicroMutableOpResolver has no Add" +
                                     " method for " + op.op_name + "): AllocateTensors fails with \"Didn't find op " +
                                     "for builtin opcode '" + op.op_name + "'\"; convert the model without it");
            if (op.op_name.rfind("BUILTIN_", 0) == 0)
                p.rejected.push_back(label + " has operator code " + op.op_name.substr(8) +
                                     ", which is not a TFLite builtin operator: no op resolver can register it");
            bool scratch_ok = true, modelled = false;
            const bool cmsis =
                build.set == KernelBuild::Set::CmsisNn && rules::cmsis_nn_kernel(k, modelled, scratch_ok);
            if (!cmsis) modelled = rules::reference_kernel(k, scratch_ok);
            // An older TFLM revision: only the kernels checked against its source are modelled
            // (CMSIS-NN's none), with their sizes from the revision's table (revisions.cpp).
            if (!abi.tflm->current) {
                if (cmsis || !abi.tflm->kernel_checked(op.op_name)) modelled = scratch_ok = false;
                revision_sizes(k, *abi.tflm);
            }
            if (!modelled) p.unmodelled_data.push_back(label);
            if (!scratch_ok) p.unmodelled.push_back(label);
            for (const KernelAlloc &a : k.out.prepare)
                if (a.kind == KernelAlloc::Kind::Scratch)
                    p.requests.push_back({static_cast<int>(s), op.index, a.bytes, a.what});
        }
    }
    // Before 58aa9833f (revisions.cpp offline_variables) TFLM gives every variable tensor tail
    // bytes and never plans one, offline offset or not: not modelled.
    if (!abi.tflm->offline_variables && !model.offline_offsets.empty())
        for (const Subgraph &sg : model.subgraphs)
            for (const Tensor &t : sg.tensors)
                if (t.is_variable) {
                    p.unmodelled_data.push_back("variable tensors with an offline plan (TFLM " +
                                                std::string(abi.tflm->id) +
                                                " puts every variable in the tail and plans none)");
                    return p;
                }
    return p;
}

}  // namespace arenascope::planner
