// arenascope viewer: the summary panel (top right): the verdict, the chosen arena's figures, the
// stack's, every check, the pinned region; in compare mode the diff's lines first (panels.h).
#include "panel.h"
#include "ui.h"

namespace arenascope {
namespace {

class SummaryPanel : public Panel {
public:
    const char *name() const override { return "summary"; }
    bool shown(const View &) const override { return true; }
    Space wants(const View &) const override
    {
        Space s{Column::Right, 0, Space::Fill};
        s.shared_share = 0.40f;  // a panel that fills too (the fault) gets the rest
        return s;
    }

    void draw(View &v, const Rect &r) override
    {
        lines_.clear();
        if (!v.snapshot) return;
        const ScrollPanel panel("summary", r, style().frame.imgui(), more_);
        // A line wraps where the panel is narrow (the panel scrolls): no figure is cut off, and a
        // figure's continuation stays in its value column (after the 11-character label).
        const float value_column = ImGui::CalcTextSize("stack peak ").x;
        // Compare mode: what changed first, then the after snapshot's summary.
        std::vector<PanelLine> lines = v.diff ? diff_lines(*v.diff) : std::vector<PanelLine>{};
        const std::size_t first = lines.size();
        for (PanelLine &l : summary_lines(*v.snapshot, v.arena(), v.selected)) lines.push_back(std::move(l));
        if (first > 0 && lines.size() > first) lines[first].gap_before = 6;
        lines_ = draw_lines(panel, lines, value_column);
    }

    void describe(const View &, const Rect &r, nlohmann::json &out) const override
    {
        out["summary"] = rect_json(r);
        out["summary_lines"] = lines_;
    }

    void report(const Snapshot &s, std::vector<ReportText> &out) const override
    {
        out.push_back({"Summary", "summary", summary_lines(s, s.arenas.empty() ? nullptr : &s.arenas[0], -1)});
    }

    bool cut() const override { return more_; }

private:
    std::vector<std::string> lines_;  // its lines in order, before fitting (not the details)
    bool more_ = false;               // its text did not fit at the last frame
};

const PanelRegistration kRegistered{[]() -> std::unique_ptr<Panel> { return std::make_unique<SummaryPanel>(); }};

}  // namespace
}  // namespace arenascope
