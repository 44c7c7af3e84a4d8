// arenascope viewer: the legend (bottom right): every colour and what it means, areas as squares,
// lines (high-water mark, SP, live bytes, lower bound) as lines.
#include <iterator>

#include "panel.h"
#include "svg.h"
#include "ui.h"

namespace arenascope {
namespace {

constexpr float kRow = 15;

// The legend: every colour and its name, one column.
void report_legend(Svg &svg, const Rect &r)
{
    svg.frame(r.x, r.y, r.w, r.h);
    const Paint paints[] = {Paint::Tensor,    Paint::Scratch,      Paint::Temp,           Paint::Persistent,
                            Paint::Metadata,  Paint::FreeIntact,   Paint::FreeUnmeasured, Paint::FreeTouched,
                            Paint::Guard,     Paint::GuardTouched, Paint::StackUsed,      Paint::StackUnused,
                            Paint::HighWater, Paint::StackPointer, Paint::LiveCurve,      Paint::LowerBound,
                            Paint::Cluster,   Paint::Offline};
    float y = r.y + 6;
    for (Paint p : paints) {
        const bool line =
            p == Paint::HighWater || p == Paint::StackPointer || p == Paint::LiveCurve || p == Paint::LowerBound;
        if (line) {
            svg.line(r.x + 5, y + 7, r.x + 19, y + 7, colour(p), 2);
        } else {
            svg.box(r.x + 6, y + 2, r.x + 18, y + 12, colour(p));
        }
        svg.text(r.x + 24, y, paint_name(p), style().text);
        y += kReportLineH;
    }
}

class LegendPanel : public Panel {
public:
    const char *name() const override { return "legend"; }
    bool shown(const View &) const override { return true; }
    // As tall as its content: one column of 16 rows where 38 % of the column holds it, else two
    // columns of 8; two columns when the column is shared (the fault panel).
    Space wants(const View &v) const override
    {
        const float one = 16 * kRow + 8, two = 8 * kRow + 8;
        Space s{Column::Right, 3, Space::Fixed, (v.body_h - kLayoutMargin) * 0.38f >= one ? one : two};
        s.shared_px = two;
        return s;
    }

    // In two columns of short names, split evenly, when one column does not fit; the full name
    // shows under the mouse (a name cut with "..." too).
    void draw(View &v, const Rect &r) override
    {
        if (!v.snapshot) return;
        ImDrawList *dl = ImGui::GetWindowDrawList();
        frame_rect(dl, r);
        const Paint paints[] = {Paint::Tensor,    Paint::Scratch,      Paint::Temp,           Paint::Persistent,
                                Paint::Metadata,  Paint::FreeIntact,   Paint::FreeUnmeasured, Paint::FreeTouched,
                                Paint::Guard,     Paint::GuardTouched, Paint::StackUsed,      Paint::StackUnused,
                                Paint::HighWater, Paint::StackPointer, Paint::LiveCurve,      Paint::LowerBound};
        const int n = int(std::size(paints));
        const int fit = std::max(1, int((r.h - 8) / kRow));
        const int columns = fit >= n ? 1 : 2;
        const int rows = (n + columns - 1) / columns;
        const float cw = r.w / float(columns);
        const ImVec2 mouse = ImGui::GetIO().MousePos;
        for (int i = 0; i < n; i++) {
            if (i % rows >= fit) continue;
            const Paint p = paints[i];
            const float x = r.x + float(i / rows) * cw, y = r.y + 4 + float(i % rows) * kRow;
            const bool line =
                p == Paint::HighWater || p == Paint::StackPointer || p == Paint::LiveCurve || p == Paint::LowerBound;
            if (line) {
                dl->AddLine(ImVec2(x + 5, y + 7), ImVec2(x + 19, y + 7), col(p), 2.0f);
            } else {
                rect(dl, x + 6, y + 2, x + 18, y + 12, p);
            }
            const float w = text_fit(dl, x + 22, y, columns == 1 ? paint_name(p) : paint_short_name(p), cw - 26);
            if (mouse.x >= x && mouse.x < x + 22 + w && mouse.y >= y && mouse.y < y + kRow) {
                ImGui::SetTooltip("%s", paint_name(p));
            }
        }
    }

    ReportSpace report_space() const override { return {ReportSpace::Row, 0}; }  // the rest of the row
    float report_picture(Svg &svg, const Snapshot &, int, const Rect &r) const override
    {
        report_legend(svg, r);
        return r.h;
    }
};

const PanelRegistration kRegistered{[]() -> std::unique_ptr<Panel> { return std::make_unique<LegendPanel>(); }};

}  // namespace
}  // namespace arenascope
