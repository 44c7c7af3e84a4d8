// arenascope planner: tensor lifetimes and memory plans of the non-persistent arena head.
//
// Units: bytes for sizes and offsets (offsets from the start of the arena head), lifetimes in
// TFLM's allocation scopes (inclusive bounds: scope 0 = subgraph 0's inputs, operator i of
// subgraph 0 runs in scope i+1 when no control flow is present).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "arenascope/planner/model.h"

namespace arenascope::planner {

// A scratch buffer a kernel requests in Prepare (RequestScratchBufferInArena); not in the file,
// predicted by kernels.h.
struct ScratchRequest {
    int subgraph = 0;
    int op = 0;
    int64_t bytes = 0;
    std::string what;  // e.g. "SVDF scratch (batch x filters x int32)"
};

// Where TFLM puts a tensor (micro_allocation_info.cc InitializeAllocationInfo,
// micro_allocator.cc AllocateVariables).
enum class Placement { Planned, Persistent, Constant, Empty, Unallocated };
const char *placement_name(Placement p);

// One buffer of the memory plan. id = TFLM's planner id: tensors of all subgraphs in index
// order that need allocating, then scratch requests in request order.
struct Buffer {
    int id = 0;
    int subgraph = 0;
    int tensor = -1;              // tensor index, or -1 for a scratch buffer
    int scratch = -1;             // index into the scratch requests, or -1
    int64_t bytes = 0;            // bytes requested
    int64_t size = 0;             // bytes planned: AlignSizeUp(bytes, 16) (micro_allocator.cc)
    int first = -1;               // first allocation scope (inclusive)
    int last = -1;                // last allocation scope (inclusive)
    int32_t offline_offset = -1;  // fixed offset from the model's offline plan, -1 = online
};

struct Lifetimes {
    std::vector<Buffer> buffers;
    // placement[s][t] for tensor t of subgraph s.
    std::vector<std::vector<Placement>> placement;
    // scope at which operator i of subgraph s runs: op_scope[s][i].
    std::vector<std::vector<int>> op_scope;
    int last_scope = 0;
    std::vector<std::string> warnings;
};

// TFLM's AllocationInfoBuilder (micro_allocation_info.cc) rules. Throws ModelError for what
// TFLM rejects while building them (a tensor type with no size, a non-empty intermediate).
Lifetimes build_lifetimes(const Model &model, const std::vector<ScratchRequest> &scratch);

// Inclusive lifetimes overlap: both buffers are live in some scope (greedy_memory_planner.cc
// DoesEntryOverlapInTime).
bool live_together(const Buffer &a, const Buffer &b);

struct Plan {
    std::string planner;           // "tflm-greedy", "best-of-orderings", ...
    std::vector<int64_t> offsets;  // per buffer id
    int64_t head = 0;              // max(offset + size): the non-persistent head in bytes
};

// TFLM's GreedyMemoryPlanner (memory_planner/greedy_memory_planner.cc), same order, same
// tie-breaking: offline buffers first, online ones by size descending with a stable sort of
// the reversed id order; first fit in the offset-ordered list of time-overlapping buffers.
Plan plan_tflm_greedy(const std::vector<Buffer> &buffers);
// First fit over several buffer orderings (TFLM's among them); never worse than TFLM's greedy.
Plan plan_best(const std::vector<Buffer> &buffers);

// Branch and bound over first-fit placement orders (search.cpp), started from `start` (a valid
// plan, e.g. plan_best's) and stopped when a plan reaches `floor` (the lower bound) or after
// `budget` steps of work (search.cpp; deterministic: no clock). Offline buffers keep their offsets.
// Not run (searched = false, the start returned) when the start already reaches the floor, for
// more than kSearchMaxBuffers buffers, or with a budget of 0.
inline constexpr size_t kSearchMaxBuffers = 1000;
inline constexpr int64_t kSearchDefaultBudget = 20000000;  // about 0.5 s on a 2-core machine (tools/bench_search.py)
struct SearchResult {
    Plan plan;               // the best found: the start unless the search beat it ("search")
    bool searched = false;   // the search ran
    bool exhausted = false;  // the plan is optimal among first-fit orders (or reaches the floor)
    int64_t steps = 0;       // work spent (search.cpp: first-fit evaluations and nodes)
};
SearchResult plan_search(const std::vector<Buffer> &buffers, const Plan &start, int64_t floor,
                         int64_t budget = kSearchDefaultBudget);

struct LowerBound {
    int64_t bytes = 0;  // max over scopes of the sum of planned sizes live in that scope
    int scope = 0;      // the first scope where it is reached
};
LowerBound lower_bound(const std::vector<Buffer> &buffers);
// Live bytes at each scope 0..max(last): the sum of planned sizes with first <= t <= last.
// The GDB plugin's analysis.plan() uses the same definition (golden fixture:
// tests/fixtures/plan_definitions_golden.json).
std::vector<int64_t> live_bytes(const std::vector<Buffer> &buffers);

// Two buffers (ids, the smaller first) that are live at the same time and share a byte at
// `offsets` (per buffer id; buffers with a negative offset are left out), or {-1, -1}. A sweep
// over time, O(n log n).
std::pair<int, int> shared_bytes(const std::vector<Buffer> &buffers, const std::vector<int64_t> &offsets);

// Empty when no two buffers with overlapping lifetimes share a byte (and offsets are >= 0),
// else a message naming a pair that does (shared_bytes).
std::string check_plan(const std::vector<Buffer> &buffers, const Plan &plan);

}  // namespace arenascope::planner
