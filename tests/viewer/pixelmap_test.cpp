// Unit tests of the map's pixel ownership (viewer/src/pixelmap.h). The expected pixels are worked
// out by hand in the comments; the property test checks the three rules at many zooms.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <set>

#include "mapview.h"
#include "pixelmap.h"

using namespace arenascope;

namespace {

// Owner of every pixel: the run's id, -1 a cluster, -9 empty.
std::vector<int> owners(const std::vector<PixelRun> &runs, int width)
{
    std::vector<int> o(std::size_t(width), -9);
    for (const PixelRun &r : runs) {
        for (int x = r.x0; x < r.x1; x++) o[std::size_t(x)] = r.id;
    }
    return o;
}

// A [0, 65536), B [65536, 65552) (16 B), C [65552, 131000): 131000 B in all.
const std::vector<PixelItem> kThree = {{0, 65536, 0}, {65536, 65552, 1}, {65552, 131000, 2}};

TEST(PixelMap, A16ByteRegionBetweenTwo64KiBRegionsGetsOnePixelAtZoomOne)
{
    // 1000 px: 131 B a pixel. Pixel k's centre is (k + 0.5) * 131: A holds 0..499 (499.5 * 131 =
    // 65434.5), C from 500 (65565.5). B holds no centre; its middle 65544 is at 500.34 px:
    // pixel 500, C's first, which C gives up (it keeps 501..999).
    const auto runs = own_pixels(kThree, 0, 131000, 1000);
    ASSERT_EQ(runs.size(), 3u);
    EXPECT_EQ(runs[0].x0, 0);
    EXPECT_EQ(runs[0].x1, 500);
    EXPECT_EQ(runs[0].id, 0);
    EXPECT_EQ(runs[1].x0, 500);
    EXPECT_EQ(runs[1].x1, 501);
    EXPECT_EQ(runs[1].id, 1);
    EXPECT_EQ(runs[2].x0, 501);
    EXPECT_EQ(runs[2].x1, 1000);
    EXPECT_EQ(runs[2].id, 2);
}

TEST(PixelMap, The16ByteRegionKeepsItsPixelAt8192PxAndWhenZoomedIn)
{
    // 8192 px: 15.991 B a pixel; pixel 4098's centre 4098.5 * 15.991 = 65539.98 is in B (rule 1),
    // 4097's (65523.99) in A, 4099's (65555.97) in C.
    auto o = owners(own_pixels(kThree, 0, 131000, 8192), 8192);
    EXPECT_EQ(o[4097], 0);
    EXPECT_EQ(o[4098], 1);
    EXPECT_EQ(o[4099], 2);
    EXPECT_EQ(std::count(o.begin(), o.end(), 1), 1);
    EXPECT_EQ(std::count(o.begin(), o.end(), 0), 4098);
    // Zoomed to [65280, 65808) over 528 px (1 B a pixel): B is pixels 256..271, 16 of them.
    o = owners(own_pixels(kThree, 65280, 65808, 528), 528);
    EXPECT_EQ(std::count(o.begin(), o.end(), 1), 16);
    EXPECT_EQ(o[255], 0);
    EXPECT_EQ(o[256], 1);
    EXPECT_EQ(o[271], 1);
    EXPECT_EQ(o[272], 2);
    // At 4 px a byte ([65532, 65560) over 112 px): A 0..15, B 16..79, C 80..111.
    o = owners(own_pixels(kThree, 65532, 65560, 112), 112);
    EXPECT_EQ(o[15], 0);
    EXPECT_EQ(o[16], 1);
    EXPECT_EQ(o[79], 1);
    EXPECT_EQ(o[80], 2);
    EXPECT_EQ(o[111], 2);
}

TEST(PixelMap, RegionsTooSmallToTellApartAreOneClusterWithTheirCount)
{
    // Ten 16 B regions at [1000, 1160) in [0, 100000) over 1000 px (100 B a pixel): pixel 10's
    // centre 1050 is in region 3 [1048, 1064), pixel 11's centre 1150 in region 9 [1144, 1160);
    // the eight others have no pixel: pixels 10 and 11 are one cluster of all ten.
    std::vector<PixelItem> items;
    for (int j = 0; j < 10; j++) items.push_back({uint64_t(1000 + 16 * j), uint64_t(1016 + 16 * j), j});
    items.push_back({0, 1000, 10});
    const auto runs = own_pixels(items, 0, 100000, 1000);
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[0].id, 10);
    EXPECT_EQ(runs[0].x0, 0);
    EXPECT_EQ(runs[0].x1, 10);
    EXPECT_EQ(runs[1].id, -1);
    EXPECT_EQ(runs[1].x0, 10);
    EXPECT_EQ(runs[1].x1, 12);
    EXPECT_EQ(runs[1].count(), 10);
    EXPECT_EQ(runs[1].ids, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
}

TEST(PixelMap, NothingIsDrawnPastTheAxisAndOutOfViewItemsAreLeftOut)
{
    // [990, 1000) of [0, 1000) over 100 px: pixel 99 only (centre 995); [1000, 2000) is out of view.
    const auto runs = own_pixels({{990, 1000, 0}, {1000, 2000, 1}}, 0, 1000, 100);
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].x0, 99);
    EXPECT_EQ(runs[0].x1, 100);
    EXPECT_TRUE(own_pixels({{5, 5, 0}}, 0, 10, 10).empty());   // empty item
    EXPECT_TRUE(own_pixels({{0, 5, 0}}, 10, 10, 10).empty());  // empty view
}

TEST(PixelMap, OverlappingItemsCutTheEarlierAtTheLatersStart)
{
    // [0, 100) and [50, 80) over 100 px at 1 B a pixel: 0..49 the first, 50..79 the second, 80.. empty.
    const auto o = owners(own_pixels({{0, 100, 0}, {50, 80, 1}}, 0, 100, 100), 100);
    EXPECT_EQ(o[49], 0);
    EXPECT_EQ(o[50], 1);
    EXPECT_EQ(o[79], 1);
    EXPECT_EQ(o[80], -9);
}

// The rules at random layouts and zooms: every item in view has a pixel or is in one cluster;
// runs are disjoint, ordered and inside the lane; an owned pixel shows bytes of its owner, or
// holds its owner's middle (rule 2).
TEST(PixelMap, EveryItemInViewHasAPixelOrIsCountedInOneCluster)
{
    std::mt19937_64 rng(20261203);
    for (int round = 0; round < 3000; round++) {
        std::vector<PixelItem> items;
        uint64_t at = rng() % 64;
        const int n = 1 + int(rng() % 40);
        for (int i = 0; i < n; i++) {
            const uint64_t size = rng() % 4 == 0 ? 1 + rng() % 65536 : 1 + rng() % 48;
            items.push_back({at, at + size, i});
            at += size + (rng() % 3 == 0 ? rng() % 256 : 0);
        }
        const double lo = double(rng() % (at / 2 + 1)), hi = lo + 1 + double(rng() % (at + 1));
        const int width = 1 + int(rng() % 3000);
        const auto runs = own_pixels(items, lo, hi, width);
        std::map<int, int> seen;  // id -> owned pixels, or -1 in a cluster
        int last = 0;
        for (const PixelRun &r : runs) {
            ASSERT_GE(r.x0, last);
            ASSERT_LT(r.x0, r.x1);
            ASSERT_LE(r.x1, width);
            last = r.x1;
            if (r.id >= 0) {
                const PixelItem &it = items[std::size_t(r.id)];
                const double b = (hi - lo) / width;
                for (int x = r.x0; x < r.x1; x++) {
                    const double p0 = lo + x * b, p1 = p0 + b, mid = (double(it.start) + double(it.end)) / 2;
                    ASSERT_TRUE((double(it.start) < p1 + 1e-6 && double(it.end) > p0 - 1e-6) || (mid >= p0 && mid < p1))
                        << "round " << round << " item " << r.id << " pixel " << x;
                }
                ASSERT_NE(seen[r.id], -1);
                seen[r.id] += r.x1 - r.x0;
            } else {
                ASSERT_GE(r.count(), 2);
                for (int id : r.ids) {
                    ASSERT_EQ(seen.count(id), 0u) << "round " << round << ": item " << id << " twice";
                    seen[id] = -1;
                }
            }
        }
        for (const PixelItem &it : items) {
            const bool in_view = double(it.end) > lo && double(it.start) < hi;
            ASSERT_EQ(seen.count(it.id), in_view ? 1u : 0u) << "round " << round << " item " << it.id;
        }
    }
}

}  // namespace

// The map picture (mapview.h) of a 131000 B arena with 16 B regions beside 64 KiB ones: a 16 B
// temp, a 48 B free band, a 16 B metadata object and a 16 B scratch buffer between two 32 KiB
// tensors. Rasterised as the window does; each region is looked for in its own lane rows, in
// the pixels its bytes fall in (this file's own arithmetic), one pixel of slack each side.
namespace {

Region region(int index, uint64_t off, uint64_t size, const char *kind, const char *label)
{
    Region r;
    r.index = index, r.offset = off, r.size_bytes = size, r.kind = kind, r.label = label;
    return r;
}

struct Tiny {
    Arena a;
    std::vector<int> lanes;
    Tiny()
    {
        a.base_addr = 0x20000000, a.size_bytes = 131000;
        a.head_bytes = 65536, a.temp_bytes = 65552, a.tail_offset = 65600;
        a.free_band.present = true;
        a.regions = {region(0, 0, 32768, "tensor", "tensor 0"), region(1, 32768, 16, "scratch", "scratch 0"),
                     region(2, 32784, 32752, "tensor", "tensor 2"), region(3, 65600, 16, "metadata", "metadata"),
                     region(4, 65616, 65384, "persistent", "tensor 4 (persistent)")};
        lanes = {1, 1, 1, 0, 0};  // assign_lanes' rule: tail in lane 0, the head's three fit one lane
    }
};

MapPicture picture(const Tiny &t, int width, double lo, double hi)
{
    MapGeometry g;
    g.width = width, g.view_lo = double(t.a.base_addr) + lo, g.view_hi = double(t.a.base_addr) + hi;
    g.bar_h = 26, g.lanes_top = 32, g.lane_h = 18, g.lanes_shown = 2;
    return map_picture(
        t.a, t.lanes, g, -1, [](int) { return false; }, [](const std::string &s) { return 7.f * float(s.size()); });
}

// Pixels of colour c in row y between the pixels holding offsets [off, off + size), +-1.
int count_in(const Raster &r, int y, const MapGeometry &g, uint64_t base, uint64_t off, uint64_t size, Rgba c)
{
    const double scale = g.width / (g.view_hi - g.view_lo);
    const int x0 = int(std::floor((double(base + off) - g.view_lo) * scale)) - 1;
    const int x1 = int(std::ceil((double(base + off + size) - g.view_lo) * scale)) + 1;
    int n = 0;
    for (int x = std::max(0, x0); x < std::min(r.w, x1); x++) n += r.at(x, y) == c.imgui();
    return n;
}

TEST(MapPicture, Every16ByteRegionAndAreaIsDrawnInItsColourAtEveryZoom)
{
    const Tiny t;
    for (int width : {1000, 1400, 2048, 8192}) {
        for (double zoom : {1.0, 3.0, 37.5}) {
            const double w = 131000 / zoom, lo = std::min(65552 - w / 2, 131000 - w);
            const MapPicture p = picture(t, width, std::max(0.0, lo), std::max(0.0, lo) + w);
            Raster r;
            r.reset(width, 70, colour(Paint::Background));
            for (const MapFill &f : p.fills) r.fill(float(f.x0), float(f.y0), float(f.x1), float(f.y1), f.colour);
            const uint64_t b = t.a.base_addr;
            const std::string at = " at " + std::to_string(width) + " px, zoom " + std::to_string(zoom);
            const double view_lo = std::max(0.0, lo), bytes_a_pixel = w / width;
            // Shown in its colour, or (only where bytes_a_pixel is more than the item and its
            // neighbours' 80 B) marked as too small, in the cluster colour.
            auto seen = [&](int y, uint64_t off, uint64_t size, Paint c, const char *what) {
                if (double(off + size) <= view_lo || double(off) >= view_lo + w) return;  // out of view
                const int own = count_in(r, y, p.g, b, off, size, colour(c));
                const int mark = count_in(r, y, p.g, b, off, size, colour(Paint::Cluster));
                EXPECT_TRUE(own >= 1 || (mark >= 1 && bytes_a_pixel > 40)) << what << at;
                if (bytes_a_pixel <= 16) {
                    EXPECT_GE(own, 1) << what << at;
                }
            };
            // The bar (row 13): temp 16 B, free band 48 B, the metadata object 16 B.
            seen(13, 65536, 16, Paint::Temp, "temp");
            seen(13, 65552, 48, Paint::FreeIntact, "free band");
            seen(13, 65600, 16, Paint::Metadata, "metadata (bar)");
            // Lane 0 (rows 32..48) the tail's objects, lane 1 (rows 50..66) the head's.
            seen(40, 65600, 16, Paint::Metadata, "metadata (lane)");
            seen(58, 32768, 16, Paint::Scratch, "scratch");
            if (bytes_a_pixel <= 16) {
                EXPECT_EQ(p.hidden, 0) << at;
            }
        }
    }
}

TEST(MapPicture, ARegionsFirstPixelIsItsOwnAndItsLastIsItsEdgeShade)
{
    const Tiny t;
    const MapPicture p = picture(t, 1000, 0, 131000);  // 131 B a pixel
    Raster r;
    r.reset(1000, 70, colour(Paint::Background));
    for (const MapFill &f : p.fills) r.fill(float(f.x0), float(f.y0), float(f.x1), float(f.y1), f.colour);
    // tensor 0 [0, 32768): pixels 0..249 by their centres (249.5 * 131 = 32684.5 < 32768 <
    // 250.5 * 131); the scratch's middle 32776 is at 250.2: pixel 250, tensor 2's first.
    EXPECT_EQ(r.at(0, 58), colour(Paint::Tensor).imgui());
    EXPECT_EQ(r.at(248, 58), colour(Paint::Tensor).imgui());
    EXPECT_EQ(r.at(249, 58), edge_shade(colour(Paint::Tensor)).imgui());
    EXPECT_EQ(r.at(250, 58), colour(Paint::Scratch).imgui());
    EXPECT_EQ(r.at(251, 58), colour(Paint::Tensor).imgui());
    EXPECT_EQ(r.at(999, 40), edge_shade(colour(Paint::Persistent)).imgui());  // the axis' last pixel
    // Hit testing follows the pixels: the scratch under (250, 58), tensor 2 under (251, 58).
    ASSERT_NE(p.at(250, 58), nullptr);
    EXPECT_EQ(p.at(250, 58)->region, 1);
    EXPECT_EQ(p.at(251, 58)->region, 2);
    // temp (16 B), the free band (48 B) and the metadata (16 B) are 80 B in pixel 500
    // (65536 / 131 = 500.3): one cluster mark, of the two areas and the region.
    ASSERT_NE(p.at(500, 13), nullptr);
    EXPECT_EQ(p.at(500, 13)->region, -1);
    EXPECT_EQ(p.at(500, 13)->members, std::vector<int>{3});
    EXPECT_EQ(p.at(500, 13)->areas, (std::vector<int>{1, 2}));
    EXPECT_EQ(p.at(499, 13)->area, 0);
    EXPECT_EQ(p.at(500, 49), nullptr);  // the gap row between lanes
    // Labels only where they fit (7 px a character here): "tensor 0" in tensor 0's 250 px.
    const auto has = [&](const std::string &s) {
        return std::any_of(p.labels.begin(), p.labels.end(), [&](const MapLabel &l) { return l.text == s; });
    };
    EXPECT_TRUE(has("tensor 0"));
    EXPECT_FALSE(has("scratch 0"));
}

TEST(MapPicture, ClustersAreCountedWhenRegionsShareAPixel)
{
    Tiny t;
    for (int i = 0; i < 6; i++) {  // six 16 B tensors at [0, 96) over tensor 0's start: lane 2
        t.a.regions.push_back(region(5 + i, uint64_t(16 * i), 16, "tensor", "t"));
        t.lanes.push_back(2);
    }
    MapGeometry g;
    g.width = 1000, g.view_lo = double(t.a.base_addr), g.view_hi = g.view_lo + 131000;
    g.lane_h = 18, g.lanes_shown = 3;
    const MapPicture p = map_picture(
        t.a, t.lanes, g, -1, [](int) { return false; }, [](const std::string &s) { return 7.f * float(s.size()); });
    EXPECT_EQ(p.clusters, 2);  // this one and the bar's (temp, free band, metadata)
    EXPECT_EQ(p.hidden, 9);
    const MapRun *c = p.at(0, 32 + 2 * 18 + 5);
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(c->region, -1);
    EXPECT_EQ(c->members, (std::vector<int>{5, 6, 7, 8, 9, 10}));
}

}  // namespace

namespace {

TEST(MapPicture, ALabelThatDoesNotFitIsCutNotReplacedByAStrayNumber)
{
    Arena a;
    a.base_addr = 0, a.size_bytes = 1000, a.head_bytes = 1000, a.temp_bytes = 1000, a.tail_offset = 1000;
    a.regions = {region(0, 0, 150, "tensor", "subgraph 0 operator 12 (CONV_2D): output"),
                 region(1, 150, 60, "tensor", "tensor 47 (input)"), region(2, 210, 790, "tensor", "a\nb")};
    MapGeometry g;
    g.width = 1000, g.view_lo = 0, g.view_hi = 1000, g.lane_h = 18, g.lanes_shown = 2;
    const MapPicture p = map_picture(
        a, {1, 1, 1}, g, -1, [](int) { return false; }, [](const std::string &s) { return 7.f * float(s.size()); });
    std::vector<std::string> texts;
    for (const MapLabel &l : p.labels) texts.push_back(l.text);
    // 150 px (146 for text, 20 characters): the label cut in the middle, 17 characters kept, 5
    // from the start and 12 from the end; 60 px: tensor 47's number; a newline drawn as a space.
    EXPECT_NE(std::find(texts.begin(), texts.end(), "subgr..._2D): output"), texts.end());
    EXPECT_NE(std::find(texts.begin(), texts.end(), "47"), texts.end());
    EXPECT_NE(std::find(texts.begin(), texts.end(), "a b"), texts.end());
}

// Issue 33: long tensor names cut at the end read "MobilenetV1/Mobilen..." on every lane; cut in
// the middle they keep the end that tells them apart, and never split a UTF-8 character.
TEST(Labels, LongNamesAreCutInTheMiddle)
{
    const auto per_char = [](const std::string &s) {
        float n = 0;
        for (unsigned char c : s) n += (c & 0xC0) != 0x80;  // code points, 10 px each
        return 10.f * n;
    };
    const std::string name = "MobilenetV1/MobilenetV1/Conv2d_13_pointwise/Relu6";
    EXPECT_EQ(cut_middle(name, 1000, per_char), name);
    // 300 px: 30 characters, 27 kept: 9 from the start, 18 from the end.
    EXPECT_EQ(cut_middle(name, 300, per_char), "Mobilenet...13_pointwise/Relu6");
    EXPECT_EQ(cut_middle("\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9", 60, per_char),
              "\u00e9...\u00e9\u00e9");
    EXPECT_EQ(cut_middle(name, 5, per_char), "...");
}

}  // namespace
