// arenascope viewer: the status line across the top: where the snapshot comes from (the file, or
// the live link's state and the refresh's rate and age), the inference count and the verdict.
#include <chrono>

#include <fmt/format.h>

#include "link.h"
#include "panel.h"
#include "ui.h"

namespace arenascope {
namespace {

double now_unix_s()
{
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// What the snapshot is: a model's prediction, a RAM dump, agentless, or the agent's figures.
std::string what_snapshot(const Snapshot &s)
{
    if (!s.model.empty()) {
        const std::string &m = s.model;  // the file name: a path can be any length
        const size_t slash = m.find_last_of('/');
        return fmt::format("  |  model {}: predicted by arenascope-plan for {}, no target  |  verdict {}",
                           (slash == std::string::npos ? m : m.substr(slash + 1)).substr(0, 80), s.target, s.verdict);
    }
    if (!s.dump.empty()) return fmt::format("  |  RAM DUMP, not a live target: {}  |  verdict {}", s.dump, s.verdict);
    if (s.located_by.rfind("agentless", 0) == 0) {
        return fmt::format("  |  agentless: TFLM's own objects, no agent (inference count and canary unavailable)  |  "
                           "verdict {}",
                           s.verdict);
    }
    return fmt::format("  |  {} inference(s), {}  |  verdict {}", s.invokes,
                       s.measured ? "measured by " + s.measured_by : "not measured", s.verdict);
}

class StatusPanel : public Panel {
public:
    const char *name() const override { return "status"; }
    bool shown(const View &) const override { return true; }
    Space wants(const View &) const override { return {Column::Status, 0, Space::Fixed, kStatusHeight}; }

    void draw(View &v, const Rect &r) override
    {
        ImDrawList *dl = ImGui::GetWindowDrawList();
        // A live refresh first (its rate, its age, or that the reader lost the target), then the
        // link's state unless the live part already says it is connected, then the snapshot.
        const Snapshot *snap = v.snapshot;
        const Live *lv = snap && snap->live ? &*snap->live : nullptr;
        lost_ = false;
        const std::string live = lv ? live_status(*lv, now_unix_s(), lost_) : "";
        std::string s = !v.link                                           ? "file: " + v.source
                        : lv && v.link->state() == Link::State::Connected ? ""
                                                                          : v.link->status();
        if (snap && !snap->tflm_error.empty()) {  // said before the rest, which the width may cut
            s += "  |  post-mortem not shown: " + snap->tflm_error;
        }
        if (snap && !snap->tasks_error.empty()) s += "  |  RTOS tasks not shown: " + snap->tasks_error;
        if (snap) s += what_snapshot(*snap);
        if (!v.link && !snap && !v.error.empty()) s += " (cannot show it: the reason is below)";
        if (v.link && snap && !v.link->last_error().empty()) s += "  |  last message refused: " + v.link->last_error();
        if (s.rfind("  |  ", 0) == 0) s.erase(0, 5);
        if (!live.empty() && !s.empty()) s = "  |  " + s;
        text_ = live + s;
        float x = r.x;
        if (!live.empty())
            x += text_fit(dl, x, r.y + 3, live, r.w, lost_ ? col(Paint::RuleFail) : style().text.imgui());
        if (r.x + r.w - x > 40) text_fit(dl, x, r.y + 3, s, r.x + r.w - x);
    }

    void describe(const View &, const Rect &r, nlohmann::json &out) const override
    {
        out["status"] = {{"rect", rect_json(r)}, {"text", text_}, {"lost", lost_}};
    }

private:
    std::string text_;  // the whole line, before fitting
    bool lost_ = false;
};

const PanelRegistration kRegistered{[]() -> std::unique_ptr<Panel> { return std::make_unique<StatusPanel>(); }};

}  // namespace
}  // namespace arenascope
