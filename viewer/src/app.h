// arenascope viewer: the window's state and its views (Dear ImGui). Drawing only: every figure
// comes from the snapshot; every position from layout.h.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "diffdoc.h"
#include "layout.h"
#include "link.h"
#include "mapview.h"
#include "pictures.h"
#include "snapshot.h"

namespace arenascope {

class App {
public:
    void set_snapshot(Snapshot s, std::string source);
    // Compare mode: `before` is drawn above the snapshot, arena by arena, and the regions the
    // plugin's diff (diffdoc.h) says changed carry the diff stripe in both.
    void set_before(Snapshot s, std::string source)
    {
        before_ = std::move(s), before_source_ = std::move(source);
        strips_.clear(), build_strips();
    }
    void set_diff(DiffDoc d) { diff_ = std::move(d), build_strips(); }
    void set_error(std::string e) { error_ = std::move(e); }
    void set_link(std::unique_ptr<Link> link) { link_ = std::move(link); }
    bool has_snapshot() const { return snapshot_.has_value(); }
    // Forgets the rasterised regions, so the next frame redraws them from the snapshot's index
    // (what a pin or a resize costs; a zoom or a pan redraws the maps only: --bench-motion);
    // --bench-rebuild times it.
    void invalidate()
    {
        for (MapStrip &st : strips_) st.key.clear();
        plan_drawn_ = false;
    }
    // --bench-motion: what a mouse does to every map at frame `frame`, in a cycle of 60 frames:
    // the wheel zooms in around a point (20 frames), a drag pans right then left (20), the wheel
    // zooms out (20). The same axis calls as the mouse's, so every frame rebuilds the maps.
    void bench_motion(int frame);
    Link *link() { return link_.get(); }
    // Off-screen (--screenshot): no interactive hints, no pointer.
    void set_offscreen(bool on) { offscreen_ = on; }
    // The map's view at the next snapshot: zoom times the whole arena, centred on center bytes
    // from its base (none: the middle).
    void set_view(double zoom, std::optional<double> center) { view_zoom_ = zoom, view_center_ = center; }
    // The summary or the fault panel did not show all its text at the last frame.
    bool panels_cut() const { return summary_more_ || fault_more_; }

    // Polls the link, then draws one frame into a window covering the whole viewport.
    void frame(float width, float height);
    // The geometry of the last frame as JSON, for pixel tests (--layout-out).
    std::string layout_json() const;

private:
    void draw_status(const ScreenLayout &l);
    // One arena's map (strips_ holds one per arena shown).
    struct MapStrip {
        int arena = -1;       // its position in the snapshot's arenas
        bool before = false;  // compare mode: an arena of the snapshot before (set_before)
        Rect rect;
        AddressAxis axis;
        bool axis_init = false;
        MapIndex index;  // the regions by lane and address, once per snapshot (map_index)
        int lane_count = 1;
        std::vector<bool> damaged;  // regions in the damage colour (damaged_regions)
        std::vector<bool> changed;  // regions the diff marks (compare mode)
        MapPicture map;             // the display list at the last rebuild (mapview.h)
        Raster map_raster;
        unsigned map_tex = 0;  // its GL texture
        std::string key, map_title;
        float bar_y0 = 0, bar_y1 = 0, lanes_top = 0, lane_h = 0;  // geometry of the last frame
    };
    static constexpr int kMaxStrips = 4;  // arenas drawn at once; Tab brings the others
    // The strips for the snapshot (and the one before), keeping each one's zoom where it stays.
    void build_strips();
    // `st` is an element of strips_: nothing it calls may rebuild strips_ (select_arena,
    // build_strips); a click selects by setting arena_index_, applied at the next frame.
    void draw_strip(MapStrip &st, const Arena &a, const Rect &r);
    const MapStrip *chosen_strip() const
    {
        for (const MapStrip &st : strips_)
            if (st.arena == arena_index_ && !st.before) return &st;
        return strips_.empty() ? nullptr : &strips_[0];
    }
    void draw_ram(const Arena *a, const Rect &r);
    void draw_plan(const Arena &a, const Rect &r);
    void draw_summary(const Arena *a, const Rect &r);
    void draw_legend(const Rect &r);
    void draw_history(const Live &live, const Rect &r);
    // The panel below the summary: the post-mortem's verdicts, then the fault's decode (panels.h).
    void draw_fault(const Rect &r);
    bool has_postmortem() const { return snapshot_ && snapshot_->tflm && !snapshot_->tflm->verdicts.empty(); }
    void draw_region_tooltip(const Arena &a, const Region &reg);

    std::optional<Snapshot> snapshot_;
    std::optional<Snapshot> before_;  // compare mode
    std::string before_source_;
    std::optional<DiffDoc> diff_;
    std::string source_, error_;
    std::unique_ptr<Link> link_;
    unsigned serial_ = 0;  // +1 per snapshot: rasters key on it
    Raster plan_raster_;
    unsigned plan_tex_ = 0;             // the plan raster's GL texture
    std::string plan_key_;              // the snapshot, arena and panel plan_ and plan_order_ are of
    std::vector<PlanItem> plan_order_;  // plan_order(): the boxes' draw order
    bool plan_drawn_ = false;           // plan_raster_ is of plan_key_, with plan_selected_ pinned
    int plan_selected_ = -1;
    int selected_ = -1;
    int arena_index_ = 0;  // which arena the map and plan show (arrows in the map title switch)
public:
    // Shows arena i: its lanes and draw orders are rebuilt (they index that arena's regions).
    void select_arena(int i)
    {
        if (i != arena_index_) selected_ = -1, plan_key_.clear();  // a pin and a plan are of one arena
        arena_index_ = i;
        build_strips();
    }

private:
    // geometry of the last frame
    ScreenLayout layout_;
    PlanGeometry plan_;
    RamColumn ram_;
    HistoryGeometry history_;
    std::string status_text_;                         // the whole status line, before fitting
    bool summary_more_ = false, fault_more_ = false;  // the panel's text did not fit at the last frame
    std::vector<std::string> summary_lines_;          // the summary's lines in order, before fitting (--layout-out)
    std::vector<std::string> fault_lines_;            // the fault / post-mortem panel's lines, likewise
    std::vector<MapStrip> strips_;                    // the maps drawn, one per arena (at most kMaxStrips)
    bool status_lost_ = false;
    bool offscreen_ = false;
    double view_zoom_ = 1;
    std::optional<double> view_center_;
};

}  // namespace arenascope
