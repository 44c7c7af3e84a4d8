// The budget as JSON (writers.h budget_json: arenascope-plan --json, schema kPlanSchema,
// docs/planner-schema.json), for the GDB plugin and tools.
#include <algorithm>

#include "arenascope/planner/gate.h"
#include "arenascope/planner/writers.h"

namespace arenascope::planner {

namespace {
using Row = StreamedJson::Row;

// TFLM's allocation sequence as the replay runs it (arena.h allocation_steps), for tools that
// re-enact it, such as the demo's TFLM stand-in firmware (examples/tflm_standin/).
nlohmann::json steps_json(StreamedJson &doc, const std::vector<Step> &steps)
{
    return doc.rows(steps.size(),
                    {"kind", "phase", "bytes", "align", "count", "fatal", "subgraph", "operator", "tensor", "category",
                     "role", "what", "source"},
                    [&steps](size_t i, Row &row) {
                        const Step &s = steps[i];
                        const char *kind = s.kind == Step::Kind::Persistent     ? "persistent"
                                           : s.kind == Step::Kind::Temp         ? "temp"
                                           : s.kind == Step::Kind::ResetTemp    ? "reset-temp"
                                           : s.kind == Step::Kind::ResizeHead   ? "resize-head"
                                           : s.kind == Step::Kind::PlannerArena ? "planner-arrays"
                                                                                : "reserve-head";
                        row[0] = std::string_view(kind);
                        row[1] = std::string_view(phase_name(s.phase));
                        row[2] = s.bytes, row[3] = s.align, row[4] = s.count;
                        row[5] = s.fatal;
                        row[6] = int64_t{s.subgraph}, row[7] = int64_t{s.op}, row[8] = int64_t{s.tensor};
                        row[9] = std::string_view(s.category);
                        row[10] = s.role.empty() ? StreamedJson::Value(nullptr) : std::string_view(s.role);
                        row[11] = std::string_view(s.what);
                        row[12] = std::string_view(s.source);
                    });
}
}  // namespace

namespace {
nlohmann::json regions_json(StreamedJson &doc, const std::vector<TailRegion> &regions)
{
    return doc.rows(regions.size(),
                    {"offset", "size", "kind", "tensor", "subgraph", "operator", "phase", "category", "role", "what"},
                    [&regions](size_t i, Row &row) {
                        const TailRegion &t = regions[i];
                        row[0] = t.offset, row[1] = t.size;
                        row[2] = std::string_view(t.kind);
                        row[3] = int64_t{t.tensor}, row[4] = int64_t{t.subgraph}, row[5] = int64_t{t.op};
                        row[6] = std::string_view(t.phase);
                        row[7] = std::string_view(t.category);
                        row[8] = std::string_view(t.role);
                        row[9] = std::string_view(t.what);
                    });
}

// --arena-size N as JSON ("replay", docs/arena-budget.md).
nlohmann::json replay_json(StreamedJson &doc, const Budget &b, const ArenaAtSize &r)
{
    using nlohmann::json;
    json failed = nullptr;
    if (r.failed) {
        const Step &s = b.arena.steps[r.failure.step];
        failed = {{"step", r.failure.step},
                  {"phase", phase_name(s.phase)},
                  {"kind", r.failure.kind},
                  {"what", s.what},
                  {"category", s.category},
                  {"role", s.role.empty() ? json(nullptr) : json(s.role)},
                  {"source", s.source},
                  {"bytes", r.failure.bytes},
                  {"align", r.failure.align},
                  {"available", r.failure.available},
                  {"missing", r.failure.missing},
                  {"message", r.failure.message.empty() ? json(nullptr) : json(r.failure.message)}};
    }
    std::vector<size_t> persistent;  // the steps that landed
    for (size_t i = 0; i < r.offsets.size(); ++i)
        if (r.offsets[i] >= 0) persistent.push_back(i);
    json made = doc.array(persistent.size(), [&b, &r, persistent](size_t k) -> json {
        const size_t i = persistent[k];
        return {{"step", i},
                {"offset", r.offsets[i]},
                {"size", b.arena.steps[i].bytes},
                {"category", b.arena.steps[i].category},
                {"role", b.arena.steps[i].role},
                {"what", b.arena.steps[i].what}};
    });
    const Step &stop = b.arena.steps[r.outcome.stop];
    return {{"arena_bytes", r.arena_bytes},
            {"fits", r.fits},
            {"exact", b.minimum_exact()},
            {"failed", failed},
            {"state", {{"head", r.state.head}, {"temp", r.state.temp}, {"tail", r.state.tail}}},
            {"persistent", made},
            {"outcome",
             {{"kind", outcome_name(r.outcome.kind)},
              {"how", r.outcome.how},
              {"log", r.outcome.log},
              {"step", r.outcome.stop},
              {"phase", phase_name(stop.phase)},
              {"what", stop.what}}},
            {"shortfall_bytes", shortfall(b, r)},
            {"minimum_bytes", b.minimum.bytes},
            {"tail_bytes", r.fits ? json(r.tail_bytes) : json(nullptr)},
            {"head_bytes", r.fits ? json(r.head_bytes) : json(nullptr)},
            {"arena_used_bytes", r.fits ? json(r.tail_bytes + r.head_bytes) : json(nullptr)},
            {"tail_regions", regions_json(doc, b.at_size_regions)}};
}

// The model's subgraphs: their tensors (with where each is placed) and operators (with their scope).
nlohmann::json subgraphs_json(StreamedJson &out, const Budget &b)
{
    using nlohmann::json;
    json subgraphs = json::array();
    for (size_t s = 0; s < b.model.subgraphs.size(); ++s) {
        const Subgraph &sg = b.model.subgraphs[s];
        json tensors = out.rows(sg.tensors.size(), {"index", "name", "shape", "type", "bytes", "placement"},
                                [&b, &sg, s](size_t i, Row &row) {
                                    const Tensor &t = sg.tensors[i];
                                    row[0] = int64_t{t.index};
                                    row[1] = std::string_view(t.name);
                                    row[2] = &t.shape;
                                    row[3] = type_name(t.type);
                                    row[4] = t.bytes;
                                    row[5] = std::string_view(placement_name(b.lifetimes.placement[s][t.index]));
                                });
        json ops = out.rows(sg.operators.size(), {"index", "op", "inputs", "outputs", "scope"},
                            [&b, &sg, s](size_t i, Row &row) {
                                const Operator &op = sg.operators[i];
                                row[0] = int64_t{op.index};
                                row[1] = std::string_view(op.op_name);
                                row[2] = &op.inputs;
                                row[3] = &op.outputs;
                                row[4] = int64_t{b.lifetimes.op_scope[s][op.index]};
                            });
        subgraphs.push_back({{"index", s},
                             {"name", sg.name},
                             {"inputs", sg.inputs},
                             {"outputs", sg.outputs},
                             {"tensors", tensors},
                             {"operators", ops}});
    }
    return subgraphs;
}

// The head's buffers in planner id order, with their offsets in both plans.
nlohmann::json buffers_json(StreamedJson &out, const Budget &b)
{
    return out.rows(b.lifetimes.buffers.size(),
                    {"id", "subgraph", "tensor", "scratch", "name", "bytes", "size", "first", "last", "offline",
                     "offset", "best_offset"},
                    [&b](size_t i, Row &row) {
                        const Buffer &buf = b.lifetimes.buffers[i];
                        row[0] = int64_t{buf.id}, row[1] = int64_t{buf.subgraph};
                        row[2] = int64_t{buf.tensor}, row[3] = int64_t{buf.scratch};
                        row[4] = buffer_name(b, buf);
                        row[5] = buf.bytes, row[6] = buf.size;
                        row[7] = int64_t{buf.first}, row[8] = int64_t{buf.last};
                        row[9] = buf.offline_offset >= 0;
                        row[10] = b.greedy.offsets[buf.id], row[11] = b.best.offsets[buf.id];
                    });
}

// TFLM's greedy plan and the best plan found, and how the search went.
nlohmann::json plans_json(const Budget &b)
{
    return {{"tflm-greedy", {{"head_bytes", b.greedy.head}}},
            {"best",
             {{"planner", b.best.planner},
              {"head_bytes", b.best.head},
              {"gap_bytes", b.best.head - b.bound.bytes},
              {"minimum_arena_bytes", b.best_minimum},
              {"replaces_offline_plan", b.best_replaces_offline_plan},
              {"search", {{"ran", b.search.searched}, {"exhausted", b.search.exhausted}, {"steps", b.search.steps}}}}}};
}

// The kernels the figures hold for (--kernels, --cpu).
nlohmann::json kernels_json(const Budget &b)
{
    using nlohmann::json;
    const bool cmsis = b.build.set == KernelBuild::Set::CmsisNn;
    return {{"set", cmsis ? "cmsis-nn" : "reference"},
            {"cpu", cmsis ? json(b.build.cpu.name) : json(nullptr)},
            {"dsp", cmsis && b.build.cpu.dsp},
            {"mve", cmsis && b.build.cpu.mve},
            {"description", b.build.describe()}};
}

// The persistent tail: its requests by category, its bytes and where each request lands.
nlohmann::json tail_json(StreamedJson &out, const Budget &b)
{
    using nlohmann::json;
    json tail = json::array();
    int64_t requested = 0;
    for (const TailCategory &c : b.tail) {
        tail.push_back({{"what", c.category}, {"count", c.count}, {"bytes", c.bytes}, {"source", c.source}});
        requested += c.bytes;
    }
    return {{"parts", tail},
            {"requested_bytes", requested},
            {"bytes", b.minimum.tail_bytes},
            {"regions", regions_json(out, b.tail_regions)}};
}

// The minimum arena, the request that sets it and the recommendation.
nlohmann::json arena_json(const Budget &b)
{
    const Step &binding = b.arena.steps[b.minimum.binding];
    return {{"minimum_bytes", b.minimum.bytes},
            {"exact", b.minimum_exact()},
            {"set_by", {{"phase", phase_name(binding.phase)}, {"request", binding.what}, {"source", binding.source}}},
            {"arena_used_bytes", b.minimum.arena_used_bytes},
            {"margin_pct", b.margin_pct},
            {"planner_in_arena", !b.adapter},
            {"recommended_bytes", b.recommended},
            {"unmodelled_kernels", b.kernels.unmodelled_data}};
}
}  // namespace

StreamedJson budget_json_streamed(const Budget &b)
{
    using nlohmann::json;
    StreamedJson out;
    json &doc = out.skeleton;
    doc["schema"] = kPlanSchema;
    doc["model"] = b.model_path;
    doc["file_bytes"] = b.model.file_bytes;
    doc["subgraphs"] = subgraphs_json(out, b);
    doc["buffers"] = buffers_json(out, b);
    doc["plans"] = plans_json(b);
    doc["lower_bound"] = {{"bytes", b.bound.bytes}, {"scope", b.bound.scope}};
    doc["fragmentation_pct"] = fragmentation_pct(b);
    doc["target"] = b.abi.name;
    // --tflm: the TFLM revision the figures are for (revisions.h); absent without --tflm, which
    // plans 2026-08 (upstream 90b983c2) as every arenascope-plan before --tflm did.
    if (b.abi.tflm_given)
        doc["tflm"] = {{"revision", b.abi.tflm->id},
                       {"commit", b.abi.tflm->commit},
                       {"date", b.abi.tflm->date},
                       {"assumed", b.abi.tflm_assumed}};
    doc["kernels"] = kernels_json(b);
    doc["tail"] = tail_json(out, b);
    doc["arena"] = arena_json(b);
    doc["approximate"] = !b.kernels.unmodelled.empty();
    doc["unmodelled_scratch"] = b.kernels.unmodelled;
    doc["warnings"] = b.lifetimes.warnings;
    doc["tflm_rejects"] = b.kernels.rejected;
    doc["steps"] = steps_json(out, b.arena.steps);
    if (b.at_size) doc["replay"] = replay_json(out, b, *b.at_size);
    doc["gate"] = gate_json(b, gate(b));  // two arenas: main.cpp puts their gate in its place
    return out;
}

bool json_is_compact(const Budget &b)
{
    size_t operators = 0;
    for (const Subgraph &sg : b.model.subgraphs) operators += sg.operators.size();
    return operators > kCompactJsonOperators;
}

nlohmann::json budget_json(const Budget &b)
{
    return budget_json_streamed(b).whole();
}

}  // namespace arenascope::planner
