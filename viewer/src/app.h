// arenascope viewer: the window's state and its panels (Dear ImGui). Drawing only: every figure
// comes from the snapshot; every position from layout.h. The window knows no panel by name: it
// asks every registered one (panel.h) for its space, then to draw and to describe itself.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "diffdoc.h"
#include "layout.h"
#include "link.h"
#include "panel.h"
#include "snapshot.h"

namespace arenascope {

class App {
public:
    App();
    ~App();
    void set_snapshot(Snapshot s, std::string source);
    // Compare mode: `before` is drawn above the snapshot, arena by arena, and the regions the
    // plugin's diff (diffdoc.h) says changed carry the diff stripe in both.
    void set_before(Snapshot s, std::string source);
    void set_diff(DiffDoc d);
    void set_error(std::string e) { error_ = std::move(e); }
    void set_link(std::unique_ptr<Link> link) { link_ = std::move(link); }
    bool has_snapshot() const { return snapshot_.has_value(); }
    // Forgets what the panels rasterised, so the next frame redraws it from the snapshot's index
    // (what a pin or a resize costs; a zoom or a pan redraws the maps only: --bench-motion);
    // --bench-rebuild times it.
    void invalidate();
    // --bench-motion: what a mouse does at frame `frame` (the same axis calls as the mouse's, so
    // every frame rebuilds the maps).
    void bench_motion(int frame);
    Link *link() { return link_.get(); }
    // Off-screen (--screenshot): no interactive hints, no pointer.
    void set_offscreen(bool on) { view_.offscreen = on; }
    // The map's view at the next snapshot: zoom times the whole arena, centred on center bytes
    // from its base (none: the middle).
    void set_view(double zoom, std::optional<double> center) { view_.zoom = zoom, view_.center = center; }
    // A panel did not show all its text at the last frame.
    bool panels_cut() const;

    // Polls the link, then draws one frame into a window covering the whole viewport.
    void frame(float width, float height);
    // The geometry of the last frame as JSON, for pixel tests (--layout-out).
    std::string layout_json() const;
    // Shows arena i: its lanes and draw orders are rebuilt (they index that arena's regions).
    void select_arena(int i);

private:
    // The view the panels read, from the snapshot and what the user chose.
    void update_view();
    // Tells every panel the snapshot, the one before, the diff or the arena changed.
    void changed(bool fresh);
    // Lays the shown panels out (this frame's rects_ and order_).
    void lay_out(float width, float height);
    // No snapshot: the error, or that one is awaited.
    void draw_waiting(float width) const;

    std::optional<Snapshot> snapshot_;
    std::optional<Snapshot> before_;  // compare mode
    std::string before_source_;
    std::optional<DiffDoc> diff_;
    std::string source_, error_;
    std::unique_ptr<Link> link_;
    View view_;
    std::vector<std::unique_ptr<Panel>> panels_;  // every registered panel
    std::vector<std::size_t> order_;              // the shown ones at the last frame, drawing order
    std::vector<Rect> rects_;                     // their rectangles (index-aligned with order_)
};

}  // namespace arenascope
