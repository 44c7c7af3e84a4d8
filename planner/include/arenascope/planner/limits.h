// arenascope planner: the sizes of model it accepts (docs/arena-budget.md, "Limits and scale").
// Beyond any of them read_model / build_lifetimes / allocation_steps raise a ModelError that
// names what is too large and where; nothing is truncated or wrapped silently.
#pragma once

#include <cstdint>

namespace arenascope::planner {

// Operators and tensors in all subgraphs together. The planner's work and memory are linear in
// them (about 2 KB per operator, docs/arena-budget.md); a Cortex-M arena cannot hold TFLM's
// bookkeeping for this many anyway (a NodeAndRegistration is 32 bytes and a TfLiteEvalTensor
// 12 bytes each on Cortex-M: abi.cpp).
inline constexpr int64_t kMaxOperators = 1'000'000;
inline constexpr int64_t kMaxTensors = 2'000'000;
inline constexpr int64_t kMaxSubgraphs = 100'000;
// Tables flatbuffers' Verifier may visit in the whole file (a shared table counts at every
// reference): above anything the limits above allow, and a bound on a hostile file's work.
inline constexpr uint32_t kMaxTables = 16'000'000;
// Nesting of control-flow calls (IF / WHILE / CALL_ONCE) from subgraph 0. The planner's walk is
// not recursive, so this is only a sanity bound; TFLM recurses twice per level
// (MarkAllocationLifetimes -> MarkSubgraphLifetimesIfNecessary), so a real target's stack runs out
// far sooner.
inline constexpr int64_t kMaxCallDepth = 10'000;
// Allocation scopes (TFLM's allocation_scope_count_, an int: 2^31-1 at most). The planner keeps
// one entry per scope in its live-bytes table and the snapshot's live regions, so it stops at
// 2^24; a subgraph called from many places counts its scopes at every call.
inline constexpr int64_t kMaxScopes = int64_t{1} << 24;
// Sizes and offsets in TFLM's GreedyMemoryPlanner are int (greedy_memory_planner.h): a planned
// buffer's aligned size, its offline offset + size, and the head stay at or below 2^31-1.
inline constexpr int64_t kMaxPlannerInt = 0x7fffffff;
// Any single request and the whole arena on a 32-bit target: size_t (2^32-1).
inline constexpr int64_t kMaxSize32 = 0xffffffffLL;

}  // namespace arenascope::planner
