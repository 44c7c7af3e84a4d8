// Tensor lifetimes as TFLM's AllocationInfoBuilder marks them
// (tensorflow/lite/micro/micro_allocation_info.cc, MarkAllocationLifetimes and
// MarkSubgraphLifetimesIfNecessary). Rules, each from that file:
//  - every tensor of every subgraph gets an entry; needs_allocating = no data in the
//    flatbuffer && !is_variable && bytes != 0 (InitializeAllocationInfo);
//  - UpdateFirstCreated(scope) sets first only while it is still unset (-1): a tensor written
//    by two operators, or a subgraph marked twice (called by two control-flow operators), lives
//    from its first creation; UpdateLastUsed sets last every time;
//  - a subgraph's inputs are created and last used at the current scope;
//  - each operator opens a new scope; its outputs are created there; control-flow operators
//    then mark their callee subgraphs, each in a further new scope; the operator's inputs
//    (index >= 0) and outputs are last used at the scope reached after the callees;
//  - its scratch buffers are created at the operator's own scope and last used at that scope;
//  - after the last operator, the subgraph's outputs are created (if no operator wrote them)
//    and last used at the final scope.
#include <algorithm>
#include <string>

#include "arenascope/planner/limits.h"
#include "arenascope/planner/plan.h"

namespace arenascope::planner {

const char *placement_name(Placement p)
{
    switch (p) {
    case Placement::Planned: return "arena";
    case Placement::Persistent: return "persistent";
    case Placement::Constant: return "flash";
    case Placement::Empty: return "empty";
    case Placement::Unallocated: return "unallocated";
    }
    return "?";
}

namespace {

using Life = std::pair<int, int>;  // (first, last) scope

void created(Life &l, int at)
{
    if (l.first == -1) l.first = at;
}
void used(Life &l, int at)
{
    l.second = at;
}

std::string op_where(int s, const Operator &op)
{
    return "subgraph " + std::to_string(s) + " operator " + std::to_string(op.index) + " (" + op.op_name + ")";
}

// The walk of one subgraph, relative to the scope it is entered at (entry = 0), its callees
// standing for the scopes they span. TFLM walks a subgraph again at every call (MarkAllocationLifetimes
// via MarkSubgraphLifetimesIfNecessary), and every walk of it makes the same UpdateFirstCreated /
// UpdateLastUsed calls at the same offsets from its entry and advances the scope by the same span. So
// with the subgraph's first and last entry scopes: first = first entry + first relative creation (the
// first walk sets it, UpdateFirstCreated keeps it), last = last entry + last relative use (the last walk
// sets it last, UpdateLastUsed overwrites), and an operator's scope is the last walk's.
struct Relative {
    std::vector<Life> life;        // per tensor
    std::vector<int64_t> op;       // per operator
    std::vector<Life> scratch;     // per scratch request of this subgraph (in `scratch_ids` order)
    std::vector<int> scratch_ids;  // indices into the scratch requests
    struct Call {
        int callee;
        int64_t at;  // relative scope the callee is entered at
    };
    std::vector<Call> calls;
    int64_t span = 0;  // scopes the walk advances
};

[[noreturn]] void too_many_scopes(int s, int64_t span)
{
    throw ModelError("subgraph " + std::to_string(s) + " spans more than " + std::to_string(span - 1) +
                     " allocation scopes with its calls: beyond arenascope-plan's limit of " +
                     std::to_string(kMaxScopes) +
                     " (TFLM counts scopes in an int, micro_allocation_info.cc allocation_scope_count_, and walks a "
                     "called subgraph again at every call; docs/arena-budget.md, Limits and scale)");
}

// Mirrors AllocationInfoBuilder::MarkAllocationLifetimes (see the rules at the top) for one
// subgraph entered at scope 0, with spans[] known for every callee.
Relative walk(const Model &model, int s, const std::vector<int64_t> &spans,
              const std::vector<std::vector<int>> &scratch_of_op)
{
    const Subgraph &sg = model.subgraphs[s];
    Relative r;
    r.life.assign(sg.tensors.size(), {-1, -1});
    r.op.assign(sg.operators.size(), -1);
    int64_t scope = 0;
    // Relative scopes fit an int: each stays below kMaxScopes (checked as they grow).
    auto at = [&] { return static_cast<int>(scope); };
    for (int32_t t : sg.inputs) {
        created(r.life[t], at());
        used(r.life[t], at());
    }
    for (size_t i = 0; i < sg.operators.size(); ++i) {
        const Operator &op = sg.operators[i];
        if (++scope > kMaxScopes) too_many_scopes(s, scope);
        r.op[i] = scope;
        for (int32_t t : op.outputs) created(r.life[t], at());
        const int start = at();
        for (int callee : op.called_subgraphs) {
            ++scope;
            r.calls.push_back({callee, scope});
            scope += spans[callee];
            if (scope > kMaxScopes) too_many_scopes(s, scope);
        }
        for (int32_t t : op.inputs)
            if (t >= 0) used(r.life[t], at());
        for (int32_t t : op.outputs) used(r.life[t], at());
        for (int k : scratch_of_op[i]) {
            r.scratch_ids.push_back(k);
            r.scratch.push_back({start, at()});
        }
    }
    for (int32_t t : sg.outputs) {
        created(r.life[t], at());
        used(r.life[t], at());
    }
    r.span = scope;
    return r;
}

// Subgraphs reachable from subgraph 0, callees before callers (a post-order of the call graph),
// by an iterative depth-first search; a call back into a subgraph still being walked is a cycle,
// which TFLM would recurse into forever.
std::vector<int> callees_first(const Model &model)
{
    const size_t n = model.subgraphs.size();
    std::vector<int> order, color(n, 0);  // 0 unseen, 1 on the path, 2 done
    struct Frame {
        int s;
        size_t op = 0, call = 0;
    };
    std::vector<Frame> path{{0}};
    color[0] = 1;
    while (!path.empty()) {
        // `f` refers into `path`: every use comes before `path` grows or shrinks (pop_back and
        // push_back end their iteration).
        Frame &f = path.back();
        const auto &ops = model.subgraphs[f.s].operators;
        if (f.op == ops.size()) {
            color[f.s] = 2;
            order.push_back(f.s);
            path.pop_back();
            continue;
        }
        const Operator &op = ops[f.op];
        if (f.call == op.called_subgraphs.size()) {
            ++f.op, f.call = 0;
            continue;
        }
        const int c = op.called_subgraphs[f.call++];
        if (color[c] == 2) continue;
        if (color[c] == 1) {
            std::string cycle;
            size_t from = 0;
            while (path[from].s != c) ++from;
            for (size_t k = from; k < path.size(); ++k) {
                const Frame &p = path[k];
                cycle += op_where(p.s, model.subgraphs[p.s].operators[p.op]) + " calls ";
            }
            throw ModelError(op_where(f.s, op) + " calls subgraph " + std::to_string(c) +
                             ": the subgraphs call each other in a cycle (" + cycle + "subgraph " + std::to_string(c) +
                             "), which TFLM would walk forever (micro_allocation_info.cc "
                             "MarkSubgraphLifetimesIfNecessary)");
        }
        color[c] = 1;
        path.push_back({c});
    }
    return order;
}

// What TFLM's walk from subgraph 0 leaves: every tensor's and scratch buffer's (first, last) and
// every operator's scope, -1 where the walk never reaches.
struct Marks {
    std::vector<std::vector<Life>> life;  // [s][t]
    std::vector<Life> scratch_life;
    std::vector<std::vector<int>> op_scope;
    int last_scope = 0;
};

// Each reachable subgraph is walked once, callees first (so that their spans are known); then
// its first and last entry scopes are propagated from subgraph 0 over the call graph, callers
// first: entering caller p at scope e enters callee c at e + (the call's relative scope), so
// c's first entry is the least of (first entry of p + that offset) over its call sites, and its
// last entry the greatest of (last entry of p + offset). Linear in the model, however often a
// subgraph is called; tests/planner/scale_test.cpp checks it against TFLM's re-walk.
Marks mark_lifetimes(const Model &model, const std::vector<ScratchRequest> &scratch)
{
    const size_t n = model.subgraphs.size();
    Marks m;
    m.scratch_life.assign(scratch.size(), {-1, -1});
    for (const Subgraph &sg : model.subgraphs) {
        m.life.emplace_back(sg.tensors.size(), Life{-1, -1});
        m.op_scope.emplace_back(sg.operators.size(), -1);
    }
    // The scratch requests of each operator, in request order (TFLM scans them all at every
    // operator: O(operators x requests)).
    std::vector<std::vector<std::vector<int>>> scratch_of_op(n);
    for (size_t s = 0; s < n; ++s) scratch_of_op[s].resize(model.subgraphs[s].operators.size());
    for (size_t k = 0; k < scratch.size(); ++k) {
        const ScratchRequest &r = scratch[k];
        if (r.subgraph >= 0 && static_cast<size_t>(r.subgraph) < n && r.op >= 0 &&
            static_cast<size_t>(r.op) < scratch_of_op[r.subgraph].size())
            scratch_of_op[r.subgraph][r.op].push_back(static_cast<int>(k));
    }

    const std::vector<int> order = callees_first(model);
    std::vector<int64_t> spans(n, 0);
    std::vector<Relative> rel(n);
    for (int s : order) {
        rel[s] = walk(model, s, spans, scratch_of_op[s]);
        spans[s] = rel[s].span;
    }
    // Entry scopes and call depth, callers first (reverse post-order is a topological order).
    constexpr int64_t kUnset = -1;
    std::vector<int64_t> first_entry(n, kUnset), last_entry(n, kUnset), depth(n, 0);
    first_entry[0] = last_entry[0] = 0;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        const int s = *it;
        for (const Relative::Call &c : rel[s].calls) {
            const int64_t first = first_entry[s] + c.at, last = last_entry[s] + c.at;
            if (first_entry[c.callee] == kUnset || first < first_entry[c.callee]) first_entry[c.callee] = first;
            last_entry[c.callee] = std::max(last_entry[c.callee], last);
            if (depth[s] + 1 > depth[c.callee]) {
                depth[c.callee] = depth[s] + 1;
                if (depth[c.callee] > kMaxCallDepth)
                    throw ModelError("subgraph " + std::to_string(c.callee) + " is called at control-flow depth " +
                                     std::to_string(depth[c.callee]) + " (through subgraph " + std::to_string(s) +
                                     "): more than arenascope-plan's limit of " + std::to_string(kMaxCallDepth) +
                                     " nested calls (TFLM recurses at every level; docs/arena-budget.md, Limits "
                                     "and scale)");
            }
        }
    }
    // Every scope is at most subgraph 0's span, which walk() kept within kMaxScopes.
    auto absolute = [](int64_t entry, int relative) { return relative < 0 ? -1 : static_cast<int>(entry + relative); };
    for (int s : order) {
        const Relative &r = rel[s];
        for (size_t t = 0; t < r.life.size(); ++t)
            m.life[s][t] = {absolute(first_entry[s], r.life[t].first), absolute(last_entry[s], r.life[t].second)};
        for (size_t i = 0; i < r.op.size(); ++i) m.op_scope[s][i] = static_cast<int>(last_entry[s] + r.op[i]);
        for (size_t j = 0; j < r.scratch_ids.size(); ++j)
            m.scratch_life[r.scratch_ids[j]] = {absolute(first_entry[s], r.scratch[j].first),
                                                absolute(last_entry[s], r.scratch[j].second)};
    }
    m.last_scope = static_cast<int>(spans[0]);
    return m;
}

int64_t align16(int64_t n)
{
    return (n + 15) / 16 * 16;
}

// ValidateSubgraph: intermediates must have zero bytes.
void check_intermediates(const Model &model)
{
    for (size_t s = 0; s < model.subgraphs.size(); ++s)
        for (const Operator &op : model.subgraphs[s].operators)
            for (int32_t t : op.intermediates) {
                const Tensor &tensor = model.subgraphs[s].tensors[t];
                if (tensor.bytes != 0)
                    throw ModelError("subgraph " + std::to_string(s) + " operator " + std::to_string(op.index) + " (" +
                                     op.op_name + ") has intermediate tensor " + std::to_string(t) + " '" +
                                     tensor.name + "' of " + std::to_string(tensor.bytes) +
                                     " bytes; TFLM supports only empty intermediates (micro_allocation_info.cc)");
            }
}

// Where TFLM puts a tensor. needs: needs_allocating (below); offline: its offline offset for the
// planner, variable_offline for AllocateVariables (-1: none).
Placement placement_of(const Tensor &tensor, bool needs, int32_t offline, int32_t variable_offline)
{
    Placement p = Placement::Planned;
    if (tensor.has_data)
        p = Placement::Constant;
    else if (tensor.bytes == 0 && !needs)
        p = Placement::Empty;
    // AllocateVariables: a variable tensor takes tail (persistent) bytes unless its offline
    // offset is set; then the planner places it in the head (checked on real TFLM, docs/
    // offline-plan.md). Where the two readings differ (subgraphs after the first) it can get
    // both or neither.
    else if (tensor.is_variable)
        p = variable_offline < 0 ? Placement::Persistent : offline >= 0 ? Placement::Planned : Placement::Unallocated;
    return p;
}

// A planned tensor's size, aligned as the planner takes it; throws when TFLM's int cannot hold it.
int64_t planned_size(const std::string &label, const Tensor &tensor, int32_t offline)
{
    // GreedyMemoryPlanner::AddBuffer takes the aligned size as an int, and adds an offline offset
    // to it in int (greedy_memory_planner.cc GetMaximumMemorySize: offset + size).
    const int64_t size = align16(tensor.bytes);
    if (size > kMaxPlannerInt)
        throw ModelError(label + " needs " + std::to_string(tensor.bytes) + " bytes, " + std::to_string(size) +
                         " aligned to 16: more than TFLM's planner holds in an int (at most 2^31-1)");
    if (offline >= 0 && offline + size > kMaxPlannerInt)
        throw ModelError(label + " has the offline offset " + std::to_string(offline) + " and " + std::to_string(size) +
                         " bytes: it would end at " + std::to_string(offline + size) +
                         ", beyond the 2^31-1 TFLM's planner holds in an int (metadata "
                         "'OfflineMemoryAllocation')");
    return size;
}

// The scratch buffers the kernels request, after the tensors (ids from *id on).
void add_scratch_buffers(Lifetimes &out, const std::vector<ScratchRequest> &scratch, const Marks &m, int *id)
{
    for (size_t k = 0; k < scratch.size(); ++k) {
        auto [first, last] = m.scratch_life[k];
        // RequestScratchBufferInArena takes a size_t, the planner an int (AddBuffer).
        if (scratch[k].bytes < 0 || scratch[k].bytes > kMaxPlannerInt - 15)  // align16(bytes) > 2^31-1
            throw ModelError("subgraph " + std::to_string(scratch[k].subgraph) + " operator " +
                             std::to_string(scratch[k].op) + " requests a scratch buffer (" + scratch[k].what +
                             ") of " + std::to_string(scratch[k].bytes) +
                             " bytes: its size overflows TFLM's arithmetic (the planner holds sizes in an int, at "
                             "most 2^31-1)");
        out.buffers.push_back(Buffer{(*id)++, scratch[k].subgraph, -1, static_cast<int>(k), scratch[k].bytes,
                                     align16(scratch[k].bytes), first, last, -1});
    }
}

}  // namespace

Lifetimes build_lifetimes(const Model &model, const std::vector<ScratchRequest> &scratch)
{
    Lifetimes out;
    check_intermediates(model);
    Marks m = mark_lifetimes(model, scratch);

    int id = 0;
    size_t global = 0;  // index over all tensors of all subgraphs
    for (size_t s = 0; s < model.subgraphs.size(); ++s) {
        const Subgraph &sg = model.subgraphs[s];
        out.placement.emplace_back();
        for (size_t t = 0; t < sg.tensors.size(); ++t, ++global) {
            const Tensor &tensor = sg.tensors[t];
            if (tensor.bytes < 0)
                throw ModelError("subgraph " + std::to_string(s) + " tensor " + std::to_string(t) + " '" + tensor.name +
                                 "' has type " + type_name(tensor.type) +
                                 ", which TFLM cannot size (TfLiteTypeSizeOf, memory_helpers.cc): "
                                 "AllocateTensors fails on this model");
            // InitializeAllocationInfo reads the offline plan at the tensor's index over all
            // subgraphs (offline_offsets[offline_index++]); AllocateVariables (micro_allocator.cc)
            // at its index within its subgraph (offline_planner_offsets[i]). The same for
            // subgraph 0; TFLM 90b983c2 as it is for the others.
            const int32_t offline = model.offline_offsets.empty() ? -1 : model.offline_offsets[global];
            const int32_t variable_offline = model.offline_offsets.empty() ? -1 : model.offline_offsets[t];
            // needs_allocating: no data, not a variable, not empty; and, overriding that, a variable
            // with an offline offset ("so they can get an offline offset and be handled offline").
            const bool needs =
                (!tensor.has_data && !tensor.is_variable && tensor.bytes != 0) || (tensor.is_variable && offline >= 0);
            const Placement p = placement_of(tensor, needs, offline, variable_offline);
            out.placement.back().push_back(p);
            const std::string label = "subgraph " + std::to_string(s) + " tensor " + std::to_string(t) +
                                      (tensor.name.empty() ? std::string() : " '" + tensor.name + "'");
            if (p == Placement::Unallocated)
                out.warnings.push_back(label +
                                       " is a variable tensor that TFLM neither allocates in the tail (its "
                                       "offline offset at index " +
                                       std::to_string(t) + " is " + std::to_string(variable_offline) +
                                       ") nor plans (at index " + std::to_string(global) +
                                       " over all subgraphs: -1), so its data pointer stays null; give it one "
                                       "offset at both");
            if (tensor.is_variable && needs && p == Placement::Persistent)
                out.warnings.push_back(label +
                                       " is a variable tensor that TFLM allocates twice: in the tail (its "
                                       "offline offset at index " +
                                       std::to_string(t) + " is -1) and in the head (at index " +
                                       std::to_string(global) + " over all subgraphs: " + std::to_string(offline) +
                                       "), which wins; give it one offset at both");
            if (!needs) continue;
            auto [first, last] = m.life[s][t];
            if (first < 0 && last < 0)
                out.warnings.push_back(label +
                                       " is never produced nor consumed; TFLM still plans it, with lifetime -1..-1");
            else if (first < 0 && !tensor.is_variable)  // a variable holds state: read before it is written
                out.warnings.push_back(label + " is read by an operator but produced by none (and is not a subgraph "
                                               "input); TFLM plans it with first use -1");
            const int64_t size = planned_size(label, tensor, offline);
            out.buffers.push_back(
                Buffer{id++, static_cast<int>(s), static_cast<int>(t), -1, tensor.bytes, size, first, last, offline});
        }
    }
    add_scratch_buffers(out, scratch, m, &id);
    out.op_scope = std::move(m.op_scope);
    out.last_scope = m.last_scope;
    return out;
}

}  // namespace arenascope::planner
