/* The demo's checked-in memory plan; provenance in demo_plan.h. */
#include "demo_plan.h"

#define T ARENASCOPE_KIND_TENSOR
#define S ARENASCOPE_KIND_SCRATCH
#define IN ARENASCOPE_REGION_MODEL_INPUT
#define OUT ARENASCOPE_REGION_MODEL_OUTPUT

/* {offset, size, id, kind, flags, first_use, last_use}: TFLM PrintMemoryPlan, arm_m4 build. */
const arenascope_region_t demo_head_plan[DEMO_HEAD_REGIONS] = {
    {512, 96, 0, T, 0, 1, 2},       /* planner id 0: tensor 0, QUANTIZE output       */
    {608, 64, 5, T, 0, 2, 3},       /* planner id 1: tensor 5, SVDF output           */
    {576, 16, 8, T, 0, 3, 4},       /* planner id 2                                  */
    {512, 64, 13, T, 0, 4, 5},      /* planner id 3                                  */
    {576, 16, 16, T, 0, 5, 6},      /* planner id 4                                  */
    {512, 64, 21, T, 0, 6, 7},      /* planner id 5                                  */
    {576, 16, 24, T, 0, 7, 8},      /* planner id 6                                  */
    {512, 64, 29, T, 0, 8, 9},      /* planner id 7                                  */
    {288, 16, 32, T, 0, 9, 10},     /* planner id 8                                  */
    {256, 32, 37, T, 0, 10, 11},    /* planner id 9                                  */
    {288, 32, 42, T, 0, 11, 12},    /* planner id 10                                 */
    {256, 32, 47, T, 0, 12, 13},    /* planner id 11                                 */
    {0, 16, 50, T, 0, 13, 14},      /* planner id 12                                 */
    {16, 16, 51, T, 0, 14, 15},     /* planner id 13: SOFTMAX output                 */
    {0, 192, 52, T, IN, 0, 1},      /* planner id 14: model input (int16 [1,96])     */
    {0, 16, 53, T, OUT, 15, 15},    /* planner id 15: model output (int32 [1,2])     */
    {256, 256, 0, S, 0, 2, 2},      /* planner id 16: scratch 0, SVDF op 1           */
    {0, 256, 1, S, 0, 2, 2},        /* planner id 17: scratch 1                      */
    {256, 256, 2, S, 0, 4, 4},      /* planner id 18                                 */
    {0, 256, 3, S, 0, 4, 4},        /* planner id 19                                 */
    {256, 256, 4, S, 0, 6, 6},      /* planner id 20                                 */
    {0, 256, 5, S, 0, 6, 6},        /* planner id 21                                 */
    {256, 256, 6, S, 0, 8, 8},      /* planner id 22                                 */
    {0, 256, 7, S, 0, 8, 8},        /* planner id 23                                 */
    {128, 128, 8, S, 0, 10, 10},    /* planner id 24                                 */
    {0, 128, 9, S, 0, 10, 10},      /* planner id 25                                 */
    {128, 128, 10, S, 0, 11, 11},   /* planner id 26                                 */
    {0, 128, 11, S, 0, 11, 11},     /* planner id 27                                 */
    {128, 128, 12, S, 0, 12, 12},   /* planner id 28                                 */
    {0, 128, 13, S, 0, 12, 12},     /* planner id 29                                 */
};

#define P ARENASCOPE_KIND_PERSISTENT
#define M ARENASCOPE_KIND_METADATA
#define I ARENASCOPE_REGION_IMMUTABLE /* TFLM's bookkeeping does not change after allocation */
#define V ARENASCOPE_REGION_VARIABLE
#define NONE ARENASCOPE_ID_NONE

/* Sizes: RecordingMicroAllocator lines, arm_m4 build; the last item takes what is left of
 * tail_bytes (7380), so the tail ends exactly where TFLM's does. */
const demo_tail_item_t demo_tail_plan[DEMO_TAIL_ITEMS] = {
    {224, 4, NONE, M, I, "allocator objects (arena allocator, planner, MicroAllocator, ...)"},
    {648, 4, NONE, M, I, "TfLiteEvalTensor[54]"},
    {480, 4, NONE, M, I, "NodeAndRegistration[15]"},
    {740, 4, NONE, P, 0, "op data and builtin params"},
    {56, 4, NONE, M, I, "ScratchBufferHandle[14]"},
    {512, 16, 4, P, V, "SVDF state, tensor 4"},
    {512, 16, 12, P, V, "SVDF state, tensor 12"},
    {512, 16, 20, P, V, "SVDF state, tensor 20"},
    {512, 16, 28, P, V, "SVDF state, tensor 28"},
    {1024, 16, 36, P, V, "SVDF state, tensor 36"},
    {1024, 16, 41, P, V, "SVDF state, tensor 41"},
    {1024, 16, 46, P, V, "SVDF state, tensor 46"},
    {0, 4, NONE, M, I, "input/output TfLiteTensor + quantization (rest of the tail)"},
};

const uint8_t demo_op_kind[DEMO_OP_COUNT] = {0, 1, 2, 1, 2, 1, 2, 1, 2, 1, 1, 1, 2, 3, 0};
const uint16_t demo_op_state_tensor[DEMO_OP_COUNT] = {NONE, 4, NONE, 12, NONE, 20, NONE, 28, NONE, 36, 41, 46, NONE, NONE, NONE};
