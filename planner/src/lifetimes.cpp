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

struct Marker {
    const Model &model;
    const std::vector<ScratchRequest> &scratch;
    std::vector<std::vector<std::pair<int, int>>> life;  // [s][t] = (first, last)
    std::vector<std::pair<int, int>> scratch_life;
    std::vector<std::vector<int>> op_scope;
    int scope = 0;
    int depth = 0;

    static void created(std::pair<int, int> &l, int at)
    {
        if (l.first == -1) l.first = at;
    }
    static void used(std::pair<int, int> &l, int at) { l.second = at; }

    void mark(int s)
    {
        ++depth;
        const Subgraph &sg = model.subgraphs[s];
        for (int32_t t : sg.inputs) {
            created(life[s][t], scope);
            used(life[s][t], scope);
        }
        for (size_t i = 0; i < sg.operators.size(); ++i) {
            const Operator &op = sg.operators[i];
            ++scope;
            op_scope[s][i] = scope;
            for (int32_t t : op.outputs) created(life[s][t], scope);
            const int start = scope;
            for (int callee : op.called_subgraphs) {
                // A subgraph that calls itself (directly or not) would recurse forever in TFLM too.
                if (depth >= 64)
                    throw ModelError("subgraph " + std::to_string(s) + " operator " + std::to_string(i) + " (" +
                                     op.op_name + ") calls subgraph " + std::to_string(callee) +
                                     " at control-flow depth 64: the subgraphs call each other in a cycle");
                ++scope;
                mark(callee);
            }
            for (int32_t t : op.inputs)
                if (t >= 0) used(life[s][t], scope);
            for (int32_t t : op.outputs) used(life[s][t], scope);
            for (size_t k = 0; k < scratch.size(); ++k)
                if (scratch[k].subgraph == s && scratch[k].op == static_cast<int>(i)) {
                    created(scratch_life[k], start);
                    used(scratch_life[k], scope);
                }
        }
        for (int32_t t : sg.outputs) {
            created(life[s][t], scope);
            used(life[s][t], scope);
        }
        --depth;
    }
};

int64_t align16(int64_t n)
{
    return (n + 15) / 16 * 16;
}

}  // namespace

Lifetimes build_lifetimes(const Model &model, const std::vector<ScratchRequest> &scratch)
{
    Lifetimes out;
    Marker m{model, scratch, {}, std::vector<std::pair<int, int>>(scratch.size(), {-1, -1}), {}, 0, 0};
    for (const Subgraph &sg : model.subgraphs) {
        m.life.emplace_back(sg.tensors.size(), std::make_pair(-1, -1));
        m.op_scope.emplace_back(sg.operators.size(), -1);
    }
    // ValidateSubgraph: intermediates must have zero bytes.
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
    m.mark(0);

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
            // The offline plan is indexed by the tensor's index within its subgraph
            // (InitializeAllocationInfo: offline_offsets[i]), exactly as TFLM does.
            const int32_t offline = model.offline_offsets.empty() ? -1 : model.offline_offsets[t];
            const bool needs = !tensor.has_data && !tensor.is_variable && tensor.bytes != 0;
            Placement p = Placement::Planned;
            if (tensor.has_data)
                p = Placement::Constant;
            else if (tensor.bytes == 0)
                p = Placement::Empty;
            // micro_allocator.cc AllocateVariables: a variable tensor takes tail (persistent) bytes
            // unless the offline plan gives it an offset; then TFLM allocates it nowhere (it is not
            // planned either: needs_allocating excludes variables) and its data pointer stays null.
            else if (tensor.is_variable)
                p = offline >= 0 ? Placement::Unallocated : Placement::Persistent;
            out.placement.back().push_back(p);
            const std::string label = "subgraph " + std::to_string(s) + " tensor " + std::to_string(t) +
                                      (tensor.name.empty() ? std::string() : " '" + tensor.name + "'");
            if (p == Placement::Unallocated)
                out.warnings.push_back(label + " is a variable tensor with an offline offset (" +
                                       std::to_string(offline) +
                                       "): TFLM neither allocates it in the tail nor plans it (micro_allocator.cc "
                                       "AllocateVariables), so its data pointer stays null; give it offset -1");
            if (!needs) continue;
            auto [first, last] = m.life[s][t];
            if (first < 0 && last < 0)
                out.warnings.push_back(label +
                                       " is never produced nor consumed; TFLM still plans it, with lifetime -1..-1");
            else if (first < 0)
                out.warnings.push_back(label + " is read by an operator but produced by none (and is not a subgraph "
                                               "input); TFLM plans it with first use -1");
            out.buffers.push_back(Buffer{id++, static_cast<int>(s), static_cast<int>(t), -1, tensor.bytes,
                                         align16(tensor.bytes), first, last, offline});
        }
    }
    for (size_t k = 0; k < scratch.size(); ++k) {
        auto [first, last] = m.scratch_life[k];
        out.buffers.push_back(Buffer{id++, scratch[k].subgraph, -1, static_cast<int>(k), scratch[k].bytes,
                                     align16(scratch[k].bytes), first, last, -1});
    }
    out.op_scope = std::move(m.op_scope);
    out.last_scope = m.scope;
    return out;
}

}  // namespace arenascope::planner
