/*
 * arenascope TFLM adapter, the part that needs no TFLM: it records TFLM's memory plan as the
 * planner makes it and publishes it, with TFLM's watermarks, in the agent's descriptor.
 *
 * arenascope_tflm.h (C++, compiled only in a firmware that has TFLM) feeds it from a recording
 * GreedyMemoryPlanner: every AddBuffer() (planner id order: size, first and last use, offline
 * offset) and every GetOffsetForBuffer() (the offset TFLM gives the buffer). After
 * AllocateTensors(), arenascope_tflm_recorder_publish() adds the arena, its regions (region id =
 * TFLM's planner buffer id, kind TENSOR: the host maps ids to tensors and scratch buffers from
 * the model, whose address it publishes), the persistent tail as one region, and the marks.
 * Sizes in bytes, offsets from the arena start, lifetimes in TFLM's allocation scopes
 * (tensorflow/lite/micro/memory_planner/greedy_memory_planner.cc, micro_allocator.cc).
 */
#ifndef ARENASCOPE_TFLM_RECORDER_H
#define ARENASCOPE_TFLM_RECORDER_H

#include <stdint.h>

#include "arenascope/agent.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct arenascope_tflm_recorder {
    arenascope_region_t *table; /* the caller's region table: one entry per planned buffer, + 1 */
    uint16_t capacity;
    uint16_t count;   /* buffers recorded (planner ids 0..count-1)                    */
    uint8_t overflow; /* more buffers than the table holds: the rest are not published */
} arenascope_tflm_recorder_t;

/* Starts recording into table[capacity] (its entries are overwritten). */
void arenascope_tflm_recorder_init(arenascope_tflm_recorder_t *rec, arenascope_region_t *table, uint16_t capacity);

/* GreedyMemoryPlanner::AddBuffer: the next planner id. offline_offset -1 = planned online. */
void arenascope_tflm_record_buffer(arenascope_tflm_recorder_t *rec, int32_t size_bytes, int32_t first_use,
                                   int32_t last_use, int32_t offline_offset);

/* GreedyMemoryPlanner::GetOffsetForBuffer: where TFLM put buffer planner_id. */
void arenascope_tflm_record_offset(arenascope_tflm_recorder_t *rec, int32_t planner_id, int32_t offset_bytes);

/* After AllocateTensors(): publishes the arena [arena, arena + size_bytes) (TFLM's aligned start
 * and its size), the recorded buffers, the tail [size - (used - head), size) as one persistent
 * region, the marks (head = head_bytes, temp = head, tail = size - (used - head)) with
 * ARENASCOPE_ARENA_TFLM | ARENASCOPE_ARENA_PLANNER_IDS, and the model (address, length).
 * head_bytes: the planner's GetMaximumMemorySize(); used_bytes: MicroInterpreter::
 * arena_used_bytes(). Returns the arena entry, or NULL when the agent has no room or the figures
 * are inconsistent (used < head, or more than the arena). */
arenascope_arena_t *arenascope_tflm_recorder_publish(arenascope_tflm_recorder_t *rec, void *arena, uint32_t size_bytes,
                                                     uint32_t head_bytes, uint32_t used_bytes, const void *model,
                                                     uint32_t model_bytes);

#ifdef __cplusplus
}
#endif

#endif /* ARENASCOPE_TFLM_RECORDER_H */
