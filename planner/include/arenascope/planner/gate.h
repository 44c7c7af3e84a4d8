// arenascope-plan's verdict for CI (issue 38, item 3): one exit status and the first lines of the
// table, from what the replay found. The exit statuses (docs/arena-budget.md, "Exit status"):
//   0  no arena size given, or the model fits the arena given (one or both buffers)
//   1  TFLM rejects the model whatever the size (also: unreadable model, unwritable output)
//   4  the arena given is too small: AllocateTensors fails and returns kTfLiteError
//   5  the arena given is too small and TFLM does not return: it crashes, hangs (TFLITE_ABORT on a
//      board) or goes on with memory it corrupted (outcome.h)
// (2 is bad usage and 3 --write-offline-plan's "no saving": main.cpp.) --json carries the same as
// "gate".
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "arenascope/planner/budget.h"
#include "arenascope/planner/two_arena.h"

namespace arenascope::planner {

constexpr int kExitFits = 0;
constexpr int kExitRejected = 1;
constexpr int kExitDoesNotFit = 4;
constexpr int kExitCrashOrHang = 5;

struct Gate {
    int exit_status = kExitFits;
    std::string verdict;  // "FITS", "DOES NOT FIT", "CRASH", "HANG", "UNKNOWN", "REJECTED", "NO SIZE GIVEN"
    std::string reason;   // one sentence: what happens and what to do
};

// The verdict for b's --arena-size (b.at_size), or for the two buffers of `two` when given.
Gate gate(const Budget &b, const TwoArenaBudget *two = nullptr);
// The table's first lines: the verdict, the minimum arena and the recommended size.
std::string gate_lines(const Budget &b, const Gate &g);
// --json's "gate": {"verdict", "exit_status", "reason", "minimum_bytes", "recommended_bytes"}.
nlohmann::json gate_json(const Budget &b, const Gate &g);

}  // namespace arenascope::planner
