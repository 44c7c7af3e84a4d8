// arenascope planner: the sizes of the C/C++ types TFLM allocates in the arena, per target ABI.
//
// cortex-m: AAPCS (arm-none-eabi-gcc), 4-byte pointers and size_t, enums as small as their
// values (-fshort-enums is arm-none-eabi's default). riscv32 and xtensa: ILP32 with 4-byte enums
// (RISC-V psABI; ESP-IDF's Xtensa GCC). host: x86-64 SysV (g++), 8-byte pointers, 4-byte enums. Each size is the sizeof/alignof of the type as TFLM 90b983c2 defines it
// (tensorflow/lite/core/c/common.h with TF_LITE_STATIC_MEMORY, micro_allocator.h,
// micro_allocation_info.h, arena_allocator/single_arena_buffer_allocator.h,
// memory_planner/greedy_memory_planner.h), worked out in abi.cpp's comments and checked by
// compiling sizeof probes against those headers with both compilers.
#pragma once

#include <cstdint>
#include <string>

#include "arenascope/planner/revisions.h"

namespace arenascope::planner {

struct TypeSize {
    int64_t size = 0;   // sizeof, bytes
    int64_t align = 1;  // alignof, bytes
};

struct Abi {
    std::string name;   // "cortex-m", "riscv32", "xtensa" or "host" (kTargets)
    int pointer = 4;    // pointers and size_t, bytes
    int enum_size = 1;  // TfLiteType, TfLiteAllocationType, TfLiteQuantizationType
    // TFLM's objects, by the name the type has in TFLM's source.
    TypeSize eval_tensor;             // TfLiteEvalTensor
    TypeSize node_and_registration;   // NodeAndRegistration (TfLiteNode + TFLMRegistration*)
    TypeSize tflite_tensor;           // TfLiteTensor
    TypeSize affine_quantization;     // TfLiteAffineQuantization
    TypeSize subgraph_allocations;    // SubgraphAllocations
    TypeSize scratch_buffer_handle;   // ScratchBufferHandle
    TypeSize scratch_buffer_request;  // internal::ScratchBufferRequest
    TypeSize allocation_info;         // AllocationInfo
    TypeSize arena_allocator;         // SingleArenaBufferAllocator
    TypeSize greedy_planner;          // GreedyMemoryPlanner
    TypeSize micro_allocator;         // MicroAllocator
    TypeSize builtin_data_allocator;  // MicroBuiltinDataAllocator (micro_allocator.cc)
    // The TFLM revision whose sizes and rules these are (revisions.h): arena_allocator,
    // micro_allocator and greedy_planner are its; kernels, the replay and its messages read
    // the rest of its facts from here.
    const TflmRevision *tflm = &default_tflm_revision();
    bool tflm_given = false;    // named on the command line (--tflm): the JSON says which
    bool tflm_assumed = false;  // --tflm auto: the default revision was assumed, not stated
};

// The targets abi_named knows, as the CLI and its errors list them.
inline constexpr const char *kTargets = "cortex-m, riscv32, xtensa or host";

// A target of kTargets; throws std::invalid_argument for anything else. The sizes are those of
// `tflm` (default: 2026-08, upstream 90b983c2).
Abi abi_named(const std::string &name);
Abi abi_named(const std::string &name, const TflmRevision &tflm);

// TfLiteIntArrayGetSizeInBytes(n): the int size field and n ints (common.c), alignment 4.
inline int64_t int_array_bytes(int64_t n)
{
    return 4 + 4 * n;
}

}  // namespace arenascope::planner
