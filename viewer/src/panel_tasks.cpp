// arenascope viewer: the RTOS tasks panel (right, above the legend; snapshots with `tasks` only):
// each task's name and state, its stack's range, its peak and high-water mark (the never-used
// bytes, the TCB and SP under the mouse), and OVERFLOW in red where the plugin says its stack overflowed (or its fill is gone down
// to pxStack). Every figure is the snapshot's (docs/snapshot-schema.md, "tasks"): none is
// computed here. The panel is as tall as its lines, at most 30 % of the column; it scrolls.
#include <algorithm>

#include <fmt/format.h>

#include "panel.h"
#include "ui.h"

namespace arenascope {
namespace {

// A line in the window: ImGui's 13 px line and the 3 px the panel leaves below each (ui.h's
// ScrollPanel::text); the panel's padding and border take 8 px, kPad leaves some more.
constexpr float kLineH = 16, kPad = 6;

std::string address(const std::optional<uint64_t> &a)
{
    return a ? fmt::format("{:#x}", *a) : std::string("?");
}

// A task's headline: its name, state and priority, and OVERFLOW (red) where the plugin says its
// stack overflowed or its fill is gone down to pxStack. Short, for the narrow column.
PanelLine headline(const RtosTask &t)
{
    const bool bad = t.overflowed || t.peak_is_lower_bound;
    std::string s = t.name.empty() ? std::string("(no name)") : t.name;
    s += "  " + (t.state.empty() ? std::string("?") : t.state);
    if (t.priority) s += fmt::format(" p{}", *t.priority);
    if (bad) s += "  OVERFLOW";
    std::string tip = fmt::format("TCB {:#x}; SP {}{}", t.tcb_addr, address(t.sp), t.sp_live ? " (live)" : "");
    if (t.never_used_bytes) tip += fmt::format("; never used {} B", *t.never_used_bytes);
    if (!t.below.empty()) tip += "; below the stack: " + t.below;
    if (t.room_bytes && t.required_room_bytes)
        tip += fmt::format("; room {} B, the rule asks {} B", *t.room_bytes, *t.required_room_bytes);
    return {s, bad ? colour(Paint::RuleFail) : style().text, 0, false, 3, false, tip};
}

// Below it: the stack's range; then its peak (">= " when a minimum) and high-water mark.
std::vector<PanelLine> figure_lines(const RtosTask &t)
{
    const std::string peak =
        t.peak_bytes ? fmt::format("peak {}{} B", t.peak_is_lower_bound ? ">= " : "", *t.peak_bytes) : "peak unknown";
    return {{fmt::format("stack {}..{}", address(t.low_addr), address(t.high_addr)),
             style().text_grey,
             12,
             false,
             0,
             true,
             {}},
            {peak + "  HWM " + address(t.hwm_addr), style().text_grey, 12, false, 0, true, {}}};
}

// The panel's lines: a heading, then each task (headline, stack line, its problems), then the
// walk's problems.
std::vector<PanelLine> tasks_lines(const RtosTasks &ts)
{
    std::vector<PanelLine> out;
    const Rgba warn = colour(Paint::Temp);
    out.push_back({fmt::format("RTOS tasks ({}): {}", ts.kernel.empty() ? "?" : ts.kernel, ts.list.size()),
                   style().text,
                   0,
                   false,
                   0,
                   false,
                   {}});
    for (const RtosTask &t : ts.list) {
        out.push_back(headline(t));
        for (PanelLine &l : figure_lines(t)) out.push_back(std::move(l));
        for (const std::string &p : t.problems) out.push_back({p, warn, 12, false, 0, true, {}});
    }
    for (const std::string &p : ts.problems) out.push_back({p, warn, 0, false, 3, false, {}});
    return out;
}

// The panel's lines: the tasks', or why they were refused.
std::vector<PanelLine> lines_of(const Snapshot &s)
{
    if (s.tasks) return tasks_lines(*s.tasks);
    return {{"RTOS tasks not shown: " + s.tasks_error, colour(Paint::Temp), 0, false, 0, false, {}}};
}

class TasksPanel : public Panel {
public:
    const char *name() const override { return "tasks"; }
    // Shown for a snapshot with tasks, and for one whose tasks were refused: then its one line says
    // why (path-named, as the status line does), on screen and in the report, which must not drop
    // them without a word.
    bool shown(const View &v) const override
    {
        return v.snapshot && (v.snapshot->tasks || !v.snapshot->tasks_error.empty());
    }
    // As tall as its lines (unwrapped) and one more (the "more below" mark's room, so that the
    // mark alone never cuts the last line), within 90 px and 30 % of the column. Only a panel the
    // 30 % held down is cut for want of room (cut(): a taller screenshot shows it whole); one
    // whose wrapped lines overflow its own height scrolls.
    Space wants(const View &v) const override
    {
        const std::vector<PanelLine> lines = lines_of(*v.snapshot);
        float h = 2 * kPad + kLineH;
        for (const PanelLine &l : lines) h += kLineH + float(l.gap_before);
        const float most = std::max(90.f, v.body_h * 0.30f);
        capped_ = h > most;
        return {Column::Right, 2, Space::Fixed, std::clamp(h, 90.f, most)};
    }

    void draw(View &v, const Rect &r) override
    {
        const ScrollPanel panel("tasks", r, style().frame.imgui(), more_);
        lines_ = draw_lines(panel, lines_of(*v.snapshot), 0, true);
    }

    void describe(const View &, const Rect &r, nlohmann::json &out) const override
    {
        out["tasks"] = {{"rect", rect_json(r)}, {"lines", lines_}, {"more", more_}};
    }

    void report(const Snapshot &s, std::vector<ReportText> &out) const override
    {
        out.push_back({"RTOS tasks", "tasks", lines_of(s)});
    }

    bool cut() const override { return more_ && capped_; }

private:
    std::vector<std::string> lines_;  // its lines at the last frame (the details too)
    bool more_ = false;
    mutable bool capped_ = false;  // the last wants() held the panel below its lines' height
};

const PanelRegistration kRegistered{[]() -> std::unique_ptr<Panel> { return std::make_unique<TasksPanel>(); }};

}  // namespace
}  // namespace arenascope
