// arenascope viewer: which region owns each pixel of a map lane, exactly (no ImGui, no GL).
//
// A lane W pixels wide shows the addresses [lo, hi): pixel k shows [lo + k*b, lo + (k+1)*b),
// b = (hi - lo) / W bytes a pixel. Items are address ranges [start, end) with the caller's id.
//
//   1. Centre: a pixel belongs to the item that holds the address at its centre, lo + (k+0.5)*b.
//      So a boundary pixel goes to the item that covers more of it, and nothing is drawn past W.
//   2. No item vanishes: an item narrower than a pixel that holds no centre takes the pixel that
//      holds its own middle address, when that pixel is empty or is the edge of an item at least
//      2 px wide (which keeps the rest of its pixels).
//   3. Clusters: otherwise the items that want the pixel are too small to tell apart at this
//      zoom: the pixel is a cluster mark, with the count of the items in it. Neighbouring cluster
//      pixels are one mark.
// So every item that reaches into [lo, hi) has at least one pixel of its own or is counted in
// exactly one cluster (tests/viewer checks both at many zooms).
//
// Items of one lane should not overlap (assign_lanes gives lanes where they do not); where they
// do, the item that starts later owns its bytes and the earlier one is cut at its start.
#pragma once

#include <cstdint>
#include <vector>

namespace arenascope {

struct PixelItem {
    uint64_t start = 0, end = 0;  // addresses [start, end); end > start (an empty item is skipped)
    int id = 0;                   // the caller's index (a region's position)
};

struct PixelRun {
    int x0 = 0, x1 = 0;    // pixels [x0, x1) of the lane, 0 <= x0 < x1 <= W
    int id = -1;           // the item that owns them; -1: a cluster mark
    std::vector<int> ids;  // a cluster's items (ids, ascending); empty for an owned run
    int count() const { return id >= 0 ? 1 : int(ids.size()); }
};

// A lane's items ready to draw at any view: sorted by start, overlaps cut (the rule above),
// empty items dropped, so each item ends at or before the next one starts. Built once per
// snapshot (O(n log n)); then own_pixels reads only the items in view.
struct PixelLane {
    std::vector<PixelItem> items;
};
PixelLane pixel_lane(std::vector<PixelItem> items);

// The runs of owned pixels, left to right (empty pixels are not in a run); lo < hi, width >= 1.
// O(log n + items in view + width): two binary searches find the items in view.
std::vector<PixelRun> own_pixels(const PixelLane &lane, double lo, double hi, int width);
// The same from items in any order (sorts them first: O(n log n)).
std::vector<PixelRun> own_pixels(std::vector<PixelItem> items, double lo, double hi, int width);

}  // namespace arenascope
