// arenascope viewer: the fault panel (right, below the summary), for snapshots with a fault or
// post-mortem verdicts: the post-mortem's verdicts, then the fault's decode (panels.h).
#include "panel.h"
#include "ui.h"

namespace arenascope {
namespace {

bool has_fault(const Snapshot &s)
{
    return s.fault || (s.tflm && !s.tflm->verdicts.empty());
}

class FaultPanel : public Panel {
public:
    const char *name() const override { return "fault"; }
    bool shown(const View &v) const override { return v.snapshot && has_fault(*v.snapshot); }
    // The summary gives up the rest of its column (it keeps 40 %).
    Space wants(const View &) const override { return {Column::Right, 1, Space::Fill}; }

    void draw(View &v, const Rect &r) override
    {
        lines_.clear();
        const ScrollPanel panel("fault", r, col(Paint::RuleFail), more_);
        lines_ = draw_lines(panel, fault_lines(*v.snapshot, true), 0, true);
    }

    void describe(const View &, const Rect &r, nlohmann::json &out) const override
    {
        out["fault"] = rect_json(r);
        out["fault_lines"] = lines_;
        out["fault_more"] = more_;
    }

    void report(const Snapshot &s, std::vector<ReportText> &out) const override
    {
        std::vector<PanelLine> lines = fault_lines(s, false);
        if (!lines.empty()) out.push_back({"Fault", "fault", std::move(lines)});
    }

    bool cut() const override { return more_; }

private:
    std::vector<std::string> lines_;
    bool more_ = false;
};

const PanelRegistration kRegistered{[]() -> std::unique_ptr<Panel> { return std::make_unique<FaultPanel>(); }};

}  // namespace
}  // namespace arenascope
