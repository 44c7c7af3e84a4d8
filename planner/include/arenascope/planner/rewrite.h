// arenascope planner: --write-offline-plan, the best plan found written into the model so that
// TFLM uses it (offline_plan.h), with the head and minimum arena before and after.
#pragma once

#include <string>
#include <vector>

#include "arenascope/planner/budget.h"

namespace arenascope::planner {

struct OfflineRewrite {
    Budget before;               // the model as it is (with its own offline plan, if it has one)
    Budget after;                // the written model, read back and planned as TFLM will
    int64_t planned_head = 0;    // the best plan found for the model without an offline plan
    std::vector<uint8_t> bytes;  // the written model; empty when `refused`
    std::string refused;         // why nothing is written: no saving, or a model it cannot be for
    bool no_saving = false;      // refused because no plan makes the arena smaller (the model is fine,
                                 // but for a broken plan of its own, which `refused` then names)
    std::string how;             // how the plan was found and its gap to the lower bound (best_how)
    std::string broken_plan;     // the model's own offline plan is invalid (why): replaced, or named in
                                 // `refused` when nothing is written
};

// Plans `path` (the options as make_budget's) with any offline plan it carries left out, writes
// the best plan found as its offline plan, and plans the result again: `after` is what TFLM does
// with it. A broken offline plan in the model (overlapping, beyond TFLM's int) is replaced too.
// Refused (nothing to write) when TFLM would reject the model, a kernel's scratch is not
// modelled, or the written plan would not make the minimum arena smaller (no_saving: the head,
// or the head but not the arena). Throws ModelError for a model that cannot be read.
OfflineRewrite rewrite_offline_plan(const std::string &path, const std::string &out_label, const Abi &abi,
                                    int margin_pct, bool adapter, const KernelBuild &build, int64_t search_budget);

// What --write-offline-plan prints: head, minimum and recommended arena, before and after.
std::string rewrite_table(const OfflineRewrite &r, const std::string &out_path);

}  // namespace arenascope::planner
