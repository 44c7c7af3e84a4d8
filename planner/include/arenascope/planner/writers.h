// arenascope planner: the budget's writers, one output format each: JSON for the plugin
// (write_json.cpp), the table for people (write_table.cpp), a C header for firmware
// (write_header.cpp) and a snapshot for the viewer (snapshot.cpp). What they write is budget.h's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "arenascope/planner/budget.h"
#include "arenascope/planner/json_stream.h"

namespace arenascope::planner {

// The contract of budget_json: its "schema" string (docs/planner-schema.json; CHANGELOG.md lists
// it under "Contract versions"). The GDB plugin's copy is SCHEMA in
// gdbplugin/arenascope_plugin/acquire/planner.py, and a test checks both against the JSON Schema's.
inline constexpr const char *kPlanSchema = "arenascope-plan/2";
// The version of the snapshot `--snapshot` writes (docs/snapshot-schema.md).
inline constexpr int kSnapshotVersion = 3;

// Text from the model for a terminal: control bytes (ESC, ...) and DEL become '?'; newlines too
// unless keep_newlines.
std::string printable(std::string text, bool keep_newlines = false);

// JSON document (kPlanSchema: docs/arena-budget.md, "JSON output", and docs/planner-schema.json).
nlohmann::json budget_json(const Budget &b);
// The same, written as it is made (json_stream.h): what arenascope-plan --json prints.
StreamedJson budget_json_streamed(const Budget &b);  // refers to b: write it while b lives
// --json is printed with no whitespace at all (dump(-1)) for a model of more operators than this,
// all subgraphs together: a third smaller (docs/arena-budget.md "Limits and scale"); smaller
// models' JSON stays indented, as it always was.
constexpr size_t kCompactJsonOperators = 10000;
bool json_is_compact(const Budget &b);
// The budget as an arenascope snapshot (docs/snapshot-schema.md, version 1, source "model"):
// the recommended arena at address 0 with the head plan and the predicted tail, no stack, so
// the viewer draws a model's plan with no target (--snapshot).
nlohmann::json budget_snapshot(const Budget &b);
// Streamed, as budget_json_streamed (refers to b). compact: each run of consecutive tail
// allocations of one kind, category, role, phase and subgraph (no variable tensor) is one region
// with a `count` (docs/snapshot-schema.md "Compact snapshots"): for a model whose full snapshot
// passes the viewer's limits (common/include/arenascope/snapshot_limits.h). *regions: how many
// regions the arena has.
StreamedJson budget_snapshot_streamed(const Budget &b, bool compact = false, size_t *regions = nullptr);
// The number with its thousands grouped: 100001 -> "100,001" (a coalesced region's label).
std::string grouped(uint64_t n);
// The human table.
std::string budget_table(const Budget &b);
struct Gate;  // gate.h
// The table with `verdict` (gate.h) in its first lines: budget_table(b) is budget_table(b, gate(b)).
std::string budget_table(const Budget &b, const Gate &verdict);
// A C header for firmware (--header): the head plan as arenascope_region_t entries (the agent's
// ABI, target_agent/include/arenascope/agent.h) in planner id order, and the figures as macros.
// Throws ModelError when a value does not fit the region fields (id > 0xFFFE, scope > 32767) or
// a figure its 32-bit fields (the head, the minimum or the recommended arena over 4 GiB).
std::string budget_header(const Budget &b);

}  // namespace arenascope::planner
