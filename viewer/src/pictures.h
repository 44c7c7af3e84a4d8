// arenascope viewer: the RAM column and the memory plan as display lists (no ImGui, no GL), so
// the window and the report (report.h) draw them from one rule. Coordinates are pixels of the
// window or of the report's SVG; text is measured by the caller's font.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "layout.h"
#include "snapshot.h"
#include "textfit.h"

namespace arenascope {

struct Shape {
    enum Kind { Box, Line, Text } kind = Box;
    float x0 = 0, y0 = 0, x1 = 0,
          y1 = 0;  // Box: [x0, x1) x [y0, y1); Line: from (x0, y0) to (x1, y1); Text: at (x0, y0)
    Rgba colour{0, 0, 0, 255};
    float width = 1;   // a line's width, px
    std::string text;  // Text only
};

struct Picture {
    std::vector<Shape> shapes;  // drawn in order
    void box(float x0, float y0, float x1, float y1, Rgba c)
    {
        if (x1 > x0 && y1 > y0) shapes.push_back({Shape::Box, x0, y0, x1, y1, c, 1, {}});
    }
    void line(float x0, float y0, float x1, float y1, Rgba c, float w = 1)
    {
        shapes.push_back({Shape::Line, x0, y0, x1, y1, c, w, {}});
    }
    void text(float x, float y, std::string t, Rgba c)
    {
        shapes.push_back({Shape::Text, x, y, x, y, c, 1, std::move(t)});
    }
};

// The RAM column in panel r (a frame, the title "RAM", the column and its labels): the arena by
// area (a: may be null, then the stack and the guard band only), the guard band, the stack used
// and never used, the high-water mark, SP, and the gap strip coloured by the stack rule.
// column: where ram_column() put the addresses (for hover and tests).
Picture ram_picture(const Snapshot &s, const Arena *a, const Rect &r, const Measure &measure, RamColumn &column);

// A region of the plan, with what its box needs: the plan's boxes are drawn from a flat list,
// not by reaching into 100,000 regions in lifetime order (a cache miss each).
struct PlanItem {
    int region = 0;  // its position in the arena's regions
    int first = 0, last = 0;
    uint64_t offset = 0, size = 0;
    Paint paint = Paint::Tensor;  // paint_of_kind
};
// The plan's live regions (never-live ones have no box) in the draw order: by lifetime, then
// offset, then position. O(n log n): the window keeps it per snapshot.
std::vector<PlanItem> plan_order(const Arena &a);

// The plan's regions, one rectangle each in `order`, with a one-pixel background frame inside
// those over 3 px: what the window rasterises and the report draws. selected: a region's
// position or -1. The boxes go to `box` as they are made (nothing is kept: 100,000 regions are
// half a million boxes), or into a list.
void plan_boxes(const PlanGeometry &g, int selected, const std::vector<PlanItem> &order,
                const std::function<void(const Shape &)> &box);
std::vector<Shape> plan_boxes(const Arena &a, const PlanGeometry &g, int selected);

// The plan's lines and labels over the boxes, in panel r: the title, the live-bytes curve (a step
// per scope), the lower bound, the operator and offset axes.
Picture plan_overlay(const Arena &a, const PlanGeometry &g, const Rect &r);

}  // namespace arenascope
