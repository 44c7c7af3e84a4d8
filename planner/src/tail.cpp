// Struct sizes derived from their definitions (tensorflow/lite/core/c/common.h with
// TF_LITE_STATIC_MEMORY, as TFLM builds it; micro_allocator.h), laid out by each ABI's rules.
#include "arenascope/planner/tail.h"

#include <stdexcept>

namespace arenascope::planner {

namespace {
int64_t align_up(int64_t n, int64_t a) { return (n + a - 1) / a * a; }
}  // namespace

Abi abi_named(const std::string& name) {
  if (name == "cortex-m") return Abi{"cortex-m", 4, 1};
  if (name == "host") return Abi{"host", 8, 4};
  throw std::invalid_argument("unknown target '" + name + "': use cortex-m or host");
}

std::vector<TailPart> known_tail(const Model& model, const Lifetimes& lifetimes, size_t scratch_count,
                                 const Abi& abi) {
  const int p = abi.pointer, e = abi.enum_size;
  // TfLiteEvalTensor {TfLitePtrUnion data; TfLiteIntArray* dims; TfLiteType type;}
  const int64_t eval_tensor = align_up(2 * p + e, p);
  // TfLiteNode {inputs, outputs, intermediates, user_data, builtin_data, custom_initial_data
  // pointers; int custom_initial_data_size} + NodeAndRegistration's registration pointer.
  const int64_t node_and_registration = align_up(6 * p + 4, p) + p;
  // TfLiteTensor {TfLiteQuantization {type enum; void* params}; TfLiteQuantizationParams
  // {float; int32}; data; dims; size_t bytes; TfLiteType; TfLiteAllocationType; bool}
  const int64_t quantization = align_up(e, p) + p;
  const int64_t tflite_tensor = align_up(quantization + 8 + 3 * p + 2 * e + 1, p);
  // TfLiteAffineQuantization {TfLiteFloatArray* scale; TfLiteIntArray* zero_point; int32}
  const int64_t affine = align_up(2 * p + 4, p);

  int ops = 0, tensors = 0;
  for (const Subgraph& sg : model.subgraphs) {
    ops += static_cast<int>(sg.operators.size());
    tensors += static_cast<int>(sg.tensors.size());
  }
  std::vector<TailPart> parts;
  const int subgraphs = static_cast<int>(model.subgraphs.size());
  parts.push_back({"SubgraphAllocations", subgraphs, subgraphs * 2LL * p, "micro_allocator.cc StartModelAllocation"});
  parts.push_back({"NodeAndRegistration struct", ops, ops * node_and_registration,
                   "micro_allocator.cc AllocateNodeAndRegistrations"});
  parts.push_back({"TfLiteEvalTensor data", tensors, tensors * eval_tensor, "micro_allocator.cc AllocateTfLiteEvalTensors"});
  int variables = 0;
  int64_t variable_bytes = 0;
  for (size_t s = 0; s < model.subgraphs.size(); ++s)
    for (const Tensor& t : model.subgraphs[s].tensors)
      if (lifetimes.placement[s][t.index] == Placement::Persistent) ++variables, variable_bytes += t.bytes;
  if (variables)
    parts.push_back({"TfLiteTensor variable buffer data", variables, variable_bytes, "micro_allocator.cc AllocateVariables"});
  const Subgraph& main = model.subgraphs[0];
  const int io = static_cast<int>(main.inputs.size() + main.outputs.size());
  parts.push_back({"input/output TfLiteTensor* arrays", io, io * int64_t{p}, "micro_interpreter.cc AllocateTensors"});
  parts.push_back({"Persistent TfLiteTensor data", io, io * tflite_tensor, "micro_allocator.cc AllocatePersistentTfLiteTensor"});
  int quantized = 0;
  int64_t quant_bytes = 0;
  for (const auto* list : {&main.inputs, &main.outputs})
    for (int32_t t : *list)
      if (int ch = main.tensors[t].quant_channels) quantized += 2, quant_bytes += affine + 4 + 4LL * ch;
  if (quantized)
    parts.push_back({"Persistent TfLiteTensor quantization data", quantized, quant_bytes,
                     "micro_allocator.cc PopulateTfLiteTensorFromFlatbuffer"});
  if (scratch_count)
    parts.push_back({"ScratchBufferHandle", static_cast<int>(scratch_count), static_cast<int64_t>(scratch_count) * p,
                     "micro_allocator.cc FinishModelAllocation"});
  return parts;
}

}  // namespace arenascope::planner
