#include "arenascope/planner/report.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "arenascope/planner/gate.h"
#include "arenascope/planner/kernels.h"

namespace arenascope::planner {

std::string printable(std::string text, bool keep_newlines)
{
    // Well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF) is kept,
    // but for the C0 and C1 controls and DEL; every other byte becomes '?', as --json's replace
    // handler turns it into U+FFFD, so that no name can drive the terminal.
    std::string out;
    out.reserve(text.size());
    const auto byte = [&](size_t i) { return i < text.size() ? static_cast<unsigned char>(text[i]) : 0u; };
    const auto cont = [&](size_t i, unsigned lo = 0x80, unsigned hi = 0xBF) { return byte(i) >= lo && byte(i) <= hi; };
    for (size_t i = 0; i < text.size();) {
        const unsigned u = byte(i);
        size_t n = 0;
        if (u < 0x80)
            n = 1;
        else if (u >= 0xC2 && u <= 0xDF && cont(i + 1))
            n = 2;
        else if (u >= 0xE0 && u <= 0xEF && cont(i + 1, u == 0xE0 ? 0xA0 : 0x80, u == 0xED ? 0x9F : 0xBF) && cont(i + 2))
            n = 3;
        else if (u >= 0xF0 && u <= 0xF4 && cont(i + 1, u == 0xF0 ? 0x90 : 0x80, u == 0xF4 ? 0x8F : 0xBF) &&
                 cont(i + 2) && cont(i + 3))
            n = 4;
        const bool control = (n == 1 && ((u < 0x20 && !(keep_newlines && u == '\n')) || u == 0x7f)) ||
                             (n == 2 && u == 0xC2 && byte(i + 1) <= 0x9F);  // U+0080..U+009F
        if (n == 0 || control) {
            out += '?';
            i += n ? n : 1;
        } else {
            out.append(text, i, n);
            i += n;
        }
    }
    return out;
}

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

std::string shape_str(const std::vector<int32_t> &shape)
{
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
    return s + "]";
}

std::string buffer_name(const Budget &b, const Buffer &buf)
{
    if (buf.tensor >= 0) {
        const std::string &name = b.model.subgraphs[buf.subgraph].tensors[buf.tensor].name;
        return name.empty() ? "(tensor " + std::to_string(buf.tensor) + ")" : name;
    }
    return scratch_label(buf.scratch, b.kernels.requests[buf.scratch]);
}

// (TFLM head - lower bound) / TFLM head, percent: the share of the head above the bound.
double fragmentation_pct(const Budget &b)
{
    return b.greedy.head
               ? 100.0 * static_cast<double>(b.greedy.head - b.bound.bytes) / static_cast<double>(b.greedy.head)
               : 0.0;
}

}  // namespace

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

// The smallest arena minus N, when N is below it.
int64_t shortfall(const Budget &b, const ArenaAtSize &r)
{
    return std::max<int64_t>(b.minimum.bytes - r.arena_bytes, 0);
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
}  // namespace

StreamedJson budget_json_streamed(const Budget &b)
{
    using nlohmann::json;
    StreamedJson out;
    json &doc = out.skeleton;
    doc["schema"] = kPlanSchema;
    doc["model"] = b.model_path;
    doc["file_bytes"] = b.model.file_bytes;
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
    doc["subgraphs"] = subgraphs;
    doc["buffers"] = out.rows(b.lifetimes.buffers.size(),
                              {"id", "subgraph", "tensor", "scratch", "name", "bytes", "size", "first", "last",
                               "offline", "offset", "best_offset"},
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
    doc["plans"] = {
        {"tflm-greedy", {{"head_bytes", b.greedy.head}}},
        {"best",
         {{"planner", b.best.planner},
          {"head_bytes", b.best.head},
          {"gap_bytes", b.best.head - b.bound.bytes},
          {"minimum_arena_bytes", b.best_minimum},
          {"replaces_offline_plan", b.best_replaces_offline_plan},
          {"search", {{"ran", b.search.searched}, {"exhausted", b.search.exhausted}, {"steps", b.search.steps}}}}}};
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
    const bool cmsis = b.build.set == KernelBuild::Set::CmsisNn;
    doc["kernels"] = {{"set", cmsis ? "cmsis-nn" : "reference"},
                      {"cpu", cmsis ? json(b.build.cpu.name) : json(nullptr)},
                      {"dsp", cmsis && b.build.cpu.dsp},
                      {"mve", cmsis && b.build.cpu.mve},
                      {"description", b.build.describe()}};
    json tail = json::array();
    int64_t requested = 0;
    for (const TailCategory &c : b.tail) {
        tail.push_back({{"what", c.category}, {"count", c.count}, {"bytes", c.bytes}, {"source", c.source}});
        requested += c.bytes;
    }
    doc["tail"] = {{"parts", tail},
                   {"requested_bytes", requested},
                   {"bytes", b.minimum.tail_bytes},
                   {"regions", regions_json(out, b.tail_regions)}};
    const Step &binding = b.arena.steps[b.minimum.binding];
    doc["arena"] = {
        {"minimum_bytes", b.minimum.bytes},
        {"exact", b.minimum_exact()},
        {"set_by", {{"phase", phase_name(binding.phase)}, {"request", binding.what}, {"source", binding.source}}},
        {"arena_used_bytes", b.minimum.arena_used_bytes},
        {"margin_pct", b.margin_pct},
        {"planner_in_arena", !b.adapter},
        {"recommended_bytes", b.recommended},
        {"unmodelled_kernels", b.kernels.unmodelled_data}};
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

namespace {
// What the request that sets the minimum means, for someone who does not know TFLM's source.
std::string binding_in_words(const Step &s)
{
    switch (s.kind) {
    case Step::Kind::PlannerArena:
        return "while it plans the memory, TFLM needs working space for its planner (" + std::to_string(s.count) +
               " buffers x 40 B) in the free space between its allocation records and the tail: more room than the "
               "final head keeps.";
    case Step::Kind::ReserveHead:
        return "the planned head (tensors and scratch buffers) must fit below the persistent tail.";
    case Step::Kind::ResizeHead:
        return "the buffer of scratch-buffer requests at the start of the arena must fit below the tail.";
    case Step::Kind::Temp:
        return s.phase == Phase::Prepare
                   ? "an operator's Prepare needs temporary TfLiteTensors above the head, below the tail."
                   : "the allocation records TFLM builds while it plans must fit above the head, below the tail.";
    case Step::Kind::Persistent:
        return "the persistent tail must fit above the head: the arena is head + tail, plus the alignment padding "
               "of the tail's requests.";
    case Step::Kind::ResetTemp: break;
    }
    return "";
}
}  // namespace

namespace {
// --arena-size N: the answer first, then why, what TFLM prints and the state a debugger finds.
std::string at_size_table(const Budget &b, const ArenaAtSize &r)
{
    std::ostringstream out;
    char line[512];
    auto row = [&](int64_t offset, int64_t size, const std::string &what) {
        std::snprintf(line, sizeof line, "    %8lld %8lld  %s\n", static_cast<long long>(offset),
                      static_cast<long long>(size), printable(what).c_str());
        out << line;
    };
    std::string kind = outcome_name(r.outcome.kind);
    for (char &c : kind) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    out << "arena of " << r.arena_bytes << " bytes (--arena-size, " << b.abi.name << "): ";
    if (r.fits) {
        out << "FITS: AllocateTensors succeeds (the minimum arena is " << b.minimum.bytes << " B, "
            << r.arena_bytes - b.minimum.bytes << " B to spare)\n"
            << "  at " << r.arena_bytes << " B: tail " << r.tail_bytes << " B, head " << r.head_bytes
            << " B, arena_used_bytes() " << r.tail_bytes + r.head_bytes << " B\n";
    } else {
        out << "DOES NOT FIT: AllocateTensors fails"
            << (r.outcome.kind == Outcome::Kind::Error ? " and returns kTfLiteError" : "") << "; outcome: " << kind
            << "\n"
            << "  shortfall " << shortfall(b, r) << " B: the minimum arena is " << b.minimum.bytes << " B\n";
    }
    if (!b.minimum_exact())
        out << "  "
            << (b.kernels.rejected.empty()
                    ? "A FLOOR: some kernels are not modelled (below), so this is not TFLM's exact behaviour"
                    : "and TFLM rejects this model in Prepare whatever the size (below)")
            << "\n";
    if (r.failed) {
        const Step &s = b.arena.steps[r.failure.step];
        out << "  the first request that does not fit (step " << r.failure.step << "): " << phase_name(s.phase) << ": "
            << printable(s.what) << "\n    " << r.failure.kind << " request of " << r.failure.bytes << " B (alignment "
            << r.failure.align << "): " << r.failure.available << " B available, " << r.failure.missing
            << " B missing (" << s.source << ")\n";
    }
    if (!r.fits) {
        out << "  outcome: " << kind << ": " << printable(r.outcome.how) << "\n";
        if (r.outcome.stop != r.failure.step)
            out << "    (it stops at step " << r.outcome.stop << ": " << phase_name(b.arena.steps[r.outcome.stop].phase)
                << ": " << printable(b.arena.steps[r.outcome.stop].what) << ")\n";
        out << "  TFLM prints" << (r.outcome.log.empty() ? " nothing" : ":") << "\n";
        for (const std::string &l : r.outcome.log) out << "    " << printable(l) << "\n";
        out << "  the allocator where TFLM stops (offsets from the arena start): head_ " << r.state.head << ", temp_ "
            << r.state.temp << ", tail_ " << r.state.tail << " (nothing is rolled back)\n"
            << "  persistent requests made by then, in TFLM's order (offset, bytes, what):\n";
        for (size_t i = 0; i < r.offsets.size(); ++i)
            if (r.offsets[i] >= 0) row(r.offsets[i], b.arena.steps[i].bytes, b.arena.steps[i].what);
    } else {
        out << "  tail regions at " << r.arena_bytes << " B, in TFLM's order (offset, bytes, what):\n";
        for (const TailRegion &t : b.at_size_regions) row(t.offset, t.size, t.what);
    }
    return out.str();
}
}  // namespace

std::string budget_table(const Budget &b)
{
    return budget_table(b, gate(b));
}

std::string budget_table(const Budget &b, const Gate &verdict)
{
    std::ostringstream out;
    char line[512];
    out << "arenascope-plan: " << b.model_path << " (" << b.model.file_bytes << " bytes, " << b.model.subgraphs.size()
        << " subgraph" << (b.model.subgraphs.size() == 1 ? "" : "s") << ")\n";
    out << gate_lines(b, verdict);  // what CI gates on, first (the exit status says the same)
    if (b.abi.tflm_given)
        out << "TFLM " << b.abi.tflm->id << " (upstream " << std::string(b.abi.tflm->commit).substr(0, 9) << ", "
            << b.abi.tflm->date << (b.abi.tflm_assumed ? "; assumed: --tflm auto" : "") << ")"
            << (b.abi.tflm->current ? "" : ": only the kernels checked against its source are exact") << "\n";
    out << "\n";
    if (b.at_size) out << at_size_table(b, *b.at_size) << "\n";
    for (size_t s = 0; s < b.model.subgraphs.size(); ++s) {
        const Subgraph &sg = b.model.subgraphs[s];
        out << "subgraph " << s << (sg.name.empty() ? "" : " '" + printable(sg.name) + "'") << ": " << sg.tensors.size()
            << " tensors, " << sg.operators.size() << " operators\n";
    }
    if (!b.kernels.rejected.empty()) {
        out << "\nTFLM WILL REJECT THIS MODEL in AllocateTensors:\n";
        for (const std::string &r : b.kernels.rejected) out << "  " << printable(r) << "\n";
    }
    if (!b.kernels.unmodelled.empty()) {
        out << "\nAPPROXIMATE: the scratch buffers these kernels request in Prepare are not modelled; every figure\n"
               "below leaves them out, so TFLM's head may be larger and its offsets different:\n";
        for (const std::string &u : b.kernels.unmodelled) out << "  " << printable(u) << "\n";
    }
    if (!b.kernels.unmodelled_data.empty() && b.kernels.rejected.empty()) {
        out << "\nA FLOOR: the Init/Prepare allocations of these kernels are not modelled, so the minimum arena and\n"
               "arena_used_bytes() below are floors, not TFLM's figures (measure arena_used_bytes() on the target):\n";
        for (const std::string &u : b.kernels.unmodelled_data) out << "  " << printable(u) << "\n";
    }
    out << "\nbuffers TFLM plans in the arena head, in planner id order. aligned = bytes rounded up to 16;\n"
           "scopes = first..last allocation scope using it (inclusive; operator i of subgraph 0 runs in\n"
           "scope i+1 when there is no control flow); tflm off / best off = offset from the arena start\n"
           "in TFLM's greedy plan / in the best plan found:\n";
    std::snprintf(line, sizeof line, "%4s  %-40s %-16s %-8s %8s %8s  %-9s %8s %8s\n", "id", "name", "shape", "type",
                  "bytes", "aligned", "scopes", "tflm off", "best off");
    out << line;
    for (const Buffer &buf : b.lifetimes.buffers) {
        std::string name = printable(buffer_name(b, buf));
        if (name.size() > 40) name = name.substr(0, 37) + "...";
        std::string shape = "-", type = "-";
        if (buf.tensor >= 0) {
            const Tensor &t = b.model.subgraphs[buf.subgraph].tensors[buf.tensor];
            shape = shape_str(t.shape);
            type = type_name(t.type);
        }
        const std::string life = std::to_string(buf.first) + ".." + std::to_string(buf.last);
        std::snprintf(line, sizeof line, "%4d  %-40s %-16s %-8s %8lld %8lld  %-9s %8lld %8lld\n", buf.id, name.c_str(),
                      shape.c_str(), type.c_str(), static_cast<long long>(buf.bytes), static_cast<long long>(buf.size),
                      life.c_str(), static_cast<long long>(b.greedy.offsets[buf.id]),
                      static_cast<long long>(b.best.offsets[buf.id]));
        out << line;
    }
    const double frag = fragmentation_pct(b);
    out << "\nhead (non-persistent part of the arena), bytes"
        << (b.kernels.unmodelled.empty() ? "" : ", without the unmodelled scratch") << ":\n";
    std::snprintf(line, sizeof line, "  lower bound        %8lld  (live bytes in scope %d)\n",
                  static_cast<long long>(b.bound.bytes), b.bound.scope);
    out << line;
    std::snprintf(line, sizeof line,
                  "  TFLM greedy        %8lld  (%sfragmentation: %.1f %% of it above the lower bound)\n",
                  static_cast<long long>(b.greedy.head),
                  b.model.offline_offsets.empty() ? "" : "with the model's offline plan; ", frag);
    out << line;
    std::snprintf(line, sizeof line, "  best plan found    %8lld  (%s; %s)\n", static_cast<long long>(b.best.head),
                  best_how(b).c_str(), best_use(b).c_str());
    out << line;
    out << "\npersistent tail (" << b.abi.name
        << "), by category: how many (requests, or elements of an array)\n"
           "and the bytes requested, before alignment:\n";
    for (const TailCategory &c : b.tail) {
        std::snprintf(line, sizeof line, "  %-44s %5d, %8lld B\n", c.category.c_str(), c.count,
                      static_cast<long long>(c.bytes));
        out << line;
    }
    std::snprintf(line, sizeof line, "  %-44s        %8lld B (arena end 16-byte aligned)\n", "tail with alignment",
                  static_cast<long long>(b.minimum.tail_bytes));
    out << line;
    const MinimumArena &m = b.minimum;
    const Step &binding = b.arena.steps[m.binding];
    out << "\narena (" << b.abi.name << ", TFLM" << (b.abi.tflm_given ? " " + std::string(b.abi.tflm->id) : "") << "'s "
        << b.build.describe() << ", "
        << (b.adapter ? "the planner outside the arena (arenascope's TFLM adapter)" : "a plain MicroInterpreter")
        << ", the arena's start\n16-byte aligned: declare it alignas(16)), bytes:\n";
    if (!b.kernels.rejected.empty()) {
        out << "  none: TFLM rejects this model (see above), so AllocateTensors never succeeds.\n";
        for (const std::string &w : b.lifetimes.warnings) out << "warning: " << printable(w) << "\n";
        return out.str();
    }
    std::snprintf(line, sizeof line, "  arena_used_bytes()  %8lld  %s\n", static_cast<long long>(m.arena_used_bytes),
                  b.minimum_exact()
                      ? "(TFLM reports it after AllocateTensors: head + tail, in an arena of a multiple of 16 B)"
                      : "(A FLOOR too: the kernels listed above add to it)");
    out << line;
    std::snprintf(line, sizeof line, "  minimum arena       %8lld  %s\n", static_cast<long long>(m.bytes),
                  b.minimum_exact() ? "(the smallest arena AllocateTensors succeeds in)"
                                    : "(A FLOOR: some kernels are not modelled, listed above)");
    out << line;
    out << "    why: " << binding_in_words(binding) << "\n"
        << "    the request that fails with one byte less: " << phase_name(binding.phase) << ": "
        << printable(binding.what) << "\n      (" << binding.source << ")\n";
    if (m.bytes > m.arena_used_bytes)
        out << "    AllocateTensors needs " << m.bytes - m.arena_used_bytes
            << " bytes more than arena_used_bytes() reports: sizing the arena from that figure fails.\n";
    std::snprintf(line, sizeof line, "  recommended         %8lld  (minimum + %d %% margin, rounded up to 16)\n",
                  static_cast<long long>(b.recommended), b.margin_pct);
    out << line;
    for (const std::string &w : b.lifetimes.warnings) out << "warning: " << printable(w) << "\n";
    return out.str();
}

namespace {
// Text from the model inside a C comment: ASCII only, no comment end.
std::string comment_safe(const std::string &text)
{
    std::string out;
    for (char c : text) {
        const auto u = static_cast<unsigned char>(c);
        out += (u < 0x20 || u > 0x7e) ? '?' : c;
    }
    // Neither a comment's end nor the start of a nested one (-Wcomment, an error under -Werror).
    for (size_t at = out.find("*/"); at != std::string::npos; at = out.find("*/", at)) out[at + 1] = ' ';
    for (size_t at = out.find("/*"); at != std::string::npos; at = out.find("/*", at)) out[at + 1] = ' ';
    return out;
}
// Text from the model inside a C string literal: ASCII only; quotes, backslashes and question
// marks (trigraphs in strict C) escaped.
std::string c_string_safe(const std::string &text)
{
    std::string out;
    for (char c : comment_safe(text)) {
        if (c == '"' || c == '\\' || c == '?') out += '\\';
        out += c;
    }
    return out;
}
}  // namespace

std::string budget_header(const Budget &b)
{
    // The header's figures are 32-bit (the macros' `u`, the tables' uint32_t fields): a host
    // target's arena, or a margin, can take them past 4 GiB.
    const std::string margin = ": lower --margin (" + std::to_string(b.margin_pct) + " % now)";
    const std::tuple<const char *, int64_t, std::string> figures[] = {{"the head", b.greedy.head, ""},
                                                                      {"the minimum arena", b.minimum.bytes, ""},
                                                                      {"the recommended arena", b.recommended, margin}};
    for (const auto &[what, bytes, advice] : figures)
        if (bytes > 0xffffffffLL)
            throw ModelError(b.model_path + ": " + what + " is " + std::to_string(bytes) +
                             " bytes, more than the header's 32-bit figures hold (4 GiB)" + advice);
    std::ostringstream out;
    const Subgraph &main = b.model.subgraphs[0];
    const std::unordered_set<int32_t> inputs(main.inputs.begin(), main.inputs.end()),
        outputs(main.outputs.begin(), main.outputs.end());
    const std::vector<TailRegion> &tail = b.tail_regions;
    out << "/* Generated by arenascope-plan --header from " << comment_safe(b.model_path) << " (" << b.model.file_bytes
        << " bytes), target " << b.abi.name << ", TFLM"
        << (b.abi.tflm_given
                ? " " + std::string(b.abi.tflm->id) + " (" + std::string(b.abi.tflm->commit).substr(0, 9) + ")"
                : "")
        << "'s " << b.build.describe()
        << ". Do not edit.\n"
           " * The arena TFLM lays out for this model, predicted: docs/arena-budget.md.\n"
           " * arenascope_plan_head: TFLM's greedy memory plan of the head, in planner id order, as the agent's\n"
           " *   regions {offset, size, id (tensor index, or scratch index), kind, flags, first_use, last_use};\n"
           " *   offsets from the arena start, bytes; lifetimes in allocation scopes.\n"
           " * arenascope_plan_tail: every persistent allocation in TFLM's order, at the offset TFLM gives it\n"
           " *   in an arena of ARENASCOPE_PLAN_RECOMMENDED_ARENA_BYTES.\n"
           " * The tables are defined where ARENASCOPE_PLAN_TABLES is defined before this header. */\n"
           "#ifndef ARENASCOPE_PLAN_H\n#define ARENASCOPE_PLAN_H\n\n#include \"arenascope/agent.h\"\n\n";
    // A model TFLM rejects has no arena to lay out: a build that ignores the tool's exit status
    // still stops here, with the reason.
    if (!b.kernels.rejected.empty())
        out << "#error \"arenascope-plan: TFLM rejects this model (AllocateTensors fails): "
            << c_string_safe(b.kernels.rejected.front()) << "\"\n\n";
    int ops = 0;
    for (const Subgraph &sg : b.model.subgraphs) ops += static_cast<int>(sg.operators.size());
    int nodes = -1;
    for (size_t i = 0; i < tail.size() && nodes < 0; ++i)
        if (tail[i].category == "NodeAndRegistration struct") nodes = static_cast<int>(i);
    out << "#define ARENASCOPE_PLAN_HEAD_BYTES " << b.greedy.head << "u /* TFLM greedy head */\n"
        << "#define ARENASCOPE_PLAN_LOWER_BOUND_BYTES " << b.bound.bytes << "u\n"
        << "#define ARENASCOPE_PLAN_TAIL_BYTES " << b.minimum.tail_bytes << "u /* " << b.abi.name
        << ": the persistent tail, 16-byte aligned arena end */\n"
        << "#define ARENASCOPE_PLAN_MINIMUM_ARENA_BYTES " << b.minimum.bytes << "u /* "
        << (b.minimum_exact()             ? "predicted"
            : !b.kernels.rejected.empty() ? "a floor: TFLM rejects this model"
                                          : "a floor: some kernels are not modelled: measure arena_used_bytes()")
        << " */\n"
        << "#define ARENASCOPE_PLAN_MINIMUM_EXACT " << (b.minimum_exact() ? 1 : 0)
        << " /* 0: the minimum is a floor, not TFLM's figure */\n"
        << "#define ARENASCOPE_PLAN_RECOMMENDED_ARENA_BYTES " << b.recommended << "u /* minimum + " << b.margin_pct
        << " %, 16-byte multiple */\n"
        << "#define ARENASCOPE_PLAN_ALIGNMENT 16u /* the arena's start must be 16-byte aligned (alignas(16)) */\n"
        << "#define ARENASCOPE_PLAN_OPS " << ops << " /* all subgraphs */\n"
        << "#define ARENASCOPE_PLAN_MAIN_OPS " << main.operators.size() << " /* subgraph 0 */\n"
        << "#define ARENASCOPE_PLAN_SCRATCH_BUFFERS " << b.kernels.requests.size() << "\n"
        << "#define ARENASCOPE_PLAN_KERNELS \""
        << (b.build.set == KernelBuild::Set::CmsisNn ? "cmsis-nn " + b.build.cpu.name : std::string("reference"))
        << "\" /* the kernels the figures hold for */\n"
        << "#define ARENASCOPE_PLAN_APPROXIMATE " << (b.kernels.unmodelled.empty() ? 0 : 1) << "\n"
        << "#define ARENASCOPE_PLAN_REGIONS " << b.lifetimes.buffers.size() << " /* head regions */\n"
        << "#define ARENASCOPE_PLAN_TAIL_ITEMS " << tail.size() << "\n"
        << "#define ARENASCOPE_PLAN_TAIL_NODES " << nodes << " /* tail item: subgraph 0's NodeAndRegistration[] */\n\n"
        << "typedef struct arenascope_plan_tail_item {\n"
           "    uint32_t offset_bytes; /* from the arena start */\n"
           "    uint32_t size_bytes;\n"
           "    uint16_t id;           /* a variable tensor's index, else ARENASCOPE_ID_NONE */\n"
           "    uint8_t kind;          /* ARENASCOPE_KIND_PERSISTENT or ARENASCOPE_KIND_METADATA */\n"
           "    uint8_t flags;         /* ARENASCOPE_REGION_VARIABLE, ARENASCOPE_REGION_IMMUTABLE */\n"
           "    const char *what;\n"
           "} arenascope_plan_tail_item_t;\n\n"
        << "#ifdef ARENASCOPE_PLAN_TABLES\n"
        << "static const arenascope_region_t arenascope_plan_head[" << std::max<size_t>(1, b.lifetimes.buffers.size())
        << "] = {\n";
    for (const Buffer &buf : b.lifetimes.buffers) {
        const int id = buf.tensor >= 0 ? buf.tensor : buf.scratch;
        if (id > 0xFFFE || buf.last > 32767)
            throw ModelError(b.model_path + ": " + buffer_name(b, buf) +
                             " does not fit the agent's region fields (id " + std::to_string(id) + ", last scope " +
                             std::to_string(buf.last) +
                             "; arenascope_region_t holds ids up to 65534 and scopes up to 32767): --header cannot "
                             "describe this model, the table and --json can");
        std::string flags = "0";
        if (buf.tensor >= 0 && buf.subgraph == 0) {
            std::vector<std::string> f;
            if (inputs.count(buf.tensor)) f.push_back("ARENASCOPE_REGION_MODEL_INPUT");
            if (outputs.count(buf.tensor)) f.push_back("ARENASCOPE_REGION_MODEL_OUTPUT");
            if (buf.offline_offset >= 0) f.push_back("ARENASCOPE_REGION_OFFLINE_PLANNED");
            if (!f.empty()) {
                flags = f[0];
                for (size_t i = 1; i < f.size(); ++i) flags += " | " + f[i];
            }
        }
        out << "    {" << b.greedy.offsets[buf.id] << "u, " << buf.size << "u, " << id << "u, "
            << (buf.tensor >= 0 ? "ARENASCOPE_KIND_TENSOR" : "ARENASCOPE_KIND_SCRATCH") << ", " << flags << ", "
            << buf.first << ", " << buf.last << "}, /* id " << buf.id << ": " << comment_safe(buffer_name(b, buf))
            << " */\n";
    }
    if (b.lifetimes.buffers.empty())
        out << "    {0u, 0u, ARENASCOPE_ID_NONE, 0, 0, ARENASCOPE_USE_NONE, ARENASCOPE_USE_NONE},\n";
    out << "};\n\n/* {offset, size, id, kind, flags, what}: TFLM's bookkeeping is immutable after AllocateTensors. */\n"
        << "static const arenascope_plan_tail_item_t arenascope_plan_tail[" << std::max<size_t>(1, tail.size())
        << "] = {\n";
    for (const TailRegion &t : tail) {
        const bool meta = t.kind == "metadata";
        out << "    {" << t.offset << "u, " << t.size << "u, "
            << (t.tensor >= 0 ? std::to_string(t.tensor) + "u" : std::string("ARENASCOPE_ID_NONE")) << ", "
            << (meta ? "ARENASCOPE_KIND_METADATA" : "ARENASCOPE_KIND_PERSISTENT") << ", "
            << (t.tensor >= 0 ? "ARENASCOPE_REGION_VARIABLE"
                : meta        ? "ARENASCOPE_REGION_IMMUTABLE"
                              : "0")
            << ", \"" << c_string_safe(t.what) << "\"},\n";
    }
    if (tail.empty()) out << "    {0u, 0u, ARENASCOPE_ID_NONE, 0, 0, \"\"},\n";
    // Subgraph 0's operators: their names, and the tail item of a variable (state) tensor they read.
    out << "};\n\nstatic const char *const arenascope_plan_op_names[" << std::max<size_t>(1, main.operators.size())
        << "] = {";
    for (const Operator &op : main.operators) out << (op.index ? ", " : "") << '"' << c_string_safe(op.op_name) << '"';
    if (main.operators.empty()) out << "\"\"";
    out << "};\n/* tail item index of the variable tensor each operator updates, -1 for none */\n"
        << "static const int16_t arenascope_plan_op_state[" << std::max<size_t>(1, main.operators.size()) << "] = {";
    // The first tail item of each variable tensor (a map: one pass over the tail, not one per input).
    std::unordered_map<int, int> item_of;
    for (size_t i = 0; i < tail.size(); ++i)
        if (tail[i].tensor >= 0) item_of.emplace(tail[i].tensor, static_cast<int>(i));
    for (const Operator &op : main.operators) {
        int item = -1;
        for (int32_t t : op.inputs) {
            const auto it = t >= 0 ? item_of.find(t) : item_of.end();
            if (item < 0 && it != item_of.end()) item = it->second;
        }
        out << (op.index ? ", " : "") << item;
    }
    if (main.operators.empty()) out << "-1";
    out << "};\n#endif /* ARENASCOPE_PLAN_TABLES */\n\n#endif /* ARENASCOPE_PLAN_H */\n";
    return out.str();
}

}  // namespace arenascope::planner
