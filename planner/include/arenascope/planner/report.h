// arenascope planner: the budget of one model, as a table for people and JSON for the plugin.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "arenascope/planner/model.h"
#include "arenascope/planner/plan.h"
#include "arenascope/planner/tail.h"

namespace arenascope::planner {

struct Budget {
  std::string model_path;
  Model model;
  std::vector<ScratchRequest> scratch;
  std::vector<std::string> unmodelled;  // "subgraph 0 op 3 (SVDF)": kernels whose scratch is not predicted
  std::vector<std::string> rejected;    // what TFLM's kernels would refuse in Prepare
  Lifetimes lifetimes;
  Plan greedy;
  Plan best;
  LowerBound bound;
  Abi abi;
  std::vector<TailPart> tail;  // known persistent parts (a floor of the tail)
  int64_t tail_known = 0;      // their sum, bytes
};

// Read, plan and check a model. Throws ModelError (bad model) or std::logic_error (a plan
// failed its check: a planner bug, never expected).
Budget make_budget(const std::string& path, const Abi& abi = abi_named("cortex-m"));

// JSON document (schema: docs/arena-budget.md, "JSON output").
nlohmann::json budget_json(const Budget& b);
// The human table.
std::string budget_table(const Budget& b);
// A C header for firmware (--header): the head plan as arenascope_region_t entries (the agent's
// ABI, target_agent/include/arenascope/agent.h) in planner id order, and the figures as macros.
// Throws ModelError when a value does not fit the region fields (id > 0xFFFE, scope > 32767).
std::string budget_header(const Budget& b);

}  // namespace arenascope::planner
