// arenascope viewer: one panel of the window, and what every panel shares (View).
//
// A panel is one file (panel_*.cpp) that registers itself (PanelRegistration) and answers:
//   shown     whether it takes space for this snapshot (a hidden panel takes none)
//   wants     where and how tall (layout.h's Space): screen_layout shares the window out by them
//   draw      itself into the window (Dear ImGui), in the rectangle it was given
//   describe  its rectangle and what the pixel tests read (--layout-out), into the layout JSON
//   report    its part of the static report (report.h's ReportPart: a picture per arena, a text)
// The window (app.h) knows no panel by name: it asks them all, in (column, order) order.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "diffdoc.h"
#include "layout.h"
#include "report.h"
#include "snapshot.h"

namespace arenascope {

class Link;

// What the panels share: the snapshot and its source, and what the user chose (the arena, the
// pinned region). A panel reads it; a click may set `arena_index` and `selected`.
struct View {
    const Snapshot *snapshot = nullptr;  // none yet: only the status line is drawn
    const Snapshot *before = nullptr;    // compare mode: the snapshot before
    const DiffDoc *diff = nullptr;       // compare mode: the plugin's diff
    std::string source, before_source, error;
    Link *link = nullptr;
    bool offscreen = false;  // --screenshot: no pointer, no mouse hints
    unsigned serial = 0;     // +1 per snapshot: what a panel caches keys on it
    int arena_index = 0;     // the arena the plan, the RAM column and the summary show
    int selected = -1;       // the pinned region (a position in that arena's regions), or -1
    double zoom = 1;         // --zoom, --center: the maps' first view
    std::optional<double> center;
    float body_h = 0;  // the columns' height this frame (layout.h's body_height)

    const Arena *arena() const
    {
        return snapshot && !snapshot->arenas.empty() ? &snapshot->arenas[std::size_t(arena_index)] : nullptr;
    }
};

class Panel : public ReportPart {
public:
    virtual ~Panel() = default;
    virtual const char *name() const = 0;  // its key in the layout JSON
    virtual bool shown(const View &v) const = 0;
    virtual Space wants(const View &v) const = 0;
    virtual void draw(View &v, const Rect &r) = 0;
    // Default: {name: rect}.
    virtual void describe(const View &v, const Rect &r, nlohmann::json &out) const;
    // The snapshot, the one before, the diff or the chosen arena changed (fresh: another arena
    // altogether, so what was kept of the old one, its zoom, goes too).
    virtual void changed(const View &, bool /*fresh*/) {}
    virtual void invalidate() {}                // redraw what is cached (--bench-rebuild)
    virtual void motion(int /*frame*/) {}       // what the mouse does at frame N (--bench-motion)
    virtual bool cut() const { return false; }  // its text did not all show at the last frame
};

using PanelFactory = std::unique_ptr<Panel> (*)();
// A panel file's `static const PanelRegistration kRegistered{[] { ... }};` adds it to every window.
struct PanelRegistration {
    explicit PanelRegistration(PanelFactory make);
};
// One of every registered panel.
std::vector<std::unique_ptr<Panel>> make_panels();
// The panels shown for s, in the window's order (column by column, top to bottom), and their
// parts of the static report (pointers into panels): what report_html and report_svg draw.
struct ReportPanels {
    std::vector<std::unique_ptr<Panel>> panels;
    std::vector<const ReportPart *> parts;
};
ReportPanels report_parts(const Snapshot &s);
// {"x", "y", "w", "h"}: a rectangle in the layout JSON.
nlohmann::json rect_json(const Rect &r);

}  // namespace arenascope
