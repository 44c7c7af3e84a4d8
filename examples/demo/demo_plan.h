/*
 * The demo's memory plan: TFLM's own greedy plan for a real model, checked in.
 *
 * Model: tflm_keyword_scrambled_8bit.tflite (tensorflow/tflite-micro @ 90b983c,
 * tensorflow/lite/micro/models/keyword_scrambled_8bit.tflite): 54 tensors, 15 operators
 * (QUANTIZE, 7 x SVDF, 4 x FULLY_CONNECTED, SOFTMAX, QUANTIZE), 7 variable (SVDF state) tensors,
 * 14 scratch buffers.
 * Source of every figure: ../shared/tflm-figures/tflm-figures.json, model
 * "tflm_keyword_scrambled_8bit.tflite", build "arm_m4" (real TFLM on a Cortex-M4 under QEMU):
 *   - head plan: the GreedyMemoryPlanner's PrintMemoryPlan lines (size, offset, first_used,
 *     last_used per planner id), head_bytes = 672;
 *   - tail: tail_bytes = 7380, split by the RecordingMicroAllocator lines of the same build
 *     (TfLiteEvalTensor data 648 B, NodeAndRegistration structs 480 B, persistent buffer data
 *     740 B, variable buffers 7 x 512/1024 B at 16-byte alignment; the rest is allocator objects
 *     and the input/output TfLiteTensors).
 * Tensor indices (planner id -> tensor) follow TFLM's rule (ids in tensor order, skipping
 * constant and variable tensors; scratch buffers after), read once from the model file.
 * The planner issue replaces this table with one generated at build time.
 */
#ifndef DEMO_PLAN_H
#define DEMO_PLAN_H

#include "arenascope/agent.h"

#define DEMO_ARENA_BYTES 12288u  /* TFLM's measured minimum on the M4 is 10400 B (figures) */
#define DEMO_ALIGNMENT 16u       /* MicroArenaBufferAlignment() */
#define DEMO_HEAD_BYTES 672u     /* max_head_buffer_usage */
#define DEMO_TAIL_BYTES 7380u    /* GetPersistentUsedBytes() on the M4 */
#define DEMO_TEMP_BYTES 64u      /* temp the demo's first operator takes above the head */
#define DEMO_OP_COUNT 15
#define DEMO_HEAD_REGIONS 30     /* 16 planned tensors + 14 scratch buffers */
#define DEMO_GUARD_BYTES 256u    /* guard band between the arena's end and the stack */

/* Planned head regions, in planner-id order (offsets are TFLM's). */
extern const arenascope_region_t demo_head_plan[DEMO_HEAD_REGIONS];

/* Tail allocations in TFLM's order (first = top of the arena). */
typedef struct demo_tail_item {
    uint32_t size_bytes;
    uint16_t alignment;
    uint16_t id; /* tensor index or ARENASCOPE_ID_NONE */
    uint8_t kind;
    uint8_t flags;
    const char *what;
} demo_tail_item_t;

#define DEMO_TAIL_ITEMS 13
#define DEMO_TAIL_NODES 2 /* index of the NodeAndRegistration array in demo_tail_plan */
extern const demo_tail_item_t demo_tail_plan[DEMO_TAIL_ITEMS];

/* Operator i's builtin code (0: QUANTIZE, 1: SVDF, 2: FULLY_CONNECTED, 3: SOFTMAX) and, for an
 * SVDF, the tensor index of its state (variable) tensor. */
extern const uint8_t demo_op_kind[DEMO_OP_COUNT];
extern const uint16_t demo_op_state_tensor[DEMO_OP_COUNT];

#endif /* DEMO_PLAN_H */
