// arenascope planner, private to kernels_reference*.cpp: the reference kernels' rules grouped by
// family, each file citing its TFLM sources (tflite-micro 90b983c2), and the helpers they share.
// reference_kernel() (kernels_reference.cpp) stays the one entry point and asks each family.
#pragma once

#include <cstdint>
#include <string>

#include "kernel_rules.h"

namespace arenascope::planner::rules {

constexpr int kTypeInt32 = 2, kTypeBool = 6;

// An operator whose rules are all of this shape: Parse's builtin struct, Init's OpData, and
// Prepare's temporary tensors in call order ("i0 i1 o0": AllocateTempInputTensor(node, 0),
// AllocateTempInputTensor(node, 1), AllocateTempOutputTensor(node, 0); an omitted optional
// tensor allocates nothing).
struct SimpleRule {
    const char *op;
    TypeSize parse_arm, parse_host;  // AllocatePOD<T>(); size 0 = the Parse function allocates nothing
    const char *parse_type;
    int64_t init_arm, init_host;  // AllocatePersistentBuffer(sizeof(OpData)); 0 = no Init or Init allocates nothing
    const char *init_type;
    const char *temps;
};

// Applies a SimpleRule.
void apply(Kernel &k, const SimpleRule &r);

// Finds the rule for k's operator in rules[0..n) and applies it; false when none is for it.
bool apply_table(Kernel &k, const SimpleRule *rules, size_t n);

// Elements of a tensor (an empty shape is a scalar: one element); -1 for a dynamic dimension.
int64_t elements(const Tensor *t);

// kernel_util.cc CreateWritableTensorDimsWithCopy: a persistent TfLiteIntArray copy of the
// tensor's dims, TfLiteIntArrayGetSizeInBytes(rank) = 4 + 4 x rank (c/common.cc).
void dims_copy(Kernel &k, const Tensor *t);

// The families (kernels_reference_elementwise.cpp, _shape.cpp, _compute.cpp). Each returns
// false, leaving k untouched, for an operator it does not hold; else sets modelled and
// scratch_ok as reference_kernel() returns and sets them.
bool elementwise_kernel(Kernel &k, bool &modelled, bool &scratch_ok);
bool shape_kernel(Kernel &k, bool &modelled, bool &scratch_ok);
bool compute_kernel(Kernel &k, bool &modelled, bool &scratch_ok);
// SignalDelay, SignalFramer, SignalStacker, SignalOverlapAdd, SignalIrfft
// (kernels_reference_signal.cpp).
bool signal_stream_kernel(Kernel &k, bool &modelled, bool &scratch_ok);

}  // namespace arenascope::planner::rules
