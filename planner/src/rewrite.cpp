// --write-offline-plan (rewrite.h): choose, write and re-plan.
#include "arenascope/planner/rewrite.h"

#include <cstdio>

#include "arenascope/planner/offline_plan.h"

namespace arenascope::planner {

namespace {
// The model as read, and a broken offline plan of its own (r->broken_plan) when the reader
// refuses it.
Model read_for_rewrite(const std::string &path, const std::vector<uint8_t> &original, OfflineRewrite *r)
{
    Model model;
    try {
        model = read_model(original.data(), original.size());
    } catch (const OfflinePlanError &e) {
        // A plan the reader refuses (a negative offset, the wrong count, truncated) is replaced too;
        // any other fault of the model is the model's.
        model = read_model(original.data(), original.size(), false);
        r->broken_plan = e.what();
    } catch (const ModelError &e) {
        throw ModelError(path + ": " + e.what());
    }
    return model;
}

// Nothing is written, and the model keeps its broken plan: say which check it fails (issue 37),
// that the figures leave it out, and, when only the saving is missing, what to do with it.
std::string broken_note(const OfflineRewrite &r, bool no_saving)
{
    if (r.broken_plan.empty()) return std::string();
    return ". The model's own offline plan is broken: " + r.broken_plan +
           (no_saving ? ". These figures are TFLM's plan without it, but it stays in the model, and TFLM "
                        "would use it as it is (or reject the model): remove that metadata entry (re-export "
                        "the model without it) and TFLM plans as these figures say"
                      : "; it stays in the model too");
}

// A model TFLM rejects, or whose scratch buffers are not modelled, gets no plan: r->refused says why.
bool refused_before_planning(OfflineRewrite *r)
{
    if (!r->before.kernels.rejected.empty()) {
        r->refused = "TFLM would reject this model (" + r->before.kernels.rejected.front() +
                     "): no offline plan written" + broken_note(*r, false);
        return true;
    }
    if (!r->before.kernels.unmodelled.empty()) {
        std::string which;
        for (const auto &u : r->before.kernels.unmodelled) which += (which.empty() ? "" : "; ") + u;
        r->refused = "the scratch buffers of " + which +
                     " are not modelled, so no plan of this head can be trusted: no offline plan written" +
                     broken_note(*r, false);
        return true;
    }
    return false;
}

// Why no plan is written when the search found none smaller than the head TFLM plans now.
std::string no_smaller_plan(const Budget &b, bool plan_counts, const std::string &how)
{
    const std::string whose = plan_counts ? "the model's offline plan" : "TFLM's greedy plan";
    return b.greedy.head == b.bound.bytes
               ? std::string(plan_counts ? "The model's offline plan" : "TFLM's greedy plan") +
                     " already reaches the lower bound (" + std::to_string(b.bound.bytes) +
                     " B live at once, in scope " + std::to_string(b.bound.scope) +
                     "): no plan can make the head smaller; nothing written"
               : "no plan smaller than the " + std::to_string(b.greedy.head) + " B head of " + whose + " was found (" +
                     how + "); nothing written";
}
}  // namespace

OfflineRewrite rewrite_offline_plan(const std::string &path, const std::string &out_label, const Abi &abi,
                                    int margin_pct, bool adapter, const KernelBuild &build, int64_t search_budget)
{
    OfflineRewrite r;
    const std::vector<uint8_t> original = read_model_bytes(path);
    Model model = read_for_rewrite(path, original, &r);
    const bool had_plan = !model.offline_offsets.empty();
    Model without = model;
    without.offline_offsets.clear();
    // The plan is free to move every tensor: the model is planned without its own offline plan.
    const Budget free = make_budget_for(without, path, abi, margin_pct, adapter, 0, build, search_budget);
    try {
        r.before = had_plan ? make_budget_for(model, path, abi, margin_pct, adapter, 0, build, search_budget) : free;
    } catch (const ModelError &e) {  // its own plan is broken (overlapping, out of range): replaced
        r.before = free;
        r.broken_plan = e.what();
        if (r.broken_plan.rfind(path + ": ", 0) == 0) r.broken_plan.erase(0, path.size() + 2);  // said once
    }
    const bool plan_counts = had_plan && r.broken_plan.empty();
    if (refused_before_planning(&r)) return r;
    r.planned_head = free.best.head;
    r.how = best_how(free);
    const Budget &b = r.before;
    if (free.best.head >= b.greedy.head) {
        r.no_saving = true;
        r.refused = no_smaller_plan(b, plan_counts, r.how);
        r.refused += broken_note(r, true);
        return r;
    }
    std::vector<uint8_t> bytes;
    try {
        bytes =
            with_offline_plan(original.data(), original.size(), offline_offsets(free.model, free.lifetimes, free.best));
    } catch (const ModelError &e) {
        throw ModelError(path + ": " + e.what());
    }
    r.after = make_budget_for(read_model(bytes.data(), bytes.size()), out_label, abi, margin_pct, adapter, 0, build,
                              search_budget);
    if (r.after.greedy.head >= b.greedy.head) {
        // Only scratch buffers, placed online around the fixed tensors, can undo the saving.
        r.no_saving = true;
        r.refused = "the plan found (" + std::to_string(free.best.head) +
                    " B) does not survive TFLM placing the scratch buffers around it (" +
                    std::to_string(r.after.greedy.head) + " B, not less than " + std::to_string(b.greedy.head) +
                    " B now): nothing written" + broken_note(r, true);
        return r;
    }
    if (r.after.minimum.bytes >= b.minimum.bytes) {
        // The arena is what a device pays for: a smaller head that does not shrink it is no saving.
        r.no_saving = true;
        r.refused = "the head would be " + std::to_string(b.greedy.head - r.after.greedy.head) +
                    " B smaller, but the minimum arena stays " + std::to_string(b.minimum.bytes) + " B: it is set by " +
                    b.arena.steps[b.minimum.binding].what + ", not by the head; nothing written" + broken_note(r, true);
        return r;
    }
    r.bytes = std::move(bytes);
    return r;
}

std::string rewrite_table(const OfflineRewrite &r, const std::string &out_path)
{
    const Budget &a = r.before, &b = r.after;
    std::string out =
        "wrote " + out_path + ": " + a.model_path +
        " with the best memory plan found as TFLM's offline plan (metadata \"OfflineMemoryAllocation\")\n";
    if (!r.broken_plan.empty())
        out += "  the model's own offline plan is invalid (" + r.broken_plan +
               "): replaced; \"before\" is TFLM's plan without it\n";
    else if (!a.model.offline_offsets.empty())
        out += "  the model's own offline plan is replaced; \"before\" is TFLM's plan with it\n";
    char line[256];
    std::snprintf(line, sizeof line, "  %-26s %10s %10s %10s\n", "bytes", "before", "after", "saved");
    out += line;
    auto row = [&](const char *what, int64_t x, int64_t y) {
        std::snprintf(line, sizeof line, "  %-26s %10lld %10lld %10lld\n", what, static_cast<long long>(x),
                      static_cast<long long>(y), static_cast<long long>(x - y));
        out += line;
    };
    row("head (non-persistent)", a.greedy.head, b.greedy.head);
    row(a.minimum_exact() ? "minimum arena" : "minimum arena (a floor)", a.minimum.bytes, b.minimum.bytes);
    const std::string rec = "recommended (+" + std::to_string(a.margin_pct) + " %)";
    row(rec.c_str(), a.recommended, b.recommended);
    int fixed = 0, online = 0;
    for (const Buffer &x : b.lifetimes.buffers) (x.offline_offset >= 0 ? fixed : online) += 1;
    out += "  the plan: " + r.how + "\n";
    out += "  offline-planned: " + std::to_string(fixed) +
           " tensors; planned online by TFLM: " + std::to_string(online) +
           " (scratch buffers have no tensor to carry an offset)\n";
    if (b.greedy.head > r.planned_head)
        out += "  TFLM's placing of the scratch buffers around the fixed tensors costs " +
               std::to_string(b.greedy.head - r.planned_head) + " B over the plan found (" +
               std::to_string(r.planned_head) + " B)\n";
    out += "Use the written model in the firmware and size the arena for \"after\"; check on the target with "
           "`arena plan` (offline-planned regions are flagged \"offline\").\n";
    return out;
}

}  // namespace arenascope::planner
