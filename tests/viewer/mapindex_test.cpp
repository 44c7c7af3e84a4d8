// The indexed rebuild (pixelmap.h's PixelLane, mapview.h's MapIndex: built once per snapshot, read
// at every zoom and pan) against a brute-force reference written here from pixelmap.h's rules:
// every pixel tests every item, no sorting past the items' order, no binary search. Many random
// lanes, zooms and pans (fixed seed); the pixels' owners, the cluster marks and their counts must
// be the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include "mapview.h"
#include "pixelmap.h"

using namespace arenascope;

namespace {

constexpr int kEmpty = -9, kCluster = -1;

struct Reference {
    std::vector<int> owner;               // per pixel: an item's id, kCluster or kEmpty
    std::vector<std::vector<int>> marks;  // per pixel: a cluster's ids
};

// pixelmap.h's three rules, pixel by pixel, for items that do not overlap (any order).
Reference reference(std::vector<PixelItem> items, double lo, double hi, int width)
{
    std::sort(items.begin(), items.end(), [](const PixelItem &a, const PixelItem &b) { return a.start < b.start; });
    Reference r{std::vector<int>(std::size_t(width), kEmpty), std::vector<std::vector<int>>(std::size_t(width))};
    // Position in pixel units: (addr - lo) * width / (hi - lo), as the viewer computes it.
    const long double scale = (long double)width / ((long double)hi - (long double)lo);
    auto u = [&](uint64_t a) { return ((long double)a - (long double)lo) * scale; };
    std::vector<int> owned(items.size(), 0);  // pixels each item owns
    // Rule 1: pixel k's centre, k + 0.5 pixel units, is in [start, end).
    for (int k = 0; k < width; k++) {
        for (std::size_t i = 0; i < items.size(); i++) {
            if (u(items[i].start) <= k + 0.5L && k + 0.5L < u(items[i].end)) {
                r.owner[std::size_t(k)] = int(i);
                owned[i]++;
            }
        }
    }
    // Rules 2 and 3, in address order: an item in view that holds no centre takes the pixel of its
    // middle if that pixel is empty or the edge of an item with 2 or more; else they are a mark.
    for (std::size_t i = 0; i < items.size(); i++) {
        const bool in_view =
            (long double)items[i].end > (long double)lo && (long double)items[i].start < (long double)hi;
        if (!in_view || owned[i] > 0) continue;
        const long double mid = (u(items[i].start) + u(items[i].end)) / 2;
        const int k = int(std::clamp(std::floor(mid), 0.0L, (long double)(width - 1)));
        int &o = r.owner[std::size_t(k)];
        if (o == kEmpty || (o >= 0 && owned[std::size_t(o)] >= 2)) {
            if (o >= 0) owned[std::size_t(o)]--;
            o = int(i);
            owned[i] = 1;
        } else {
            if (o >= 0) r.marks[std::size_t(k)].push_back(items[std::size_t(o)].id), owned[std::size_t(o)] = 0;
            r.marks[std::size_t(k)].push_back(items[i].id);
            o = kCluster;
        }
    }
    for (int &o : r.owner) {
        if (o >= 0) o = items[std::size_t(o)].id;
    }
    return r;
}

// Random items that do not overlap (one lane's regions): tiny and large, with and without gaps.
std::vector<PixelItem> random_lane(std::mt19937_64 &rng, uint64_t base)
{
    std::vector<PixelItem> items;
    uint64_t at = base + rng() % 64;
    const int n = 1 + int(rng() % 120);
    for (int i = 0; i < n; i++) {
        const uint64_t size = rng() % 5 == 0 ? 1 + rng() % 20000 : 1 + rng() % 64;
        items.push_back({at, at + size, i});
        at += size + (rng() % 3 == 0 ? rng() % 512 : 0);
    }
    std::shuffle(items.begin(), items.end(), rng);  // the index must not rely on the caller's order
    return items;
}

TEST(MapIndex, IndexedLaneGivesTheBruteForcePixelsAtEveryZoomAndPan)
{
    std::mt19937_64 rng(39);
    int owned = 0, marks = 0, empty = 0, partial_views = 0;
    for (int round = 0; round < 400; round++) {
        const uint64_t base = 0x20000000;
        const std::vector<PixelItem> items = random_lane(rng, base);
        const PixelLane lane = pixel_lane(items);  // once, as the window does per snapshot
        uint64_t end = 0;
        for (const PixelItem &it : items) end = std::max(end, it.end);
        const double full_lo = double(base), full_hi = double(end + rng() % 1024);
        const int width = 1 + int(rng() % 400);
        AddressAxis axis;  // the window's zoom and pan
        axis.full_lo = full_lo, axis.full_hi = full_hi, axis.px0 = 0, axis.pw = float(width);
        axis.reset();
        for (int step = 0; step < 30; step++) {
            const float at = float(rng() % std::uint64_t(width));
            switch (rng() % 3) {
            case 0: axis.zoom_at(at, 1.25 + double(rng() % 8)); break;
            case 1: axis.zoom_at(at, 0.8); break;
            default: axis.pan_px(float(int(rng() % 81) - 40)); break;
            }
            const double lo = axis.view_lo, hi = axis.view_hi;
            partial_views += hi - lo < full_hi - full_lo;
            const Reference ref = reference(items, lo, hi, width);
            std::vector<int> got(std::size_t(width), kEmpty);
            int last = 0;
            for (const PixelRun &r : own_pixels(lane, lo, hi, width)) {
                ASSERT_GE(r.x0, last);
                last = r.x1;
                std::vector<int> want_ids;
                for (int x = r.x0; x < r.x1; x++) {
                    got[std::size_t(x)] = r.id >= 0 ? r.id : kCluster;
                    for (int id : ref.marks[std::size_t(x)]) want_ids.push_back(id);
                }
                std::sort(want_ids.begin(), want_ids.end());
                want_ids.erase(std::unique(want_ids.begin(), want_ids.end()), want_ids.end());
                // A mark's ids and count are the reference's over its pixels; an owned run has none.
                ASSERT_EQ(r.ids, want_ids) << "round " << round << " step " << step << " run at " << r.x0;
                ASSERT_EQ(r.count(), r.id >= 0 ? 1 : int(want_ids.size()));
            }
            ASSERT_EQ(got, ref.owner) << "round " << round << " step " << step << ": view [" << lo << ", " << hi
                                      << ") over " << width << " px";
            for (int o : ref.owner) owned += o >= 0, marks += o == kCluster, empty += o == kEmpty;
        }
    }
    // The cases the comparison is about did occur.
    EXPECT_GT(owned, 10000);
    EXPECT_GT(marks, 1000);
    EXPECT_GT(empty, 10000);
    EXPECT_GT(partial_views, 5000);
}

// A map picture from an index built once and kept across views (the window) is the picture
// built from scratch at each view (the report): the same fills, runs, labels and counts.
TEST(MapIndex, PictureFromAKeptIndexIsThePictureBuiltFromScratch)
{
    std::mt19937_64 rng(3939);
    const char *kinds[] = {"tensor", "scratch", "persistent", "metadata"};
    auto measure = [](const std::string &s) { return 7.f * float(s.size()); };
    int clusters = 0, labels = 0;
    for (int round = 0; round < 60; round++) {
        Arena a;
        a.base_addr = 0x20000000, a.size_bytes = 65536 + rng() % 65536;
        a.head_bytes = a.size_bytes / 2, a.temp_bytes = a.head_bytes + 64, a.tail_offset = a.size_bytes * 3 / 4;
        const int n = 20 + int(rng() % 300);
        for (int i = 0; i < n; i++) {
            Region r;
            r.index = i, r.kind = kinds[rng() % 4];
            const bool tail = r.kind == std::string("persistent") || r.kind == std::string("metadata");
            const uint64_t room = tail ? a.size_bytes - a.tail_offset : a.head_bytes;
            r.size_bytes = rng() % 4 == 0 ? 1 + rng() % 4096 : 1 + rng() % 32;
            r.offset = (tail ? a.tail_offset : 0) + rng() % room;
            r.label = std::string(kinds[rng() % 4]) + " " + std::to_string(i);
            a.regions.push_back(r);
        }
        std::vector<int> lanes;
        assign_lanes(a.regions, lanes);
        const MapIndex index = map_index(a, lanes);
        const int selected = int(rng() % std::uint64_t(n));
        auto damaged = [](int i) { return i % 17 == 0; };
        AddressAxis axis;
        axis.full_lo = double(a.base_addr), axis.full_hi = double(a.base_addr + a.size_bytes);
        axis.px0 = 0, axis.pw = float(200 + rng() % 1000);
        axis.reset();
        for (int step = 0; step < 20; step++) {
            if (rng() % 2) {
                axis.zoom_at(float(rng() % std::uint64_t(axis.pw)), rng() % 3 ? 1.25 : 0.8);
            } else {
                axis.pan_px(float(int(rng() % 101) - 50));
            }
            MapGeometry g;
            g.width = int(axis.pw), g.view_lo = axis.view_lo, g.view_hi = axis.view_hi;
            g.lanes_shown = 40;
            const MapPicture kept = map_picture(a, index, g, selected, damaged, measure);
            const MapPicture fresh = map_picture(a, lanes, g, selected, damaged, measure);
            ASSERT_EQ(kept.fills.size(), fresh.fills.size());
            for (std::size_t k = 0; k < kept.fills.size(); k++) {
                const MapFill &p = kept.fills[k], &q = fresh.fills[k];
                ASSERT_TRUE(p.x0 == q.x0 && p.y0 == q.y0 && p.x1 == q.x1 && p.y1 == q.y1 && p.colour == q.colour);
            }
            ASSERT_EQ(kept.runs.size(), fresh.runs.size());
            for (std::size_t k = 0; k < kept.runs.size(); k++) {
                const MapRun &p = kept.runs[k], &q = fresh.runs[k];
                ASSERT_TRUE(p.lane == q.lane && p.x0 == q.x0 && p.x1 == q.x1 && p.region == q.region &&
                            p.area == q.area && p.members == q.members && p.areas == q.areas);
            }
            ASSERT_EQ(kept.labels.size(), fresh.labels.size());
            for (std::size_t k = 0; k < kept.labels.size(); k++) {
                ASSERT_EQ(kept.labels[k].text, fresh.labels[k].text);
                ASSERT_EQ(kept.labels[k].x, fresh.labels[k].x);
            }
            ASSERT_EQ(kept.clusters, fresh.clusters);
            ASSERT_EQ(kept.hidden, fresh.hidden);
            clusters += kept.clusters, labels += int(kept.labels.size());
        }
    }
    EXPECT_GT(clusters, 100);
    EXPECT_GT(labels, 100);
}

}  // namespace
