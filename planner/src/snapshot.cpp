// A model's predicted arena as an arenascope snapshot (docs/snapshot-schema.md, version
// kSnapshotVersion, 3), so the viewer draws a plan with no target (`arenascope-plan --snapshot FILE`).
//
// The arena is the recommended one (the minimum plus the margin), at address 0: a model has no
// target address. The head holds TFLM's greedy plan; the tail holds every persistent request at
// the offset the replay of TFLM's allocations (arena.h) puts it. There is no stack, guard band,
// canary or fault: the snapshot says "model" where a target would give its descriptor, and the
// stack has source "none". used = head + tail (arena_used_bytes()), peak = max(the minimum
// arena, used), headroom = size - peak: measured against the minimum, not an upper estimate.
// The GDB plugin builds the same arena from the planner's JSON (model.arena_from_plan) and its
// snapshot must give the same figures, regions and shared checks: tests/plugin/
// test_plan_snapshot_parity.py compares the two.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <memory>
#include <unordered_set>

#include "arenascope/planner/writers.h"

#ifndef ARENASCOPE_VERSION  // the build defines it from VERSION; a compile outside CMake says so
#define ARENASCOPE_VERSION "unknown"
#endif

namespace arenascope::planner {

namespace {

std::string utc_now()
{
    const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S+00:00", &tm);
    return buf;
}

// A compact snapshot's runs (docs/snapshot-schema.md "Compact snapshots"): tail regions
// [begin, end) of b.tail_regions, each run of more than one drawn as one region. Persistent
// requests go down from the arena's end in TFLM's order, so consecutive ones are adjacent (but
// for alignment) and no other region lies between them.
struct Run {
    size_t begin, end;
};
std::vector<Run> tail_runs(const std::vector<TailRegion> &tail, bool compact)
{
    std::vector<Run> runs;
    for (size_t i = 0; i < tail.size(); ++i) {
        const TailRegion &t = tail[i];
        if (compact && !runs.empty() && runs.back().end == i) {
            const TailRegion &p = tail[i - 1];
            if (t.tensor < 0 && p.tensor < 0 && t.kind == p.kind && t.category == p.category && t.role == p.role &&
                t.phase == p.phase && t.subgraph == p.subgraph && t.offset + t.size <= p.offset) {
                runs.back().end = i + 1;
                continue;
            }
        }
        runs.push_back({i, i + 1});
    }
    return runs;
}

}  // namespace

std::string grouped(uint64_t n)
{
    std::string digits = std::to_string(n), out;
    for (size_t i = 0; i < digits.size(); ++i) {
        if (i && (digits.size() - i) % 3 == 0) out += ',';
        out += digits[i];
    }
    return out;
}

namespace {
using Row = StreamedJson::Row;
using Set = std::unordered_set<int32_t>;

// A head region's row. Keys: index, id, kind, offset, address, size_bytes, first_use, last_use,
// flags, label, name, shape, dtype (and count when compact).
void head_region(const Budget &b, const Set &inputs, const Set &outputs, size_t index, Row &row)
{
    const Buffer &buf = b.lifetimes.buffers[index];
    std::vector<std::string_view> flags;
    if (buf.tensor >= 0 && buf.subgraph == 0) {
        if (inputs.count(buf.tensor)) flags.push_back("input");
        if (outputs.count(buf.tensor)) flags.push_back("output");
    }
    if (buf.offline_offset >= 0) flags.push_back("offline");
    row[10] = nullptr, row[11] = nullptr, row[12] = nullptr;
    if (row.size() > 13) row[13] = nullptr;  // compact: count
    if (buf.tensor >= 0) {
        const Tensor &t = b.model.subgraphs[buf.subgraph].tensors[buf.tensor];
        if (!t.name.empty()) row[10] = std::string_view(t.name);
        row[11] = &t.shape;
        row[12] = type_name(t.type);
        row[9] = t.name.empty() ? "tensor " + std::to_string(buf.tensor) : t.name;
    } else {
        std::string label = scratch_label(buf.scratch, b.kernels.requests[buf.scratch]);
        row[10] = label;  // what the planner knows it as, as the plugin names it
        row[9] = std::move(label);
    }
    const int64_t offset = b.greedy.offsets[buf.id];
    row[0] = static_cast<int64_t>(index);
    row[1] = int64_t{buf.tensor >= 0 ? buf.tensor : buf.scratch};
    row[2] = std::string_view(buf.tensor >= 0 ? "tensor" : "scratch");
    row[3] = offset, row[4] = offset, row[5] = buf.size;
    row[6] = int64_t{buf.first}, row[7] = int64_t{buf.last};
    row[8] = std::move(flags);
}

// A tail region's row: one persistent request, or a compact run of them as one region with its count.
void tail_region(const Budget &b, const Run &run, size_t index, Row &row)
{
    if (run.end - run.begin > 1) {  // a run: one region spanning it, with its count
        const TailRegion &first = b.tail_regions[run.begin], &last = b.tail_regions[run.end - 1];
        int64_t low = first.size, high = first.size;
        for (size_t i = run.begin; i < run.end; ++i) {
            low = std::min(low, b.tail_regions[i].size), high = std::max(high, b.tail_regions[i].size);
        }
        const int64_t end = first.offset + first.size;
        row[0] = static_cast<int64_t>(index);
        row[1] = nullptr;
        row[2] = first.kind;
        row[3] = last.offset, row[4] = last.offset, row[5] = end - last.offset;
        row[6] = nullptr, row[7] = nullptr;
        row[8] = std::vector<std::string_view>{};
        row[9] = grouped(run.end - run.begin) + " x " + std::string(first.category) + " (" +
                 (low == high ? std::to_string(low) : std::to_string(low) + "-" + std::to_string(high)) + " B each)";
        row[10] = first.what + " .. " + last.what;
        row[11] = nullptr, row[12] = nullptr;
        row[13] = static_cast<int64_t>(run.end - run.begin);
        return;
    }
    const TailRegion &t = b.tail_regions[run.begin];
    row[0] = static_cast<int64_t>(index);
    row[1] = t.tensor >= 0 ? StreamedJson::Value(int64_t{t.tensor}) : StreamedJson::Value(nullptr);
    row[2] = t.kind;
    row[3] = t.offset, row[4] = t.offset, row[5] = t.size;
    row[6] = nullptr, row[7] = nullptr;
    row[8] = t.tensor >= 0 ? std::vector<std::string_view>{"variable"} : std::vector<std::string_view>{};
    row[9] = std::string_view(t.what), row[10] = std::string_view(t.what);
    row[11] = nullptr, row[12] = nullptr;
    if (row.size() > 13) row[13] = nullptr;
}

// The head regions live at each scope, in region order: each buffer put in the scopes of its
// lifetime (the output's size, not scopes x regions).
nlohmann::json live_regions_json(StreamedJson &doc, const Budget &b, size_t scopes)
{
    using nlohmann::json;
    auto live_ids = std::make_shared<std::vector<std::vector<int>>>(scopes);
    for (size_t r = 0; r < b.lifetimes.buffers.size(); ++r) {
        const Buffer &buf = b.lifetimes.buffers[r];
        for (int t = std::max(buf.first, 0); t <= buf.last; ++t) (*live_ids)[t].push_back(static_cast<int>(r));
    }
    return doc.array(scopes, [live_ids](size_t t) { return json((*live_ids)[t]); });
}

// The arena's figures: the recommended arena, its tail, and what it uses at its peak.
struct Figures {
    int64_t size, tail, used, peak, headroom;
};

Figures figures(const Budget &b)
{
    const int64_t size = b.recommended;
    const int64_t tail = b.minimum.tail_bytes, used = b.greedy.head + tail;
    const int64_t peak = std::max(used, b.minimum.bytes), headroom = size - peak;
    return {size, tail, used, peak, headroom};
}

// The arena object: its figures, regions and plan.
nlohmann::json arena_json(StreamedJson &doc, const Budget &b, const Figures &f, size_t n_regions,
                          nlohmann::json regions)
{
    using nlohmann::json;
    const int64_t size = f.size, tail = f.tail, used = f.used, peak = f.peak, headroom = f.headroom;
    const std::vector<int64_t> live = live_bytes(b.lifetimes.buffers);
    json live_regions = live_regions_json(doc, b, live.size());
    return {{"index", 0},
            {"base_addr", 0},
            {"size_bytes", size},
            {"head_bytes", b.greedy.head},
            {"temp_bytes", b.greedy.head},
            {"tail_offset", size - tail},
            {"tail_bytes", tail},
            {"alignment_bytes", 16},
            {"tflm_figures", false},
            {"model_addr", nullptr},
            {"model_size_bytes", b.model.file_bytes},
            {"used_bytes", used},
            {"peak_bytes", peak},
            {"headroom_bytes", headroom},
            {"headroom_pct", static_cast<double>(headroom_pct_hundredths(headroom, peak)) / 100},
            {"minimum_arena_bytes", b.minimum.bytes},
            {"headroom_is_upper_estimate", false},
            {"free_band", nullptr},
            {"damage", nullptr},
            {"region_capacity", n_regions},
            {"regions", regions},
            {"plan",
             {{"scopes", live.size()},
              {"live_bytes", live},
              {"live_regions", live_regions},
              {"lower_bound_bytes", b.bound.bytes},
              {"lower_bound_scope", b.bound.scope}}}};
}

// The prediction's own check: PASS, or WARN for a floor, or FAIL when TFLM rejects the model.
std::pair<std::string, std::string> prediction_check(const Budget &b)
{
    const Step &binding = b.arena.steps[b.minimum.binding];
    std::string verdict = "PASS", reason;
    if (!b.kernels.rejected.empty()) {
        verdict = "FAIL";
        reason = "TFLM would reject this model: " + b.kernels.rejected.front();
    } else if (!b.minimum_exact()) {
        verdict = "WARN";
        std::string missing;
        for (const auto *list : {&b.kernels.unmodelled_data, &b.kernels.unmodelled})
            for (const std::string &u : *list) missing += (missing.empty() ? "" : "; ") + u;
        reason = "the minimum arena " + std::to_string(b.minimum.bytes) + " B is a floor: not modelled: " + missing +
                 "; measure arena_used_bytes() on the target";
    } else {
        reason = "predicted for " + b.abi.name + " with TFLM's " + b.build.describe() + ": minimum arena " +
                 std::to_string(b.minimum.bytes) + " B, set by " + phase_name(binding.phase) + ": " + binding.what +
                 "; this arena is the minimum + " + std::to_string(b.margin_pct) + " %";
    }
    return {verdict, reason};
}

// The rules of `arena check` a prediction can apply, in the plugin's words (analysis.checks):
// the plan is checked (make_budget), and the tail lies where the replay put it. *verdict: the
// snapshot's.
nlohmann::json snapshot_checks(const Budget &b, const Figures &f, size_t n_regions, std::string *verdict_out)
{
    using nlohmann::json;
    const int64_t size = f.size, tail = f.tail, peak = f.peak;
    auto [verdict, reason] = prediction_check(b);
    const bool fits = peak <= size && b.greedy.head <= size - tail;
    json checks = json::array({{{"rule", "prediction"}, {"verdict", verdict}, {"reason", reason}}});
    checks.push_back({{"rule", "plan"},
                      {"verdict", "PASS"},
                      {"reason", "arena: no two regions with overlapping lifetimes share bytes (" +
                                     std::to_string(n_regions) + " regions)"}});
    checks.push_back(
        {{"rule", "used"},
         {"verdict", fits ? "PASS" : "FAIL"},
         {"reason", fits ? "arena: peak " + std::to_string(peak) + " B <= size " + std::to_string(size) + " B"
                         : "arena: head/temp end " + std::to_string(b.greedy.head) + " B runs into the tail at " +
                               std::to_string(size - tail) + " B (peak " + std::to_string(peak) + " B of " +
                               std::to_string(size) + " B)"}});
    if (!fits && verdict != "FAIL") verdict = "FAIL";
    *verdict_out = verdict;
    return checks;
}

// The snapshot around its arena: the source (a model, no target), no stack, guard or fault.
nlohmann::json snapshot_skeleton(const Budget &b, nlohmann::json arena, nlohmann::json checks,
                                 const std::string &verdict)
{
    using nlohmann::json;
    return {{"schema", "arenascope.snapshot"},
            {"version", kSnapshotVersion},
            {"source",
             {{"elf", nullptr},
              {"located_by", "model"},
              {"descriptor_address", 0},
              {"abi", "1.1"},
              {"addr_size", b.abi.pointer},
              {"time", utc_now()},
              {"model", b.model_path},
              {"predicted_by", "arenascope-plan"},
              {"target", b.abi.name},
              {"arenascope_version", ARENASCOPE_VERSION}}},
            {"state",
             {{"invokes", 0},
              {"in_invoke", false},
              {"measured", false},
              {"measured_by", "model"},
              {"seq", 0},
              {"layout_generation", 0}}},
            {"arenas", json::array({arena})},
            {"stack",
             {{"low_addr", 0},
              {"high_addr", 0},
              {"size_bytes", 0},
              {"sp", nullptr},
              {"hwm_addr", nullptr},
              {"peak_bytes", nullptr},
              {"peak_is_lower_bound", false},
              {"source", "none"},
              {"overflowed", false},
              {"arena_end_addr", nullptr},
              {"room_bytes", nullptr},
              {"required_room_bytes", nullptr},
              {"rule_factor", kStackRuleFactor}}},
            {"guard", nullptr},
            {"checks", checks},
            {"fault", nullptr},
            {"verdict", verdict}};
}
}  // namespace

StreamedJson budget_snapshot_streamed(const Budget &b, bool compact, size_t *regions_out)
{
    using nlohmann::json;
    StreamedJson doc;
    const Subgraph &main = b.model.subgraphs[0];
    // Shared with the element functions, which run when the document is written.
    const auto inputs = std::make_shared<const Set>(main.inputs.begin(), main.inputs.end());
    const auto outputs = std::make_shared<const Set>(main.outputs.begin(), main.outputs.end());
    const Figures f = figures(b);
    const size_t head_regions = b.lifetimes.buffers.size();
    auto head = [&b, inputs, outputs](size_t index, Row &row) { head_region(b, *inputs, *outputs, index, row); };
    const auto runs = std::make_shared<const std::vector<Run>>(tail_runs(b.tail_regions, compact));
    auto tail = [&b, head_regions, runs](size_t index, Row &row) {
        tail_region(b, (*runs)[index - head_regions], index, row);
    };
    const size_t n_regions = head_regions + runs->size();
    if (regions_out) *regions_out = n_regions;
    std::vector<std::string> keys{"index",    "id",    "kind",  "offset", "address", "size_bytes", "first_use",
                                  "last_use", "flags", "label", "name",   "shape",   "dtype"};
    if (compact) keys.push_back("count");  // a run's; null on every other region
    json regions = doc.rows(n_regions, std::move(keys), [head, tail, head_regions](size_t i, Row &row) {
        i < head_regions ? head(i, row) : tail(i, row);
    });
    std::string verdict;
    json checks = snapshot_checks(b, f, n_regions, &verdict);
    doc.skeleton =
        snapshot_skeleton(b, arena_json(doc, b, f, n_regions, std::move(regions)), std::move(checks), verdict);
    return doc;
}

nlohmann::json budget_snapshot(const Budget &b)
{
    return budget_snapshot_streamed(b).whole();
}

}  // namespace arenascope::planner
