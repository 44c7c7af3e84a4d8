// arenascope planner: the whole arena TFLM needs, by replaying its allocation sequence.
//
// TFLM's SingleArenaBufferAllocator (arena_allocator/single_arena_buffer_allocator.cc) hands out
// three kinds of memory from one arena: the persistent tail grows down from the end, the
// non-persistent head (a resizable buffer) sits at the start, and temporaries stack up above the
// head until ResetTempAllocations. AllocateTensors fails at the first request that does not fit,
// and the request that fails first is not always the last one: while AllocateTensors runs, the
// temporaries (TfLiteTensors for kernels' Prepare, the memory planner's arrays) can reach further
// than the final head. So the minimum arena is found the way TFLM finds it: the sequence of
// requests (allocation_steps) is replayed against an arena of a given size (replay), and the
// smallest size for which every request fits is searched for (minimum_arena).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "arenascope/planner/abi.h"
#include "arenascope/planner/kernels.h"
#include "arenascope/planner/model.h"
#include "arenascope/planner/plan.h"

namespace arenascope::planner {

// Where in TFLM the request is made.
enum class Phase {
    Constructor,      // MicroInterpreter's constructor: MicroAllocator::Create
    StartAllocation,  // MicroAllocator::StartModelAllocation
    Parse,            // MicroInterpreter::PrepareNodeAndRegistrationDataFromFlatbuffer: builtin data
    Init,             // MicroInterpreterGraph::InitSubgraphs: kernels' Init
    Prepare,          // MicroInterpreterGraph::PrepareSubgraphs: kernels' Prepare
    MemoryPlanning,   // MicroAllocator::FinishModelAllocation (CommitStaticMemoryPlan)
    IoTensors,        // MicroInterpreter::AllocateTensors: the input and output TfLiteTensors
};
const char *phase_name(Phase p);

// What the bytes of a persistent request hold: a stable machine name for each of TFLM's
// persistent call sites (the JSON's "role", docs/arena-budget.md and docs/planner-schema.json),
// so that tools match a tail region by its role, never by its label ("what"), which is for
// people and may change. op-data is the first request of a kernel's Init (what TFLM keeps as
// node.user_data); a kernel's further Init requests and its Prepare's are kernel-buffer. The
// names follow TFLM's own (micro_allocator.cc, micro_interpreter.cc; ../shared/TFLM-INTERNALS.md
// lists the tail in order).
inline constexpr std::array<const char *, 20> kTailRoles = {
    "arena-allocator",         // SingleArenaBufferAllocator (MicroInterpreter constructor)
    "memory-planner",          // GreedyMemoryPlanner (constructor; absent with the adapter)
    "micro-allocator",         // MicroAllocator (constructor)
    "builtin-data-allocator",  // MicroBuiltinDataAllocator (StartModelAllocation)
    "subgraph-allocations",    // SubgraphAllocations[subgraphs]
    "eval-tensors",            // TfLiteEvalTensor[tensors] of one subgraph
    "node-and-registration",   // NodeAndRegistration[operators] of one subgraph
    "builtin-data",            // an operator's builtin options (Parse: node.builtin_data)
    "op-data",                 // a kernel's OpData (its first Init request: node.user_data)
    "kernel-buffer",           // a kernel's other persistent buffers (Init or Prepare)
    "scratch-handles",         // ScratchBufferHandle[requests]
    "variable-tensor",         // a variable tensor's buffer (AllocateVariables)
    "input-tensor-array",      // MicroInterpreter::input_tensors_ (TfLiteTensor*[inputs])
    "output-tensor-array",     // MicroInterpreter::output_tensors_
    "input-tensor",            // a model input's persistent TfLiteTensor
    "output-tensor",           // a model output's persistent TfLiteTensor
    "input-quantization",      // its TfLiteAffineQuantization
    "output-quantization",
    "input-zero-points",  // its zero-point array
    "output-zero-points",
};

struct Step {
    // The TFLM call site that makes the request: what TFLM does when it fails (outcome.h).
    enum class Site {
        ArenaAllocator,        // SingleArenaBufferAllocator::Create: placement new of the allocator
        PlannerObject,         // micro_allocator.cc CreateMemoryPlanner: placement new of the planner
        MicroAllocatorObject,  // MicroAllocator::Create: placement new of the MicroAllocator
        BuiltinDataAllocator,  // StartModelAllocation: placement new of the MicroBuiltinDataAllocator
        ScratchRequests,       // InitScratchBufferData: AllocateResizableBuffer
        SubgraphAllocations,   // StartModelAllocation
        EvalTensors,           // AllocateTfLiteEvalTensors
        NodeAndRegistrations,  // AllocateNodeAndRegistrations
        BuiltinData,           // a Parse function: SafeBuiltinDataAllocator::Allocate (AllocatePOD<T>)
        KernelPersistent,      // a kernel's Init or Prepare: context->AllocatePersistentBuffer
        TempTensor,            // AllocateTempTfLiteTensor: the struct
        TempQuantization,      // InitializeTfLiteTensorFromFlatbuffer (temp): TfLiteAffineQuantization
        TempZeroPoints,        // ... (temp): the zero-point array
        TempBuffer,            // MicroAllocator::AllocateTempBuffer
        PrepareEnd,            // FinishPrepareNodeAllocations: ResetTempAllocations, ResizeBuffer
        ScratchHandles,        // AllocateScratchBufferHandles
        PlanningInfo,          // AllocationInfoBuilder::CreateAllocationInfo: temps
        Variable,              // AllocateVariables
        PlannerArrays,         // CommitStaticMemoryPlan: the planner's arena; GreedyMemoryPlanner Init/AddBuffer
        PlanningEnd,           // CommitStaticMemoryPlan: temporaries reset, request buffer freed
        Head,                  // CommitStaticMemoryPlan: ReserveNonPersistentOverlayMemory
        IoArray,               // MicroInterpreter::AllocateTensors: input_tensors_ / output_tensors_
        IoTensor,              // AllocatePersistentTfLiteTensor: the struct
        IoQuantization,        // InitializeTfLiteTensorFromFlatbuffer (persistent): TfLiteAffineQuantization
        IoZeroPoints,          // ... (persistent): the zero-point array
    };
    enum class Kind {
        Persistent,    // AllocatePersistentBuffer(bytes, align): tail moves down; fails below head
        Temp,          // AllocateTemp(bytes, align): fails above the tail
        ResetTemp,     // ResetTempAllocations: temporaries end
        ResizeHead,    // ResizeBuffer / AllocateResizableBuffer(bytes, align) at the arena start
        PlannerArena,  // CommitStaticMemoryPlan: all free space as a temp; `count` buffers x 40 B must fit
        ReserveHead,   // ReserveNonPersistentOverlayMemory(bytes, 16): the final head
    };
    Kind kind = Kind::Persistent;
    Site site = Site::KernelPersistent;
    Phase phase = Phase::Constructor;
    int64_t bytes = 0;
    int64_t align = 1;
    int64_t count = 1;  // elements in this request (for the per-category counts)
    bool fatal = true;  // false: TFLM ignores this request's failure (see allocation_steps)
    int tensor = -1;    // a variable tensor's buffer, or a temp TfLiteTensor: its index in subgraph `subgraph`
    int io = -1;        // IoTensors: the tensor's position in subgraph 0's inputs or outputs
    int subgraph = 0;
    int op = -1;  // a kernel's request (Parse, Init, Prepare, and the end of its Prepare): its operator
    // category and source are static text (string literals): a view each, not a copy per step (a
    // large model has millions of steps).
    std::string_view category;  // RecordingMicroAllocator's name where it has one, e.g. "TfLiteEvalTensor data"
    std::string role;           // a persistent request: one of kTailRoles; "" for every other kind
    std::string what;           // e.g. "subgraph 0 operator 3 (CONV_2D) Init: OpDataConv"
    std::string_view source;    // TFLM file and function
};

struct ArenaModel {
    std::vector<Step> steps;
    int64_t head_bytes = 0;  // the final head: TFLM's greedy plan
    // Operators whose kernel's arena use is not modelled, "subgraph 0 operator 3 (X)": with any,
    // the minimum is a floor, not a prediction.
    std::vector<std::string> unmodelled;
};

// TFLM 90b983c2's requests, in its order, for a plain MicroInterpreter(model, resolver, arena,
// size) with the GreedyMemoryPlanner, TFLM's reference kernels, and `head_bytes` the greedy
// plan's head. planner_in_arena false: the planner is given to MicroAllocator::Create(arena,
// size, planner) and lives outside the arena, as with arenascope's TFLM adapter.
ArenaModel allocation_steps(const Model &model, const Lifetimes &lifetimes, const KernelPrediction &kernels,
                            const Abi &abi, int64_t head_bytes, bool planner_in_arena = true);

// TFLM's SingleArenaBufferAllocator at one moment: head_, temp_ and tail_ as offsets from the
// (16-byte aligned) arena start.
struct ArenaState {
    int64_t head = 0, temp = 0, tail = 0;
};
// One request tried against the allocator, with the allocator's own rules
// (arena_allocator/single_arena_buffer_allocator.cc).
struct Attempt {
    bool fits = true;
    bool wrapped = false;   // TFLM's size_t arithmetic wraps: a temp starting above tail_, or the
                            // planner's space (aligned tail_ - aligned temp_) below zero
    int64_t at = -1;        // where a persistent request lands, a temp or the planner's space starts
    int64_t available = 0;  // the bytes TFLM's message calls available (a persistent request's:
                            // size - missing); may be negative where TFLM's arithmetic wraps
    int64_t missing = 0;    // bytes it lacks
};
// Applies `s` to `st` as TFLM does: a request that fits moves the state, one that fails leaves
// it, except the planner's space, which TFLM takes whole before it finds it too small (temp_
// then ends at the 16-byte aligned tail).
Attempt apply_step(const Step &s, ArenaState &st);
// The planner's space at this moment: GetAvailableMemory(16), aligned tail - aligned temp.
int64_t planner_space(const ArenaState &st);

struct Replay {
    bool ok = false;
    size_t failed = 0;             // index of the step that failed (when !ok)
    int64_t missing = 0;           // bytes it lacked
    int64_t tail_bytes = 0;        // persistent bytes, alignment padding included (GetPersistentUsedBytes)
    int64_t head_bytes = 0;        // final non-persistent bytes (GetNonPersistentUsedBytes)
    std::vector<int64_t> offsets;  // per step replayed: where a Persistent step landed, else -1
    // The allocator's head_, temp_ and tail_ as offsets from the arena start after the failed
    // request (a failed request changes nothing but the planner's space, see apply_step), or
    // after the last step.
    int64_t head = 0, temp = 0, tail = 0;
};
// Replay against an arena of `arena_bytes` starting at a 16-byte aligned address. Stops at the
// first request that does not fit, counting a temporary that would start above the tail as one
// (TFLM's size_t arithmetic wraps there and hands it out over the tail: outcome.h says so).
Replay replay(const std::vector<Step> &steps, int64_t arena_bytes);

struct MinimumArena {
    int64_t bytes = 0;             // the smallest arena for which every request fits
    size_t binding = 0;            // the step that fails with one byte less: what sets the minimum
    Replay at_minimum;             // the replay at `bytes`
    int64_t arena_used_bytes = 0;  // what MicroInterpreter::arena_used_bytes() reports (16-byte aligned end)
    int64_t tail_bytes = 0;        // the persistent tail with a 16-byte aligned arena end
};
MinimumArena minimum_arena(const std::vector<Step> &steps);

struct TailCategory {
    std::string category;
    int count = 0;      // requests (elements for arrays)
    int64_t bytes = 0;  // requested bytes, before alignment
    std::string source;
};
// The persistent requests grouped by category, in first-request order.
std::vector<TailCategory> tail_categories(const std::vector<Step> &steps);

}  // namespace arenascope::planner
