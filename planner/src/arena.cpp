// TFLM's allocation sequence and its replay (see arena.h). Each step cites the TFLM 90b983c2
// function that makes the request.
#include "arenascope/planner/arena.h"

#include <algorithm>
#include <limits>

#include "arenascope/planner/limits.h"

namespace arenascope::planner {

const char *phase_name(Phase p)
{
    switch (p) {
    case Phase::Constructor: return "MicroInterpreter constructor (MicroAllocator::Create)";
    case Phase::StartAllocation: return "AllocateTensors: StartModelAllocation";
    case Phase::Parse: return "AllocateTensors: parsing builtin options";
    case Phase::Init: return "AllocateTensors: kernels' Init";
    case Phase::Prepare: return "AllocateTensors: kernels' Prepare";
    case Phase::MemoryPlanning: return "AllocateTensors: memory planning (FinishModelAllocation)";
    case Phase::IoTensors: return "AllocateTensors: input/output TfLiteTensors";
    }
    return "?";
}

namespace {

constexpr int64_t kArenaAlignment = 16;                          // micro_arena_constants.h MicroArenaBufferAlignment
constexpr int64_t kMaxScratchBuffersPerOp = 12;                  // micro_allocator.cc
constexpr int64_t kPlannerBytesPerBuffer = 16 + 4 + 4 + 12 + 4;  // GreedyMemoryPlanner::per_buffer_size()

int64_t align_down(int64_t x, int64_t a)
{
    return x >= 0 ? x / a * a : -((-x + a - 1) / a * a);
}
int64_t align_up(int64_t x, int64_t a)
{
    return align_down(x + a - 1, a);
}

std::string op_label(int s, const Operator &op)
{
    return "subgraph " + std::to_string(s) + " operator " + std::to_string(op.index) + " (" + op.op_name + ")";
}

struct Builder {
    const Model &model;
    const Abi &abi;
    std::vector<Step> steps;

    // category and source: string literals (Step keeps views of them).
    void add(Step::Kind kind, Step::Site site, Phase phase, int64_t bytes, int64_t align, const char *category,
             std::string what, const char *source, int64_t count = 1)
    {
        Step s;
        s.kind = kind;
        s.site = site;
        s.phase = phase;
        s.bytes = bytes;
        s.align = align;
        s.count = count;
        s.category = category;
        s.what = std::move(what);
        s.source = source;
        steps.push_back(std::move(s));
    }
    void persistent(Step::Site site, Phase phase, TypeSize t, int64_t n, const char *role, const char *category,
                    std::string what, const char *source)
    {
        add(Step::Kind::Persistent, site, phase, t.size * n, t.align, category, std::move(what), source, n);
        steps.back().role = role;
    }

    // micro_allocator.cc InitializeTfLiteTensorFromFlatbuffer: a TfLiteTensor's quantization, when
    // the tensor has scales and zero points: TfLiteAffineQuantization, then the zero-point array.
    // io: "input" or "output" for a persistent (model input/output) tensor's, naming their roles.
    void quantization(Phase phase, bool temp, const Tensor &t, const std::string &what, const std::string &io = "")
    {
        if (!t.quant_channels) return;
        const char *src = "micro_allocator.cc InitializeTfLiteTensorFromFlatbuffer";
        const Step::Kind k = temp ? Step::Kind::Temp : Step::Kind::Persistent;
        const char *cat = temp ? "temp TfLiteTensor quantization" : "Persistent TfLiteTensor quantization data";
        add(k, temp ? Step::Site::TempQuantization : Step::Site::IoQuantization, phase, abi.affine_quantization.size,
            abi.affine_quantization.align, cat, what + ": TfLiteAffineQuantization", src);
        if (!temp) steps.back().role = io + "-quantization";
        add(k, temp ? Step::Site::TempZeroPoints : Step::Site::IoZeroPoints, phase, int_array_bytes(t.quant_channels),
            4, cat, what + ": zero points", src);
        if (!temp) steps.back().role = io + "-zero-points";
    }

    // MicroAllocator::AllocateTempTfLiteTensor: the struct, then its quantization, as temps.
    void temp_tensor(Phase phase, const Tensor &t, const std::string &what)
    {
        add(Step::Kind::Temp, Step::Site::TempTensor, phase, abi.tflite_tensor.size, abi.tflite_tensor.align,
            "temp TfLiteTensor", what + ": TfLiteTensor for tensor " + std::to_string(t.index),
            "micro_allocator.cc AllocateTempTfLiteTensor");
        steps.back().tensor = t.index;
        quantization(phase, true, t, what + " tensor " + std::to_string(t.index));
    }

    void kernel(Phase phase, int s, const Operator &op, const std::vector<KernelAlloc> &allocs)
    {
        const std::string who = op_label(s, op);
        bool op_data = phase == Phase::Init;  // the first persistent request of Init: node.user_data
        for (const KernelAlloc &a : allocs) {
            const size_t first = steps.size();
            switch (a.kind) {
            case KernelAlloc::Kind::BuiltinData:
                add(Step::Kind::Persistent, Step::Site::BuiltinData, phase, a.bytes, a.align, "builtin data",
                    who + ": " + a.what, "micro_allocator.cc MicroBuiltinDataAllocator::Allocate");
                steps.back().role = "builtin-data";
                break;
            case KernelAlloc::Kind::Persistent:
                // MicroContext -> MicroAllocator::AllocatePersistentBuffer: 16-byte aligned.
                add(Step::Kind::Persistent, Step::Site::KernelPersistent, phase, a.bytes, kArenaAlignment,
                    "Persistent buffer data", who + ": " + a.what,
                    "micro_allocator.cc MicroAllocator::AllocatePersistentBuffer");
                steps.back().role = op_data ? "op-data" : "kernel-buffer";
                op_data = false;
                break;
            case KernelAlloc::Kind::TempTensor: temp_tensor(phase, model.subgraphs[s].tensors[a.tensor], who); break;
            case KernelAlloc::Kind::TempBuffer:
                add(Step::Kind::Temp, Step::Site::TempBuffer, phase, a.bytes, a.align, "temp buffer",
                    who + ": " + a.what, "micro_allocator.cc MicroAllocator::AllocateTempBuffer");
                break;
            case KernelAlloc::Kind::Scratch:
                break;  // a request is a record in the resizable head buffer (see ResizeHead below)
            }
            for (size_t i = first; i < steps.size(); ++i) steps[i].subgraph = s, steps[i].op = op.index;
        }
    }
};

}  // namespace

namespace {
// At most this many steps (a temp TfLiteTensor is up to three, an operator's Prepare ends in
// two, an input or output tensor is up to three): reserved, so that a large model's steps are
// not copied as the vector grows (and its peak memory not 1.5 times theirs).
size_t most_steps(const Model &model, const KernelPrediction &kernels)
{
    size_t most = 32 + 2 * model.subgraphs.size();
    for (size_t s = 0; s < model.subgraphs.size(); ++s) {
        most += model.subgraphs[s].tensors.size();
        for (const OpKernel &k : kernels.ops[s]) most += 3 * (k.parse.size() + k.init.size() + k.prepare.size()) + 2;
    }
    most += 3 * (model.subgraphs[0].inputs.size() + model.subgraphs[0].outputs.size());
    return most;
}

// MicroAllocator::Create(arena, size, kGreedy): SingleArenaBufferAllocator::Create places the
// allocator itself in its own tail, then CreateMemoryPlanner the GreedyMemoryPlanner, then the
// MicroAllocator (micro_allocator.cc, single_arena_buffer_allocator.cc).
// (Before 2023-02 the class is SimpleMemoryAllocator: the revision names it, revisions.cpp.)
void constructor_steps(Builder &b, bool planner_in_arena)
{
    const Abi &abi = b.abi;
    using S = Step::Site;
    b.persistent(S::ArenaAllocator, Phase::Constructor, abi.arena_allocator, 1, "arena-allocator", "allocator objects",
                 abi.tflm->arena_allocator_name, abi.tflm->arena_allocator_source);
    if (planner_in_arena)  // MicroAllocator::Create(arena, size, planner) takes the caller's planner
        b.persistent(S::PlannerObject, Phase::Constructor, abi.greedy_planner, 1, "memory-planner", "allocator objects",
                     "GreedyMemoryPlanner", "micro_allocator.cc CreateMemoryPlanner");
    b.persistent(S::MicroAllocatorObject, Phase::Constructor, abi.micro_allocator, 1, "micro-allocator",
                 "allocator objects", "MicroAllocator", "micro_allocator.cc MicroAllocator::Create");
}

// MicroAllocator::StartModelAllocation.
void start_allocation_steps(Builder &b)
{
    const Model &model = b.model;
    const Abi &abi = b.abi;
    using K = Step::Kind;
    using S = Step::Site;
    const int subgraphs = static_cast<int>(model.subgraphs.size());
    const char *start = "micro_allocator.cc MicroAllocator::StartModelAllocation";
    b.persistent(S::BuiltinDataAllocator, Phase::StartAllocation, abi.builtin_data_allocator, 1,
                 "builtin-data-allocator", "allocator objects", "MicroBuiltinDataAllocator", start);
    b.add(K::ResizeHead, S::ScratchRequests, Phase::StartAllocation,
          abi.scratch_buffer_request.size * kMaxScratchBuffersPerOp, abi.scratch_buffer_request.align,
          "scratch buffer requests", "ScratchBufferRequest[12] (the head, resizable)",
          "micro_allocator.cc MicroAllocator::InitScratchBufferData");
    b.persistent(S::SubgraphAllocations, Phase::StartAllocation, abi.subgraph_allocations, subgraphs,
                 "subgraph-allocations", "SubgraphAllocations",
                 "SubgraphAllocations[" + std::to_string(subgraphs) + "]", start);
    for (int s = 0; s < subgraphs; ++s) {
        const int n = static_cast<int>(model.subgraphs[s].tensors.size());
        b.persistent(S::EvalTensors, Phase::StartAllocation, abi.eval_tensor, n, "eval-tensors",
                     "TfLiteEvalTensor data",
                     "subgraph " + std::to_string(s) + ": TfLiteEvalTensor[" + std::to_string(n) + "]",
                     "micro_allocator.cc MicroAllocator::AllocateTfLiteEvalTensors");
    }
    for (int s = 0; s < subgraphs; ++s) {
        const int n = static_cast<int>(model.subgraphs[s].operators.size());
        b.persistent(S::NodeAndRegistrations, Phase::StartAllocation, abi.node_and_registration, n,
                     "node-and-registration", "NodeAndRegistration struct",
                     "subgraph " + std::to_string(s) + ": NodeAndRegistration[" + std::to_string(n) + "]",
                     "micro_allocator.cc MicroAllocator::AllocateNodeAndRegistrations");
    }
}

// Builtin options, then every kernel's Init, then every kernel's Prepare, each pass over
// all subgraphs in order (micro_interpreter.cc, micro_interpreter_graph.cc). Returns how many
// scratch buffers the kernels request.
int64_t kernel_steps(Builder &b, const KernelPrediction &kernels)
{
    const Model &model = b.model;
    const Abi &abi = b.abi;
    using K = Step::Kind;
    using S = Step::Site;
    const int subgraphs = static_cast<int>(model.subgraphs.size());
    for (int s = 0; s < subgraphs; ++s)
        for (const Operator &op : model.subgraphs[s].operators)
            b.kernel(Phase::Parse, s, op, kernels.ops[s][op.index].parse);
    for (int s = 0; s < subgraphs; ++s)
        for (const Operator &op : model.subgraphs[s].operators)
            b.kernel(Phase::Init, s, op, kernels.ops[s][op.index].init);
    int64_t requests = 0;
    for (int s = 0; s < subgraphs; ++s)
        for (const Operator &op : model.subgraphs[s].operators) {
            const auto &prepare = kernels.ops[s][op.index].prepare;
            b.kernel(Phase::Prepare, s, op, prepare);
            for (const KernelAlloc &a : prepare) requests += a.kind == KernelAlloc::Kind::Scratch;
            // MicroAllocator::FinishPrepareNodeAllocations: temporaries end, and the request buffer
            // grows to hold the requests so far plus the next operator's 12. PrepareSubgraphs ignores
            // the status this returns, so a failed resize does not fail AllocateTensors.
            b.add(K::ResetTemp, S::PrepareEnd, Phase::Prepare, 0, 1, "", op_label(s, op) + ": temporaries freed",
                  "micro_allocator.cc MicroAllocator::FinishPrepareNodeAllocations");
            b.steps.back().subgraph = s, b.steps.back().op = op.index;
            b.add(K::ResizeHead, S::PrepareEnd, Phase::Prepare,
                  abi.scratch_buffer_request.size * (requests + kMaxScratchBuffersPerOp),
                  abi.scratch_buffer_request.align, "scratch buffer requests",
                  "ScratchBufferRequest[" + std::to_string(requests + kMaxScratchBuffersPerOp) + "] after " +
                      op_label(s, op),
                  "micro_allocator.cc MicroAllocator::FinishPrepareNodeAllocations");
            b.steps.back().fatal = false;
            b.steps.back().subgraph = s, b.steps.back().op = op.index;
        }
    return requests;
}

// MicroAllocator::FinishModelAllocation: scratch handles, variables, the planning temporaries
// and the head.
void finish_allocation_steps(Builder &b, const Lifetimes &lifetimes, int64_t requests, int64_t head_bytes)
{
    const Model &model = b.model;
    const Abi &abi = b.abi;
    using K = Step::Kind;
    using S = Step::Site;
    const int subgraphs = static_cast<int>(model.subgraphs.size());
    auto handles = [&] {
        b.persistent(S::ScratchHandles, Phase::MemoryPlanning, abi.scratch_buffer_handle, requests, "scratch-handles",
                     "ScratchBufferHandle", "ScratchBufferHandle[" + std::to_string(requests) + "]",
                     "micro_allocator.cc MicroAllocator::AllocateScratchBufferHandles");
    };
    auto variables = [&](int s) {
        for (const Tensor &t : model.subgraphs[s].tensors)
            if (lifetimes.placement[s][t.index] == Placement::Persistent) {
                b.add(K::Persistent, S::Variable, Phase::MemoryPlanning, t.bytes, kArenaAlignment,
                      "TfLiteTensor variable buffer data",
                      "subgraph " + std::to_string(s) + " variable tensor " + std::to_string(t.index) +
                          (t.name.empty() ? "" : " '" + t.name + "'"),
                      "micro_allocator.cc MicroAllocator::AllocateVariables");
                b.steps.back().role = "variable-tensor";
                b.steps.back().tensor = t.index;
                b.steps.back().subgraph = s;
            }
    };
    if (abi.tflm->variables_before_planning) {
        // TFLM before 2023-02 (revisions.cpp): one loop over the subgraphs allocates the handles
        // (each time, for all the requests) and that subgraph's variables, then plans.
        if (requests && !abi.tflm->handles_per_subgraph) handles();
        for (int s = 0; s < subgraphs; ++s) {
            if (requests && abi.tflm->handles_per_subgraph) handles();
            variables(s);
        }
    } else if (requests)
        handles();
    const char *create = "micro_allocation_info.cc AllocationInfoBuilder::CreateAllocationInfo";
    b.add(K::Temp, S::PlanningInfo, Phase::MemoryPlanning, abi.pointer * int64_t{subgraphs}, abi.pointer,
          "memory planning", "subgraph offsets (size_t[" + std::to_string(subgraphs) + "])", create);
    int64_t tensors = 0;
    for (const Subgraph &sg : model.subgraphs) tensors += static_cast<int64_t>(sg.tensors.size());
    b.add(K::Temp, S::PlanningInfo, Phase::MemoryPlanning, abi.allocation_info.size * (tensors + requests),
          abi.allocation_info.align, "memory planning", "AllocationInfo[" + std::to_string(tensors + requests) + "]",
          create);
    if (!abi.tflm->variables_before_planning)
        for (int s = 0; s < subgraphs; ++s) variables(s);
    b.add(K::PlannerArena, S::PlannerArrays, Phase::MemoryPlanning, 0, kArenaAlignment, "memory planning",
          "GreedyMemoryPlanner arrays: " + std::to_string(lifetimes.buffers.size()) +
              " buffers x 40 B in the free space",
          "micro_allocator.cc CommitStaticMemoryPlan, greedy_memory_planner.cc Init/AddBuffer",
          static_cast<int64_t>(lifetimes.buffers.size()));
    b.add(K::ResetTemp, S::PlanningEnd, Phase::MemoryPlanning, 0, 1, "", "planning temporaries freed",
          "micro_allocator.cc CommitStaticMemoryPlan");
    b.add(K::ResizeHead, S::PlanningEnd, Phase::MemoryPlanning, 0, 1, "", "scratch request buffer freed",
          "micro_allocator.cc CommitStaticMemoryPlan (DeallocateResizableBuffer)");
    b.add(K::ReserveHead, S::Head, Phase::MemoryPlanning, head_bytes, kArenaAlignment, "head",
          "the memory plan's head (" + std::to_string(head_bytes) + " B)",
          "micro_allocator.cc CommitStaticMemoryPlan (ReserveNonPersistentOverlayMemory)");
}

// MicroInterpreter::AllocateTensors: the TfLiteTensor* arrays and a persistent TfLiteTensor
// for each input, then for each output (MicroAllocator::AllocatePersistentTfLiteTensor).
void io_tensor_steps(Builder &b)
{
    const Model &model = b.model;
    const Abi &abi = b.abi;
    using K = Step::Kind;
    using S = Step::Site;
    const Subgraph &main = model.subgraphs[0];
    for (const auto *list : {&main.inputs, &main.outputs}) {
        const bool inputs = list == &main.inputs;
        const int n = static_cast<int>(list->size());
        b.add(K::Persistent, S::IoArray, Phase::IoTensors, abi.pointer * int64_t{n}, kArenaAlignment,
              "Persistent buffer data",
              std::string(inputs ? "input" : "output") + " TfLiteTensor*[" + std::to_string(n) + "]",
              "micro_interpreter.cc MicroInterpreter::AllocateTensors");
        const std::string io = inputs ? "input" : "output";
        b.steps.back().role = io + "-tensor-array";
        for (size_t k = 0; k < list->size(); ++k) {
            const int32_t t = (*list)[k];
            const size_t first = b.steps.size();
            const std::string what = std::string(inputs ? "input" : "output") + " tensor " + std::to_string(t);
            b.add(K::Persistent, S::IoTensor, Phase::IoTensors, abi.tflite_tensor.size, abi.tflite_tensor.align,
                  "Persistent TfLiteTensor data", what + ": TfLiteTensor",
                  "micro_allocator.cc MicroAllocator::AllocatePersistentTfLiteTensor");
            b.steps.back().role = io + "-tensor";
            b.quantization(Phase::IoTensors, false, main.tensors[t], what, io);
            for (size_t i = first; i < b.steps.size(); ++i) b.steps[i].io = static_cast<int>(k);
        }
    }
}

// RecordingMicroAllocator counts a quantization as two allocations, an array as its elements.
// Every request is a size_t: on a 32-bit target, one beyond 2^32-1 (or a size whose int64
// arithmetic here went negative) cannot be made at all; TFLM's own arithmetic would wrap.
void check_step_sizes(const std::vector<Step> &steps, const Abi &abi)
{
    const int64_t most_bytes = abi.pointer == 4 ? kMaxSize32 : std::numeric_limits<int64_t>::max();
    for (const Step &s : steps)
        if (s.bytes < 0 || s.bytes > most_bytes)
            throw ModelError(s.what + " requests " + std::to_string(s.bytes) + " bytes: " +
                             (s.bytes < 0 ? std::string("its size overflows")
                                          : "more than a " + abi.name + " target's 32-bit size_t holds (2^32-1)") +
                             " (" + std::string(s.source) + ")");
}
}  // namespace

ArenaModel allocation_steps(const Model &model, const Lifetimes &lifetimes, const KernelPrediction &kernels,
                            const Abi &abi, int64_t head_bytes, bool planner_in_arena)
{
    Builder b{model, abi, {}};
    b.steps.reserve(most_steps(model, kernels));
    ArenaModel out;
    out.head_bytes = head_bytes;
    out.unmodelled = kernels.unmodelled_data;
    constructor_steps(b, planner_in_arena);
    start_allocation_steps(b);
    const int64_t requests = kernel_steps(b, kernels);
    finish_allocation_steps(b, lifetimes, requests, head_bytes);
    io_tensor_steps(b);
    check_step_sizes(b.steps, abi);
    out.steps = std::move(b.steps);
    return out;
}

int64_t planner_space(const ArenaState &st)
{
    return align_down(st.tail, kArenaAlignment) - align_up(st.temp, kArenaAlignment);
}

namespace {
// What the replay reads of a step, 40 bytes instead of a Step's 200-odd: minimum_arena replays the
// sequence some 100 times, and a million Steps do not stay in the cache.
struct Request {
    Step::Kind kind;
    bool fatal;
    int64_t bytes, align, count;
};

template <typename S> Attempt apply(const S &s, ArenaState &st);

// Whether every fatal request fits in `arena_bytes`; else the first that does not.
bool fits(const std::vector<Request> &requests, int64_t arena_bytes, size_t &failed)
{
    ArenaState st{0, 0, arena_bytes};
    for (size_t i = 0; i < requests.size(); ++i)
        if (!apply(requests[i], st).fits && requests[i].fatal) {
            failed = i;
            return false;
        }
    return true;
}
}  // namespace

Attempt apply_step(const Step &s, ArenaState &st)
{
    return apply(s, st);
}

namespace {
template <typename S> Attempt apply(const S &s, ArenaState &st)
{
    Attempt a;
    switch (s.kind) {
    case Step::Kind::Persistent: {
        // AllocatePersistentBuffer: aligned down from tail - size; fails below head_ (not temp_).
        a.at = align_down(st.tail - s.bytes, s.align);
        a.missing = std::max<int64_t>(st.head - a.at, 0);
        a.available = s.bytes - (st.head - a.at);  // what its message calls available: size - missing
        if (a.at < st.head)
            a.fits = false;
        else
            st.tail = a.at;
        break;
    }
    case Step::Kind::Temp: {
        // AllocateTemp: available = tail_ - aligned temp_ in size_t, which wraps when temp_ starts
        // above tail_; here that counts as a failure.
        a.at = align_up(st.temp, s.align);
        a.available = st.tail - a.at;
        a.missing = std::max<int64_t>(s.bytes - a.available, 0);
        a.wrapped = a.at > st.tail;
        if (a.wrapped || a.available < s.bytes)
            a.fits = false;
        else
            st.temp = a.at + s.bytes;
        break;
    }
    case Step::Kind::ResetTemp: st.temp = st.head; break;
    case Step::Kind::ResizeHead:
    case Step::Kind::ReserveHead: {
        // ResizeBuffer: from the arena start, available = tail_ - start.
        a.at = align_up(0, s.align);
        a.available = st.tail - a.at;
        a.missing = std::max<int64_t>(s.bytes - a.available, 0);
        if (a.available < s.bytes)
            a.fits = false;
        else
            st.head = st.temp = a.at + s.bytes;
        break;
    }
    case Step::Kind::PlannerArena: {
        // GetAvailableMemory(16) is taken whole as a temp (AllocateTemp succeeds even when the
        // size_t difference wrapped: temp_ ends at the aligned tail either way); Init fits
        // remaining / 40 buffers and AddBuffer fails past that.
        const int64_t remaining = planner_space(st);
        a.at = align_up(st.temp, kArenaAlignment);
        a.available = remaining;
        a.wrapped = remaining < 0;
        const int64_t need = s.count * kPlannerBytesPerBuffer;
        if (a.wrapped || remaining / kPlannerBytesPerBuffer < s.count) {
            a.fits = false;
            a.missing = need - std::max<int64_t>(remaining, 0) / kPlannerBytesPerBuffer * kPlannerBytesPerBuffer;
        }
        st.temp = align_down(st.tail, kArenaAlignment);
        break;
    }
    }
    return a;
}

}  // namespace

Replay replay(const std::vector<Step> &steps, int64_t arena_bytes)
{
    // Offsets from the (16-byte aligned) arena start; the end is not re-aligned
    // (MicroAllocator::Create aligns only the start).
    Replay r;
    ArenaState st{0, 0, arena_bytes};
    r.offsets.assign(steps.size(), -1);
    for (size_t i = 0; i < steps.size(); ++i) {
        const Attempt a = apply_step(steps[i], st);
        if (!a.fits) {
            if (!steps[i].fatal) continue;  // TFLM ignores it; the state is unchanged
            r.failed = i;
            r.missing = a.missing;
            r.head = st.head, r.temp = st.temp, r.tail = st.tail;
            return r;
        }
        if (steps[i].kind == Step::Kind::Persistent) r.offsets[i] = a.at;
    }
    r.ok = true;
    r.head = st.head, r.temp = st.temp, r.tail = st.tail;
    r.tail_bytes = arena_bytes - st.tail;
    r.head_bytes = std::max(st.head, st.temp);
    return r;
}

MinimumArena minimum_arena(const std::vector<Step> &steps)
{
    // A floor every size below fails at: the persistent bytes plus the final head.
    int64_t low = 0;
    for (const Step &s : steps)
        if (s.kind == Step::Kind::Persistent || s.kind == Step::Kind::ReserveHead) low += s.bytes;
    std::vector<Request> requests;
    requests.reserve(steps.size());
    for (const Step &s : steps) requests.push_back({s.kind, s.fatal, s.bytes, s.align, s.count});
    size_t failed = 0;
    int64_t high = std::max<int64_t>(low, 64);
    while (!fits(requests, high, failed)) high *= 2;
    // Bisect to a passing size, then take the smallest passing size a window below it: with the
    // unaligned end, padding can make fit/no-fit not quite monotone near the boundary.
    while (low + 1 < high) {
        const int64_t mid = low + (high - low) / 2;
        (fits(requests, mid, failed) ? high : low) = mid;
    }
    int64_t best = high;
    for (int64_t size = std::max<int64_t>(high - 64, 0); size < high; ++size)
        if (fits(requests, size, failed)) {
            best = size;
            break;
        }
    MinimumArena m;
    m.bytes = best;
    m.at_minimum = replay(steps, best);
    m.binding = best > 0 && !fits(requests, best - 1, failed) ? failed : 0;
    const Replay aligned = replay(steps, align_up(best, kArenaAlignment) + 1024 * kArenaAlignment);
    m.tail_bytes = aligned.tail_bytes;
    m.arena_used_bytes = aligned.tail_bytes + aligned.head_bytes;
    return m;
}

std::vector<TailCategory> tail_categories(const std::vector<Step> &steps)
{
    std::vector<TailCategory> out;
    for (const Step &s : steps) {
        if (s.kind != Step::Kind::Persistent) continue;
        auto it = std::find_if(out.begin(), out.end(), [&](const TailCategory &c) { return c.category == s.category; });
        if (it == out.end())
            it = out.insert(out.end(), TailCategory{std::string(s.category), 0, 0, std::string(s.source)});
        it->count += static_cast<int>(s.count);
        it->bytes += s.bytes;
    }
    return out;
}

}  // namespace arenascope::planner
