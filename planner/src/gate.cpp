// arenascope-plan's verdict for CI (gate.h).
#include "arenascope/planner/gate.h"

#include <algorithm>
#include <string>

#include "arenascope/planner/outcome.h"

namespace arenascope::planner {

Gate gate(const Budget &b, const TwoArenaBudget *two)
{
    if (!b.kernels.rejected.empty())
        return {kExitRejected, "REJECTED",
                "TFLM rejects this model in AllocateTensors whatever the arena's size (" + b.kernels.rejected.front() +
                    ")"};
    if (two) {
        if (two->at_size.ok)
            return {kExitFits, "FITS",
                    "AllocateTensors succeeds with a persistent buffer of " + std::to_string(two->persistent_bytes) +
                        " B and a non-persistent one of " + std::to_string(two->non_persistent_bytes) + " B"};
        const bool persistent = two->at_size.runs_out == Memory::Persistent;
        return {kExitDoesNotFit, "DOES NOT FIT",
                std::string("AllocateTensors fails: the ") + (persistent ? "persistent" : "non-persistent") +
                    " buffer runs out; give it at least " +
                    std::to_string(persistent ? two->persistent_minimum : two->non_persistent_minimum) + " B"};
    }
    if (!b.at_size)
        return {kExitFits, "NO SIZE GIVEN",
                "no arena size to check: --arena-size N gives the verdict for an arena of N bytes"};
    const ArenaAtSize &r = *b.at_size;
    const std::string at = "an arena of " + std::to_string(r.arena_bytes) + " B";
    if (r.fits)
        return {kExitFits, "FITS",
                "AllocateTensors succeeds in " + at + ", " + std::to_string(r.arena_bytes - b.minimum.bytes) +
                    " B above the minimum"};
    const std::string more = "; give it at least " + std::to_string(b.minimum.bytes) + " B (" +
                             std::to_string(std::max<int64_t>(b.minimum.bytes - r.arena_bytes, 0)) + " B more)";
    switch (r.outcome.kind) {
    case Outcome::Kind::Ok:  // a replay that failed a request always has another outcome
    case Outcome::Kind::Error:
        return {kExitDoesNotFit, "DOES NOT FIT", "AllocateTensors fails in " + at + " and returns kTfLiteError" + more};
    case Outcome::Kind::Crash: return {kExitCrashOrHang, "CRASH", "TFLM faults inside AllocateTensors in " + at + more};
    case Outcome::Kind::Hang:
        return {kExitCrashOrHang, "HANG",
                "TFLM aborts inside AllocateTensors in " + at + " (TFLITE_ABORT: a board loops there for ever)" + more};
    case Outcome::Kind::Unknown: break;
    }
    return {kExitCrashOrHang, "UNKNOWN",
            "TFLM goes on with memory it corrupted in " + at + " (what follows is not decided by its source)" + more};
}

std::string gate_lines(const Budget &b, const Gate &g)
{
    std::string out =
        "verdict: " + g.verdict + ": " + g.reason + " (exit status " + std::to_string(g.exit_status) + ")\n";
    if (b.kernels.rejected.empty())
        out += "minimum arena " + std::to_string(b.minimum.bytes) + " B" +
               (b.minimum_exact() ? "" : " (a floor: some kernels are not modelled)") + ", recommended " +
               std::to_string(b.recommended) + " B (minimum + " + std::to_string(b.margin_pct) + " % margin)\n";
    return out;
}

nlohmann::json gate_json(const Budget &b, const Gate &g)
{
    const bool sized = b.kernels.rejected.empty();
    return {{"verdict", g.verdict},
            {"exit_status", g.exit_status},
            {"reason", g.reason},
            {"minimum_bytes", sized ? nlohmann::json(b.minimum.bytes) : nlohmann::json(nullptr)},
            {"recommended_bytes", sized ? nlohmann::json(b.recommended) : nlohmann::json(nullptr)}};
}

}  // namespace arenascope::planner
