// arenascope viewer: the memory plan (left, below the maps): operator index across, offset down,
// one rectangle per region lifetime, the live-bytes curve and the lower bound (pictures.h).
#include <cmath>

#include <fmt/format.h>

#include "panel.h"
#include "svg.h"
#include "ui.h"

namespace arenascope {
namespace {

class PlanPanel : public Panel {
public:
    const char *name() const override { return "plan"; }
    bool shown(const View &) const override { return true; }
    Space wants(const View &) const override { return {Column::Left, 1, Space::Fill}; }

    void draw(View &v, const Rect &r) override
    {
        const Arena *a = v.arena();
        if (!a) return;
        ImDrawList *dl = ImGui::GetWindowDrawList();
        const Rect area{r.x + 60, r.y + 24, r.w - 70, r.h - 44};
        const int px = int(std::floor(area.x)), py = int(std::floor(area.y));
        const int pw = std::max(1, int(area.w)), ph = std::max(1, int(area.h) + 1);
        prepare(v, *a, area);
        if (!drawn_ || drawn_selected_ != v.selected) {
            drawn_ = true, drawn_selected_ = v.selected;
            raster_.reset(pw, ph, colour(Paint::Background));
            plan_boxes(plan_, v.selected, order_, [&](const Shape &b) {
                raster_.fill(b.x0 - float(px), b.y0 - float(py), b.x1 - float(px), b.y1 - float(py), b.colour);
            });
            upload(tex_, raster_);
        }
        opaque_image(dl, tex_, float(px), float(py), float(px + pw), float(py + ph));
        draw_picture(dl, plan_overlay(*a, plan_, r));
        const ImGuiIO &io = ImGui::GetIO();
        if (area.contains(io.MousePos.x, io.MousePos.y)) {
            const int hit = hit_plan(a->regions, plan_, io.MousePos.x, io.MousePos.y);
            if (hit >= 0) {
                region_tooltip(*a, a->regions[hit]);
                if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) v.selected = hit;
            }
        }
    }

    void describe(const View &, const Rect &r, nlohmann::json &out) const override
    {
        out["plan"] = rect_json(r);
        out["plan_area"] = {{"rect", rect_json(plan_.area)}, {"scopes", plan_.scopes}, {"extent", plan_.extent}};
    }

    void invalidate() override { drawn_ = false; }

    ReportSpace report_space() const override { return {ReportSpace::Row, 900}; }
    // Every box (no pin), then the overlay, as the window draws them.
    float report_picture(Svg &svg, const Snapshot &s, int ai, const Rect &r) const override
    {
        if (ai < 0) return r.h;
        const Arena &a = s.arenas[std::size_t(ai)];
        const PlanGeometry g = plan_geometry(a, Rect{r.x + 60, r.y + 24, r.w - 70, r.h - 44});
        for (const Shape &b : plan_boxes(a, g, -1)) svg.box(b.x0, b.y0, b.x1, b.y1, b.colour);
        svg.picture(plan_overlay(a, g, r));
        return r.h;
    }

private:
    // The geometry (it reads every region for its extent) and the draw order once per snapshot,
    // arena and panel size; the raster again only when the pin changes too.
    void prepare(const View &v, const Arena &a, const Rect &area)
    {
        const std::string key =
            fmt::format("{}/{}/{}/{}/{}/{}", v.serial, v.arena_index, area.x, area.y, area.w, area.h);
        if (key == key_) return;
        key_ = key;
        plan_ = plan_geometry(a, area);
        order_ = plan_order(a);
        drawn_ = false;
    }

    PlanGeometry plan_;
    Raster raster_;
    unsigned tex_ = 0;             // the raster's GL texture
    std::string key_;              // the snapshot, arena and panel plan_ and order_ are of
    std::vector<PlanItem> order_;  // plan_order(): the boxes' draw order
    bool drawn_ = false;           // raster_ is of key_, with drawn_selected_ pinned
    int drawn_selected_ = -1;
};

const PanelRegistration kRegistered{[]() -> std::unique_ptr<Panel> { return std::make_unique<PlanPanel>(); }};

}  // namespace
}  // namespace arenascope
