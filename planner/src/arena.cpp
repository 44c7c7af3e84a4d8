// TFLM's allocation sequence and its replay (see arena.h). Each step cites the TFLM 90b983c2
// function that makes the request.
#include "arenascope/planner/arena.h"

#include <algorithm>

namespace arenascope::planner {

const char* phase_name(Phase p) {
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

constexpr int64_t kArenaAlignment = 16;            // micro_arena_constants.h MicroArenaBufferAlignment
constexpr int64_t kMaxScratchBuffersPerOp = 12;    // micro_allocator.cc
constexpr int64_t kPlannerBytesPerBuffer = 16 + 4 + 4 + 12 + 4;  // GreedyMemoryPlanner::per_buffer_size()

int64_t align_down(int64_t x, int64_t a) { return x >= 0 ? x / a * a : -((-x + a - 1) / a * a); }
int64_t align_up(int64_t x, int64_t a) { return align_down(x + a - 1, a); }

std::string op_label(int s, const Operator& op) {
  return "subgraph " + std::to_string(s) + " operator " + std::to_string(op.index) + " (" + op.op_name + ")";
}

struct Builder {
  const Model& model;
  const Abi& abi;
  std::vector<Step> steps;

  void add(Step::Kind kind, Phase phase, int64_t bytes, int64_t align, std::string category, std::string what,
           std::string source, int64_t count = 1) {
    Step s;
    s.kind = kind;
    s.phase = phase;
    s.bytes = bytes;
    s.align = align;
    s.count = count;
    s.category = std::move(category);
    s.what = std::move(what);
    s.source = std::move(source);
    steps.push_back(std::move(s));
  }
  void persistent(Phase phase, TypeSize t, int64_t n, std::string category, std::string what, std::string source) {
    add(Step::Kind::Persistent, phase, t.size * n, t.align, std::move(category), std::move(what), std::move(source), n);
  }

  // micro_allocator.cc InitializeTfLiteTensorFromFlatbuffer: a TfLiteTensor's quantization, when
  // the tensor has scales and zero points: TfLiteAffineQuantization, then the zero-point array.
  void quantization(Phase phase, bool temp, const Tensor& t, const std::string& what) {
    if (!t.quant_channels) return;
    const char* src = "micro_allocator.cc InitializeTfLiteTensorFromFlatbuffer";
    const Step::Kind k = temp ? Step::Kind::Temp : Step::Kind::Persistent;
    const char* cat = temp ? "temp TfLiteTensor quantization" : "Persistent TfLiteTensor quantization data";
    add(k, phase, abi.affine_quantization.size, abi.affine_quantization.align, cat,
        what + ": TfLiteAffineQuantization", src);
    add(k, phase, int_array_bytes(t.quant_channels), 4, cat, what + ": zero points", src);
  }

  // MicroAllocator::AllocateTempTfLiteTensor: the struct, then its quantization, as temps.
  void temp_tensor(Phase phase, const Tensor& t, const std::string& what) {
    add(Step::Kind::Temp, phase, abi.tflite_tensor.size, abi.tflite_tensor.align, "temp TfLiteTensor",
        what + ": TfLiteTensor for tensor " + std::to_string(t.index), "micro_allocator.cc AllocateTempTfLiteTensor");
    quantization(phase, true, t, what + " tensor " + std::to_string(t.index));
  }

  void kernel(Phase phase, int s, const Operator& op, const std::vector<KernelAlloc>& allocs) {
    const std::string who = op_label(s, op);
    for (const KernelAlloc& a : allocs) {
      const size_t first = steps.size();
      switch (a.kind) {
        case KernelAlloc::Kind::BuiltinData:
          add(Step::Kind::Persistent, phase, a.bytes, a.align, "builtin data", who + ": " + a.what,
              "micro_allocator.cc MicroBuiltinDataAllocator::Allocate");
          break;
        case KernelAlloc::Kind::Persistent:
          // MicroContext -> MicroAllocator::AllocatePersistentBuffer: 16-byte aligned.
          add(Step::Kind::Persistent, phase, a.bytes, kArenaAlignment, "Persistent buffer data", who + ": " + a.what,
              "micro_allocator.cc MicroAllocator::AllocatePersistentBuffer");
          break;
        case KernelAlloc::Kind::TempTensor:
          temp_tensor(phase, model.subgraphs[s].tensors[a.tensor], who);
          break;
        case KernelAlloc::Kind::TempBuffer:
          add(Step::Kind::Temp, phase, a.bytes, a.align, "temp buffer", who + ": " + a.what,
              "micro_allocator.cc MicroAllocator::AllocateTempBuffer");
          break;
        case KernelAlloc::Kind::Scratch:
          break;  // a request is a record in the resizable head buffer (see ResizeHead below)
      }
      for (size_t i = first; i < steps.size(); ++i) steps[i].subgraph = s, steps[i].op = op.index;
    }
  }
};

}  // namespace

ArenaModel allocation_steps(const Model& model, const Lifetimes& lifetimes, const KernelPrediction& kernels,
                            const Abi& abi, int64_t head_bytes, bool planner_in_arena) {
  Builder b{model, abi, {}};
  ArenaModel out;
  out.head_bytes = head_bytes;
  out.unmodelled = kernels.unmodelled_data;
  using K = Step::Kind;
  const int subgraphs = static_cast<int>(model.subgraphs.size());

  // MicroAllocator::Create(arena, size, kGreedy): SingleArenaBufferAllocator::Create places the
  // allocator itself in its own tail, then CreateMemoryPlanner the GreedyMemoryPlanner, then the
  // MicroAllocator (micro_allocator.cc, single_arena_buffer_allocator.cc).
  b.persistent(Phase::Constructor, abi.arena_allocator, 1, "allocator objects", "SingleArenaBufferAllocator",
               "single_arena_buffer_allocator.cc SingleArenaBufferAllocator::Create");
  if (planner_in_arena)  // MicroAllocator::Create(arena, size, planner) takes the caller's planner
    b.persistent(Phase::Constructor, abi.greedy_planner, 1, "allocator objects", "GreedyMemoryPlanner",
                 "micro_allocator.cc CreateMemoryPlanner");
  b.persistent(Phase::Constructor, abi.micro_allocator, 1, "allocator objects", "MicroAllocator",
               "micro_allocator.cc MicroAllocator::Create");

  // MicroAllocator::StartModelAllocation.
  const char* start = "micro_allocator.cc MicroAllocator::StartModelAllocation";
  b.persistent(Phase::StartAllocation, abi.builtin_data_allocator, 1, "allocator objects", "MicroBuiltinDataAllocator",
               start);
  b.add(K::ResizeHead, Phase::StartAllocation, abi.scratch_buffer_request.size * kMaxScratchBuffersPerOp,
        abi.scratch_buffer_request.align, "scratch buffer requests",
        "ScratchBufferRequest[12] (the head, resizable)", "micro_allocator.cc MicroAllocator::InitScratchBufferData");
  b.persistent(Phase::StartAllocation, abi.subgraph_allocations, subgraphs, "SubgraphAllocations",
               "SubgraphAllocations[" + std::to_string(subgraphs) + "]", start);
  for (int s = 0; s < subgraphs; ++s) {
    const int n = static_cast<int>(model.subgraphs[s].tensors.size());
    b.persistent(Phase::StartAllocation, abi.eval_tensor, n, "TfLiteEvalTensor data",
                 "subgraph " + std::to_string(s) + ": TfLiteEvalTensor[" + std::to_string(n) + "]",
                 "micro_allocator.cc MicroAllocator::AllocateTfLiteEvalTensors");
  }
  for (int s = 0; s < subgraphs; ++s) {
    const int n = static_cast<int>(model.subgraphs[s].operators.size());
    b.persistent(Phase::StartAllocation, abi.node_and_registration, n, "NodeAndRegistration struct",
                 "subgraph " + std::to_string(s) + ": NodeAndRegistration[" + std::to_string(n) + "]",
                 "micro_allocator.cc MicroAllocator::AllocateNodeAndRegistrations");
  }

  // Builtin options, then every kernel's Init, then every kernel's Prepare, each pass over
  // all subgraphs in order (micro_interpreter.cc, micro_interpreter_graph.cc).
  for (int s = 0; s < subgraphs; ++s)
    for (const Operator& op : model.subgraphs[s].operators) b.kernel(Phase::Parse, s, op, kernels.ops[s][op.index].parse);
  for (int s = 0; s < subgraphs; ++s)
    for (const Operator& op : model.subgraphs[s].operators) b.kernel(Phase::Init, s, op, kernels.ops[s][op.index].init);
  int64_t requests = 0;
  for (int s = 0; s < subgraphs; ++s)
    for (const Operator& op : model.subgraphs[s].operators) {
      const auto& prepare = kernels.ops[s][op.index].prepare;
      b.kernel(Phase::Prepare, s, op, prepare);
      for (const KernelAlloc& a : prepare) requests += a.kind == KernelAlloc::Kind::Scratch;
      // MicroAllocator::FinishPrepareNodeAllocations: temporaries end, and the request buffer
      // grows to hold the requests so far plus the next operator's 12. PrepareSubgraphs ignores
      // the status this returns, so a failed resize does not fail AllocateTensors.
      b.add(K::ResetTemp, Phase::Prepare, 0, 1, "", op_label(s, op) + ": temporaries freed",
            "micro_allocator.cc MicroAllocator::FinishPrepareNodeAllocations");
      b.add(K::ResizeHead, Phase::Prepare, abi.scratch_buffer_request.size * (requests + kMaxScratchBuffersPerOp),
            abi.scratch_buffer_request.align, "scratch buffer requests",
            "ScratchBufferRequest[" + std::to_string(requests + kMaxScratchBuffersPerOp) + "] after " +
                op_label(s, op),
            "micro_allocator.cc MicroAllocator::FinishPrepareNodeAllocations");
      b.steps.back().fatal = false;
    }

  // MicroAllocator::FinishModelAllocation.
  if (requests)
    b.persistent(Phase::MemoryPlanning, abi.scratch_buffer_handle, requests, "ScratchBufferHandle",
                 "ScratchBufferHandle[" + std::to_string(requests) + "]",
                 "micro_allocator.cc MicroAllocator::AllocateScratchBufferHandles");
  const char* create = "micro_allocation_info.cc AllocationInfoBuilder::CreateAllocationInfo";
  b.add(K::Temp, Phase::MemoryPlanning, abi.pointer * int64_t{subgraphs}, abi.pointer, "memory planning",
        "subgraph offsets (size_t[" + std::to_string(subgraphs) + "])", create);
  int64_t tensors = 0;
  for (const Subgraph& sg : model.subgraphs) tensors += static_cast<int64_t>(sg.tensors.size());
  b.add(K::Temp, Phase::MemoryPlanning, abi.allocation_info.size * (tensors + requests), abi.allocation_info.align,
        "memory planning", "AllocationInfo[" + std::to_string(tensors + requests) + "]", create);
  for (int s = 0; s < subgraphs; ++s)
    for (const Tensor& t : model.subgraphs[s].tensors)
      if (lifetimes.placement[s][t.index] == Placement::Persistent) {
        b.add(K::Persistent, Phase::MemoryPlanning, t.bytes, kArenaAlignment, "TfLiteTensor variable buffer data",
              "subgraph " + std::to_string(s) + " variable tensor " + std::to_string(t.index) +
                  (t.name.empty() ? "" : " '" + t.name + "'"),
              "micro_allocator.cc MicroAllocator::AllocateVariables");
        b.steps.back().tensor = t.index;
        b.steps.back().subgraph = s;
      }
  b.add(K::PlannerArena, Phase::MemoryPlanning, 0, kArenaAlignment, "memory planning",
        "GreedyMemoryPlanner arrays: " + std::to_string(lifetimes.buffers.size()) + " buffers x 40 B in the free space",
        "micro_allocator.cc CommitStaticMemoryPlan, greedy_memory_planner.cc Init/AddBuffer",
        static_cast<int64_t>(lifetimes.buffers.size()));
  b.add(K::ResetTemp, Phase::MemoryPlanning, 0, 1, "", "planning temporaries freed",
        "micro_allocator.cc CommitStaticMemoryPlan");
  b.add(K::ResizeHead, Phase::MemoryPlanning, 0, 1, "", "scratch request buffer freed",
        "micro_allocator.cc CommitStaticMemoryPlan (DeallocateResizableBuffer)");
  b.add(K::ReserveHead, Phase::MemoryPlanning, head_bytes, kArenaAlignment, "head",
        "the memory plan's head (" + std::to_string(head_bytes) + " B)",
        "micro_allocator.cc CommitStaticMemoryPlan (ReserveNonPersistentOverlayMemory)");

  // MicroInterpreter::AllocateTensors: the TfLiteTensor* arrays and a persistent TfLiteTensor
  // for each input, then for each output (MicroAllocator::AllocatePersistentTfLiteTensor).
  const Subgraph& main = model.subgraphs[0];
  for (const auto* list : {&main.inputs, &main.outputs}) {
    const bool inputs = list == &main.inputs;
    const int n = static_cast<int>(list->size());
    b.add(K::Persistent, Phase::IoTensors, abi.pointer * int64_t{n}, kArenaAlignment, "Persistent buffer data",
          std::string(inputs ? "input" : "output") + " TfLiteTensor*[" + std::to_string(n) + "]",
          "micro_interpreter.cc MicroInterpreter::AllocateTensors");
    for (int32_t t : *list) {
      const std::string what = std::string(inputs ? "input" : "output") + " tensor " + std::to_string(t);
      b.add(K::Persistent, Phase::IoTensors, abi.tflite_tensor.size, abi.tflite_tensor.align,
            "Persistent TfLiteTensor data", what + ": TfLiteTensor",
            "micro_allocator.cc MicroAllocator::AllocatePersistentTfLiteTensor");
      b.quantization(Phase::IoTensors, false, main.tensors[t], what);
    }
  }
  // RecordingMicroAllocator counts a quantization as two allocations, an array as its elements.
  out.steps = std::move(b.steps);
  return out;
}

Replay replay(const std::vector<Step>& steps, int64_t arena_bytes) {
  // Offsets from the (16-byte aligned) arena start; the end is not re-aligned
  // (MicroAllocator::Create aligns only the start).
  Replay r;
  int64_t head = 0, temp = 0, tail = arena_bytes;
  const int64_t end = arena_bytes;
  auto fail = [&](size_t i, int64_t missing) {
    r.failed = i;
    r.missing = missing;
    return r;
  };
  r.offsets.assign(steps.size(), -1);
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    switch (s.kind) {
      case Step::Kind::Persistent: {
        // AllocatePersistentBuffer: aligned down from tail - size; fails below head_ (not temp_).
        const int64_t at = align_down(tail - s.bytes, s.align);
        if (at < head) return fail(i, head - at);
        tail = r.offsets[i] = at;
        break;
      }
      case Step::Kind::Temp: {
        const int64_t at = align_up(temp, s.align);
        if (tail - at < s.bytes) return fail(i, s.bytes - (tail - at));
        temp = at + s.bytes;
        break;
      }
      case Step::Kind::ResetTemp:
        temp = head;
        break;
      case Step::Kind::ResizeHead:
      case Step::Kind::ReserveHead: {
        const int64_t at = align_up(0, s.align);
        if (tail - at < s.bytes) {
          if (s.fatal) return fail(i, s.bytes - (tail - at));
          break;
        }
        head = temp = at + s.bytes;
        break;
      }
      case Step::Kind::PlannerArena: {
        // GetAvailableMemory(16) is taken whole as a temp; Init fits remaining / 40 buffers and
        // AddBuffer fails past that. A negative remainder wraps in size_t and AllocateTemp fails.
        const int64_t remaining = align_down(tail, kArenaAlignment) - align_up(temp, kArenaAlignment);
        const int64_t need = s.count * kPlannerBytesPerBuffer;
        if (remaining < 0 || remaining / kPlannerBytesPerBuffer < s.count)
          return fail(i, need - std::max<int64_t>(remaining, 0) / kPlannerBytesPerBuffer * kPlannerBytesPerBuffer);
        temp = align_up(temp, kArenaAlignment) + remaining;
        break;
      }
    }
  }
  r.ok = true;
  r.tail_bytes = end - tail;
  r.head_bytes = std::max(head, temp);
  return r;
}

MinimumArena minimum_arena(const std::vector<Step>& steps) {
  // A floor every size below fails at: the persistent bytes plus the final head.
  int64_t low = 0;
  for (const Step& s : steps)
    if (s.kind == Step::Kind::Persistent || s.kind == Step::Kind::ReserveHead) low += s.bytes;
  int64_t high = std::max<int64_t>(low, 64);
  while (!replay(steps, high).ok) high *= 2;
  // Bisect to a passing size, then take the smallest passing size a window below it: with the
  // unaligned end, padding can make fit/no-fit not quite monotone near the boundary.
  while (low + 1 < high) {
    const int64_t mid = low + (high - low) / 2;
    (replay(steps, mid).ok ? high : low) = mid;
  }
  int64_t best = high;
  for (int64_t size = std::max<int64_t>(high - 64, 0); size < high; ++size)
    if (replay(steps, size).ok) { best = size; break; }
  MinimumArena m;
  m.bytes = best;
  m.at_minimum = replay(steps, best);
  m.binding = best > 0 ? replay(steps, best - 1).failed : 0;
  const Replay aligned = replay(steps, align_up(best, kArenaAlignment) + 1024 * kArenaAlignment);
  m.tail_bytes = aligned.tail_bytes;
  m.arena_used_bytes = aligned.tail_bytes + aligned.head_bytes;
  return m;
}

std::vector<TailCategory> tail_categories(const std::vector<Step>& steps) {
  std::vector<TailCategory> out;
  for (const Step& s : steps) {
    if (s.kind != Step::Kind::Persistent) continue;
    auto it = std::find_if(out.begin(), out.end(), [&](const TailCategory& c) { return c.category == s.category; });
    if (it == out.end()) it = out.insert(out.end(), TailCategory{s.category, 0, 0, s.source});
    it->count += static_cast<int>(s.count);
    it->bytes += s.bytes;
  }
  return out;
}

}  // namespace arenascope::planner
