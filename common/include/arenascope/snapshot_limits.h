// arenascope: the snapshot's limits, in one place for the planner's writer (arenascope-plan
// --snapshot) and the viewer's reader (viewer/src/snapshot.h): every snapshot the planner writes
// loads in the viewer, and one over a limit is refused by both in the same words
// (snapshot_refusal). Header-only, C++17. The Python side's twins are
// gdbplugin/arenascope_plugin/present/snapshot.py MAX_SNAPSHOT_BYTES and MAX_REGIONS, and
// docs/snapshot-schema.json states the region limit as the regions array's maxItems;
// tests/plugin/test_snapshot_limits.py checks that the three agree with this file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace arenascope {

// A snapshot (file, text or live message's snapshot) of more bytes than this is refused: the
// viewer's memory is bounded by a multiple of it (viewer/README.md).
constexpr std::size_t kMaxSnapshotBytes = 64u << 20;
// Regions one arena of a snapshot may have: the viewer keeps, lays out and draws each one.
constexpr std::size_t kMaxRegions = 200000;
// Allocation scopes of a plan, and the largest first_use/last_use a region may give: a model's
// operators (arenascope-plan writes up to one scope an operator; the agent's are 16-bit).
constexpr std::size_t kMaxScopes = 200000;

enum class SnapshotLimit { Bytes, Regions };

// The one sentence that refuses a snapshot over a limit: what (a file, "snapshot", or a file and
// the arena's JSON path), the figure, the limit, and what to do. The planner says it when even
// its compact snapshot passes a limit, the viewer when it is given such a file.
inline std::string snapshot_refusal(const std::string &what, SnapshotLimit limit, std::uint64_t figure)
{
    const std::string over = limit == SnapshotLimit::Bytes
                                 ? std::to_string(figure) + " bytes, more than the " +
                                       std::to_string(kMaxSnapshotBytes >> 20) + " MiB a snapshot may have"
                                 : std::to_string(figure) + " regions in one arena, more than the " +
                                       std::to_string(kMaxRegions) + " a snapshot may have";
    return what + ": " + over +
           " (arenascope's snapshot limits): the viewer cannot draw it; for a model, read its plan in "
           "arenascope-plan's table or --json instead";
}

}  // namespace arenascope
