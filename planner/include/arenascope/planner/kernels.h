// arenascope planner: what TFLM's kernels allocate in the arena.
//
// Kernels allocate in three passes that the model file does not describe: Parse (builtin
// options, TFLM's flatbuffer_conversions.cc), Init (their OpData, AllocatePersistentBuffer) and
// Prepare (more persistent buffers, temporary TfLiteTensors for the tensors they inspect, and
// scratch-buffer requests that join the memory plan). Each modelled kernel's rules are
// transcribed from TFLM's reference kernel source (tensorflow/lite/micro/kernels/*.cc and
// signal/micro/kernels/*.cc at tflite-micro 90b983c2), cited at each rule in
// kernels_reference.cpp. TFLM's CMSIS-NN kernels (OPTIMIZED_KERNEL_DIR=cmsis_nn:
// tensorflow/lite/micro/kernels/cmsis_nn/*.cc, with CMSIS-NN 4ab83cc3's arm_*_get_buffer_size*)
// allocate other sizes, which depend on the CPU's DSP and MVE extensions: kernels_cmsis_nn.cpp.
// Other optimized variants (Xtensa, CEVA, ...) are not modelled.
#pragma once

#include <string>
#include <vector>

#include "arenascope/planner/abi.h"
#include "arenascope/planner/model.h"
#include "arenascope/planner/plan.h"

namespace arenascope::planner {

// The Cortex-M core a CMSIS-NN build is compiled for, with the extensions arm-none-eabi-gcc's
// -mcpu=NAME implies (gcc 12 ARM options; CMSIS-NN's arm_nn_math_types.h picks its code paths
// from them: ARM_MATH_DSP from __ARM_FEATURE_DSP, ARM_MATH_MVEI from __ARM_FEATURE_MVE).
struct Cpu {
    std::string name;  // "cortex-m4", ...
    bool dsp = false;  // the DSP extension: cortex-m4, m7, m33, m55, m85
    bool mve = false;  // integer MVE (Helium): cortex-m55, m85, with -mfloat-abi=hard or softfp
};

// cortex-m0, m0plus, m3, m23, m4, m7, m33, m55 or m85 (with or without "cortex-"), optionally
// with gcc's -mcpu modifiers +nodsp and +nomve (+nofp, +nomve.fp accepted, no effect: integer MVE
// stays). With -mfloat-abi=soft, gcc 12 compiles no MVE for cortex-m55: that is cortex-m55+nomve.
// Throws std::invalid_argument naming the accepted ones for anything else.
Cpu cpu_named(const std::string &name);

// Which kernels the firmware links: TFLM's reference kernels, or its CMSIS-NN kernels for `cpu`.
struct KernelBuild {
    enum class Set { Reference, CmsisNn };
    Set set = Set::Reference;
    Cpu cpu = cpu_named("cortex-m4");  // only CMSIS-NN's rules read it
    // "reference" or "cmsis-nn"; std::invalid_argument else.
    static Set set_named(const std::string &name);
    std::string describe() const;  // "reference kernels", "CMSIS-NN kernels for cortex-m4 (DSP)"
};

struct KernelAlloc {
    enum class Kind {
        BuiltinData,  // Parse: AllocatePOD<T>() -> persistent, alignof(T)
        Persistent,   // context->AllocatePersistentBuffer(bytes): persistent, 16-byte aligned
        TempTensor,   // AllocateTemp{Input,Output,Intermediate}Tensor / GetTensor: a temp TfLiteTensor
        TempBuffer,   // AllocateTempBuffer(bytes, align)
        Scratch,      // RequestScratchBufferInArena(bytes): a buffer of the memory plan
    };
    Kind kind = Kind::Persistent;
    int64_t bytes = 0;
    int64_t align = 16;
    int tensor = -1;   // TempTensor: the tensor's index in the operator's subgraph
    std::string what;  // e.g. "OpDataConv", "per-channel output multipliers (32 x int32)"
};

// One operator's requests, each pass in call order.
struct OpKernel {
    std::vector<KernelAlloc> parse, init, prepare;
};

struct KernelPrediction {
    std::vector<std::vector<OpKernel>> ops;  // [subgraph][operator]
    std::vector<ScratchRequest> requests;    // the scratch requests, in TFLM's request order
    // Operators whose scratch requests are not modelled, "subgraph 0 operator 3 (X)": the memory
    // plan is approximate.
    std::vector<std::string> unmodelled;
    // Operators whose other arena use (builtin data, OpData, Prepare's buffers and temporaries)
    // is not modelled: the minimum arena is a floor, not a prediction.
    std::vector<std::string> unmodelled_data;
    // What the kernels' Prepare would reject, e.g. a hybrid CONV_2D (float input, int8 filter).
    std::vector<std::string> rejected;
};

// The kernels' requests for every operator of the model, sized for `abi`. The scratch requests
// (and so the memory plan) depend on the ABI only for ADD_N (pointer-sized scratch); with
// CMSIS-NN they depend on the CPU.
KernelPrediction predict_kernels(const Model &model, const Abi &abi, const KernelBuild &build = {});

}  // namespace arenascope::planner
