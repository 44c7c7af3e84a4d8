// arenascope planner: the budget of one model (what it computes: plans, the arena TFLM lays out,
// the tail, the recommendation). Its writers, one output format each, are writers.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "arenascope/planner/arena.h"
#include "arenascope/planner/kernels.h"
#include "arenascope/planner/model.h"
#include "arenascope/planner/outcome.h"
#include "arenascope/planner/plan.h"

namespace arenascope::planner {

// The constants and formats the planner's snapshot shares with the GDB plugin's, each defined
// once per language: the plugin's are in gdbplugin/arenascope_plugin/analyse/figures.py and
// decode/tflmvalue.py, and both are checked against tests/fixtures/shared_definitions_golden.json.
//
// The stack rule: the room from the stack's top to the arena's end must be at least this many
// times the stack's peak. A snapshot carries it (stack.rule_factor): the viewer reads it there.
inline constexpr double kStackRuleFactor = 1.5;
// The snapshot's headroom_pct: headroom as a percentage of peak, rounded half up to 0.01 (0 when
// peak is 0), returned in hundredths of a percent so that both languages round alike.
int64_t headroom_pct_hundredths(int64_t headroom, int64_t peak);
// A scratch buffer's label, in the JSON's buffers[].name, the table and the snapshot:
// "scratch K (op N WHAT)", K its index in TFLM's request order, N the operator that asked.
std::string scratch_label(int index, const ScratchRequest &request);

// A persistent allocation where TFLM puts it in the recommended arena (offset from the arena
// start, the arena's end 16-byte aligned): the tail as the snapshot and --header show it.
struct TailRegion {
    int64_t offset = 0;
    int64_t size = 0;
    // kind, phase and category are static text (views of string literals, as Step's category).
    std::string_view kind;  // "persistent" (kernel data, builtin options, variable tensors) or "metadata"
    int tensor = -1;        // a variable tensor of subgraph 0: its index
    int subgraph = -1;      // a kernel's request: its subgraph and operator, and the pass that made it
    int op = -1;
    std::string_view phase;     // "parse", "init", "prepare", or "" for the framework's own requests
    std::string_view category;  // as in Budget::tail
    std::string role;           // what it holds, one of kTailRoles (arena.h): for tools to match on
    std::string what;           // its label, for people
};
// Every persistent step of `steps` at its offset (`offsets`: a replay that fitted, where every
// persistent step landed) as a TailRegion, in TFLM's order.
std::vector<TailRegion> tail_regions_at(const std::vector<Step> &steps, const std::vector<int64_t> &offsets);

struct Budget {
    std::string model_path;
    Model model;
    KernelPrediction kernels;  // what the kernels allocate, their scratch requests, what is not modelled
    Lifetimes lifetimes;
    Plan greedy;
    Plan best;            // the best plan found: best of orderings, then the search (search.plan)
    SearchResult search;  // how the search went (its plan is `best`)
    // The model has an offline plan and `best` is the better plan searched without it (what
    // --write-offline-plan writes in its place).
    bool best_replaces_offline_plan = false;
    int64_t best_minimum = 0;  // the minimum arena if TFLM used `best` (= minimum.bytes when no better)
    LowerBound bound;
    Abi abi;
    KernelBuild build;                        // the kernels the firmware links (reference or CMSIS-NN for a CPU)
    ArenaModel arena;                         // TFLM's allocation sequence for this model and ABI
    MinimumArena minimum;                     // the smallest arena AllocateTensors succeeds in
    std::vector<TailCategory> tail;           // the persistent tail's requests by category
    int margin_pct = 10;                      // added to the minimum for the recommendation
    bool adapter = false;                     // the planner outside the arena (arenascope's TFLM adapter)
    int64_t recommended = 0;                  // minimum + margin, rounded up to 16 bytes
    std::vector<TailRegion> tail_regions;     // every persistent request where TFLM puts it in `recommended` bytes
    std::optional<ArenaAtSize> at_size;       // --arena-size N: TFLM in an arena of N bytes
    std::vector<TailRegion> at_size_regions;  // ... when it fits: every persistent request where TFLM puts it
    // The minimum is exact when every kernel's arena use is modelled; else it is a floor.
    bool minimum_exact() const
    {
        return kernels.unmodelled_data.empty() && kernels.unmodelled.empty() && kernels.rejected.empty();
    }
};

// Read, plan and check a model. Throws ModelError (bad model) or std::logic_error (a plan
// failed its check: a planner bug, never expected). arena_size > 0: also replay TFLM in an
// arena of that many bytes (Budget::at_size). `build`: the kernels the firmware links; CMSIS-NN
// goes with the cortex-m ABI only (std::invalid_argument else).
// search_budget: steps of work the search over placement orders may spend (plan.h
// plan_search; 0: best of orderings only).
Budget make_budget(const std::string &path, const Abi &abi = abi_named("cortex-m"), int margin_pct = 10,
                   bool adapter = false, int64_t arena_size = 0, const KernelBuild &build = {},
                   int64_t search_budget = kSearchDefaultBudget);
// The same for a model already read; `path` names it in messages.
Budget make_budget_for(Model model, const std::string &path, const Abi &abi = abi_named("cortex-m"),
                       int margin_pct = 10, bool adapter = false, int64_t arena_size = 0, const KernelBuild &build = {},
                       int64_t search_budget = kSearchDefaultBudget);

// How the best plan was found and how far it is from the lower bound, in words (the table's).
std::string best_how(const Budget &b);
// What the best plan is worth, in words: the minimum arena it gives and how to get it, or why not.
std::string best_use(const Budget &b);

// A head buffer's name: its tensor's (or "(tensor N)" when the model gives none), or a scratch
// buffer's label (scratch_label).
std::string buffer_name(const Budget &b, const Buffer &buf);
// --arena-size N: the smallest arena minus N, when N is below it (else 0).
int64_t shortfall(const Budget &b, const ArenaAtSize &r);
// (TFLM head - lower bound) / TFLM head, percent: the share of the head above the bound.
double fragmentation_pct(const Budget &b);

}  // namespace arenascope::planner
