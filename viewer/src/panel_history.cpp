// arenascope viewer: the live history (bottom left, `arena live` snapshots only): the snapshot's
// live.history in three lanes, each on its own byte scale (layout.h's HistoryGeometry).
#include <cmath>

#include <fmt/format.h>

#include "panel.h"
#include "ui.h"

namespace arenascope {
namespace {

// "-500 B", "22.2 KiB": an axis label for a signed byte count.
std::string signed_bytes(double v)
{
    return (v < 0 ? "-" : "") + format_bytes(uint64_t(std::llround(std::fabs(v))));
}

// One series' line: a polyline per run of known values (a null breaks the line).
void draw_series(ImDrawList *dl, const Live &lv, const HistoryGeometry &g, int i)
{
    std::vector<ImVec2> pts;
    const ImU32 c = col(history_paint(i));
    auto flush = [&] {
        if (pts.size() == 1) rect(dl, pts[0].x - 1, pts[0].y - 1, pts[0].x + 1, pts[0].y + 1, history_paint(i));
        if (pts.size() > 1) dl->AddPolyline(pts.data(), int(pts.size()), c, 0, 2.0f);
        pts.clear();
    };
    for (const LivePoint &p : lv.history) {
        if (auto v = history_value(p, i)) {
            const ImVec2 q(g.x_of(p.t_unix_s), g.y_of(i, *v));
            const std::size_t n = pts.size();  // a plateau is one segment: the same pixels, fewer vertices
            if (n >= 2 && pts[n - 1].y == q.y && pts[n - 2].y == q.y) {
                pts[n - 1] = q;
            } else {
                pts.push_back(q);
            }
        } else {
            flush();
        }
    }
    flush();
}

class HistoryPanel : public Panel {
public:
    const char *name() const override { return "history"; }
    bool shown(const View &v) const override { return v.snapshot && v.snapshot->live; }
    // The plan gives up the bottom 20 % of the column, 120 to 200 px.
    Space wants(const View &) const override
    {
        Space s{Column::Left, 2, Space::Share};
        s.share = 0.2f, s.min_px = 120, s.max_px = 200;
        return s;
    }

    void draw(View &v, const Rect &r) override
    {
        const Live &lv = *v.snapshot->live;
        ImDrawList *dl = ImGui::GetWindowDrawList();
        frame_rect(dl, r);
        g_ = history_geometry(lv, r);
        text_fit(
            dl, r.x + 6, r.y + 3,
            fmt::format("Live history, each lane scaled to its own range (0 included): last {:.1f} s, {} refreshes",
                        g_.t1 - g_.t0, lv.history.size()),
            r.w - 12);
        draw_legend(dl, lv, r);
        for (int i = 0; i < HistoryGeometry::kSeries; i++) draw_lane(dl, lv, r, i);
    }

    void describe(const View &, const Rect &r, nlohmann::json &out) const override
    {
        nlohmann::json lanes = nlohmann::json::array();
        for (int i = 0; i < HistoryGeometry::kSeries; i++) {
            lanes.push_back({{"series", history_series_name(i)},
                             {"rect", rect_json(g_.lane[i])},
                             {"lo", g_.lo[i]},
                             {"hi", g_.hi[i]}});
        }
        out["history"] = {
            {"rect", rect_json(r)}, {"plot", rect_json(g_.plot)}, {"t0", g_.t0}, {"t1", g_.t1}, {"lanes", lanes}};
    }

private:
    // Each series' colour and its latest value (the last point is this refresh), then the bytes read.
    void draw_legend(ImDrawList *dl, const Live &lv, const Rect &r) const
    {
        float x = r.x + 6;
        for (int i = 0; i < HistoryGeometry::kSeries; i++) {
            const auto v = lv.history.empty() ? std::nullopt : history_value(lv.history.back(), i);
            const std::string t = fmt::format("{} {}", history_series_name(i),
                                              v ? fmt::format("{} B", std::llround(*v)) : std::string("unknown"));
            if (x + 40 > r.x + r.w) break;
            rect(dl, x, r.y + 22, x + 12, r.y + 32, history_paint(i));
            x += 16 + text_fit(dl, x + 16, r.y + 20, t, r.x + r.w - 8 - (x + 16)) + 20;
        }
        if (x + 60 < r.x + r.w) {
            text_fit(dl, x, r.y + 20, fmt::format("{} read per refresh", format_bytes(lv.bytes_last_refresh)),
                     r.x + r.w - 8 - x, style().text_dim.imgui());
        }
    }

    // Lane i: its scale's labels, its 0 line when the series went below, the separator above it,
    // and the series.
    void draw_lane(ImDrawList *dl, const Live &lv, const Rect &r, int i) const
    {
        const ImU32 grey = style().text_dim.imgui();
        const Rect &ln = g_.lane[i];
        // The lane's top value; its bottom is 0 unless the series went below (then that too,
        // and a line at 0).
        text_fit(dl, r.x + 4, ln.y - 2, signed_bytes(g_.hi[i]), g_.plot.x - r.x - 8, grey);
        if (g_.lo[i] < 0) {
            if (ln.h >= 26) text_fit(dl, r.x + 4, ln.y + ln.h - 12, signed_bytes(g_.lo[i]), g_.plot.x - r.x - 8, grey);
            const float y0 = g_.y_of(i, 0);
            dl->AddLine(ImVec2(ln.x, y0), ImVec2(ln.x + ln.w, y0), style().zero_line.imgui(), 1.0f);
        }
        if (i > 0) {
            const float ys = (g_.lane[i - 1].y + g_.lane[i - 1].h + ln.y) / 2;
            dl->AddLine(ImVec2(ln.x, ys), ImVec2(ln.x + ln.w, ys), style().lane_separator.imgui(), 1.0f);
        }
        if (!g_.known[i]) {
            text(dl, ln.x + 6, ln.y + ln.h / 2 - 7, std::string(history_series_name(i)) + ": unknown", grey);
            return;
        }
        draw_series(dl, lv, g_, i);
    }

    HistoryGeometry g_;  // the last frame's
};

const PanelRegistration kRegistered{[]() -> std::unique_ptr<Panel> { return std::make_unique<HistoryPanel>(); }};

}  // namespace
}  // namespace arenascope
