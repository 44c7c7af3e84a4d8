/*
 * NOT TensorFlow Lite Micro. Part of the TFLM STAND-IN: a firmware with TFLM 90b983c2's class and
 * member names for what arenascope's agentless mode reads, so that its post-mortem is tested in
 * CI where real TFLM cannot be built; it lays out the arena by re-enacting the allocation steps
 * arenascope-plan predicts.
 *
 * The types: TFLM's names, member names, member order and member types (TFLM-INTERNALS.md
 * section 1; tensorflow/lite/core/c/common.h with TF_LITE_STATIC_MEMORY, micro_interpreter.h,
 * micro_interpreter_graph.h, micro_allocator.h, arena_allocator/single_arena_buffer_allocator.h,
 * memory_planner/greedy_memory_planner.h), virtual where TFLM is virtual so that the vtables the
 * plugin looks for exist. No TFLM code: every body is the stand-in's own, re-enacting TFLM's
 * rules as planner/src/arena.cpp's replay() states them.
 */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "standin_plan_types.h"

/* STANDIN_ERA: the TFLM layout era the classes take (arenascope's decode/tflm_profile.py; its id
 * without the dash), so that CI checks agentless mode's walk of every era on QEMU:
 *   202608 (the default): MicroInterpreterGraph, SingleArenaBufferAllocator (TFLM 90b983c2)
 *   202302: a concrete MicroGraph holds the subgraphs (TFLM 58aa9833f)
 *   202209: ... and the arena allocator has an error_reporter_, as MicroAllocator and
 *           MicroInterpreter have (59b39f6cb)
 *   202207: ... and the arena allocator is SimpleMemoryAllocator, with the two buffer-allocator
 *           interfaces (547f8aeab)
 *   202203: ... and SimpleMemoryAllocator has no interfaces (a vtable of its own): MicroAllocator
 *           holds one memory_allocator_ pointer, and there is no two-arena mode (5b3670d82)
 * The member order and the sizes the planner uses are each era's (sizeof checked at the end of
 * tflite_standin.cpp). */
#ifndef STANDIN_ERA
#define STANDIN_ERA 202608
#endif
#define STANDIN_CONCRETE_GRAPH (STANDIN_ERA <= 202302)
#define STANDIN_ERROR_REPORTER (STANDIN_ERA <= 202209)
#define STANDIN_SIMPLE_ALLOCATOR (STANDIN_ERA <= 202207)
#define STANDIN_ONE_POINTER (STANDIN_ERA <= 202203)
#if STANDIN_SIMPLE_ALLOCATOR
#define SingleArenaBufferAllocator SimpleMemoryAllocator
#endif
#if STANDIN_CONCRETE_GRAPH
#define MicroInterpreterGraph MicroGraph
#define STANDIN_GRAPH_OVERRIDE
#define STANDIN_GRAPH_VIRTUAL virtual
#else
#define STANDIN_GRAPH_OVERRIDE override
#define STANDIN_GRAPH_VIRTUAL
#endif
#if STANDIN_ONE_POINTER
#define STANDIN_ARENA_BASES
#define STANDIN_ARENA_OVERRIDE
#define STANDIN_ARENA_VIRTUAL virtual
#else
#define STANDIN_ARENA_BASES : public INonPersistentBufferAllocator, public IPersistentBufferAllocator
#define STANDIN_ARENA_OVERRIDE override
#define STANDIN_ARENA_VIRTUAL
#endif

extern "C" {

/* arm-none-eabi uses short enums: these are 1 byte on the target, as TFLM's are (4 bytes on RV32,
 * whose ABI has no short enums, as TFLM's are there). */
typedef enum TfLiteStatus {
    kTfLiteOk = 0,
    kTfLiteError = 1,
    kTfLiteDelegateError = 2,
    kTfLiteApplicationError = 3,
    kTfLiteDelegateDataNotFound = 4,
    kTfLiteDelegateDataWriteError = 5,
    kTfLiteDelegateDataReadError = 6,
    kTfLiteUnresolvedOps = 7,
    kTfLiteCancelled = 8,
} TfLiteStatus;

typedef enum {
    kTfLiteNoType = 0,
    kTfLiteFloat32 = 1,
    kTfLiteInt32 = 2,
    kTfLiteUInt8 = 3,
    kTfLiteInt64 = 4,
    kTfLiteString = 5,
    kTfLiteBool = 6,
    kTfLiteInt16 = 7,
    kTfLiteComplex64 = 8,
    kTfLiteInt8 = 9,
    kTfLiteFloat16 = 10,
    kTfLiteFloat64 = 11,
    kTfLiteComplex128 = 12,
    kTfLiteUInt64 = 13,
    kTfLiteResource = 14,
    kTfLiteVariant = 15,
    kTfLiteUInt32 = 16,
    kTfLiteUInt16 = 17,
    kTfLiteInt4 = 18,
} TfLiteType;

typedef enum TfLiteAllocationType {
    kTfLiteMemNone = 0,
    kTfLiteMmapRo,
    kTfLiteArenaRw,
    kTfLiteArenaRwPersistent,
    kTfLiteDynamic,
    kTfLitePersistentRo,
    kTfLiteCustom,
    kTfLiteVariantObject,
} TfLiteAllocationType;

typedef enum TfLiteQuantizationType { kTfLiteNoQuantization = 0, kTfLiteAffineQuantization = 1 } TfLiteQuantizationType;

typedef struct TfLiteIntArray {
    int size;
    int data[];
} TfLiteIntArray;
typedef struct TfLiteFloatArray {
    int size;
    float data[];
} TfLiteFloatArray;

typedef union TfLitePtrUnion {
    int32_t *i32;
    uint32_t *u32;
    int64_t *i64;
    uint64_t *u64;
    float *f;
    double *f64;
    char *raw;
    const char *raw_const;
    uint8_t *uint8;
    bool *b;
    int16_t *i16;
    uint16_t *ui16;
    int8_t *int8;
    void *data;
} TfLitePtrUnion;

typedef struct TfLiteQuantizationParams {
    float scale;
    int32_t zero_point;
} TfLiteQuantizationParams;
typedef struct TfLiteQuantization {
    TfLiteQuantizationType type;
    void *params;
} TfLiteQuantization;
typedef struct TfLiteAffineQuantization {
    TfLiteFloatArray *scale;
    TfLiteIntArray *zero_point;
    int32_t quantized_dimension;
} TfLiteAffineQuantization;

/* TF_LITE_STATIC_MEMORY's small layouts. */
typedef struct TfLiteEvalTensor {
    TfLitePtrUnion data;
    TfLiteIntArray *dims;
    TfLiteType type;
} TfLiteEvalTensor;

typedef struct TfLiteTensor {
    TfLiteQuantization quantization;
    TfLiteQuantizationParams params;
    TfLitePtrUnion data;
    const TfLiteIntArray *dims;
    size_t bytes;
    TfLiteType type;
    TfLiteAllocationType allocation_type;
    bool is_variable;
} TfLiteTensor;

typedef struct TfLiteNode {
    TfLiteIntArray *inputs;
    TfLiteIntArray *outputs;
    TfLiteIntArray *intermediates;
    void *user_data;
    void *builtin_data;
    const void *custom_initial_data;
    int custom_initial_data_size;
} TfLiteNode;

struct TfLiteContext;
typedef struct TfLiteRegistration TfLiteRegistration;

/* TfLiteContext's members in TFLM's order (25 words on a 32-bit target). */
typedef struct TfLiteContext {
    size_t tensors_size;
    TfLiteStatus (*GetExecutionPlan)(struct TfLiteContext *context, TfLiteIntArray **execution_plan);
    TfLiteTensor *tensors;
    void *impl_;
    TfLiteStatus (*ResizeTensor)(struct TfLiteContext *, TfLiteTensor *, TfLiteIntArray *);
    void (*ReportError)(struct TfLiteContext *, const char *msg, ...);
    TfLiteStatus (*AddTensors)(struct TfLiteContext *, int, int *);
    TfLiteStatus (*GetNodeAndRegistration)(struct TfLiteContext *, int, TfLiteNode **, TfLiteRegistration **);
    TfLiteStatus (*ReplaceNodeSubsetsWithDelegateKernels)(struct TfLiteContext *, TfLiteRegistration,
                                                          const TfLiteIntArray *, void *);
    int recommended_num_threads;
    void *(*GetExternalContext)(struct TfLiteContext *, int);
    void (*SetExternalContext)(struct TfLiteContext *, int, void *);
    bool allow_fp32_relax_to_fp16;
    void *profiler;
    void *(*AllocatePersistentBuffer)(struct TfLiteContext *ctx, size_t bytes);
    TfLiteStatus (*AllocateBufferForEval)(struct TfLiteContext *ctx, size_t bytes, void **ptr);
    TfLiteStatus (*RequestScratchBufferInArena)(struct TfLiteContext *ctx, size_t bytes, int *buffer_idx);
    void *(*GetScratchBuffer)(struct TfLiteContext *ctx, int buffer_idx);
    TfLiteStatus (*ResizeTensorExplicit)(struct TfLiteContext *ctx, TfLiteTensor *tensor, int dims, const int *shape);
    TfLiteStatus (*PreviewDelegatePartitioning)(struct TfLiteContext *, const TfLiteIntArray *, void **, int *);
    TfLiteTensor *(*GetTensor)(const struct TfLiteContext *context, int tensor_idx);
    TfLiteEvalTensor *(*GetEvalTensor)(const struct TfLiteContext *context, int tensor_idx);
    TfLiteStatus (*GetModelMetadata)(const struct TfLiteContext *, const char *, const char **, size_t *);
    TfLiteStatus (*AcquireSubgraphContext)(struct TfLiteContext *, int, struct TfLiteContext **);
    TfLiteStatus (*ReleaseSubgraphContext)(struct TfLiteContext *, int);
} TfLiteContext;

}  // extern "C"

namespace tflite {

struct Model;         // the flatbuffer's root table: model_ points into the model's bytes
class ErrorReporter;  // TFLM before 2022-10: objects keep the reporter they were given

// micro_common.h
struct TFLMRegistration {
    void *(*init)(TfLiteContext *context, const char *buffer, size_t length);
    void (*free)(TfLiteContext *context, void *buffer);
    TfLiteStatus (*prepare)(TfLiteContext *context, TfLiteNode *node);
    TfLiteStatus (*invoke)(TfLiteContext *context, TfLiteNode *node);
    void (*reset)(TfLiteContext *context, void *buffer);
    int32_t builtin_code;
    const char *custom_name;
};

struct NodeAndRegistration {
    TfLiteNode node;
    const TFLMRegistration *registration;
};

struct SubgraphAllocations {
    NodeAndRegistration *node_and_registrations;
    TfLiteEvalTensor *tensors;
};

struct ScratchBufferHandle {
    uint8_t *data;
};

namespace internal {
struct ScratchBufferRequest {
    size_t bytes;
    int node_idx;
    int subgraph_idx;
};
}  // namespace internal

class MicroOpResolver {
public:
    virtual ~MicroOpResolver() {}
    virtual const TFLMRegistration *FindOp(int32_t builtin_code) const = 0;
};

// arena_allocator/ibuffer_allocator.h
class INonPersistentBufferAllocator {
public:
    virtual ~INonPersistentBufferAllocator() {}
    virtual uint8_t *AllocateTemp(size_t size, size_t alignment) = 0;
    virtual void DeallocateTemp(uint8_t *buf) = 0;
    virtual bool IsAllTempDeallocated() = 0;
    virtual TfLiteStatus ResetTempAllocations() = 0;
    virtual uint8_t *AllocateResizableBuffer(size_t size, size_t alignment) = 0;
    virtual TfLiteStatus ResizeBuffer(uint8_t *resizable_buf, size_t size, size_t alignment) = 0;
    virtual TfLiteStatus DeallocateResizableBuffer(uint8_t *resizable_buf) = 0;
    virtual uint8_t *GetOverlayMemoryAddress() const = 0;
    virtual TfLiteStatus ReserveNonPersistentOverlayMemory(size_t size, size_t alignment) = 0;
    virtual size_t GetNonPersistentUsedBytes() const = 0;
    virtual size_t GetAvailableMemory(size_t alignment) const = 0;
};

class IPersistentBufferAllocator {
public:
    virtual ~IPersistentBufferAllocator() {}
    virtual uint8_t *AllocatePersistentBuffer(size_t size, size_t alignment) = 0;
    virtual size_t GetPersistentUsedBytes() const = 0;
};

class SingleArenaBufferAllocator STANDIN_ARENA_BASES {
public:
    SingleArenaBufferAllocator(uint8_t *buffer, size_t buffer_size);
    STANDIN_ARENA_VIRTUAL ~SingleArenaBufferAllocator() STANDIN_ARENA_OVERRIDE;
    static SingleArenaBufferAllocator *Create(uint8_t *buffer_head, size_t buffer_size);
    STANDIN_ARENA_VIRTUAL uint8_t *AllocateResizableBuffer(size_t size, size_t alignment) STANDIN_ARENA_OVERRIDE;
    STANDIN_ARENA_VIRTUAL TfLiteStatus ResizeBuffer(uint8_t *resizable_buf, size_t size,
                                                    size_t alignment) STANDIN_ARENA_OVERRIDE;
    STANDIN_ARENA_VIRTUAL TfLiteStatus DeallocateResizableBuffer(uint8_t *resizable_buf) STANDIN_ARENA_OVERRIDE;
    STANDIN_ARENA_VIRTUAL TfLiteStatus ReserveNonPersistentOverlayMemory(size_t size,
                                                                         size_t alignment) STANDIN_ARENA_OVERRIDE;
    STANDIN_ARENA_VIRTUAL uint8_t *AllocatePersistentBuffer(size_t size, size_t alignment) STANDIN_ARENA_OVERRIDE;
    STANDIN_ARENA_VIRTUAL uint8_t *AllocateTemp(size_t size, size_t alignment) STANDIN_ARENA_OVERRIDE;
    STANDIN_ARENA_VIRTUAL void DeallocateTemp(uint8_t *temp_buf) STANDIN_ARENA_OVERRIDE;
    STANDIN_ARENA_VIRTUAL bool IsAllTempDeallocated() STANDIN_ARENA_OVERRIDE;
    STANDIN_ARENA_VIRTUAL TfLiteStatus ResetTempAllocations() STANDIN_ARENA_OVERRIDE;
    STANDIN_ARENA_VIRTUAL uint8_t *GetOverlayMemoryAddress() const STANDIN_ARENA_OVERRIDE;
    STANDIN_ARENA_VIRTUAL size_t GetNonPersistentUsedBytes() const STANDIN_ARENA_OVERRIDE;
    STANDIN_ARENA_VIRTUAL size_t GetPersistentUsedBytes() const STANDIN_ARENA_OVERRIDE;
    STANDIN_ARENA_VIRTUAL size_t GetAvailableMemory(size_t alignment) const STANDIN_ARENA_OVERRIDE;
    size_t GetUsedBytes() const;

private:
#if STANDIN_ERROR_REPORTER
    ErrorReporter *error_reporter_ = nullptr;
#endif
    bool FitsBelowTail(const uint8_t *from, size_t size, const char *what) const;  // the stand-in's own helper
    uint8_t *buffer_head_;
    uint8_t *buffer_tail_;
    uint8_t *head_;
    uint8_t *tail_;
    uint8_t *temp_;
    intptr_t temp_buffer_ptr_check_sum_ = 0;
    int temp_buffer_count_ = 0;
};

#if !STANDIN_ONE_POINTER
// arena_allocator/persistent_arena_buffer_allocator.h: the persistent buffer of two-arena mode
// (MicroAllocator::Create(persistent, size, non_persistent, size)); its tail grows down from
// buffer_tail_ (the buffer's end aligned down to 16).
class PersistentArenaBufferAllocator : public IPersistentBufferAllocator {
public:
    PersistentArenaBufferAllocator(uint8_t *buffer, size_t buffer_size);
    virtual ~PersistentArenaBufferAllocator();
    uint8_t *AllocatePersistentBuffer(size_t size, size_t alignment) override;
    size_t GetPersistentUsedBytes() const override;

private:
    uint8_t *const buffer_head_;
    uint8_t *const buffer_tail_;
    uint8_t *tail_temp_;
};

// arena_allocator/non_persistent_arena_buffer_allocator.h: the non-persistent buffer of two-arena
// mode (the head and the temporaries); the object itself lives in the persistent buffer.
class NonPersistentArenaBufferAllocator : public INonPersistentBufferAllocator {
public:
    NonPersistentArenaBufferAllocator(uint8_t *buffer, size_t buffer_size);
    virtual ~NonPersistentArenaBufferAllocator();
    uint8_t *AllocateTemp(size_t size, size_t alignment) override;
    void DeallocateTemp(uint8_t *buf) override;
    bool IsAllTempDeallocated() override;
    TfLiteStatus ResetTempAllocations() override;
    uint8_t *AllocateResizableBuffer(size_t size, size_t alignment) override;
    TfLiteStatus ResizeBuffer(uint8_t *resizable_buf, size_t size, size_t alignment) override;
    TfLiteStatus DeallocateResizableBuffer(uint8_t *resizable_buf) override;
    uint8_t *GetOverlayMemoryAddress() const override;
    TfLiteStatus ReserveNonPersistentOverlayMemory(size_t size, size_t alignment) override;
    size_t GetNonPersistentUsedBytes() const override;
    size_t GetAvailableMemory(size_t alignment) const override;

private:
    uint8_t *const buffer_head_;
    uint8_t *const buffer_tail_;
    uint8_t *head_temp_;
    uint8_t *next_temp_;
    intptr_t temp_buffer_ptr_check_sum_ = 0;
    int temp_buffer_count_ = 0;
    bool resizable_buffer_allocated_ = false;
};

#endif  // !STANDIN_ONE_POINTER

// micro_memory_planner.h
class MicroMemoryPlanner {
public:
    MicroMemoryPlanner() {}
    virtual ~MicroMemoryPlanner() {}
    virtual TfLiteStatus AddBuffer(int size, int first_time_used, int last_time_used) = 0;
    virtual size_t GetMaximumMemorySize() = 0;
    virtual int GetBufferCount() = 0;
    virtual TfLiteStatus GetOffsetForBuffer(int buffer_index, int *offset) = 0;
};

// memory_planner/greedy_memory_planner.h
class GreedyMemoryPlanner : public MicroMemoryPlanner {
public:
    GreedyMemoryPlanner();
    ~GreedyMemoryPlanner() override;
    TfLiteStatus Init(unsigned char *scratch_buffer, int scratch_buffer_size);
    TfLiteStatus AddBuffer(int size, int first_time_used, int last_time_used) override;
    size_t GetMaximumMemorySize() override;
    int GetBufferCount() override;
    TfLiteStatus GetOffsetForBuffer(int buffer_index, int *offset) override;
    static int per_buffer_size();
    // The stand-in takes the offsets from arenascope-plan's greedy plan (TFLM computes them).
    void SetPlannedOffset(int buffer_index, int offset);

    struct BufferRequirements {
        int size;
        int offline_offset;
        int first_time_used;
        int last_time_used;
    };
    struct ListEntry {
        int offset;
        int requirements_index;
        int next_entry_index;
    };

private:
    int max_buffer_count_;
    int buffer_count_;
    BufferRequirements *requirements_;
    int *buffer_sizes_sorted_;
    int *buffer_ids_sorted_;
    ListEntry *buffers_sorted_by_offset_;
    int next_free_entry_;
    int first_entry_index_;
    int *buffer_offsets_;
    bool need_to_calculate_offsets_;
};

// micro_allocator.h: TfLiteBridgeBuiltinDataAllocator is BuiltinDataAllocator
class TfLiteBridgeBuiltinDataAllocator {
public:
    virtual ~TfLiteBridgeBuiltinDataAllocator() {}
    virtual void *Allocate(size_t size, size_t alignment_hint) = 0;
    virtual void Deallocate(void *data) = 0;
};

class MicroInterpreterGraph;

class MicroAllocator {
public:
    static MicroAllocator *Create(uint8_t *tensor_arena, size_t arena_size);
    static MicroAllocator *Create(SingleArenaBufferAllocator *memory_allocator, MicroMemoryPlanner *memory_planner);
#if !STANDIN_ONE_POINTER
    // Two-arena mode: the persistent and the non-persistent buffer (TFLM's five-argument Create,
    // its planner type the default kGreedy).
    static MicroAllocator *Create(uint8_t *persistent_tensor_arena, size_t persistent_arena_size,
                                  uint8_t *non_persistent_tensor_arena, size_t non_persistent_arena_size);
#endif
    virtual ~MicroAllocator();
    // The stand-in's AllocateTensors: TFLM's steps from StartModelAllocation through the io
    // tensors, re-enacted (tflite_standin.cpp).
    TfLiteStatus StandinAllocate(class MicroInterpreter &interpreter);
    SubgraphAllocations *StartModelAllocation(const Model *model);
    size_t used_bytes() const;
    void *AllocatePersistentBuffer(size_t bytes);
    // Virtual as in TFLM (AllocateTfLiteEvalTensors and the like are virtual there).
    virtual TfLiteStatus AllocateVariables(TfLiteEvalTensor *eval_tensors, int index, uint8_t *at);

protected:
    MicroAllocator(SingleArenaBufferAllocator *memory_allocator, MicroMemoryPlanner *memory_planner);
#if !STANDIN_ONE_POINTER
    MicroAllocator(IPersistentBufferAllocator *persistent_buffer_allocator,
                   INonPersistentBufferAllocator *non_persistent_buffer_allocator, MicroMemoryPlanner *memory_planner);
#endif

private:
#if STANDIN_ONE_POINTER
    SingleArenaBufferAllocator *memory_allocator_;
#else
    INonPersistentBufferAllocator *non_persistent_buffer_allocator_;
    IPersistentBufferAllocator *persistent_buffer_allocator_;
#endif
    TfLiteBridgeBuiltinDataAllocator *builtin_data_allocator_;
    MicroMemoryPlanner *memory_planner_;
#if STANDIN_ERROR_REPORTER
    ErrorReporter *error_reporter_ = nullptr;
#endif
    bool model_is_allocating_;
    size_t scratch_buffer_request_count_ = 0;
    uint8_t *scratch_buffer_head_ = nullptr;
    size_t max_head_buffer_usage_ = 0;
    friend class MicroInterpreter;

    // StandinAllocate's parts (tflite_standin.cpp): what it tracks between steps, TFLM's actions
    // between the phases of AllocateTensors, a failed step's end, and the steps by kind.
    struct StandinCursor;
    void StandinAdvance(StandinCursor &c, int to);
    TfLiteStatus StandinFailed(const StandinCursor &c, const standin_step_t &s);
    TfLiteStatus StandinPersistentStep(StandinCursor &c, const standin_step_t &s);
    void StandinPlaceIo(StandinCursor &c, const standin_step_t &s, uint8_t *p);
    TfLiteStatus StandinHeadStep(StandinCursor &c, const standin_step_t &s);
};

class MicroResourceVariables;

#if STANDIN_CONCRETE_GRAPH
class MicroInterpreterGraph {  // MicroGraph (the macro above): TFLM's graph before 2023-09
#else
class MicroGraph {
public:
    virtual ~MicroGraph() {}
    virtual TfLiteStatus InvokeSubgraph(int subgraph_idx) = 0;
    virtual int NumSubgraphs() = 0;
};

class MicroInterpreterGraph : public MicroGraph {
#endif
public:
    MicroInterpreterGraph(TfLiteContext *context, const Model *model, MicroAllocator *allocator,
                          MicroResourceVariables *resource_variables);
    STANDIN_GRAPH_VIRTUAL ~MicroInterpreterGraph() STANDIN_GRAPH_OVERRIDE;
    STANDIN_GRAPH_VIRTUAL TfLiteStatus InvokeSubgraph(int subgraph_idx) STANDIN_GRAPH_OVERRIDE;
    STANDIN_GRAPH_VIRTUAL int NumSubgraphs() STANDIN_GRAPH_OVERRIDE;
    void SetSubgraphAllocations(SubgraphAllocations *subgraph_allocations)
    {
        subgraph_allocations_ = subgraph_allocations;
    }
    SubgraphAllocations *GetAllocations()
    {
        return subgraph_allocations_;
    }
    int GetCurrentSubgraphIndex()
    {
        return current_subgraph_index_;
    }

private:
    TfLiteContext *context_;
    const Model *model_;
    MicroAllocator *allocator_;
    SubgraphAllocations *subgraph_allocations_ = nullptr;
    int current_subgraph_index_;
    uint32_t current_operator_index_;
    MicroResourceVariables *resource_variables_;
    const void *subgraphs_;  // const flatbuffers::Vector<flatbuffers::Offset<SubGraph>>* in TFLM
};

class MicroContext {
public:
    virtual ~MicroContext() {}
    virtual void *AllocatePersistentBuffer(size_t bytes) = 0;

protected:
    void *decompress_regions_ = nullptr;
    const size_t *decompress_regions_size_ = nullptr;
    void **decompress_regions_allocations_ = nullptr;
};

class MicroInterpreterContext : public MicroContext {
public:
    enum class InterpreterState { kInit, kPrepare, kMemoryPlanning, kInvoke };
    MicroInterpreterContext(MicroAllocator *allocator, const Model *model, MicroInterpreterGraph *graph);
    ~MicroInterpreterContext() override;
    void *AllocatePersistentBuffer(size_t bytes) override;
    void SetInterpreterState(InterpreterState state) { state_ = state; }
    void SetScratchBufferHandles(ScratchBufferHandle *handles) { scratch_buffer_handles_ = handles; }
    TfLiteEvalTensor *GetEvalTensor(int tensor_idx);
    void *GetScratchBuffer(int buffer_idx);

private:
    MicroAllocator &allocator_;
    MicroInterpreterGraph &graph_;
    const Model *model_;
    InterpreterState state_;
    ScratchBufferHandle *scratch_buffer_handles_ = nullptr;
    void *external_context_payload_ = nullptr;
    void *alt_profiler_ = nullptr;
};

class MicroInterpreter {
public:
    MicroInterpreter(const Model *model, const MicroOpResolver &op_resolver, uint8_t *tensor_arena,
                     size_t tensor_arena_size);
    // TFLM's constructor over an allocator the application created (e.g. two-arena mode).
    MicroInterpreter(const Model *model, const MicroOpResolver &op_resolver, MicroAllocator *allocator);
    ~MicroInterpreter();
    TfLiteStatus AllocateTensors();
    TfLiteStatus Invoke();
    // TFLM's input(i) / output(i): no check, the array may be null (micro_interpreter.h).
    TfLiteTensor *input(size_t index) { return input_tensors_[index]; }
    TfLiteTensor *output(size_t index) { return output_tensors_[index]; }
    size_t arena_used_bytes() const { return allocator_.used_bytes(); }
    TfLiteStatus initialization_status() const { return initialization_status_; }

private:
    void Init();
    friend class MicroAllocator;

    const Model *model_;
    const MicroOpResolver &op_resolver_;
#if STANDIN_ERROR_REPORTER
    ErrorReporter *error_reporter_ = nullptr;
#endif
    TfLiteContext context_ = {};
    MicroAllocator &allocator_;
    MicroInterpreterGraph graph_;
    bool tensors_allocated_;
    TfLiteStatus initialization_status_;
    ScratchBufferHandle *scratch_buffer_handles_ = nullptr;
    TfLiteTensor **input_tensors_;
    TfLiteTensor **output_tensors_;
    MicroInterpreterContext micro_context_;
};

// MicroPrintf: TFLM's logging, here to the MPS2 UART (RV32: semihosted stdout) (%u %d %s %x).
void MicroPrintf(const char *format, ...);

// The model's bytes (the flatbuffer: cmake/embed_model.cmake's array).
const Model *GetModel(const void *buf);

}  // namespace tflite
