/*
 * NOT TensorFlow Lite Micro. Part of the TFLM STAND-IN: a firmware with TFLM 90b983c2's class and
 * member names for what arenascope's agentless mode reads, so that its post-mortem is tested in
 * CI where real TFLM cannot be built; it lays out the arena by re-enacting the allocation steps
 * arenascope-plan predicts.
 *
 * The types of the tables gen_standin_plan.py writes into standin_plan.h.
 */
#pragma once
#include <stdint.h>

/* arenascope-plan's step kinds, in its JSON's order ("kind"). */
enum standin_step_kind {
    STANDIN_STEP_0_PERSISTENT,     /* AllocatePersistentBuffer(bytes, align) */
    STANDIN_STEP_1_TEMP,           /* AllocateTemp(bytes, align) */
    STANDIN_STEP_2_RESET_TEMP,     /* ResetTempAllocations() */
    STANDIN_STEP_3_RESIZE_HEAD,    /* AllocateResizableBuffer / ResizeBuffer / DeallocateResizableBuffer */
    STANDIN_STEP_4_PLANNER_ARRAYS, /* CommitStaticMemoryPlan: GetAvailableMemory as a temp, Init, AddBuffer */
    STANDIN_STEP_5_RESERVE_HEAD,   /* ReserveNonPersistentOverlayMemory(bytes, 16) */
};

/* What TFLM makes of the memory a step returns (from the step's category and what). */
enum standin_role {
    STANDIN_ROLE_NONE,
    STANDIN_ROLE_ARENA_ALLOCATOR,      /* the SingleArenaBufferAllocator itself */
    STANDIN_ROLE_PLANNER,              /* the GreedyMemoryPlanner */
    STANDIN_ROLE_MICRO_ALLOCATOR,      /* the MicroAllocator */
    STANDIN_ROLE_BUILTIN_ALLOCATOR,    /* MicroBuiltinDataAllocator (StartModelAllocation) */
    STANDIN_ROLE_SUBGRAPH_ALLOCATIONS, /* SubgraphAllocations[subgraphs] */
    STANDIN_ROLE_EVAL_TENSORS,         /* a subgraph's TfLiteEvalTensor[] */
    STANDIN_ROLE_NODES,                /* a subgraph's NodeAndRegistration[] */
    STANDIN_ROLE_BUILTIN_DATA,         /* an operator's builtin options (Parse: node.builtin_data) */
    STANDIN_ROLE_USER_DATA,            /* an operator's OpData (its first Init request: node.user_data) */
    STANDIN_ROLE_KERNEL_BUFFER,        /* a kernel's other persistent buffers (per-channel data) */
    STANDIN_ROLE_SCRATCH_HANDLES,      /* ScratchBufferHandle[] */
    STANDIN_ROLE_VARIABLE,             /* a variable tensor's buffer */
    STANDIN_ROLE_INPUT_ARRAY,          /* input_tensors_: TfLiteTensor*[] */
    STANDIN_ROLE_OUTPUT_ARRAY,         /* output_tensors_ */
    STANDIN_ROLE_INPUT_TENSOR,         /* a persistent TfLiteTensor of an input */
    STANDIN_ROLE_OUTPUT_TENSOR,        /* ... of an output */
    STANDIN_ROLE_QUANTIZATION,         /* TfLiteAffineQuantization of the TfLiteTensor before it */
    STANDIN_ROLE_ZERO_POINTS,          /* its zero-point TfLiteIntArray */
    STANDIN_ROLE_TEMP_TENSOR,          /* a kernel's temp TfLiteTensor (Prepare) */
    STANDIN_ROLE_TEMP_QUANTIZATION,    /* its quantization, as temps */
    STANDIN_ROLE_TEMP_BUFFER,          /* a kernel's temp buffer */
    STANDIN_ROLE_PLANNING_TEMP,        /* the memory planning's temporaries (AllocationInfo[]...) */
    STANDIN_ROLE_SCRATCH_REQUESTS,     /* the resizable head: ScratchBufferRequest[] */
    STANDIN_ROLE_PLANNER_ARRAYS,       /* the GreedyMemoryPlanner's arrays in the free space */
    STANDIN_ROLE_HEAD,                 /* the memory plan's head */
};

typedef struct {
    uint8_t kind;  /* enum standin_step_kind */
    uint8_t role;  /* enum standin_role */
    uint8_t phase; /* index into standin_phase_names */
    uint8_t fatal; /* 0: TFLM ignores this request's failure */
    int32_t bytes;
    int32_t align;
    int32_t count; /* elements (planner-arrays: the buffers AddBuffer adds) */
    int16_t subgraph;
    int16_t op;       /* -1: not a kernel's request */
    int16_t tensor;   /* a variable tensor's index, else -1 */
    const char *what; /* the planner's description */
} standin_step_t;

typedef struct {                       /* one planned buffer of the head ("buffers") */
    int16_t subgraph, tensor, scratch; /* tensor -1: scratch buffer `scratch` */
    int32_t offset, size, first, last;
} standin_buffer_t;

typedef struct {
    uint8_t placement; /* 0 arena (planned head), 1 flash (constant in the model), 2 persistent (variable) */
    uint8_t type;      /* TfLiteType */
    uint8_t is_variable;
    int32_t bytes;
    int32_t shape;           /* offset in the model of the shape vector (a TfLiteIntArray), -1 none */
    int32_t data;            /* offset in the model of the constant data, -1 none */
    int32_t scale;           /* offset of the quantization's scale vector (TfLiteFloatArray), -1 none */
    int32_t zero_points;     /* their count */
    int32_t zero_point_data; /* offset of the zero points (int64 each), -1 none */
    int32_t quantized_dimension;
} standin_tensor_t;

typedef struct {
    int32_t inputs, outputs; /* offsets in the model of the operator's tensor index vectors */
    int32_t builtin_code;
} standin_operator_t;

typedef struct {
    int32_t tensor_count;
    const standin_tensor_t *tensors;
    int32_t operator_count;
    const standin_operator_t *operators;
    int32_t input_count;
    const int *inputs;
    int32_t output_count;
    const int *outputs;
} standin_subgraph_t;
