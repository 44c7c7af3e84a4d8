// Unit tests of the viewer's core (no ImGui, no GL): snapshot validation and layout arithmetic.
// Expected values are worked out by hand or read from the golden fixture snapshot.
#include <gtest/gtest.h>

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "layout.h"
#include "panel.h"
#include "panels.h"
#include "snapshot.h"
#include "textfit.h"

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

// The versions the viewer reads are the ones the writers state (tests/fixtures/
// shared_definitions_golden.json, also checked by the planner's and the plugin's tests).
TEST(Snapshot, TheVersionsItReadsAreTheContractsOnes)
{
    std::ifstream in(std::string(ARENASCOPE_FIXTURES_DIR) + "/shared_definitions_golden.json");
    ASSERT_TRUE(in);
    const json versions = json::parse(in).at("contract_versions");
    EXPECT_EQ(versions.at("snapshot").get<int>(), kSnapshotVersion);
    EXPECT_EQ(versions.at("live_message").get<int>(), kStreamVersion);
}

// A fault member that loads (a Cortex-M one, with no registers): for a case to break.
json a_fault()
{
    return {{"source", "x"},
            {"arch", "cortex-m"},
            {"registers", json::array()},
            {"fault_address", nullptr},
            {"bits", json::array()},
            {"causes", json::array()},
            {"stale", false},
            {"verdicts", json::array()},
            {"notes", json::array()},
            {"damaged_regions", json::array()}};
}

TEST(Snapshot, MalformedSnapshotsAreRefusedWithTheirPath)
{
    const std::vector<Bad> cases = {
        {"negative size", [](json &j) { j["arenas"][0]["regions"][3]["size_bytes"] = -16; },
         "$.arenas[0].regions[3].size_bytes: expected a non-negative integer, found -16"},
        {"wrong type", [](json &j) { j["arenas"][0]["head_bytes"] = "672"; },
         "$.arenas[0].head_bytes: expected a non-negative integer, found string"},
        {"huge count",
         [](json &j) {
             j["checks"] = json::array();
             for (int i = 0; i < 300; i++) j["checks"].push_back(j["verdict"]);
         },
         "$.checks: 300 entries, more than the 256"},
        {"region outside",
         [](json &j) {
             auto &r = j["arenas"][0]["regions"][0];
             r["offset"] = 12250;
             r["address"] = j["arenas"][0]["base_addr"].get<uint64_t>() + 12250;
         },
         "outside the arena's 12288 B"},
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
        {"fault region",
         [](json &j) {
             j["fault"] = a_fault();
             j["fault"]["damaged_regions"] = json::array({43});
         },
         "$.fault.damaged_regions: 43 is not a region index"},
        {"fault stale",
         [](json &j) {
             j["fault"] = a_fault();
             j["fault"].erase("stale");
         },
         "$.fault.stale: missing"},
        {"missing", [](json &j) { j["arenas"][0].erase("plan"); }, "$.arenas[0].plan: missing"},
        {"version", [](json &j) { j["version"] = 1; }, "snapshot version 1, this viewer reads versions 2 to 3"},
        {"version 4", [](json &j) { j["version"] = 4; }, "snapshot version 4, this viewer reads versions 2 to 3"},
        {"fault registers",
         [](json &j) {
             j["fault"] = a_fault();
             j["fault"]["arch"] = "riscv32";
             j["fault"]["registers"] = json::array({json{{"name", "mcause"}}});
         },
         "$.fault.registers[0].meaning: missing"},
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

// A verdict kind this viewer does not know (a newer plugin's) is shown as its headline, as every
// kind is, rather than refusing the whole snapshot (issue 33); and a version 2 fault whose
// CFSR/HFSR are unknown (a RAM dump without the SCB) loads with them left out of its registers.
TEST(Snapshot, AnUnknownVerdictKindAndAnUnknownCfsrLoad)
{
    json j = fixture();
    j["version"] = 2;
    j["fault"] = {{"exception", "HardFault"},
                  {"source", "the registers file"},
                  {"cfsr", nullptr},
                  {"hfsr", nullptr},
                  {"bits", {"CFSR and HFSR unknown: a RAM dump holds no System Control Block"}},
                  {"mmfar", nullptr},
                  {"bfar", nullptr},
                  {"causes", json::array()},
                  {"stale", false},
                  {"notes", json::array()},
                  {"damaged_regions", json::array()},
                  {"verdicts", {{{"kind", "meteor"}, {"headline", "VERDICT: a meteor"}, {"evidence", json::array()}}}}};
    LoadResult r = parse(j);
    ASSERT_TRUE(r.snapshot) << r.error;
    ASSERT_TRUE(r.snapshot->fault);
    EXPECT_EQ(r.snapshot->fault->verdicts.at(0).kind, "meteor");
    EXPECT_EQ(r.snapshot->fault->verdicts.at(0).headline, "VERDICT: a meteor");
    EXPECT_TRUE(r.snapshot->fault->registers.empty());
    EXPECT_EQ(r.snapshot->fault->arch, "cortex-m");
    EXPECT_FALSE(r.snapshot->fault->fault_address);
}

// Version 2 still loads: its Cortex-M fields become version 3's register list, in the order and
// with the fault address the plugin's Cortex-M port gives (tests/fixtures/v2/ holds a version 2
// snapshot the plugin wrote before version 3; its version 3 twin is in tests/fixtures/).
TEST(Snapshot, AVersion2FaultLoadsAsTheSameRegisterList)
{
    LoadResult v2 = load_snapshot_file(std::string(ARENASCOPE_FIXTURES_DIR) + "/v2/demo_stack_fault_snapshot.json");
    LoadResult v3 = load_snapshot_file(std::string(ARENASCOPE_FIXTURES_DIR) + "/demo_stack_fault_snapshot.json");
    ASSERT_TRUE(v2.snapshot) << v2.error;
    ASSERT_TRUE(v3.snapshot) << v3.error;
    const Fault &a = *v2.snapshot->fault, &b = *v3.snapshot->fault;
    ASSERT_EQ(a.registers.size(), b.registers.size());
    for (std::size_t i = 0; i < a.registers.size(); i++) {
        EXPECT_EQ(a.registers[i].name, b.registers[i].name);
        EXPECT_EQ(a.registers[i].value, b.registers[i].value);
    }
    ASSERT_TRUE(a.fault_address && b.fault_address);
    EXPECT_EQ(a.fault_address->name, "BFAR");
    EXPECT_EQ(*a.fault_address->value, 0x5A5A5A58u);  // the fixture's bfar, 1515870808
    EXPECT_EQ(*b.fault_address->value, 0x5A5A5A58u);
}

// Any architecture's registers are drawn as the snapshot lists them: a RISC-V trap's mcause,
// mepc and mtval with their meanings, nothing of Cortex-M's.
TEST(Snapshot, ARiscVFaultShowsItsOwnRegisters)
{
    json j = fixture();
    j["fault"] = {{"exception", "store/AMO access fault"},
                  {"source", "core registers (halted in the trap handler, mtvec)"},
                  {"arch", "riscv32"},
                  {"registers",
                   {{{"name", "mcause"}, {"value", 7}, {"meaning", "exception 7, store/AMO access fault"}},
                    {{"name", "mepc"}, {"value", 0x800002f2u}, {"meaning", "the trapping instruction"}},
                    {{"name", "mtval"}, {"value", 0xffffffc0u}, {"meaning", "the faulting address"}}}},
                  {"fault_address", {{"register", "mtval"}, {"value", 0xffffffc0u}}},
                  {"bits", json::array()},
                  {"frame", nullptr},
                  {"pc_where", "0x800002f2 in main"},
                  {"causes", json::array()},
                  {"stale", false},
                  {"notes", json::array()},
                  {"damaged_regions", json::array()},
                  {"verdicts", json::array()}};
    LoadResult r = parse(j);
    ASSERT_TRUE(r.snapshot) << r.error;
    std::vector<std::string> texts;
    for (const PanelLine &l : fault_lines(*r.snapshot, true)) texts.push_back(l.text);
    const auto has = [&](const std::string &t) { return std::find(texts.begin(), texts.end(), t) != texts.end(); };
    EXPECT_TRUE(has("mcause 0x00000007: exception 7, store/AMO access fault"));
    EXPECT_TRUE(has("mtval 0xffffffc0: the faulting address"));
    EXPECT_TRUE(has("from core registers (halted in the trap handler, mtvec) (riscv32)"));
    for (const std::string &t : texts) EXPECT_EQ(t.find("CFSR"), std::string::npos) << t;
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

json live_object()
{
    return {
        {"reader", "OpenOCD Tcl RPC 127.0.0.1:6666"},
        {"captured_at_unix_s", 1764511234.125},
        {"refresh_index", 1234},
        {"refresh_hz", 21.3},
        {"bytes_last_refresh", 412},
        {"link", "ok"},
        {"link_error", nullptr},
        {"history",
         {{{"t_unix_s", 1764511230.0}, {"used_bytes", 22772}, {"stack_peak_bytes", 1200}, {"gap_bytes", 7000}},
          {{"t_unix_s", 1764511234.125}, {"used_bytes", 22780}, {"stack_peak_bytes", nullptr}, {"gap_bytes", -16}}}}};
}

TEST(Live, ParsedWithEveryField)
{
    json j = fixture();
    j["live"] = live_object();
    LoadResult r = parse(j);
    ASSERT_TRUE(r.snapshot) << r.error;
    ASSERT_TRUE(r.snapshot->live);
    const Live &l = *r.snapshot->live;
    EXPECT_EQ(l.reader, "OpenOCD Tcl RPC 127.0.0.1:6666");
    EXPECT_DOUBLE_EQ(l.captured_at_unix_s, 1764511234.125);
    EXPECT_EQ(l.refresh_index, 1234u);
    EXPECT_DOUBLE_EQ(l.refresh_hz, 21.3);
    EXPECT_EQ(l.bytes_last_refresh, 412u);
    EXPECT_FALSE(l.link_lost);
    EXPECT_EQ(l.link_error, "");
    ASSERT_EQ(l.history.size(), 2u);
    EXPECT_DOUBLE_EQ(l.history[0].t_unix_s, 1764511230.0);
    EXPECT_EQ(l.history[0].used_bytes, 22772u);
    EXPECT_EQ(l.history[0].stack_peak_bytes, std::optional<uint64_t>(1200));
    EXPECT_EQ(l.history[0].gap_bytes, std::optional<int64_t>(7000));
    EXPECT_EQ(l.history[1].used_bytes, 22780u);
    EXPECT_FALSE(l.history[1].stack_peak_bytes);
    EXPECT_EQ(l.history[1].gap_bytes, std::optional<int64_t>(-16));  // the stack went 16 B into the arena

    j["live"]["link"] = "lost";
    j["live"]["link_error"] = "OpenOCD closed the connection";
    r = parse(j);
    ASSERT_TRUE(r.snapshot) << r.error;
    EXPECT_TRUE(r.snapshot->live->link_lost);
    EXPECT_EQ(r.snapshot->live->link_error, "OpenOCD closed the connection");

    json msg = {{"type", "snapshot"}, {"version", 1}, {"snapshot", j}};  // the live link carries it too
    r = parse_stream_message(msg.dump());
    ASSERT_TRUE(r.snapshot) << r.error;
    EXPECT_EQ(r.snapshot->live->history.size(), 2u);
}

TEST(Live, NullOrAbsentIsNoLiveInfo)
{
    json j = fixture();
    ASSERT_FALSE(j.contains("live"));
    LoadResult r = parse(j);
    ASSERT_TRUE(r.snapshot) << r.error;
    EXPECT_FALSE(r.snapshot->live);
    j["live"] = nullptr;
    r = parse(j);
    ASSERT_TRUE(r.snapshot) << r.error;
    EXPECT_FALSE(r.snapshot->live);
}

TEST(Live, MalformedFieldsAreRefusedWithTheirPath)
{
    const std::vector<Bad> cases = {
        {"live type", [](json &j) { j["live"] = "yes"; }, "$.live: expected an object or null, found string"},
        {"reader", [](json &j) { j["live"]["reader"] = 5; }, "$.live.reader: expected a string, found number"},
        {"reader missing", [](json &j) { j["live"].erase("reader"); }, "$.live.reader: missing"},
        {"captured", [](json &j) { j["live"]["captured_at_unix_s"] = "now"; },
         "$.live.captured_at_unix_s: expected a number, found string"},
        {"index type", [](json &j) { j["live"]["refresh_index"] = 1.5; },
         "$.live.refresh_index: expected a non-negative integer, found 1.5"},
        {"index 0", [](json &j) { j["live"]["refresh_index"] = 0; }, "$.live.refresh_index: 0, refreshes count from 1"},
        {"index negative", [](json &j) { j["live"]["refresh_index"] = -3; },
         "$.live.refresh_index: expected a non-negative integer, found -3"},
        {"hz type", [](json &j) { j["live"]["refresh_hz"] = nullptr; },
         "$.live.refresh_hz: expected a number, found null"},
        {"hz negative", [](json &j) { j["live"]["refresh_hz"] = -1; }, "$.live.refresh_hz: -1, expected a rate >= 0"},
        {"bytes", [](json &j) { j["live"]["bytes_last_refresh"] = true; },
         "$.live.bytes_last_refresh: expected a non-negative integer, found boolean"},
        {"link", [](json &j) { j["live"]["link"] = "down"; },
         "$.live.link: \"down\" is not \"ok\", \"lost\" or \"untrusted\""},
        {"link type", [](json &j) { j["live"]["link"] = 1; }, "$.live.link: expected a string, found number"},
        {"link_error", [](json &j) { j["live"]["link_error"] = json::array(); },
         "$.live.link_error: expected a string, found array"},
        {"history type", [](json &j) { j["live"]["history"] = json::object(); },
         "$.live.history: expected an array, found object"},
        {"history point", [](json &j) { j["live"]["history"][1] = 7; },
         "$.live.history[1]: expected an object, found number"},
        {"t", [](json &j) { j["live"]["history"][0]["t_unix_s"] = "0"; },
         "$.live.history[0].t_unix_s: expected a number, found string"},
        {"used", [](json &j) { j["live"]["history"][1]["used_bytes"] = -5; },
         "$.live.history[1].used_bytes: expected a non-negative integer, found -5"},
        {"used missing", [](json &j) { j["live"]["history"][1].erase("used_bytes"); },
         "$.live.history[1].used_bytes: missing"},
        {"peak", [](json &j) { j["live"]["history"][0]["stack_peak_bytes"] = "1200"; },
         "$.live.history[0].stack_peak_bytes: expected a non-negative integer, found string"},
        {"gap", [](json &j) { j["live"]["history"][1]["gap_bytes"] = 0.5; },
         "$.live.history[1].gap_bytes: expected an integer, found number"},
        {"too long",
         [](json &j) {
             j["live"]["history"] = json::array();
             for (int i = 0; i < 601; i++) j["live"]["history"].push_back({{"t_unix_s", i}, {"used_bytes", 1}});
         },
         "$.live.history: 601 entries, more than the 600 this viewer accepts"},
    };
    for (const Bad &c : cases) {
        json j = fixture();
        j["live"] = live_object();
        c.mutate(j);
        LoadResult r = parse(j);
        EXPECT_FALSE(r.snapshot) << c.what;
        EXPECT_NE(r.error.find(c.message), std::string::npos) << c.what << ": " << r.error;
    }
    json j = fixture();  // 600 points is the limit, not past it
    j["live"] = live_object();
    j["live"]["history"] = json::array();
    for (int i = 0; i < 600; i++) j["live"]["history"].push_back({{"t_unix_s", i}, {"used_bytes", 1}});
    LoadResult r = parse(j);
    ASSERT_TRUE(r.snapshot) << r.error;
    EXPECT_EQ(r.snapshot->live->history.size(), 600u);
}

json standin(const char *name)
{
    std::ifstream in(std::string(ARENASCOPE_FIXTURES_DIR) + "/" + name);
    return json::parse(in);
}

TEST(Tflm, BothStandinPostMortemsLoadWithTheirVerdicts)
{
    LoadResult r = load_snapshot_file(std::string(ARENASCOPE_FIXTURES_DIR) + "/standin_stack_into_arena_snapshot.json");
    ASSERT_TRUE(r.snapshot) << r.error;
    ASSERT_TRUE(r.snapshot->tflm) << r.snapshot->tflm_error;
    const Tflm &t = *r.snapshot->tflm;
    EXPECT_EQ(t.condition, "smashed");
    EXPECT_EQ(t.interpreter_addr, std::optional<uint64_t>(0x20000394));
    EXPECT_FALSE(t.allocator_sound);
    ASSERT_EQ(t.objects.size(), 2u);
    EXPECT_FALSE(t.objects[1].sound);
    EXPECT_EQ(t.objects[1].problems.size(), 2u);
    ASSERT_EQ(t.verdicts.size(), 1u);
    EXPECT_EQ(t.verdicts[0].kind, "stack-into-arena");
    EXPECT_EQ(t.verdicts[0].headline.rfind("VERDICT: the stack ran into the arena", 0), 0u);
    EXPECT_EQ(t.verdicts[0].evidence.size(), 3u);
    ASSERT_EQ(t.verdicts[0].smashed.size(), 6u);
    EXPECT_EQ(t.verdicts[0].smashed[0].name, "SingleArenaBufferAllocator");
    EXPECT_EQ(t.verdicts[0].smashed[0].addr, 0x2000664cu);
    EXPECT_EQ(t.verdicts[0].smashed[0].size, 36u);
    EXPECT_TRUE(r.snapshot->fault);

    r = load_snapshot_file(std::string(ARENASCOPE_FIXTURES_DIR) + "/standin_undersized_snapshot.json");
    ASSERT_TRUE(r.snapshot) << r.error;
    ASSERT_TRUE(r.snapshot->tflm) << r.snapshot->tflm_error;
    EXPECT_EQ(r.snapshot->tflm->condition, "unfinished");
    EXPECT_TRUE(r.snapshot->tflm->allocator_sound);
    ASSERT_EQ(r.snapshot->tflm->verdicts.size(), 1u);
    EXPECT_EQ(r.snapshot->tflm->verdicts[0].kind, "allocation-failed");
    EXPECT_TRUE(r.snapshot->tflm->verdicts[0].smashed.empty());
    EXPECT_FALSE(r.snapshot->fault);
}

TEST(Tflm, NullOrAbsentIsNoPostMortem)
{
    json j = fixture();
    ASSERT_FALSE(j.contains("tflm"));
    LoadResult r = parse(j);
    ASSERT_TRUE(r.snapshot) << r.error;
    EXPECT_FALSE(r.snapshot->tflm);
    EXPECT_EQ(r.snapshot->tflm_error, "");
    j["tflm"] = nullptr;
    r = parse(j);
    ASSERT_TRUE(r.snapshot) << r.error;
    EXPECT_FALSE(r.snapshot->tflm);
    EXPECT_EQ(r.snapshot->tflm_error, "");
}

// A malformed "tflm" is left out and said (path-named); the rest of the snapshot still loads.
TEST(Tflm, MalformedFieldsAreLeftOutWithTheirPath)
{
    const std::string long_line(5000, 'x');
    const std::vector<Bad> cases = {
        {"type", [](json &j) { j["tflm"] = "yes"; }, "$.tflm: expected an object or null, found string"},
        {"condition type", [](json &j) { j["tflm"]["condition"] = 5; },
         "$.tflm.condition: expected a string, found number"},
        {"condition", [](json &j) { j["tflm"]["condition"] = "exploded"; },
         "$.tflm.condition: \"exploded\" is not one of allocated, smashed, not-started, unfinished, unknown"},
        {"condition missing", [](json &j) { j["tflm"].erase("condition"); }, "$.tflm.condition: missing"},
        {"meaning", [](json &j) { j["tflm"]["meaning"] = nullptr; }, "$.tflm.meaning: expected a string, found null"},
        {"evidence line",
         [](json &j) {
             j["tflm"]["evidence"][0] = {{"a", 1}};
         },
         "$.tflm.evidence[0]: expected a string, found object"},
        {"allocator", [](json &j) { j["tflm"]["allocator"] = 3; },
         "$.tflm.allocator: expected an object or null, found number"},
        {"allocator member", [](json &j) { j["tflm"]["allocator"]["head_"] = "x"; },
         "$.tflm.allocator.head_: expected an address (a non-negative integer), found string"},
        {"object addr", [](json &j) { j["tflm"]["objects"][0]["addr"] = -8; },
         "$.tflm.objects[0].addr: expected a non-negative integer, found -8"},
        {"object sound", [](json &j) { j["tflm"]["objects"][0]["sound"] = "yes"; },
         "$.tflm.objects[0].sound: expected true or false, found string"},
        {"verdicts type", [](json &j) { j["tflm"]["verdicts"] = json::object(); },
         "$.tflm.verdicts: expected an array, found object"},
        {"verdict type", [](json &j) { j["tflm"]["verdicts"][0] = 7; },
         "$.tflm.verdicts[0]: expected an object, found number"},
        {"kind", [](json &j) { j["tflm"]["verdicts"][0]["kind"] = "meteor"; },
         "$.tflm.verdicts[0].kind: \"meteor\" is not one of"},
        {"headline", [](json &j) { j["tflm"]["verdicts"][0]["headline"] = json::array({"VERDICT"}); },
         "$.tflm.verdicts[0].headline: expected a string, found array"},
        {"smashed addr", [](json &j) { j["tflm"]["verdicts"][0]["smashed"][0]["addr"] = 1e30; },
         "$.tflm.verdicts[0].smashed[0].addr: expected a non-negative integer, found 1e+30"},
        {"smashed size", [](json &j) { j["tflm"]["verdicts"][0]["smashed"][5].erase("size"); },
         "$.tflm.verdicts[0].smashed[5].size: missing"},
        {"deep",  // 25 levels in all: deeper is refused with the whole snapshot (BoundedReader tests)
         [](json &j) {
             j["tflm"]["verdicts"][0]["smashed"][0] = json::parse(std::string(20, '[') + std::string(20, ']'));
         },
         "$.tflm.verdicts[0].smashed[0]: expected an object, found array"},
        {"many verdicts",
         [](json &j) {
             for (int i = 0; i < 16; i++) j["tflm"]["verdicts"].push_back(j["tflm"]["verdicts"][0]);
         },
         "$.tflm.verdicts: 17 entries, more than the 16 this viewer accepts"},
        {"many smashed",
         [](json &j) {
             auto &sm = j["tflm"]["verdicts"][0]["smashed"];
             while (sm.size() < 257) sm.push_back(sm[0]);
         },
         "$.tflm.verdicts[0].smashed: 257 entries, more than the 256 this viewer accepts"},
        {"many lines",
         [](json &j) {
             while (j["tflm"]["evidence"].size() < 65) j["tflm"]["evidence"].push_back("x");
         },
         "$.tflm.evidence: 65 entries, more than the 64 this viewer accepts"},
        {"too much text",
         [&](json &j) {  // 16 verdicts of 5 lines of 4 KiB: 320 KiB, more than 64
             json v = j["tflm"]["verdicts"][0];
             v["evidence"] = json::array();
             for (int i = 0; i < 5; i++) v["evidence"].push_back(long_line);
             v["smashed"] = json::array();
             j["tflm"]["verdicts"] = json::array();
             for (int i = 0; i < 16; i++) j["tflm"]["verdicts"].push_back(v);
         },
         "$.tflm: more than 64 KiB of text, more than this viewer draws"},
    };
    const json base = standin("standin_stack_into_arena_snapshot.json");
    for (const Bad &c : cases) {
        json j = base;
        c.mutate(j);
        LoadResult r = parse(j);
        ASSERT_TRUE(r.snapshot) << c.what << ": " << r.error;  // the map and the fault are still shown
        EXPECT_FALSE(r.snapshot->tflm) << c.what;
        EXPECT_TRUE(r.snapshot->fault) << c.what;
        EXPECT_NE(r.snapshot->tflm_error.find(c.message), std::string::npos)
            << c.what << ": " << r.snapshot->tflm_error;
    }
}

TEST(Tflm, LongLinesAreCutAtACharacterBoundary)
{
    json j = standin("standin_undersized_snapshot.json");
    std::string euros;
    for (int i = 0; i < 2000; i++) euros += "\xe2\x82\xac";  // 6000 B of 3-byte characters
    j["tflm"]["verdicts"][0]["headline"] = "VERDICT: " + euros;
    j["tflm"]["meaning"] = std::string(1 << 20, 'm');
    LoadResult r = parse(j);
    ASSERT_TRUE(r.snapshot) << r.error;
    ASSERT_TRUE(r.snapshot->tflm) << r.snapshot->tflm_error;
    const std::string &h = r.snapshot->tflm->verdicts[0].headline;
    EXPECT_EQ(h.size(), 9 + 4086 / 3 * 3 + 3u);  // whole characters within 4096 B, then "..."
    EXPECT_EQ(h.substr(h.size() - 3), "...");
    EXPECT_EQ(h.substr(0, h.size() - 3), "VERDICT: " + euros.substr(0, 4086 / 3 * 3));
    EXPECT_EQ(r.snapshot->tflm->meaning.size(), 4096u + 3);
}

TEST(Tflm, NonUtf8TextIsRefusedAndTheMessageIsPrintable)
{
    std::string text = standin("standin_undersized_snapshot.json").dump();
    const std::string key = "\"condition\":\"unfinished\"";
    const std::size_t at = text.find(key);
    ASSERT_NE(at, std::string::npos);
    text.replace(at, key.size(), "\"condition\":\"unfin\xff\xfeished\"");
    LoadResult r = parse_snapshot(text);
    EXPECT_FALSE(r.snapshot);
    EXPECT_NE(r.error.find("not valid JSON"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("\\xFF"), std::string::npos) << r.error;  // the byte it read, escaped
    EXPECT_EQ(r.error.find('\xff'), std::string::npos);
}

// A key holding "\u0000", "\n" or ESC is decoded into the JSON path an error names: the message
// stays one printable line, each control byte as \xNN (tests/fixtures/fuzz/snapshot/
// nul_in_a_key_of_the_error_path, found by the snapshot fuzzer: the NUL cut the message short).
TEST(Tflm, ControlCharactersInAKeyAreEscapedInTheError)
{
    // Nested past the reader's depth limit below the key: the error names the path.
    const std::string text =
        "{\"wha\\u0000t\": [{\"a\\nb\\u001b[2J\\u0085c\": " + std::string(200, '[') + std::string(200, ']') + "}]}";
    LoadResult r = parse_snapshot(text);
    ASSERT_FALSE(r.snapshot);
    for (const char c : r.error) EXPECT_TRUE(c != '\0' && c != '\n' && c != '\x1b') << r.error;
    EXPECT_EQ(r.error.find("\xC2\x85"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("wha\\x00t"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("a\\x0Ab\\x1B[2J\\xC2\\x85c"), std::string::npos) << r.error;
}

TEST(Live, StatusTextSaysRateAgeAndIndexOrThatTheLinkIsLost)
{
    Live l;
    l.reader = "OpenOCD Tcl RPC 127.0.0.1:6666";
    l.captured_at_unix_s = 1000.0;
    l.refresh_hz = 21.3;
    l.refresh_index = 1234;
    bool lost = true;
    EXPECT_EQ(live_status(l, 1000.3, lost),
              "live via OpenOCD Tcl RPC 127.0.0.1:6666: 21.3 refreshes/s, data 0.3 s old, refresh 1234");
    EXPECT_FALSE(lost);
    EXPECT_EQ(live_status(l, 999.0, lost),
              "live via OpenOCD Tcl RPC 127.0.0.1:6666: 21.3 refreshes/s, data 0.0 s old, refresh 1234");
    l.link_lost = true;
    l.link_error = "OpenOCD closed the connection";
    EXPECT_EQ(live_status(l, 1003.46, lost), "LINK LOST: OpenOCD closed the connection; showing data 3.5 s old");
    EXPECT_TRUE(lost);
    l.link_error.clear();
    EXPECT_EQ(live_status(l, 1012.0, lost), "LINK LOST: no reason given; showing data 12.0 s old");
    l.link_lost = false;
    l.link_untrusted = true;  // OpenOCD answers, but the descriptor is corrupt
    l.link_error = "descriptor at 0x20000004 has ABI 9.0";
    lost = false;
    EXPECT_EQ(live_status(l, 1001.0, lost),
              "DATA NOT TRUSTED: descriptor at 0x20000004 has ABI 9.0; showing data 1.0 s old");
    EXPECT_TRUE(lost);
}

// The window's layout as the App makes it: every registered panel (panel.h) that is shown for a
// snapshot with (or without) a live history and a fault asks for its space; screen_layout
// shares the window out. By panel name; a hidden panel's rectangle is empty.
struct WindowLayout {
    std::map<std::string, Rect> rects;
    Rect operator[](const std::string &name) const
    {
        auto it = rects.find(name);
        return it == rects.end() ? Rect{} : it->second;
    }
};

WindowLayout window_layout(float width, float height, bool live = false, bool fault = false,
                           std::optional<RtosTasks> tasks = std::nullopt)
{
    Snapshot s;
    if (live) s.live = Live{};
    if (fault) s.fault = Fault{};
    s.tasks = std::move(tasks);
    View v;
    v.snapshot = &s;
    v.body_h = body_height(height);
    std::vector<Space> spaces;
    std::vector<std::string> names;
    const auto panels = make_panels();
    for (const auto &p : panels) {
        if (!p->shown(v)) continue;
        spaces.push_back(p->wants(v));
        names.push_back(p->name());
    }
    const std::vector<Rect> rects = screen_layout(width, height, spaces);
    WindowLayout out;
    for (std::size_t i = 0; i < names.size(); i++) out.rects[names[i]] = rects[i];
    return out;
}

TEST(Layout, HistoryPanelTakesTheBottomOfTheLeftColumnOnlyWhenLive)
{
    // 1280x800: margin 8, status 22, body 38..792 (754 px); left column 736 px wide; map 42 % of
    // the body (316.68); history 20 % of the body (150.8, within 120..200).
    const WindowLayout plain = window_layout(1280, 800), live = window_layout(1280, 800, true);
    EXPECT_EQ(plain["history"].h, 0.f);
    EXPECT_NEAR(plain["plan"].h, 754 - 316.68 - 8, 1e-3);  // as before: the plan fills the column
    EXPECT_NEAR(live["history"].x, 8, 1e-3);
    EXPECT_NEAR(live["history"].w, 736, 1e-3);
    EXPECT_NEAR(live["history"].h, 150.8, 1e-3);
    EXPECT_NEAR(live["history"].y, 792 - 150.8, 1e-3);
    EXPECT_NEAR(live["plan"].y, plain["plan"].y, 1e-3);
    EXPECT_NEAR(live["plan"].h, 754 - 316.68 - 8 - 150.8 - 8, 1e-3);
    EXPECT_NEAR(live["map"].h, plain["map"].h, 1e-3);  // nothing else moves
    EXPECT_NEAR(live["summary"].h, plain["summary"].h, 1e-3);
    // 1024x700: body 654 px, history 130.8; 2000x1200: 20 % is 230.8, held at 200.
    EXPECT_NEAR(window_layout(1024, 700, true)["history"].h, 130.8, 1e-3);
    EXPECT_NEAR(window_layout(1024, 700, true)["history"].y, 692 - 130.8, 1e-3);
    EXPECT_NEAR(window_layout(2000, 1200, true)["history"].h, 200, 1e-3);
    EXPECT_NEAR(window_layout(2000, 1200, true)["history"].y, 992, 1e-3);
}

TEST(Layout, AFaultSharesTheRightColumnWithTheSummaryAndTheLegend)
{
    // 1280x800: body 38..792 (754 px); right column x = 8 + 736 + 8 + 179.2 + 8 = 939.2 (RAM column
    // 14 % of 1280), 332.8 wide (26 %). Summary 40 % (301.6), fault panel, legend 8 x 15 + 8 = 128.
    const WindowLayout plain = window_layout(1280, 800), f = window_layout(1280, 800, false, true);
    EXPECT_EQ(plain["fault"].h, 0.f);
    EXPECT_NEAR(plain["summary"].h, 754 - 248 - 8, 1e-3);  // (754 - 8) x 0.38 = 283.5 holds 16 rows (248)
    EXPECT_NEAR(plain["legend"].h, 248, 1e-3);
    EXPECT_NEAR(window_layout(1024, 700)["legend"].h, 128, 1e-3);  // 646 x 0.38 = 245.5: two columns of 8
    EXPECT_NEAR(window_layout(1024, 700)["summary"].h, 654 - 128 - 8, 1e-3);
    EXPECT_NEAR(f["summary"].x, 939.2, 1e-3);
    EXPECT_NEAR(f["summary"].w, 332.8, 1e-3);
    EXPECT_NEAR(f["summary"].h, 301.6, 1e-3);
    EXPECT_NEAR(f["fault"].y, 38 + 301.6 + 8, 1e-3);
    EXPECT_NEAR(f["fault"].h, 754 - 301.6 - 128 - 16, 1e-3);
    EXPECT_NEAR(f["legend"].y, 792 - 128, 1e-3);
    EXPECT_NEAR(f["legend"].h, 128, 1e-3);
    EXPECT_NEAR(f["map"].h, plain["map"].h, 1e-3);  // the left and middle columns do not move
    EXPECT_NEAR(f["ram"].x, plain["ram"].x, 1e-3);
}

TEST(Layout, HistoryMapsTimeAcrossAndEachSeriesToItsOwnLane)
{
    Live l;
    auto pt = [](double t, uint64_t used, std::optional<uint64_t> peak, std::optional<int64_t> gap) {
        LivePoint p;
        p.t_unix_s = t, p.used_bytes = used, p.stack_peak_bytes = peak, p.gap_bytes = gap;
        return p;
    };
    l.history = {pt(100, 1000, std::nullopt, 500), pt(101, 3000, 300, -100), pt(104, 2000, 600, std::nullopt)};
    // Panel (10, 20, 400x160): plot (82, 60, 320x114); three 38 px slices less 4 px above and below.
    const HistoryGeometry g = history_geometry(l, Rect{10, 20, 400, 160});
    EXPECT_FLOAT_EQ(g.plot.x, 82);
    EXPECT_FLOAT_EQ(g.plot.y, 60);
    EXPECT_FLOAT_EQ(g.plot.w, 320);
    EXPECT_FLOAT_EQ(g.plot.h, 114);
    EXPECT_FLOAT_EQ(g.lane[0].y, 64);
    EXPECT_FLOAT_EQ(g.lane[1].y, 102);
    EXPECT_FLOAT_EQ(g.lane[2].y, 140);
    EXPECT_FLOAT_EQ(g.lane[2].h, 30);
    // Time: 100..104 over 320 px; outside is clamped.
    EXPECT_FLOAT_EQ(g.x_of(100), 82);
    EXPECT_FLOAT_EQ(g.x_of(101), 162);
    EXPECT_FLOAT_EQ(g.x_of(104), 402);
    EXPECT_FLOAT_EQ(g.x_of(90), 82);
    EXPECT_FLOAT_EQ(g.x_of(200), 402);
    // used 0..3000 in lane 0 (y 64..94)
    EXPECT_DOUBLE_EQ(g.lo[0], 0);
    EXPECT_DOUBLE_EQ(g.hi[0], 3000);
    EXPECT_FLOAT_EQ(g.y_of(0, 3000), 64);
    EXPECT_FLOAT_EQ(g.y_of(0, 1000), 84);
    EXPECT_FLOAT_EQ(g.y_of(0, 0), 94);
    // stack peak 0..600 in lane 1 (y 102..132); its null is not a value
    EXPECT_DOUBLE_EQ(g.hi[1], 600);
    EXPECT_FLOAT_EQ(g.y_of(1, 300), 117);
    EXPECT_FALSE(history_value(l.history[0], 1));
    // gap -100..500 in lane 2 (y 140..170): 0 is 5/6 down
    EXPECT_DOUBLE_EQ(g.lo[2], -100);
    EXPECT_DOUBLE_EQ(g.hi[2], 500);
    EXPECT_FLOAT_EQ(g.y_of(2, 500), 140);
    EXPECT_FLOAT_EQ(g.y_of(2, 0), 165);
    EXPECT_FLOAT_EQ(g.y_of(2, -100), 170);
    EXPECT_TRUE(g.known[0] && g.known[1] && g.known[2]);
    // One point, no gap values at all: the point at the right edge, the gap lane unknown.
    l.history = {pt(50, 0, 0, std::nullopt)};
    const HistoryGeometry one = history_geometry(l, Rect{10, 20, 400, 160});
    EXPECT_FLOAT_EQ(one.x_of(50), 402);
    EXPECT_FALSE(one.known[2]);
    EXPECT_TRUE(one.known[1]);
    EXPECT_DOUBLE_EQ(one.hi[0], 1);  // all zero: 0..1, the line on the lane's bottom
    EXPECT_FLOAT_EQ(one.y_of(0, 0), 94);
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

// Issue 35: an arena in external RAM, apart from the stack, that moved since the previous snapshot
// (a per-inference arena): the RAM column shows it alone, and the summary says where it moved from.
TEST(Snapshot, AMovedArenaInExternalRamIsShownApartAndSaidToHaveMoved)
{
    json j = fixture();
    const uint64_t base = j["arenas"][0]["base_addr"].get<uint64_t>();
    j["arenas"][0]["moved_from"] = base - 0x90;
    j["arenas"][0]["in_memory"] = "psram (named by the user)";
    j["arenas"][0]["apart_from_stack"] = true;
    j["stack"]["in_memory"] = "RAM (.stack)";
    LoadResult r = parse(j);
    ASSERT_TRUE(r.snapshot) << r.error;
    const Arena &a = r.snapshot->arenas[0];
    ASSERT_TRUE(a.moved_from);
    EXPECT_EQ(*a.moved_from, base - 0x90);
    EXPECT_EQ(a.in_memory, "psram (named by the user)");
    EXPECT_EQ(r.snapshot->stack.in_memory, "RAM (.stack)");
    const RamColumn c = ram_column(*r.snapshot, a, Rect{0, 0, 50, 400});
    EXPECT_EQ(c.lo, base);
    EXPECT_EQ(c.hi, base + a.size_bytes);  // the arena alone, though the stack is above it
    const auto lines = summary_lines(*r.snapshot, &a, -1);
    ASSERT_GE(lines.size(), 2u);
    EXPECT_EQ(lines[1].text, fmt::format("moved      from {:#x} to {:#x}", base - 0x90, base));
    // Without them: the arena up to the stack's top, no "moved" line (the golden fixture).
    LoadResult plain = load_snapshot_file(ARENASCOPE_FIXTURE);
    ASSERT_TRUE(plain.snapshot);
    EXPECT_FALSE(plain.snapshot->arenas[0].moved_from);
    EXPECT_EQ(ram_column(*plain.snapshot, plain.snapshot->arenas[0], Rect{0, 0, 50, 400}).hi,
              std::max(plain.snapshot->stack.high_addr, base + a.size_bytes));
    EXPECT_NE(summary_lines(*plain.snapshot, &plain.snapshot->arenas[0], -1)[1].text.rfind("moved", 0), 0u);
    // A wrong type is refused with its path.
    j["arenas"][0]["moved_from"] = "0x20000000";
    EXPECT_NE(parse(j).error.find("$.arenas[0].moved_from"), std::string::npos) << parse(j).error;
}

// stack.predicted (issue 38): the worst case from the ELF, shown under the measured peak with its
// path as the line's tip; a peak above a worst case that is no floor is a failure's colour; a
// malformed one is refused with its path, a path longer than the plugin writes too.
TEST(Snapshot, ThePredictedWorstCaseIsShownBesideTheMeasuredPeak)
{
    json j = fixture();
    j["stack"]["peak_bytes"] = 900;
    j["stack"]["predicted"] = {{"worst_bytes", 1228},
                               {"is_floor", true},
                               {"thread_bytes", 152},
                               {"path", {"Reset_Handler", "main", "recurse_down_to"}}};
    LoadResult r = parse(j);
    ASSERT_TRUE(r.snapshot) << r.error;
    const Stack &st = r.snapshot->stack;
    EXPECT_EQ(st.predicted_worst_bytes, 1228u);
    EXPECT_EQ(st.predicted_thread_bytes, 152u);
    EXPECT_TRUE(st.predicted_is_floor);
    EXPECT_EQ(st.predicted_path, (std::vector<std::string>{"Reset_Handler", "main", "recurse_down_to"}));
    auto predicted_line = [](const Snapshot &s) {
        for (const auto &l : summary_lines(s, &s.arenas[0], -1))
            if (l.text.rfind("predicted", 0) == 0) return l;
        return PanelLine{};
    };
    PanelLine l = predicted_line(*r.snapshot);
    EXPECT_EQ(l.text, "predicted  >= 1228 B worst case (ELF)");
    EXPECT_NE(l.tip.find("152 B via Reset_Handler -> main -> recurse_down_to"), std::string::npos) << l.tip;
    EXPECT_FALSE(l.colour == colour(Paint::RuleFail));
    j["stack"]["predicted"]["is_floor"] = false;
    j["stack"]["peak_bytes"] = 1300;  // above a worst case that is no floor
    l = predicted_line(*parse(j).snapshot);
    EXPECT_EQ(l.text, "predicted  1228 B worst case (ELF)");
    EXPECT_TRUE(l.colour == colour(Paint::RuleFail));
    EXPECT_TRUE(predicted_line(*load_snapshot_file(ARENASCOPE_FIXTURE).snapshot).text.empty());  // none: no line
    j["stack"]["predicted"]["path"] = json::array();
    for (int i = 0; i < 65; i++) j["stack"]["predicted"]["path"].push_back("f");
    EXPECT_NE(parse(j).error.find("$.stack.predicted.path: 65 entries"), std::string::npos) << parse(j).error;
    j["stack"]["predicted"]["path"] = {1};
    EXPECT_NE(parse(j).error.find("$.stack.predicted.path[0]: expected a string"), std::string::npos);
    j["stack"]["predicted"].erase("worst_bytes");
    EXPECT_NE(parse(j).error.find("$.stack.predicted.worst_bytes: missing"), std::string::npos);
}

// ram_map: the ELF's RAM areas, listed under the checks (window and report alike); malformed ones
// are refused with their path.
TEST(Snapshot, TheRamMapIsListedLowestFirst)
{
    json j = fixture();
    j["ram_map"] = {{{"low_addr", 0x20000000}, {"high_addr", 0x20000004}, {"what", ".data"}, {"kind", "section"}},
                    {{"low_addr", 0x20000720},
                     {"high_addr", 0x20006d70},
                     {"what", ".tensor_arena: the tensor arena (tensor_arena)"},
                     {"kind", "arena"}}};
    LoadResult r = parse(j);
    ASSERT_TRUE(r.snapshot) << r.error;
    ASSERT_EQ(r.snapshot->ram_map.size(), 2u);
    EXPECT_EQ(r.snapshot->ram_map[1].kind, "arena");
    std::vector<std::string> texts;
    for (const auto &l : summary_lines(*r.snapshot, &r.snapshot->arenas[0], -1)) texts.push_back(l.text);
    const auto at = std::find(texts.begin(), texts.end(), "RAM map (from the ELF)");
    ASSERT_NE(at, texts.end());
    EXPECT_EQ(*(at + 1), "  0x20000000         4 B .data");
    EXPECT_EQ(*(at + 2), "  0x20000720     26192 B .tensor_arena: the tensor arena (tensor_arena)");
    j["ram_map"][1]["high_addr"] = 0x20000000;
    EXPECT_NE(parse(j).error.find("$.ram_map[1]: high_addr below low_addr"), std::string::npos) << parse(j).error;
    const json first = j["ram_map"][0];
    j["ram_map"] = json::array();
    for (int i = 0; i < 65; i++) j["ram_map"].push_back(first);
    EXPECT_NE(parse(j).error.find("$.ram_map: 65 entries"), std::string::npos) << parse(j).error;
}

TEST(Layout, PaletteKindsAreDistinct)
{
    const std::vector<Paint> kinds = {Paint::Tensor,           Paint::Scratch,    Paint::Temp,
                                      Paint::Persistent,       Paint::Metadata,   Paint::FreeIntact,
                                      Paint::FreeTouched,      Paint::Guard,      Paint::StackUsed,
                                      Paint::StackUnused,      Paint::Background, Paint::HistoryUsed,
                                      Paint::HistoryStackPeak, Paint::HistoryGap};
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

TEST(Text, WrapsAtSpacesOnlyAndKeepsAddressRangesWhole)
{
    const auto px = [](const std::string &s) { return 7.f * float(s.size()); };  // 7 px a character
    // first line 9 characters, the rest 6: "ab cd..ef" is 9 (fits whole; ImGui would break after
    // a '.'), " ghij" does not fit after it and starts the next line without its space.
    EXPECT_EQ(wrap_at_spaces("ab cd..ef ghij", 63, 42, px), (std::vector<std::string>{"ab cd..ef", "ghij"}));
    // a word wider than a line is cut by characters: 4, then 3 and 3
    EXPECT_EQ(wrap_at_spaces("abcdefghij", 28, 21, px), (std::vector<std::string>{"abcd", "efg", "hij"}));
    // aligned columns keep their runs of spaces
    EXPECT_EQ(wrap_at_spaces("size       12288 B", 700, 700, px), (std::vector<std::string>{"size       12288 B"}));
    EXPECT_EQ(wrap_at_spaces("", 70, 70, px), (std::vector<std::string>{""}));
}

// A tensor no operator produces nor consumes: TFLM plans it with lifetime -1..-1
// (micro_allocation_info.cc), and when it alone sets the lower bound, the bound's scope is -1 too
// (arenascope-plan writes both). The snapshot loads; the region has no bar in the plan chart.
TEST(Snapshot, NeverLiveRegionsOfTflmsPlanLoad)
{
    json j = fixture();
    json &a = j["arenas"][0];
    size_t tensor = 0;
    while (a["regions"][tensor]["kind"] != "tensor") ++tensor;
    a["regions"][tensor]["first_use"] = -1;
    a["regions"][tensor]["last_use"] = -1;
    a["plan"]["lower_bound_scope"] = -1;
    const LoadResult r = parse(j);
    ASSERT_TRUE(r.error.empty()) << r.error;
    const Arena &arena = r.snapshot->arenas[0];
    EXPECT_EQ(arena.plan.lower_bound_scope, -1);
    const Region &reg = arena.regions[tensor];
    EXPECT_EQ(reg.first_use, -1);
    const Rect bar = plan_geometry(arena, Rect{0, 0, 400, 300}).region_rect(reg);
    EXPECT_EQ(bar.w, 0.0f);
    EXPECT_EQ(bar.h, 0.0f);
    a["regions"][tensor]["first_use"] = -2;
    EXPECT_NE(parse(j).error.find("first_use: scope -2 outside -1..200000"), std::string::npos) << parse(j).error;
}

// The bounded reader (bounded_json.h): hostile text is refused, before the DOM grows, with the
// path and the byte where a limit was passed.
std::string refusal(const std::string &text)
{
    LoadResult r = parse_snapshot(text);
    EXPECT_FALSE(r.snapshot) << text.substr(0, 80);
    return r.error;
}

TEST(BoundedReader, HostileTextIsRefusedWithItsPathAndByte)
{
    std::string empties = "[";
    for (int i = 0; i < 200000; i++) empties += "{},";
    empties += "{}]";
    EXPECT_EQ(refusal(empties), "snapshot: $[131072]: more than 131072 JSON values, more than any snapshot holds: is "
                                "this an arenascope snapshot? (byte 393217): not a snapshot arenascope writes "
                                "(docs/snapshot-schema.md)");
    const std::string deep = std::string(40, '[') + std::string(40, ']');
    std::string path = "$";
    for (int i = 0; i < 32; i++) path += "[0]";
    EXPECT_EQ(refusal(deep), "snapshot: " + path +
                                 ": nested deeper than 32 levels, deeper than any snapshot (byte 32): not a snapshot "
                                 "arenascope writes (docs/snapshot-schema.md)");
    EXPECT_EQ(refusal("{\"schema\":\"" + std::string((1 << 20) + 1, 's') + "\"}"),
              "snapshot: $.schema: a string of 1048577 bytes, more than the 1048576 this viewer accepts (byte "
              "1048588): not a snapshot arenascope writes (docs/snapshot-schema.md)");
    const std::string number = "{\"version\":" + std::string(5000, '9') + "}";
    EXPECT_EQ(refusal(number), "snapshot: $.version: a number of more than 4096 characters (byte 4107): not a "
                               "snapshot arenascope writes (docs/snapshot-schema.md)");
    // A long number token's parse error quoted it whole (a 4 MB line that crashed ImGui): cut.
    const std::string bad = "[" + std::string(3000, '1') + "x]";
    const std::string e = refusal(bad);
    EXPECT_EQ(e.rfind("snapshot: not valid JSON (byte ", 0), 0u) << e;
    EXPECT_LE(e.size(), 320u) << e;
}

TEST(BoundedReader, StreamedArraysAreCappedAsTheyAreRead)
{
    json j = fixture();
    j["arenas"][0]["regions"] = json::array();
    std::string text = j.dump();
    std::string many = "[";
    for (std::size_t i = 0; i <= kMaxRegions; i++) many += "{},";
    many.back() = ']';
    const std::string key = "\"regions\":[]";
    text.replace(text.find(key), key.size(), "\"regions\":" + many);
    const std::string e = refusal(text);
    // Counted to the end, not kept: refused with the count, in the words the planner uses
    // (common/include/arenascope/snapshot_limits.h).
    EXPECT_EQ(e, snapshot_refusal("snapshot: $.arenas[0].regions", SnapshotLimit::Regions, kMaxRegions + 1));
    EXPECT_EQ(e.rfind("snapshot: $.arenas[0].regions: 200001 regions in one arena, more than the 200000 a snapshot may "
                      "have (",
                      0),
              0u)
        << e;
    // A region's error is told where the arena's validation reaches its regions: its fields first.
    json k = fixture();
    k["arenas"][0]["regions"][5].erase("kind");
    EXPECT_EQ(parse(k).error, "snapshot: $.arenas[0].regions[5].kind: missing");
    k = fixture();
    k["arenas"][0]["plan"]["live_bytes"][3] = "x";
    EXPECT_EQ(parse(k).error, "snapshot: $.arenas[0].plan.live_bytes[3]: expected a non-negative integer");
    // live_regions is not read: whatever it holds, it is not kept nor refused.
    k = fixture();
    k["arenas"][0]["plan"]["live_regions"] = json::array();
    for (int i = 0; i < 200000; i++) k["arenas"][0]["plan"]["live_regions"].push_back(json::array({1, 2}));
    EXPECT_TRUE(parse(k).snapshot) << parse(k).error;
}

TEST(BoundedReader, AFileIsReadAsParsedAndItsErrorsNameIt)
{
    const std::string path = ::testing::TempDir() + "/arenascope_deep.json";
    std::ofstream(path) << std::string(100, '[');
    EXPECT_EQ(
        load_snapshot_file(path).error, path + ": $" +
                                            [] {
                                                std::string p;
                                                for (int i = 0; i < 32; i++) p += "[0]";
                                                return p;
                                            }() +
                                            ": nested deeper than 32 levels, deeper than any snapshot (byte 32): not a "
                                            "snapshot arenascope writes (docs/snapshot-schema.md)");
    std::remove(path.c_str());
    EXPECT_TRUE(load_snapshot_file(ARENASCOPE_FIXTURE).snapshot);
}

TEST(BoundedReader, LiveMessagesAreReadTheSameWay)
{
    std::string msg = "{\"type\":\"snapshot\",\"version\":1,\"snapshot\":" + std::string(40, '[') + "}";
    const std::string e = parse_stream_message(msg).error;
    EXPECT_EQ(e.rfind("stream: $.snapshot[0]", 0), 0u) << e;
    EXPECT_NE(e.find("nested deeper than 32 levels"), std::string::npos) << e;
    json m = {{"type", "snapshot"}, {"version", 1}, {"snapshot", fixture()}};
    m["snapshot"]["arenas"][0]["regions"][2]["size_bytes"] = -1;
    EXPECT_EQ(parse_stream_message(m.dump()).error,
              "stream: $.arenas[0].regions[2].size_bytes: expected a non-negative integer, found -1");
    EXPECT_EQ(parse_stream_message(std::string(kMaxMessageBytes + 1, ' ')).error,
              "stream: a message of 16777217 bytes, more than the 16 MiB a message may have");
}

TEST(BoundedReader, APostMortemPastALimitIsLeftOutAndTheRestShown)
{
    json j = standin("standin_undersized_snapshot.json");
    j["tflm"]["evidence"][0] = json::parse(std::string(40, '[') + std::string(40, ']'));
    LoadResult r = parse(j);
    ASSERT_TRUE(r.snapshot) << r.error;
    EXPECT_FALSE(r.snapshot->tflm);
    std::string path = "$.tflm.evidence[0]";
    for (int i = 0; i < 28; i++) path += "[0]";
    const std::string said = ": nested deeper than 32 levels, deeper than any snapshot (byte ";
    EXPECT_EQ(r.snapshot->tflm_error.rfind(path + "[0]" + said, 0), 0u) << r.snapshot->tflm_error;
    json m = {{"type", "snapshot"}, {"version", 1}, {"snapshot", j}};
    LoadResult s = parse_stream_message(m.dump());
    ASSERT_TRUE(s.snapshot) << s.error;
    EXPECT_EQ(s.snapshot->tflm_error.rfind(path + said, 0), 0u) << s.snapshot->tflm_error;  // one level deeper
}

TEST(Layout, TheColumnsAreSharedOutByWhatThePanelsAsk)
{
    // 1000x600: body 600 - 38 - 8 = 554 px. Left column: a 100 px panel, then two Fill panels
    // that split the rest evenly: (554 - 100 - 2 x 8) / 2 = 219. Right column: two Fill panels,
    // the first taking its shared share (25 % = 138.5), a Fixed one its shared height (50, not 70).
    Space fixed{Column::Left, 0, Space::Fixed, 100};
    Space fill_a{Column::Left, 1, Space::Fill}, fill_b{Column::Left, 2, Space::Fill};
    Space shared{Column::Right, 0, Space::Fill};
    shared.shared_share = 0.25f;
    Space rest{Column::Right, 1, Space::Fill};
    Space small{Column::Right, 2, Space::Fixed, 70};
    small.shared_px = 50;
    Space status{Column::Status, 0, Space::Fixed, kStatusHeight};
    // Out of order on purpose: each column is stacked by `order`.
    const std::vector<Rect> r = screen_layout(1000, 600, {fill_b, small, fixed, rest, fill_a, shared, status});
    EXPECT_NEAR(body_height(600), 554, 1e-3);
    EXPECT_NEAR(r[2].y, 38, 1e-3);  // fixed, first in the left column
    EXPECT_NEAR(r[2].h, 100, 1e-3);
    EXPECT_NEAR(r[4].y, 38 + 100 + 8, 1e-3);  // fill_a
    EXPECT_NEAR(r[4].h, 219, 1e-3);
    EXPECT_NEAR(r[0].y, 38 + 100 + 8 + 219 + 8, 1e-3);  // fill_b
    EXPECT_NEAR(r[0].h, 219, 1e-3);
    EXPECT_NEAR(r[0].y + r[0].h, 600 - 8, 1e-3);  // to the bottom margin
    // Right column x: 8 + left (1000 - 140 - 260 - 32 = 568) + 8 + 140 + 8 = 732, 260 wide.
    EXPECT_NEAR(r[5].x, 732, 1e-3);
    EXPECT_NEAR(r[5].w, 260, 1e-3);
    EXPECT_NEAR(r[5].h, 138.5, 1e-3);
    EXPECT_NEAR(r[1].h, 50, 1e-3);
    EXPECT_NEAR(r[3].h, 554 - 138.5 - 50 - 16, 1e-3);
    EXPECT_NEAR(r[1].y, 600 - 8 - 50, 1e-3);
    EXPECT_NEAR(r[6].y, 8, 1e-3);  // the status line
    EXPECT_NEAR(r[6].w, 1000 - 16, 1e-3);
}
