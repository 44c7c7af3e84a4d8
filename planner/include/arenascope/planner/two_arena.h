// arenascope planner: TFLM's two-arena mode, MicroAllocator::Create(persistent_buffer,
// persistent_size, non_persistent_buffer, non_persistent_size) (arenascope-plan
// --persistent-size P --non-persistent-size N).
//
// TFLM 90b983c2 micro_allocator.cc, the five-argument Create: CreatePersistentArenaAllocator puts
// a PersistentArenaBufferAllocator at the top of the persistent buffer (its end aligned down to
// 16, its start not aligned), CreateNonPersistentArenaAllocator puts the
// NonPersistentArenaBufferAllocator in the persistent buffer too (the non-persistent buffer's
// start aligned up to 16, its end not aligned), then the GreedyMemoryPlanner and the
// MicroAllocator follow, both in the persistent buffer. From there every persistent request
// (AllocatePersistentBuffer) goes to the persistent buffer
// (arena_allocator/persistent_arena_buffer_allocator.cc: aligned down from tail_temp_, fails
// below buffer_head_) and every other one (temporaries, the resizable scratch-request buffer, the
// planner's arrays, the head) to the non-persistent buffer
// (arena_allocator/non_persistent_arena_buffer_allocator.cc: temps fail past buffer_tail_, the
// resizable buffer and the head start at buffer_head_, GetAvailableMemory(16) is the aligned
// tail minus the aligned next_temp_). The two no longer compete: each buffer has its own minimum.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "arenascope/planner/arena.h"
#include "arenascope/planner/budget.h"

namespace arenascope::planner {

// Which of the two buffers a request draws on.
enum class Memory { Persistent, NonPersistent };
const char *memory_name(Memory m);  // "persistent", "non-persistent"
Memory memory_of(const Step &s);

// sizeof/alignof of the two allocators per ABI (TFLM 90b983c2
// arena_allocator/persistent_arena_buffer_allocator.h: a vtable pointer, buffer_head_,
// buffer_tail_, tail_temp_; non_persistent_arena_buffer_allocator.h: a vtable pointer,
// buffer_head_, buffer_tail_, head_temp_, next_temp_, intptr_t temp_buffer_ptr_check_sum_, int
// temp_buffer_count_, bool resizable_buffer_allocated_).
TypeSize persistent_allocator_type(const Abi &abi);
TypeSize non_persistent_allocator_type(const Abi &abi);

// TFLM's requests in two-arena mode: the single-arena sequence (allocation_steps with the planner
// in the arena) with the constructor's SingleArenaBufferAllocator replaced by the two allocators,
// in Create's order: PersistentArenaBufferAllocator, NonPersistentArenaBufferAllocator,
// GreedyMemoryPlanner, MicroAllocator. Everything after the constructor is the same request.
std::vector<Step> two_arena_steps(const std::vector<Step> &single, const Abi &abi);

struct TwoArenaReplay {
    bool ok = false;
    size_t failed = 0;                      // the step that does not fit (!ok)
    Memory runs_out = Memory::Persistent;   // ... and the buffer it asks of
    Attempt attempt;                        // what it found
    ArenaState persistent, non_persistent;  // offsets from each buffer's start when it stopped
    std::vector<int64_t> offsets;           // per step: where a persistent request landed, else -1
    int64_t persistent_used = 0;            // GetPersistentUsedBytes: aligned end - tail_temp_
    int64_t non_persistent_used = 0;        // GetNonPersistentUsedBytes: next_temp_ - buffer_head_
};
// Replays `steps` (two_arena_steps) with a persistent buffer of `persistent_bytes` and a
// non-persistent one of `non_persistent_bytes`, both starting 16-byte aligned.
TwoArenaReplay replay_two(const std::vector<Step> &steps, int64_t persistent_bytes, int64_t non_persistent_bytes);

struct TwoArenaBudget {
    std::vector<Step> steps;
    int64_t persistent_bytes = 0, non_persistent_bytes = 0;  // as given
    // The smallest buffer each needs with the other one large enough, and the step that fails
    // with one byte less.
    int64_t persistent_minimum = 0, non_persistent_minimum = 0;
    size_t persistent_binding = 0, non_persistent_binding = 0;
    TwoArenaReplay at_size;  // at the given sizes
    // Every persistent request, offsets from the persistent buffer's start (in the given buffer
    // when it holds the tail, else at the persistent minimum).
    std::vector<TailRegion> tail_regions;
    int64_t tail_regions_buffer = 0;  // the persistent buffer size those offsets are for
    std::string message;              // TFLM's line for the failed request (!at_size.ok)
};

TwoArenaBudget plan_two_arenas(const Budget &b, int64_t persistent_bytes, int64_t non_persistent_bytes);

// The JSON's "two_arena" object (docs/arena-budget.md, docs/planner-schema.json).
nlohmann::json two_arena_json(const Budget &b, const TwoArenaBudget &t);
// The table's section.
std::string two_arena_table(const Budget &b, const TwoArenaBudget &t);
// The snapshot with both buffers (docs/snapshot-schema.md): arena 0 the non-persistent buffer at
// address 0, arena 1 the persistent buffer right after it (the next 16-byte boundary); a buffer
// smaller than its minimum is drawn at its minimum, and the "used" check FAILs naming it.
nlohmann::json two_arena_snapshot(const Budget &b, const TwoArenaBudget &t);

}  // namespace arenascope::planner
