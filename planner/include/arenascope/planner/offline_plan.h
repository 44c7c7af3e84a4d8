// arenascope planner: a memory plan written into a model as TFLM's offline plan.
//
// TFLM reads a model's "OfflineMemoryAllocation" metadata (micro_allocation_info.cc
// GetOfflinePlannedOffsets; the format: tensorflow/lite/micro/docs/memory_management.md): a buffer
// of uint32 words [version 1, subgraph count, tensor count n, n offsets], one offset per tensor of
// all subgraphs in order (subgraph 0's tensors first), in bytes from the head's start, -1 for a
// tensor TFLM plans online. The greedy planner places those buffers first, at those offsets, and
// fits the rest (scratch buffers, tensors at -1) around them (greedy_memory_planner.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "arenascope/planner/model.h"
#include "arenascope/planner/plan.h"

namespace arenascope::planner {

// The offline plan of `plan` for `model`: per tensor of all subgraphs, the offset of its planned
// buffer, -1 for every other tensor (constants, variables, empty ones) and for scratch buffers,
// which have no tensor and stay online.
std::vector<int32_t> offline_offsets(const Model &model, const Lifetimes &lifetimes, const Plan &plan);

// The bytes of the .tflite `data` (verified here with read_model; ModelError if it fails) with
// `offsets` as its only "OfflineMemoryAllocation" metadata: an existing one is dropped from the
// metadata list, the new plan is a new buffer at the end of the buffer list. Everything else keeps
// its bytes: the file gains one block after its identifier (a new Model table and the two vectors
// it changes, ending with a copy of the old first 8 bytes) and every old byte follows, in order.
// Every field of the old Model is verified before it is copied (read_model's verifier, whose
// schema declares them all), and the result is verified again by the same verifier and read back
// as the same model before it is returned. ModelError when the model cannot be rewritten so (a
// Model field newer than the schema, external buffers or Buffer.offset, a model too large to grow,
// a result that does not verify); std::logic_error when the result reads back as another model
// (a bug).
std::vector<uint8_t> with_offline_plan(const uint8_t *data, size_t size, const std::vector<int32_t> &offsets);

}  // namespace arenascope::planner
