// arenascope planner: what TFLM's kernels allocate in the arena.
//
// Kernels allocate in three passes that the model file does not describe: Parse (builtin
// options, TFLM's flatbuffer_conversions.cc), Init (their OpData, AllocatePersistentBuffer) and
// Prepare (more persistent buffers, temporary TfLiteTensors for the tensors they inspect, and
// scratch-buffer requests that join the memory plan). Each modelled kernel's rules are
// transcribed from TFLM's reference kernel source (tensorflow/lite/micro/kernels/*.cc and
// signal/micro/kernels/*.cc at tflite-micro 90b983c2), cited at each rule in kernels.cpp;
// optimized kernel variants (CMSIS-NN, Xtensa) allocate differently and are not modelled.
#pragma once

#include <string>
#include <vector>

#include "arenascope/planner/abi.h"
#include "arenascope/planner/model.h"
#include "arenascope/planner/plan.h"

namespace arenascope::planner {

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

// The reference kernels' requests for every operator of the model, sized for `abi`. The
// scratch requests (and so the memory plan) do not depend on the ABI.
KernelPrediction predict_kernels(const Model &model, const Abi &abi);

}  // namespace arenascope::planner
