// arenascope planner: the parts of TFLM's persistent tail that follow from the model and the
// target ABI alone. Kernel data (OpData from Init/Prepare, builtin parameters from Parse*), the
// allocator objects and alignment padding are not modelled yet, so the sum is a floor: the
// arena needs at least head + known tail.
#pragma once

#include <string>
#include <vector>

#include "arenascope/planner/model.h"
#include "arenascope/planner/plan.h"

namespace arenascope::planner {

// Sizes of the C types TFLM allocates, per ABI. cortex-m: AAPCS, 4-byte pointers, enums as
// small as their values (arm-none-eabi's default -fshort-enums); host: x86-64 SysV.
struct Abi {
  std::string name;   // "cortex-m" or "host"
  int pointer = 4;    // pointers and size_t
  int enum_size = 1;  // TfLiteType, TfLiteAllocationType, TfLiteQuantizationType
};
Abi abi_named(const std::string& name);  // throws std::invalid_argument

struct TailPart {
  std::string what;    // the RecordingMicroAllocator name where it has one
  int count = 0;       // allocations or elements
  int64_t bytes = 0;   // requested bytes (before alignment)
  std::string source;  // TFLM file and function that allocates it
};

// The known persistent allocations, in TFLM's order (StartModelAllocation, AllocateVariables,
// MicroInterpreter::AllocateTensors, FinishModelAllocation).
std::vector<TailPart> known_tail(const Model& model, const Lifetimes& lifetimes, size_t scratch_count,
                                 const Abi& abi);

}  // namespace arenascope::planner
