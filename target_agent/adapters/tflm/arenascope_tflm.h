/*
 * arenascope TFLM adapter: publish a real MicroInterpreter's arena in the agent's descriptor.
 * Header-only C++; include it in a firmware that already has TensorFlow Lite Micro (nothing of
 * TFLM is shipped with arenascope), and link arenascope_tflm_recorder.c and the agent.
 *
 *   static arenascope_region_t regions[64];           // one per planned buffer, + 1
 *   static arenascope::TflmRecordingPlanner planner(regions, 64);
 *   tflite::MicroAllocator* allocator = tflite::MicroAllocator::Create(tensor_arena, kArenaSize, &planner);
 *   static tflite::MicroInterpreter interpreter(model, resolver, allocator);
 *   if (interpreter.AllocateTensors() != kTfLiteOk) ...;
 *   arenascope_arena_t* a = planner.Publish(interpreter, tensor_arena, kArenaSize, model_data, model_size);
 *
 * How it changes TFLM's layout: MicroAllocator::Create(arena, size, planner) does not place the
 * planner in the arena, so the persistent tail and arena_used_bytes() are smaller by
 * sizeof(tflite::GreedyMemoryPlanner) (44 bytes on a Cortex-M4, 72 on x86-64; TFLM 90b983c2)
 * than with MicroInterpreter(model, resolver, arena, size). Nothing else moves: the plan is
 * TFLM's own GreedyMemoryPlanner's, this class only records it (docs/integrating-tflm.md).
 * Checked against tensorflow/tflite-micro 90b983c2.
 */
#ifndef ARENASCOPE_TFLM_H
#define ARENASCOPE_TFLM_H

#include <cstdint>

#include "arenascope_tflm_recorder.h"
#include "tensorflow/lite/micro/compatibility.h"
#include "tensorflow/lite/micro/memory_helpers.h"
#include "tensorflow/lite/micro/memory_planner/greedy_memory_planner.h"
#include "tensorflow/lite/micro/micro_arena_constants.h"
#include "tensorflow/lite/micro/micro_interpreter.h"

namespace arenascope {

// TFLM's GreedyMemoryPlanner, unchanged, that also records each buffer it plans.
class TflmRecordingPlanner : public tflite::GreedyMemoryPlanner {
public:
    TflmRecordingPlanner(arenascope_region_t *table, uint16_t capacity)
    {
        arenascope_tflm_recorder_init(&recorder_, table, capacity);
    }

    TfLiteStatus AddBuffer(int size, int first_time_used, int last_time_used) override
    {
        arenascope_tflm_record_buffer(&recorder_, size, first_time_used, last_time_used, -1);
        return GreedyMemoryPlanner::AddBuffer(size, first_time_used, last_time_used);
    }
    TfLiteStatus AddBuffer(int size, int first_time_used, int last_time_used, int offline_offset) override
    {
        arenascope_tflm_record_buffer(&recorder_, size, first_time_used, last_time_used, offline_offset);
        return GreedyMemoryPlanner::AddBuffer(size, first_time_used, last_time_used, offline_offset);
    }
    TfLiteStatus GetOffsetForBuffer(int buffer_index, int *offset) override
    {
        const TfLiteStatus status = GreedyMemoryPlanner::GetOffsetForBuffer(buffer_index, offset);
        if (status == kTfLiteOk) arenascope_tflm_record_offset(&recorder_, buffer_index, *offset);
        // TFLM's CommitPlan asks for every buffer in id order. At the last one the planner's arrays
        // are still valid (they live in free arena space that later allocations and the first Invoke
        // overwrite): take the head now, never later.
        if (status == kTfLiteOk && buffer_index == GetBufferCount() - 1) {
            head_bytes_ = static_cast<uint32_t>(GetMaximumMemorySize());
            planned_ = true;
        }
        return status;
    }

    // After AllocateTensors(): the arena as TFLM uses it (its start aligned up to 16, as
    // MicroAllocator::Create does), the plan, TFLM's watermarks and the model. nullptr if the
    // agent has no room for another arena.
    // nullptr before AllocateTensors() has planned the arena (nothing to publish yet); a second
    // call returns the first call's arena.
    arenascope_arena_t *Publish(tflite::MicroInterpreter &interpreter, uint8_t *arena, size_t arena_size,
                                const void *model, size_t model_size)
    {
        if (published_ != nullptr || !planned_) return published_;
        uint8_t *start = tflite::AlignPointerUp(arena, tflite::MicroArenaBufferAlignment());
        const uint32_t size = static_cast<uint32_t>(arena + arena_size - start);
        published_ = arenascope_tflm_recorder_publish(&recorder_, start, size, head_bytes_,
                                                      static_cast<uint32_t>(interpreter.arena_used_bytes()), model,
                                                      static_cast<uint32_t>(model_size));
        return published_;
    }

    const arenascope_tflm_recorder_t &recorder() const { return recorder_; }

private:
    arenascope_tflm_recorder_t recorder_;
    uint32_t head_bytes_ = 0;  // GetMaximumMemorySize() while the plan was valid
    bool planned_ = false;     // CommitPlan has asked for every buffer's offset
    arenascope_arena_t *published_ = nullptr;

    TF_LITE_REMOVE_VIRTUAL_DELETE  // as TFLM's own planners: placed, never deleted
};

}  // namespace arenascope

#endif  // ARENASCOPE_TFLM_H
