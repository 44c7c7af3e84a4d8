// Unit tests of the viewer's core (no ImGui, no GL): snapshot validation and layout arithmetic.
// Expected values are worked out by hand or read from the golden fixture snapshot.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "layout.h"
#include "snapshot.h"

using namespace arenascope;
using nlohmann::json;

namespace {

json fixture()
{
    std::ifstream in(ARENASCOPE_FIXTURE);
    return json::parse(in);
}

LoadResult parse(const json &j)
{
    return parse_snapshot(j.dump());
}

TEST(Snapshot, GoldenFixtureLoadsWithItsFigures)
{
    LoadResult r = load_snapshot_file(ARENASCOPE_FIXTURE);
    ASSERT_TRUE(r.snapshot) << r.error;
    const Snapshot &s = *r.snapshot;
    const json j = fixture();
    ASSERT_EQ(s.arenas.size(), 1u);
    const Arena &a = s.arenas[0];
    EXPECT_EQ(a.base_addr, j["arenas"][0]["base_addr"].get<uint64_t>());
    EXPECT_EQ(a.size_bytes, 12288u);
    EXPECT_EQ(a.head_bytes, 672u);
    EXPECT_EQ(a.tail_offset, 4908u);
    EXPECT_EQ(a.regions.size(), 43u);
    ASSERT_TRUE(a.damage);
    EXPECT_EQ(a.damage->offset, 736u);
    EXPECT_EQ(a.damage->size_bytes, 64u);
    EXPECT_EQ(a.plan.lower_bound_bytes, 672u);
    EXPECT_EQ(s.verdict, "FAIL");
    EXPECT_EQ(a.regions[14].label, "tensor 52");
    EXPECT_EQ(a.regions[14].flags, std::vector<std::string>{"input"});
    EXPECT_FALSE(a.regions[42].first_use);  // persistent: whole run
}

struct Bad {
    const char *what;
    std::function<void(json &)> mutate;
    const char *message;
};

TEST(Snapshot, MalformedSnapshotsAreRefusedWithTheirPath)
{
    const std::vector<Bad> cases = {
        {"negative size", [](json &j) { j["arenas"][0]["regions"][3]["size_bytes"] = -16; },
         "$.arenas[0].regions[3].size_bytes: expected a non-negative integer, found -16"},
        {"wrong type", [](json &j) { j["arenas"][0]["head_bytes"] = "672"; },
         "$.arenas[0].head_bytes: expected a non-negative integer, found string"},
        {"huge count", [](json &j) { j["checks"] = json::array(); for (int i = 0; i < 300; i++) j["checks"].push_back(j["verdict"]); },
         "$.checks: 300 entries, more than the 256"},
        {"region outside", [](json &j) {
             auto &r = j["arenas"][0]["regions"][0];
             r["offset"] = 12250;
             r["address"] = j["arenas"][0]["base_addr"].get<uint64_t>() + 12250;
         }, "outside the arena's 12288 B"},
        {"address", [](json &j) { j["arenas"][0]["regions"][0]["address"] = 5; }, "is not the arena base"},
        {"wrapping base", [](json &j) { j["arenas"][0]["base_addr"] = 0xfffffffffffffff0ull; },
         "runs past the end of the address space"},
        {"damage", [](json &j) { j["arenas"][0]["damage"]["offset"] = 100000; }, "$.arenas[0].damage: +100000"},
        {"intact", [](json &j) { j["guard"]["intact_bytes"] = 99999999; }, "intact or touched bytes do not fit"},
        {"hwm", [](json &j) { j["stack"]["hwm_addr"] = 0; }, "$.stack.hwm_addr: 0x0 is outside the stack"},
        {"temp", [](json &j) { j["arenas"][0]["temp_bytes"] = 100; }, "temp 100 below head 672"},
        {"scope", [](json &j) { j["arenas"][0]["regions"][0]["last_use"] = 99; }, "last_use 99 is past the plan's 16"},
        {"huge plan", [](json &j) { j["arenas"][0]["plan"]["lower_bound_bytes"] = 18446744073709551615ull; },
         "more than all head regions together"},
        {"verdict", [](json &j) { j["verdict"] = "fail"; }, "verdict \"fail\" is not PASS, WARN or FAIL"},
        {"fault region", [](json &j) {
             j["fault"] = {{"source", "x"}, {"cfsr", 0}, {"hfsr", 0}, {"bits", json::array()}, {"causes", json::array()},
                           {"verdict", json::array()}, {"damaged_regions", {43}}};
         }, "$.fault.damaged_regions: 43 is not a region index"},
        {"missing", [](json &j) { j["arenas"][0].erase("plan"); }, "$.arenas[0].plan: missing"},
        {"version", [](json &j) { j["version"] = 2; }, "snapshot version 2, this viewer reads version 1"},
        {"not a snapshot", [](json &j) { j["schema"] = "other"; }, "not an arenascope snapshot"},
        {"live bytes", [](json &j) { j["arenas"][0]["plan"]["live_bytes"].erase(0); }, "15 values for 16 scopes"},
        {"lifetime", [](json &j) { j["arenas"][0]["regions"][0]["first_use"] = 9; }, "last_use 2 before first_use 9"},
        {"band", [](json &j) { j["guard"]["size_bytes"] = 5; }, "$.guard: low"},
        {"kind", [](json &j) { j["arenas"][0]["regions"][0]["kind"] = "banana"; }, "unknown kind \"banana\""},
    };
    for (const Bad &c : cases) {
        json j = fixture();
        c.mutate(j);
        LoadResult r = parse(j);
        EXPECT_FALSE(r.snapshot) << c.what;
        EXPECT_NE(r.error.find(c.message), std::string::npos) << c.what << ": " << r.error;
    }
}

TEST(Snapshot, TruncatedAndNonJsonTextIsAnError)
{
    std::string text = fixture().dump();
    for (std::size_t cut : {std::size_t(0), std::size_t(1), text.size() / 2, text.size() - 1}) {
        LoadResult r = parse_snapshot(std::string_view(text).substr(0, cut));
        EXPECT_FALSE(r.snapshot);
        EXPECT_NE(r.error.find("not valid JSON"), std::string::npos) << r.error;
    }
    EXPECT_NE(parse_snapshot("[1,2,3]").error.find("expected a snapshot object"), std::string::npos);
    EXPECT_NE(load_snapshot_file("/nonexistent/s.json").error.find("no such file"), std::string::npos);
    EXPECT_NE(load_snapshot_file("/").error.find("not a regular file"), std::string::npos);
    EXPECT_NE(load_snapshot_file("/dev/zero").error.find("not a regular file"), std::string::npos);
}

TEST(Snapshot, StreamMessages)
{
    json msg = {{"type", "snapshot"}, {"version", 1}, {"snapshot", fixture()}};
    EXPECT_TRUE(parse_stream_message(msg.dump()).snapshot);
    msg["version"] = 3;
    EXPECT_NE(parse_stream_message(msg.dump()).error.find("version is not 1"), std::string::npos);
    EXPECT_NE(parse_stream_message("{\"type\":\"hello\"}").error.find("not {\"type\":\"snapshot\""), std::string::npos);
}

TEST(Layout, AxisMapsAddressesToPixelsAndBack)
{
    AddressAxis ax;
    ax.full_lo = 0x20000000;
    ax.full_hi = 0x20000000 + 4096;
    ax.reset();
    ax.px0 = 100;
    ax.pw = 400;  // 10.24 B a pixel
    EXPECT_FLOAT_EQ(ax.to_px(0x20000000), 100.f);
    EXPECT_FLOAT_EQ(ax.to_px(0x20000000 + 1024), 200.f);
    EXPECT_DOUBLE_EQ(ax.to_addr(300.f), 0x20000000 + 2048.0);
    ax.zoom_at(200.f, 4.0);  // 4x around +1024: span 1024 B, +1024 stays at x=200
    EXPECT_NEAR(ax.view_hi - ax.view_lo, 1024.0, 1e-6);
    EXPECT_NEAR(ax.to_px(0x20000000 + 1024), 200.f, 1e-3);
    ax.pan_px(1e6);  // panning past the start clamps to the arena
    EXPECT_DOUBLE_EQ(ax.view_lo, ax.full_lo);
    ax.zoom_at(300.f, 1e9);  // no more than 8 px a byte
    EXPECT_NEAR(ax.view_hi - ax.view_lo, 50.0, 1e-6);
    ax.zoom_at(300.f, 1e-9);  // zooming out stops at the whole arena
    EXPECT_DOUBLE_EQ(ax.view_hi - ax.view_lo, 4096.0);
}

TEST(Layout, TickStepsArePowersOfTwo)
{
    EXPECT_EQ(tick_step(0, 12288, 8), 2048u);
    EXPECT_EQ(tick_step(0, 100, 10), 16u);
    EXPECT_EQ(tick_step(5, 5, 10), 1u);
    EXPECT_EQ(format_bytes(672), "672 B");
    EXPECT_EQ(format_bytes(7380), "7.2 KiB");
    EXPECT_EQ(format_bytes(3u << 20), "3.00 MiB");
}

Region reg(uint64_t off, uint64_t size, const char *kind, int first = 0, int last = 0)
{
    Region r;
    r.offset = off;
    r.size_bytes = size;
    r.kind = kind;
    if (first >= 0) r.first_use = first, r.last_use = last;
    return r;
}

TEST(Layout, LanesKeepRegionsThatShareBytesApart)
{
    const std::vector<Region> rs = {reg(0, 128, "tensor"), reg(0, 64, "scratch"), reg(128, 64, "tensor"),
                                    reg(64, 128, "tensor"), reg(3000, 100, "persistent", -1)};
    std::vector<int> lanes;
    EXPECT_EQ(assign_lanes(rs, lanes), 3);  // by offset: 0..128 lane 1, 0..64 lane 2, 64..192 fits lane 2, 128.. lane 1
    EXPECT_EQ(lanes, (std::vector<int>{1, 2, 1, 2, 0}));
}

TEST(Layout, HitTestingFindsTheRegionUnderTheMouse)
{
    const std::vector<Region> rs = {reg(0, 128, "tensor"), reg(0, 64, "scratch"), reg(4000, 8, "metadata", -1)};
    std::vector<int> lanes;
    assign_lanes(rs, lanes);
    AddressAxis ax;
    ax.full_lo = 1000;
    ax.full_hi = 1000 + 4096;
    ax.reset();
    ax.px0 = 0;
    ax.pw = 4096;  // 1 B a pixel
    // lanes start at y=100, 10 px each: lane 1 is y 110..120
    EXPECT_EQ(hit_region(rs, lanes, ax, 1000, 100, 10, 50, 115), 0);
    EXPECT_EQ(hit_region(rs, lanes, ax, 1000, 100, 10, 50, 125), 1);
    EXPECT_EQ(hit_region(rs, lanes, ax, 1000, 100, 10, 100, 125), -1);   // past the scratch's 64 B
    EXPECT_EQ(hit_region(rs, lanes, ax, 1000, 100, 10, 4003, 105), 2);   // the tail lane
    EXPECT_EQ(hit_region(rs, lanes, ax, 1000, 100, 10, 50, 95), -1);     // above the lanes
}

TEST(Layout, PlanRectanglesSpanTheirLifetimes)
{
    Arena a;
    a.size_bytes = 4096;
    a.head_bytes = 256;
    a.plan.scopes = 4;
    a.plan.live_bytes = {128, 256, 192, 64};
    a.plan.lower_bound_bytes = 256;
    a.regions = {reg(0, 128, "tensor", 0, 1), reg(128, 128, "tensor", 1, 2), reg(3000, 8, "metadata", -1)};
    const PlanGeometry g = plan_geometry(a, Rect{10, 20, 400, 256});
    EXPECT_EQ(g.extent, 256u);
    const Rect r = g.region_rect(a.regions[1]);  // scopes 1..2 -> x 110..310, offset 128..256 -> y 148..276
    EXPECT_FLOAT_EQ(r.x, 110.f);
    EXPECT_FLOAT_EQ(r.w, 200.f);
    EXPECT_FLOAT_EQ(r.y, 148.f);
    EXPECT_FLOAT_EQ(r.h, 128.f);
    EXPECT_EQ(g.region_rect(a.regions[2]).w, 0.f);  // unplanned: not drawn
    EXPECT_EQ(hit_plan(a.regions, g, 150, 200), 1);
    EXPECT_EQ(hit_plan(a.regions, g, 350, 200), -1);
}

TEST(Layout, RamColumnSpansArenaToStackTop)
{
    Snapshot s;
    s.stack.low_addr = 0x3000;
    s.stack.high_addr = 0x5000;
    Arena a;
    a.base_addr = 0x1000;
    a.size_bytes = 0x1000;
    const RamColumn c = ram_column(s, a, Rect{0, 0, 50, 400});  // 0x1000..0x5000 over 400 px
    EXPECT_FLOAT_EQ(c.y_of(0x1000), 400.f);
    EXPECT_FLOAT_EQ(c.y_of(0x5000), 0.f);
    EXPECT_FLOAT_EQ(c.y_of(0x3000), 200.f);
}

TEST(Layout, PaletteKindsAreDistinct)
{
    const std::vector<Paint> kinds = {Paint::Tensor, Paint::Scratch, Paint::Temp, Paint::Persistent, Paint::Metadata,
                                      Paint::FreeIntact, Paint::FreeTouched, Paint::Guard, Paint::StackUsed,
                                      Paint::StackUnused, Paint::Background};
    for (std::size_t i = 0; i < kinds.size(); i++) {
        for (std::size_t k = i + 1; k < kinds.size(); k++) {
            const Rgba a = colour(kinds[i]), b = colour(kinds[k]);
            const int d = std::abs(a.r - b.r) + std::abs(a.g - b.g) + std::abs(a.b - b.b);
            EXPECT_GT(d, 60) << paint_name(kinds[i]) << " vs " << paint_name(kinds[k]);
        }
    }
    EXPECT_EQ(colour(paint_of_kind("scratch")), colour(Paint::Scratch));
}

}  // namespace

namespace {

TEST(Raster, RectanglesCoverThePixelsWhoseCentresTheyContainAndAtLeastOne)
{
    Raster r;
    const Rgba bg{0, 0, 0, 255}, c{10, 20, 30, 255};
    r.reset(10, 4, bg);
    r.fill(2.4f, 1.0f, 5.6f, 3.0f, c);  // columns 2..5 (centres 2.5..5.5), rows 1..2
    for (int x = 0; x < 10; x++) {
        for (int y = 0; y < 4; y++) {
            const bool in = x >= 2 && x < 6 && y >= 1 && y < 3;
            EXPECT_EQ(r.at(x, y), in ? c.imgui() : bg.imgui()) << x << "," << y;
        }
    }
    r.reset(10, 4, bg);
    r.fill(7.1f, 0.2f, 7.2f, 0.3f, c);  // a sliver still gets one pixel
    EXPECT_EQ(r.at(7, 0), c.imgui());
    r.fill(-5, -5, 100, 100, c);  // clamped, no overrun
    EXPECT_EQ(r.at(9, 3), c.imgui());
    r.reset(10, 6, bg);
    r.frame(1, 1, 6, 5, c);  // a 5x4 frame: border pixels only
    EXPECT_EQ(r.at(1, 1), c.imgui());
    EXPECT_EQ(r.at(5, 4), c.imgui());
    EXPECT_EQ(r.at(3, 2), bg.imgui());
}

}  // namespace
