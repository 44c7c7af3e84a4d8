// arenascope viewer: the snapshot model and its loader (no ImGui, no GL).
//
// The snapshot is the GDB plugin's JSON (docs/snapshot-schema.md, schema version 1). The
// viewer decodes no target memory and recomputes no analysis: every figure it shows is a field
// here. parse_snapshot() validates as it reads: a wrong type, a negative size, a count past the
// limits below or a region outside its arena is an error naming the JSON path, never a crash.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arenascope/snapshot_limits.h"  // kMaxSnapshotBytes, kMaxRegions, kMaxScopes: the planner's too

namespace arenascope {

constexpr std::size_t kMaxMessageBytes = 16u << 20;  // a longer live line drops the connection (link.h)
constexpr std::size_t kMaxArenas = 16;
constexpr std::size_t kMaxChecks = 256;
constexpr std::size_t kMaxMemoryName = 120;     // bytes of an arena's or the stack's in_memory kept
constexpr std::size_t kMaxPredictedPath = 64;   // functions of stack.predicted.path (the plugin's limit too)
constexpr std::size_t kMaxFunctionName = 4096;  // bytes of one of them kept
constexpr std::size_t kMaxRamMap = 64;          // ram_map areas (the plugin's limit too)
constexpr std::size_t kMaxHistoryPoints = 600;  // live history
// "tflm" (the agentless post-mortem): a "tflm" past these is refused (the rest of the snapshot is shown).
constexpr std::size_t kMaxTflmVerdicts = 16;
// The snapshot version this viewer reads (docs/snapshot-schema.md; the plugin's present/snapshot.py VERSION).
constexpr int kSnapshotVersion = 3;        // what the plugin writes now
constexpr int kOldestSnapshotVersion = 2;  // still read: its fault has Cortex-M's registers as fields
// The live link's message version (the plugin's serve/viewerlink.py MESSAGE_VERSION).
constexpr int kStreamVersion = 1;
constexpr std::size_t kMaxTflmLines = 64;     // evidence[] and problems[] lines per list
constexpr std::size_t kMaxTflmSmashed = 256;  // smashed objects per verdict
constexpr std::size_t kMaxTflmObjects = 64;
constexpr std::size_t kMaxTflmLineBytes = 4096;       // a longer string is cut (at a UTF-8 boundary)
constexpr std::size_t kMaxTflmTextBytes = 64u << 10;  // all its strings together: the panel wraps them each frame

struct Touched {
    uint64_t offset = 0;  // bytes from the band's low address
    uint64_t size_bytes = 0;
};

struct Band {
    bool present = false;  // false: the band was never filled (JSON null)
    uint64_t low_addr = 0, high_addr = 0, size_bytes = 0;
    uint64_t offset = 0;  // free band only: from the arena base
    bool measured = false;
    std::optional<uint64_t> intact_bytes;
    std::optional<Touched> touched;
};

struct Region {
    int index = 0;
    std::optional<int64_t> id;  // tensor index (scratch: scratch index)
    std::string kind;           // tensor, scratch, persistent, metadata
    uint64_t offset = 0, address = 0, size_bytes = 0;
    std::optional<int> first_use, last_use;  // allocation scopes; none: whole run
    std::vector<std::string> flags;
    std::string label;
    std::optional<std::string> name, dtype;
    std::vector<int64_t> shape;
    uint64_t count = 1;  // allocations it stands for: > 1 in a compact snapshot's coalesced run
};

struct Plan {
    int scopes = 0;
    std::vector<uint64_t> live_bytes;  // per scope
    uint64_t lower_bound_bytes = 0;
    int lower_bound_scope = 0;
};

struct Arena {
    int index = 0;
    uint64_t base_addr = 0, size_bytes = 0, head_bytes = 0, temp_bytes = 0, tail_offset = 0, tail_bytes = 0;
    uint64_t alignment_bytes = 0, used_bytes = 0, peak_bytes = 0;
    int64_t headroom_bytes = 0;
    double headroom_pct = 0;
    std::optional<uint64_t> minimum_arena_bytes;
    bool headroom_is_upper_estimate = true;
    bool tflm_figures = false;
    std::optional<uint64_t> moved_from;  // where it was before it last moved (a per-inference arena)
    std::string in_memory;               // the memory it lies in ("psram (named by the user)"), "" unknown
    bool apart_from_stack = false;       // in memory apart from the stack's (external RAM)
    Band free_band;
    std::optional<Touched> damage;  // offset from the arena base
    std::vector<Region> regions;
    Plan plan;
};

struct Stack {
    uint64_t low_addr = 0, high_addr = 0, size_bytes = 0;
    std::optional<uint64_t> sp, hwm_addr, peak_bytes, arena_end_addr, room_bytes, required_room_bytes;
    std::string source;
    std::string in_memory;  // the memory the stack lies in, "" unknown
    bool overflowed = false;
    bool peak_is_lower_bound = false;  // the stack went through the guard band: peak is a minimum
    double rule_factor = 0;            // the stack rule's factor, as the snapshot gives it (required): never assumed
    // The worst case worked out from the ELF before flashing (stack.predicted, `arena budget`):
    // none when the snapshot has none.
    std::optional<uint64_t> predicted_worst_bytes, predicted_thread_bytes;
    bool predicted_is_floor = false;          // it leaves something out: a minimum
    std::vector<std::string> predicted_path;  // Reset's deepest path, outermost first
};

struct Check {
    std::string rule, verdict, reason;
};

// One RAM area the ELF lays out (ram_map: `arena budget`'s RAM map): a section, the heap, the
// tensor arena, the stack.
struct RamArea {
    uint64_t low_addr = 0, high_addr = 0;
    std::string what, kind;
};

// One verdict on a fault: kind is a stable word (docs/snapshot-schema.md: stack-into-arena,
// buffer-overrun, not-arena-nor-stack, none, unknown, and the post-mortem's kinds).
struct FaultVerdict {
    std::string kind;
    std::string headline;  // the sentence shown, "VERDICT: ..."
    std::vector<std::string> evidence;
};
// One of a fault's status registers, as the plugin's architecture port named and decoded it
// (CFSR, mcause, EXCCAUSE, ...; docs/snapshot-schema.md "fault").
struct FaultRegister {
    std::string name;
    std::optional<uint64_t> value;  // nullopt: not known
    std::string meaning;            // one line, "" when the value says nothing more
};
struct Fault {
    std::string exception, source, pc_where, lr_where;
    std::string arch;                            // the port: "cortex-m", "riscv32", "xtensa"
    std::vector<FaultRegister> registers;        // in the port's order; an unknown one is left out
    std::optional<FaultRegister> fault_address;  // name: the register holding it (BFAR, mtval, EXCVADDR)
    bool stale = false;                          // from before a reset: no verdict is drawn from this boot's memory
    std::vector<std::string> bits, causes, notes;
    std::vector<FaultVerdict> verdicts;
    std::vector<int> damaged_regions;  // indices into arenas[0].regions
};

// One point of the live history (`arena live`): bytes at one refresh.
struct LivePoint {
    double t_unix_s = 0;                       // wall-clock UTC seconds
    uint64_t used_bytes = 0;                   // arena 0's used bytes
    std::optional<uint64_t> stack_peak_bytes;  // stack high - high-water mark; none: unknown
    std::optional<int64_t> gap_bytes;          // high-water mark - end of the arena below; negative: into the arena
};

// What a live refresh says about itself: present only in snapshots of `arena live`.
struct Live {
    std::string reader;               // how the bytes were read
    double captured_at_unix_s = 0;    // when this refresh's reads finished (UTC seconds)
    uint64_t refresh_index = 1;       // refreshes since `arena live` started, from 1
    double refresh_hz = 0;            // refreshes per second, measured by the plugin
    uint64_t bytes_last_refresh = 0;  // bytes read from the target for this refresh
    bool link_lost = false;           // "lost": the reader lost OpenOCD, this is the last good data
    bool link_untrusted = false;      // "untrusted": OpenOCD answers, but the descriptor read is corrupt
    std::string link_error;           // why, when lost (may be empty)
    std::vector<LivePoint> history;   // oldest first; the last point is this refresh
};

// "tflm": TFLM's MicroInterpreter as the plugin's post-mortem reads it (agentless mode only).
struct TflmSmashed {  // a tail object the stack overwrote
    std::string name, why;
    uint64_t addr = 0, size = 0;
};
struct TflmVerdict {
    std::string kind;      // stack-into-arena, allocation-failed, failure-ignored, tflm-damaged
    std::string headline;  // "VERDICT: ..."
    std::vector<std::string> evidence;
    std::vector<TflmSmashed> smashed;  // top down
};
struct TflmObject {
    std::string name;
    uint64_t addr = 0, size_bytes = 0;
    bool sound = false;
    std::vector<std::string> problems;
};
struct Tflm {
    std::optional<uint64_t> interpreter_addr;
    std::string condition;  // allocated, smashed, not-started, unfinished, unknown
    std::string meaning, arena_symbol;
    std::vector<std::string> evidence;
    bool allocator_sound = false;  // "allocator" is an object (null: unsound or unread)
    std::vector<TflmObject> objects;
    std::vector<TflmVerdict> verdicts;
};

// "tasks": the RTOS's tasks and their stacks (FreeRTOS), as the plugin read them: every figure is
// the plugin's (docs/snapshot-schema.md, "tasks"); the viewer shows them and computes none.
constexpr std::size_t kMaxTasks = 64;           // tasks shown (a longer list is refused, the rest shown)
constexpr std::size_t kMaxTaskLines = 16;       // problems per list
constexpr std::size_t kMaxTaskTextBytes = 256;  // a name, a state, a problem line: longer is cut
struct RtosTask {
    std::string name, state;  // pcTaskName; running, ready, blocked, suspended, deleted
    uint64_t tcb_addr = 0;
    std::optional<int64_t> priority;
    uint64_t low_addr = 0;                 // pxStack
    std::optional<uint64_t> high_addr;     // one past the stack's top; none: unknown
    std::optional<uint64_t> sp, hwm_addr;  // SP (live or at its last switch-out); the lowest word that lost the fill
    bool sp_live = false;
    std::optional<uint64_t> never_used_bytes, peak_bytes;  // none: not scanned or never filled
    bool peak_is_lower_bound = false, overflowed = false;
    std::string below;  // what lies right below the stack
    std::optional<uint64_t> room_bytes, required_room_bytes;
    std::vector<std::string> problems;
};
struct RtosTasks {
    std::string kernel;  // "FreeRTOS"
    std::optional<uint64_t> current_tcb;
    std::vector<std::string> problems;
    std::vector<RtosTask> list;  // the running one first, then by priority
};

struct Snapshot {
    bool running = false;  // live: the target runs again since this snapshot (set by the link)
    int version = 0;
    std::string elf, located_by, time;
    std::string dump;           // source.dump: read from a RAM dump, its files and ranges (empty: a target)
    std::string model, target;  // located_by "model": the model file and ABI the planner predicted for
    uint64_t descriptor_address = 0;
    int addr_size = 4;
    uint64_t invokes = 0;
    bool in_invoke = false, measured = false;
    std::string measured_by;
    std::vector<Arena> arenas;
    Stack stack;
    Band guard;
    std::vector<Check> checks;
    std::vector<RamArea> ram_map;  // none when the snapshot has none
    std::string verdict;
    std::optional<Fault> fault;
    std::optional<Live> live;        // `arena live` only; none in files and at stops
    std::optional<Tflm> tflm;        // agentless mode only; none when absent, null or refused
    std::string tflm_error;          // why a "tflm" present was refused (path-named); the rest is shown
    std::optional<RtosTasks> tasks;  // none when absent, null or refused
    std::string tasks_error;         // why a "tasks" present was refused (path-named); the rest is shown
};

struct LoadResult {
    std::optional<Snapshot> snapshot;
    std::string error;  // empty when snapshot is set
};

// Parses one snapshot (the JSON text of a file, or the "snapshot" member of a stream message).
LoadResult parse_snapshot(std::string_view json_text);
// Reads and parses a snapshot file; errors name the file.
LoadResult load_snapshot_file(const std::string &path);
// One line of the live stream: {"type":"snapshot","version":1,"snapshot":{...}}.
LoadResult parse_stream_message(std::string_view line);
// A state line {"type":"state","version":1,"running":true|false}: the running flag, or nothing
// if the line is not a valid state message.
std::optional<bool> parse_state_message(std::string_view line);

}  // namespace arenascope
