// arenascope viewer: the arena map as a display list (no ImGui, no GL), so the window's texture
// and the report's SVG draw the same pixels from one rule.
//
// The picture is W x H pixels: the area bar (head, temp, free band, tail and the tail's objects)
// in rows [0, bar_h), the region lanes below it from row lanes_top, lane i in rows
// [lanes_top + i*lane_h, + max(1, lane_h - 1)). Who owns each pixel column is pixelmap.h's rule;
// a region at least 4 px wide has its last column in edge_shade(); the fault's damage in the
// free band is drawn at least 4 px wide around its centre; where regions are too small to tell
// apart at this zoom, a Cluster mark and the count.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "layout.h"
#include "pixelmap.h"
#include "textfit.h"

namespace arenascope {

struct MapGeometry {
    int width = 1;                    // pixels across (the axis: exactly view_lo..view_hi)
    double view_lo = 0, view_hi = 1;  // addresses shown
    int bar_h = 26;                   // the area bar's rows
    int lanes_top = 32;               // the first lane's row
    int lane_h = 18;                  // rows a lane (its last row is the gap to the next)
    int lanes_shown = 1;              // lanes that fit (lanes below are not drawn)
};

struct MapFill {
    int x0, y0, x1, y1;  // pixels [x0, x1) x [y0, y1)
    Rgba colour;
};

struct MapLabel {
    int x, y;  // top-left of the text
    std::string text;
    Rgba colour;  // dark on a light fill, light on a dark one
};

// A run of one lane (lane -1: the area bar) for hit testing and the report's table: a region
// (region >= 0, its position in arena.regions), an area of the bar (area 0 head, 1 temp, 2 free,
// 3 tail not covered by an object), or a cluster (region -1, members).
struct MapRun {
    int lane = 0, x0 = 0, x1 = 0;
    int region = -1, area = -1;
    std::vector<int> members;  // a cluster's regions
    std::vector<int> areas;    // a cluster's areas of the bar
};

struct MapPicture {
    MapGeometry g;
    std::vector<MapFill> fills;  // in order: later fills cover earlier ones
    std::vector<MapLabel> labels;
    std::vector<MapRun> runs;
    int clusters = 0, hidden = 0;  // cluster marks, regions and areas in them
    int lanes = 0;                 // lanes the regions need (g.lanes_shown of them are drawn)
    // What the picture could not show, for its title: "  N too small to tell apart here (M marks)"
    // (": zoom in" where the reader can), "  K of L lanes shown"; empty when it shows everything.
    std::string notes(bool can_zoom) const;
    // What is under pixel (x, y) of the picture: a run, or nullptr.
    const MapRun *at(int x, int y) const;
};

// What the map needs of an arena at any view, built once per snapshot (O(n log n)), so that a
// zoom or a pan costs O(log n + regions in view + pixels), not O(n log n): the area bar's items
// and each lane's regions as pixel_lane()s, and each region's paint by kind.
struct MapIndex {
    PixelLane bar;                 // ids: 0..3 the areas, 4 + i tail region i
    std::vector<PixelLane> lanes;  // lane l: the regions whose lane is l (ids: their positions)
    std::vector<Paint> paint;      // paint_of_kind of each region
    int lane_count = 0;            // lanes the regions need
};
// lanes[i] is region i's lane (assign_lanes).
MapIndex map_index(const Arena &a, const std::vector<int> &lanes);

// The picture of arena `a`: lanes[i] is region i's lane (assign_lanes); selected is a region's
// position or -1; damaged(i) says region i is drawn in the damage colour; measure(text) is the
// text's width in pixels (labels are placed only where they fit: 13 px high text, 2 px margins).
// changed(i): region i gets the diff's stripe along its lane's bottom quarter (none when empty).
MapPicture map_picture(const Arena &a, const std::vector<int> &lanes, const MapGeometry &g, int selected,
                       const std::function<bool(int)> &damaged,
                       const std::function<float(const std::string &)> &measure,
                       const std::function<bool(int)> &changed = {});
// The same from the arena's index (map_index(a, lanes)): what the window does at every zoom and pan.
MapPicture map_picture(const Arena &a, const MapIndex &index, const MapGeometry &g, int selected,
                       const std::function<bool(int)> &damaged,
                       const std::function<float(const std::string &)> &measure,
                       const std::function<bool(int)> &changed = {});

// Which regions of arena `arena` are drawn in the damage colour (index-aligned with its
// regions): those the fault lists in damaged_regions (arena 0), and those whose address range
// equals a tail object the post-mortem says the stack overwrote (by address and size, not by
// name: a rebuilt layout's regions are named "X (predicted)").
std::vector<bool> damaged_regions(const Snapshot &s, int arena);

// The bar's areas, for labels and tooltips: "head", "temp", "free band", "tail".
const char *area_name(int area);

}  // namespace arenascope
