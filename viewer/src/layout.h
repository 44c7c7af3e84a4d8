// arenascope viewer: layout arithmetic without ImGui or GL, so it is unit-tested on its own.
// Colours are style.h's; cutting and wrapping text textfit.h's.
//
//   screen_layout      where each view goes in the window
//   AddressAxis        address <-> pixel for the zoomable arena map
//   tick_step          power-of-two tick spacing for an address range
//   assign_lanes       first-fit lanes so regions that share bytes (at other times) stay visible
//   hit_plan           what is under the mouse in the plan (the map's: MapPicture::at)
//   PlanGeometry       scope/offset <-> pixel for the plan view
//   RamColumn          the stack / guard / arena column
//   HistoryGeometry    time/bytes <-> pixel for the live history panel; live_status its status text
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "snapshot.h"
#include "style.h"

namespace arenascope {

struct Rect {
    float x = 0, y = 0, w = 0, h = 0;
    bool contains(float px, float py) const { return px >= x && px < x + w && py >= y && py < y + h; }
};

// Where a panel goes in the window and how tall it wants to be: screen_layout shares the window
// out by what the panels ask (panel.h), with no knowledge of any one panel.
//   Status: the line across the top (22 px); Left: the wide column (58 %: the maps, the plan);
//   Middle: 14 % (the RAM column); Right: 26 % (the text panels). Each column's panels are
//   stacked by `order`, 8 px apart.
enum class Column { Status, Left, Middle, Right };
struct Space {
    Column column = Column::Left;
    int order = 0;  // top to bottom within its column
    enum Size {
        Fixed,  // px tall
        Share,  // share x the body's height, held within [min_px, max_px]
        Fill,   // what the others leave, split evenly between the column's Fill panels
    } size = Fill;
    float px = 0;
    float share = 0, min_px = 0, max_px = 1e9f;
    // When the column holds more than one Fill panel ("shared"): a Fill panel with
    // shared_share > 0 takes that share of the body instead (the others fill the rest), and a
    // Fixed panel with shared_px > 0 takes that height.
    float shared_share = 0, shared_px = 0;
};
constexpr float kLayoutMargin = 8, kStatusHeight = 22;
// The height of the columns under the status line, for a window `height` tall.
float body_height(float height);
// The rectangle of each space (index-aligned with spaces).
std::vector<Rect> screen_layout(float width, float height, const std::vector<Space> &spaces);

// Address axis of the arena map: the visible range [view_lo, view_hi) drawn over [px0, px0+pw).
struct AddressAxis {
    double full_lo = 0, full_hi = 1;  // the whole arena
    double view_lo = 0, view_hi = 1;  // what is visible (zoom, pan)
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

// Plan view: scopes across, offsets down.
struct PlanGeometry {
    Rect area;
    int scopes = 1;
    uint64_t extent = 1;  // bytes shown down the axis
    float x_of_scope(double scope) const { return area.x + float(scope / scopes) * area.w; }
    float y_of_offset(double off) const { return area.y + float(off / double(extent)) * area.h; }
    // Rectangle of a region live over [first, last]; empty rect for unplanned regions.
    Rect region_rect(const Region &r) const;
    // The same of a live region's figures (last >= 0).
    Rect lifetime_rect(int first, int last, uint64_t offset, uint64_t size) const;
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

// Live history panel: three lanes stacked in the plot area (0 used bytes, 1 stack peak, 2 gap),
// time across from the first history point (left) to the last (right). Each lane has its own
// byte scale: its bottom is min(0, the series' least value), its top max(0, the series'
// greatest value) (bottom + 1 when both are 0). Null values are gaps in the line.
struct HistoryGeometry {
    static constexpr int kSeries = 3;
    Rect plot;              // the three lanes, without title, legend and labels
    Rect lane[kSeries];     // where each series is drawn
    double t0 = 0, t1 = 0;  // first and last point's time
    double lo[kSeries] = {0, 0, 0}, hi[kSeries] = {1, 1, 1};
    bool known[kSeries] = {false, false, false};  // the series has at least one value
    // x of a time, clamped to the plot (a wall clock may step back); one point: the right edge.
    float x_of(double t) const;
    float y_of(int series, double bytes) const;
};
// The value of series i at a point, or none (null).
std::optional<double> history_value(const LivePoint &p, int series);
const char *history_series_name(int series);  // "used", "stack peak", "gap"
Paint history_paint(int series);
// panel: the history panel's rect; the plot leaves room for two text lines on top, byte labels
// on the left.
HistoryGeometry history_geometry(const Live &live, Rect panel);

// The live part of the status line: "live via READER: 21.3 refreshes/s, data 0.2 s old, refresh
// 1234", or when the reader lost the target "LINK LOST: WHY; showing data 3.4 s old" (lost is
// then true). The age is now_unix_s - captured_at_unix_s (0 when the clocks disagree), one decimal.
std::string live_status(const Live &live, double now_unix_s, bool &lost);

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
