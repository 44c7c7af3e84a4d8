// arenascope viewer: layout arithmetic without ImGui or GL, so it is unit-tested on its own.
//
//   Palette            colour of every kind of byte (the legend and the tests use it)
//   screen_layout      where each view goes in the window
//   AddressAxis        address <-> pixel for the zoomable arena map
//   tick_step          power-of-two tick spacing for an address range
//   assign_lanes       first-fit lanes so regions that share bytes (at other times) stay visible
//   hit_*              what is under the mouse
//   PlanGeometry       scope/offset <-> pixel for the plan view
//   RamColumn          the stack / guard / arena column
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "snapshot.h"

namespace arenascope {

struct Rgba {
    uint8_t r, g, b, a;
    uint32_t imgui() const { return uint32_t(a) << 24 | uint32_t(b) << 16 | uint32_t(g) << 8 | r; }  // IM_COL32
    bool operator==(const Rgba &o) const { return r == o.r && g == o.g && b == o.b && a == o.a; }
};

enum class Paint {
    Background, Tensor, Scratch, Temp, Persistent, Metadata, FreeIntact, FreeTouched, FreeUnmeasured, Guard, GuardTouched,
    StackUsed, StackUnused, HighWater, StackPointer, RulePass, RuleFail, Boundary, LiveCurve, LowerBound, Selected,
};

// The fixed palette: distinct hues for tensor/scratch/temp/persistent/metadata, green for
// canary-intact free space, red for anything touched. Documented in viewer/README.md.
Rgba colour(Paint p);
Paint paint_of_kind(const std::string &kind);  // region kind -> Paint
const char *paint_name(Paint p);

struct Rect {
    float x = 0, y = 0, w = 0, h = 0;
    bool contains(float px, float py) const { return px >= x && px < x + w && py >= y && py < y + h; }
};

struct ScreenLayout {
    Rect map;       // arena map: area bar on top, region lanes below
    Rect ram;       // RAM column: stack, guard band, arena
    Rect plan;      // plan view
    Rect summary;   // figures and verdicts
    Rect legend;
    Rect status;    // link state line
};
ScreenLayout screen_layout(float width, float height);

// Address axis of the arena map: the visible range [view_lo, view_hi) drawn over [px0, px0+pw).
struct AddressAxis {
    double full_lo = 0, full_hi = 1;   // the whole arena
    double view_lo = 0, view_hi = 1;   // what is visible (zoom, pan)
    float px0 = 0, pw = 1;

    float to_px(double addr) const { return px0 + float((addr - view_lo) / (view_hi - view_lo) * pw); }
    double to_addr(float px) const { return view_lo + double(px - px0) / pw * (view_hi - view_lo); }
    void reset() { view_lo = full_lo, view_hi = full_hi; }
    // Zooms by factor (>1 in) keeping the address under px still; at most 1 byte per 8 px.
    void zoom_at(float px, double factor);
    // Pans by dpx pixels, clamped to the arena.
    void pan_px(float dpx);
};

// Power-of-two byte step so that (hi - lo) / step <= max_ticks (at least 1 B).
uint64_t tick_step(double lo, double hi, int max_ticks);
// "672 B", "7.2 KiB", "1.50 MiB" (axis labels)
std::string format_bytes(uint64_t n);
// "672 B", "7380 B (7.2 KiB)": exact bytes, with KiB/MiB beside from 1 KiB (figures)
std::string format_bytes_exact(uint64_t n);

// Lane of each region (index-aligned with regions): tail regions (persistent, metadata) in
// lane 0; head regions (tensor, scratch) first-fit by (offset, index) into lanes 1.. so that
// regions sharing bytes never share a lane. Returns the number of lanes used.
int assign_lanes(const std::vector<Region> &regions, std::vector<int> &lanes);

// Region under (px, py) in the lanes below the area bar: lane i spans
// [lanes_top + i*lane_h, +lane_h). Returns the region's position in `regions`, or -1.
int hit_region(const std::vector<Region> &regions, const std::vector<int> &lanes, const AddressAxis &axis,
               uint64_t base_addr, float lanes_top, float lane_h, float px, float py);

// Plan view: scopes across, offsets down.
struct PlanGeometry {
    Rect area;
    int scopes = 1;
    uint64_t extent = 1;  // bytes shown down the axis
    float x_of_scope(double scope) const { return area.x + float(scope / scopes) * area.w; }
    float y_of_offset(double off) const { return area.y + float(off / double(extent)) * area.h; }
    // Rectangle of a region live over [first, last]; empty rect for unplanned regions.
    Rect region_rect(const Region &r) const;
};
PlanGeometry plan_geometry(const Arena &a, Rect area);
int hit_plan(const std::vector<Region> &regions, const PlanGeometry &g, float px, float py);

// RAM column: addresses from the arena's base (bottom) to the stack's top (top), linear.
struct RamColumn {
    Rect area;
    uint64_t lo = 0, hi = 1;
    float y_of(uint64_t addr) const { return area.y + area.h - float(double(addr - lo) / double(hi - lo)) * area.h; }
};
RamColumn ram_column(const Snapshot &s, const Arena &a, Rect area);

}  // namespace arenascope

namespace arenascope {

// A CPU image of many small rectangles, uploaded as one texture: 10,000 regions cost one quad
// on the GPU instead of 40,000 vertices (a software renderer pays per vertex and per pixel).
// Pixel rule: a rectangle covers the pixels whose centres it contains, and at least one
// column and one row, so no region vanishes at any zoom. Pixels are RGBA bytes, row-major.
struct Raster {
    int w = 0, h = 0;
    std::vector<uint32_t> px;  // IM_COL32 order (r in the low byte)

    void reset(int width, int height, Rgba background);
    void fill(float x0, float y0, float x1, float y1, Rgba c);
    // A one-pixel frame just inside the rectangle (what the outline of a wide region looks like).
    void frame(float x0, float y0, float x1, float y1, Rgba c);
    uint32_t at(int x, int y) const { return px[std::size_t(y) * w + x]; }
};

}  // namespace arenascope
