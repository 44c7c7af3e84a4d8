// --write-offline-plan (rewrite.h): choose, write and re-plan.
#include "arenascope/planner/rewrite.h"

#include <cstdio>

#include "arenascope/planner/offline_plan.h"

namespace arenascope::planner {

OfflineRewrite rewrite_offline_plan(const std::string &path, const std::string &out_label, const Abi &abi,
                                    int margin_pct, bool adapter, const KernelBuild &build, int64_t search_budget)
{
    OfflineRewrite r;
    const std::vector<uint8_t> original = read_model_bytes(path);
    Model model = read_model_file(path);
    r.before = make_budget_for(model, path, abi, margin_pct, adapter, 0, build, search_budget);
    if (!r.before.kernels.rejected.empty()) {
        r.refused = "TFLM would reject this model (" + r.before.kernels.rejected.front() + "): no offline plan written";
        return r;
    }
    if (!r.before.kernels.unmodelled.empty()) {
        std::string which;
        for (const auto &u : r.before.kernels.unmodelled) which += (which.empty() ? "" : "; ") + u;
        r.refused = "the scratch buffers of " + which +
                    " are not modelled, so no plan of this head can be trusted: no offline plan written";
        return r;
    }
    // The plan is free to move every tensor: leave the model's own offline plan out.
    const bool had_plan = !model.offline_offsets.empty();
    model.offline_offsets.clear();
    const Budget free =
        had_plan ? make_budget_for(model, path, abi, margin_pct, adapter, 0, build, search_budget) : r.before;
    r.planned_head = free.best.head;
    if (free.best.head >= r.before.greedy.head) {
        const Budget &b = r.before;
        r.no_saving = true;
        r.refused = b.greedy.head == b.bound.bytes
                        ? "TFLM's greedy plan already reaches the lower bound (" + std::to_string(b.bound.bytes) +
                              " B live at once, in scope " + std::to_string(b.bound.scope) +
                              "): no plan can make the head smaller; nothing written"
                        : "no plan smaller than TFLM's " + std::to_string(b.greedy.head) + " B head was found (" +
                              best_how(free) + "); nothing written";
        return r;
    }
    const std::vector<int32_t> offsets = offline_offsets(free.model, free.lifetimes, free.best);
    std::vector<uint8_t> bytes = with_offline_plan(original.data(), original.size(), offsets);
    r.after = make_budget_for(read_model(bytes.data(), bytes.size()), out_label, abi, margin_pct, adapter, 0, build,
                              search_budget);
    if (r.after.greedy.head >= r.before.greedy.head) {
        // Only scratch buffers, placed online around the fixed tensors, can undo the saving.
        r.no_saving = true;
        r.refused = "the plan found (" + std::to_string(free.best.head) +
                    " B) does not survive TFLM placing the scratch buffers around it (" +
                    std::to_string(r.after.greedy.head) + " B, not less than TFLM's own " +
                    std::to_string(r.before.greedy.head) + " B): nothing written";
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
    out += b.greedy.head == b.bound.bytes
               ? "  the head is now at its lower bound (" + std::to_string(b.bound.bytes) + " B live at once, scope " +
                     std::to_string(b.bound.scope) + "): no plan can be smaller\n"
               : "  the head is now " + std::to_string(b.greedy.head - b.bound.bytes) + " B above its lower bound (" +
                     std::to_string(b.bound.bytes) + " B)\n";
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
