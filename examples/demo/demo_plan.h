/*
 * The demo's memory plan: generated at build time from a real model.
 *
 * The top-level build runs `arenascope-plan --header --target cortex-m --margin 15 MODEL` and puts the
 * result, arenascope_plan.h, on this demo's include path (CMakeLists.txt, ARENASCOPE_DEMO_MODEL).
 * MODEL is the project's own DS-CNN keyword-spotting model (build/planner/dscnn_kws.tflite,
 * written by arenascope-write-dscnn) unless the build is configured with another .tflite:
 *   cmake -S . -B build -DARENASCOPE_DEMO_MODEL=/path/to/model.tflite
 * The generated header carries TFLM's greedy plan of the head (every tensor and scratch buffer
 * with its offset and lifetime), every persistent allocation of the tail at the offset TFLM
 * gives it, and the operators (docs/arena-budget.md, "For firmware"). The demo lays its arena
 * out exactly so, in the arena size the planner recommends.
 */
#ifndef DEMO_PLAN_H
#define DEMO_PLAN_H

#include "arenascope_plan.h"

/* The planner's minimum + 15 %, a 16-byte multiple: the plugin's headroom check wants 10-20 % above
 * the peak, and the demo's peak is TFLM's arena_used_bytes() plus the 64 B of temp below. */
#define DEMO_ARENA_BYTES ARENASCOPE_PLAN_RECOMMENDED_ARENA_BYTES
#define DEMO_ALIGNMENT 16u                         /* MicroArenaBufferAlignment() */
#define DEMO_HEAD_BYTES ARENASCOPE_PLAN_HEAD_BYTES /* max_head_buffer_usage */
#define DEMO_TAIL_BYTES ARENASCOPE_PLAN_TAIL_BYTES /* GetPersistentUsedBytes() */
#define DEMO_TEMP_BYTES 64u                        /* temp the demo's first operator takes above the head */
#define DEMO_OP_COUNT ARENASCOPE_PLAN_MAIN_OPS
#define DEMO_HEAD_REGIONS ARENASCOPE_PLAN_REGIONS
#define DEMO_TAIL_ITEMS ARENASCOPE_PLAN_TAIL_ITEMS
#define DEMO_GUARD_BYTES 256u /* guard band between the arena's end and the stack */

#if ARENASCOPE_PLAN_TAIL_NODES < 0 || DEMO_OP_COUNT == 0
#error "the demo's model has no operators: choose another ARENASCOPE_DEMO_MODEL"
#endif

#endif /* DEMO_PLAN_H */
