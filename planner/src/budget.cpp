// The budget of one model (budget.h): read, plan, replay TFLM's allocations, and check the plans.
#include "arenascope/planner/budget.h"

#include <algorithm>
#include <stdexcept>

namespace arenascope::planner {

int64_t headroom_pct_hundredths(int64_t headroom, int64_t peak)
{
    if (peak <= 0) return 0;
    // floor((20000 h + p) / 2p): 10000 h / p rounded half up, with a floor division also for a
    // negative headroom (C++'s / truncates toward zero, Python's // floors).
    const int64_t num = 20000 * headroom + peak, den = 2 * peak;
    return num / den - (num % den != 0 && num < 0 ? 1 : 0);
}

std::string scratch_label(int index, const ScratchRequest &request)
{
    return "scratch " + std::to_string(index) + " (op " + std::to_string(request.op) + " " + request.what + ")";
}

namespace {
std::vector<TailRegion> place_tail(const Budget &b, int64_t arena_bytes);  // below
}  // namespace

std::string buffer_name(const Budget &b, const Buffer &buf)
{
    if (buf.tensor >= 0) {
        const std::string &name = b.model.subgraphs[buf.subgraph].tensors[buf.tensor].name;
        return name.empty() ? "(tensor " + std::to_string(buf.tensor) + ")" : name;
    }
    return scratch_label(buf.scratch, b.kernels.requests[buf.scratch]);
}

int64_t shortfall(const Budget &b, const ArenaAtSize &r)
{
    return std::max<int64_t>(b.minimum.bytes - r.arena_bytes, 0);
}

// (TFLM head - lower bound) / TFLM head, percent: the share of the head above the bound.
double fragmentation_pct(const Budget &b)
{
    return b.greedy.head
               ? 100.0 * static_cast<double>(b.greedy.head - b.bound.bytes) / static_cast<double>(b.greedy.head)
               : 0.0;
}

namespace {
// A model with its own offline plan: TFLM places those tensors where it says, and the best plan
// above keeps them there. A rewrite (--write-offline-plan) replaces the plan, so the search also
// runs without it; its plan is kept when it is better and plans the same buffers (it does unless
// variable tensors carry offline offsets: they move between the head and the tail).
void search_without_offline_plan(Budget &b, int64_t search_budget)
{
    if (b.model.offline_offsets.empty()) return;
    Model free = b.model;
    free.offline_offsets.clear();
    const Lifetimes l = build_lifetimes(free, b.kernels.requests);
    const auto &was = b.lifetimes.buffers;
    if (l.buffers.size() != was.size()) return;
    for (size_t i = 0; i < was.size(); ++i)
        if (l.buffers[i].tensor != was[i].tensor || l.buffers[i].scratch != was[i].scratch ||
            l.buffers[i].size != was[i].size || l.buffers[i].first != was[i].first || l.buffers[i].last != was[i].last)
            return;
    const SearchResult s = plan_search(l.buffers, plan_best(l.buffers), b.bound.bytes, search_budget);
    if (s.plan.head >= b.best.head) return;
    b.search = s;
    b.best = s.plan;
    b.best_replaces_offline_plan = true;
}

void check_build(const Abi &abi, const KernelBuild &build)
{
    if (build.set == KernelBuild::Set::CmsisNn && abi.name != "cortex-m")
        throw std::invalid_argument(
            "CMSIS-NN kernels run on a Cortex-M: use --target cortex-m with --kernels cmsis-nn");
}
}  // namespace

std::string best_use(const Budget &b)
{
    if (!b.kernels.unmodelled.empty()) return "without the unmodelled scratch: not usable as an offline plan";
    if (b.best.head >= b.greedy.head) return "no better than TFLM's";
    const std::string what =
        b.best_replaces_offline_plan ? "in place of the model's offline plan" : "as an offline plan";
    if (b.best_minimum >= b.minimum.bytes)
        return "but the minimum arena stays " + std::to_string(b.minimum.bytes) + " B: it is set by " +
               b.arena.steps[b.minimum.binding].what + ", not by the head";
    return "TFLM needs a minimum arena of " + std::to_string(b.best_minimum) + " B instead of " +
           std::to_string(b.minimum.bytes) + " B when the model carries it " + what +
           ": arenascope-plan --write-offline-plan OUT.tflite MODEL";
}

std::string best_how(const Budget &b)
{
    const SearchResult &s = b.search;
    const int64_t gap = b.best.head - b.bound.bytes;
    std::string how = b.best.planner == "search" ? "found by the search" : "best of orderings";
    if (gap == 0) return how + ", at the lower bound";
    how += ", " + std::to_string(gap) + " B above the lower bound";
    if (!s.searched)
        return how + (b.lifetimes.buffers.size() > kSearchMaxBuffers
                          ? " (no search: more than " + std::to_string(kSearchMaxBuffers) + " buffers)"
                          : std::string(" (no search: --search-budget 0)"));
    return how + (s.exhausted ? " (the search tried every placement order: none is lower)"
                              : " (the search stopped after " + std::to_string(s.steps) + " steps, --search-budget)");
}

Budget make_budget(const std::string &path, const Abi &abi, int margin_pct, bool adapter, int64_t arena_size,
                   const KernelBuild &build, int64_t search_budget)
{
    check_build(abi, build);  // before reading the file: a usage error comes first
    return make_budget_for(read_model_file(path), path, abi, margin_pct, adapter, arena_size, build, search_budget);
}

Budget make_budget_for(Model model, const std::string &path, const Abi &abi, int margin_pct, bool adapter,
                       int64_t arena_size, const KernelBuild &build, int64_t search_budget)
{
    check_build(abi, build);
    Budget b;
    b.model_path = path;
    b.abi = abi;
    b.build = build;
    b.margin_pct = margin_pct;
    b.adapter = adapter;
    b.model = std::move(model);
    try {
        b.kernels = predict_kernels(b.model, abi, build);
        b.lifetimes = build_lifetimes(b.model, b.kernels.requests);
        // The model's own offline plan must not overlap: that is the model's fault, not a plan's.
        const auto &buffers = b.lifetimes.buffers;
        std::vector<int64_t> offline;
        for (const Buffer &x : buffers) offline.push_back(x.offline_offset);
        if (const auto [i, j] = shared_bytes(buffers, offline); i >= 0) {
            const Buffer &x = buffers[i], &y = buffers[j];
            throw ModelError("the model's offline plan (metadata 'OfflineMemoryAllocation') puts " + buffer_name(b, x) +
                             " at " + std::to_string(x.offline_offset) + " and " + buffer_name(b, y) + " at " +
                             std::to_string(y.offline_offset) +
                             ": they are live at the same time and share bytes; fix the offline plan");
        }
        b.greedy = plan_tflm_greedy(buffers);
        b.bound = lower_bound(buffers);
        b.search = plan_search(buffers, plan_best(buffers), b.bound.bytes, search_budget);
        b.best = b.search.plan;
        search_without_offline_plan(b, search_budget);
        if (b.greedy.head > 0x7fffffff)
            throw ModelError("the head would be " + std::to_string(b.greedy.head) +
                             " bytes; TFLM's planner holds offsets in an int (at most 2^31-1)");
        b.arena = allocation_steps(b.model, b.lifetimes, b.kernels, abi, b.greedy.head, !adapter);
        b.minimum = minimum_arena(b.arena.steps);
        // The minimum if TFLM used the best plan: the same allocations with the best plan's head
        // (an offline plan adds none: TFLM reads it from the flatbuffer).
        b.best_minimum =
            b.best.head < b.greedy.head
                ? minimum_arena(allocation_steps(b.model, b.lifetimes, b.kernels, abi, b.best.head, !adapter).steps)
                      .bytes
                : b.minimum.bytes;
        // A 32-bit target addresses at most 4 GiB; its size_t cannot even say such an arena.
        if (abi.pointer == 4 && b.minimum.bytes > 0xffffffffLL)
            throw ModelError("the arena would need " + std::to_string(b.minimum.bytes) + " bytes, more than a " +
                             abi.name + " target's 32-bit address space (4 GiB)");
        b.tail = tail_categories(b.arena.steps);
        b.recommended = (b.minimum.bytes * (100 + margin_pct) + 99) / 100;
        b.recommended = (b.recommended + 15) / 16 * 16;
        b.tail_regions = place_tail(b, b.recommended);
        if (arena_size > 0) {
            b.at_size = replay_at_size(b.model, abi, b.arena.steps, arena_size);
            if (b.at_size->fits) b.at_size_regions = place_tail(b, arena_size);
        }
    } catch (const ModelError &e) {
        throw ModelError(path + ": " + e.what());
    }
    for (const Plan *p : {&b.greedy, &b.best}) {
        const std::string err = check_plan(b.lifetimes.buffers, *p);
        if (!err.empty())
            throw std::logic_error(path + ": arenascope-plan bug: its " + p->planner + " plan is invalid: " + err);
    }
    return b;
}

std::vector<TailRegion> tail_regions_at(const std::vector<Step> &steps, const std::vector<int64_t> &offsets)
{
    std::vector<TailRegion> out;
    for (size_t i = 0; i < steps.size() && i < offsets.size(); ++i) {
        const Step &s = steps[i];
        if (s.kind != Step::Kind::Persistent || s.bytes == 0) continue;
        // Kernel data and state are "persistent"; TFLM's own bookkeeping (allocator objects, tensor
        // and node structs, handles) "metadata", as the agent ABI's region kinds say.
        const bool data = s.category == "Persistent buffer data" || s.category == "builtin data" ||
                          s.category == "TfLiteTensor variable buffer data";
        const char *pass = s.op < 0                  ? ""
                           : s.phase == Phase::Parse ? "parse"
                           : s.phase == Phase::Init  ? "init"
                                                     : "prepare";
        out.push_back({offsets[i], s.bytes, data ? "persistent" : "metadata", s.subgraph == 0 ? s.tensor : -1,
                       s.op < 0 ? -1 : s.subgraph, s.op, pass, s.category, s.role, s.what});
    }
    return out;
}

namespace {
std::vector<TailRegion> place_tail(const Budget &b, int64_t arena_bytes)
{
    const Replay at = replay(b.arena.steps, arena_bytes);
    return at.ok ? tail_regions_at(b.arena.steps, at.offsets) : std::vector<TailRegion>{};
}
}  // namespace

}  // namespace arenascope::planner
