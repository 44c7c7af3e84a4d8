// arenascope viewer: every colour the viewer draws, in one place (no ImGui, no GL).
//
//   Rgba               an 8-bit colour (IM_COL32's order for the window)
//   Paint              what a colour means on the map, the RAM column, the plan and the legend
//   Style              the palette (one Rgba per Paint) and the UI's own colours (text, frames,
//                      axes), as Dear ImGui's ImGuiStyle holds its Colors[]: the window, the
//                      report and the tests read them here, never as literals
//   style()            the one Style
//   colour(Paint)      style().paint[p]
#pragma once

#include <cstdint>
#include <string>

namespace arenascope {

struct Rgba {
    uint8_t r, g, b, a;
    uint32_t imgui() const { return uint32_t(a) << 24 | uint32_t(b) << 16 | uint32_t(g) << 8 | r; }  // IM_COL32
    bool operator==(const Rgba &o) const { return r == o.r && g == o.g && b == o.b && a == o.a; }
};

enum class Paint {
    Background,
    Tensor,
    Scratch,
    Temp,
    Persistent,
    Metadata,
    FreeIntact,
    FreeTouched,
    FreeUnmeasured,
    Guard,
    GuardTouched,
    StackUsed,
    StackUnused,
    HighWater,
    StackPointer,
    RulePass,
    RuleFail,
    Boundary,
    LiveCurve,
    LowerBound,
    Selected,
    HistoryUsed,
    HistoryStackPeak,
    HistoryGap,  // the live history's three series
    Offline,     // the stripe on a region the model's offline plan places (flag "offline")
    Cluster,     // the map's mark where regions are too small to tell apart at this zoom (pixelmap.h)
    Changed,     // the stripe along the bottom of a region the diff says changed (diffdoc.h)
    Count,       // not a paint: how many there are
};
constexpr int kPaintCount = int(Paint::Count);

// The palette (documented in viewer/README.md; the pixel tests assert it) and the colours of the
// UI around it. A panel takes every colour from here.
struct Style {
    Rgba paint[kPaintCount];  // by Paint: distinct hues for the region kinds, green intact, red touched

    Rgba text{230, 230, 230, 255};           // panel text, titles, labels
    Rgba text_grey{200, 200, 200, 255};      // secondary lines (a section's heading, evidence)
    Rgba text_dim{160, 160, 160, 255};       // axes, tick labels, hints
    Rgba more_mark{170, 170, 170, 255};      // a scrolling panel's "more below: scroll"
    Rgba frame{80, 80, 90, 255};             // a panel's border
    Rgba zero_line{90, 90, 100, 255};        // the live history's 0 when a series went below it
    Rgba lane_separator{60, 60, 70, 255};    // between the live history's lanes
    Rgba label_on_light{16, 16, 20, 255};    // a map label over a light fill
    Rgba label_on_dark{240, 240, 240, 255};  // a map label over a dark fill
    Rgba table_border{60, 60, 70, 255};      // the report's region table
    Rgba table_head{40, 40, 48, 255};        // its header row and the filter box

    Style();
};

const Style &style();
Rgba colour(Paint p);  // style().paint[p]
// The last pixel column of a map region at least 4 px wide: its colour at 60 %, so that two
// neighbours of one kind are told apart while every pixel stays in its owner's colour family.
Rgba edge_shade(Rgba c);
Paint paint_of_kind(const std::string &kind);  // region kind -> Paint
const char *paint_name(Paint p);
const char *paint_short_name(Paint p);  // at most 15 characters, for a two-column legend
// "rgb(230,230,230)": a colour in SVG and CSS.
std::string css_rgb(Rgba c);

}  // namespace arenascope
