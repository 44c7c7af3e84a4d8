// The viewer's side of the diff contract (viewer/src/diffdoc.h): the golden diff the plugin
// writes for two fixture snapshots (tests/fixtures/diff_golden.json; the plugin's side:
// tests/plugin/test_diff_golden.py) gives these marks and lines, written out here by hand.
#include <gtest/gtest.h>

#include "diffdoc.h"

using namespace arenascope;

namespace {

TEST(DiffDoc, TheGoldenDiffMarksTheChangedRegionsOnBothSides)
{
    const DiffLoad d = load_diff_file(ARENASCOPE_FIXTURES_DIR "/diff_golden.json");
    ASSERT_TRUE(d.diff) << d.error;
    EXPECT_EQ(d.diff->summary, "differences: 0 figure(s), 5 region(s), 0 check(s) changed; verdict FAIL in both");
    ASSERT_EQ(d.diff->arenas.size(), 1u);
    const DiffArena &a = d.diff->arenas[0];
    EXPECT_EQ(a.index, 0);
    EXPECT_EQ(a.before, (std::vector<int>{1, 2, 3, 29}));  // tensors 5, 8, 13; scratch 13 vanished
    EXPECT_EQ(a.after, (std::vector<int>{1, 2, 3, 42}));   // the same three; scratch 14 appeared
    EXPECT_EQ(a.lines,
              (std::vector<std::string>{"tensor 5: moved +608 -> +624", "tensor 8: grew 16 B -> 32 B",
                                        "tensor 13: lifetime scopes 4..5 -> 3..6",
                                        "scratch 14: appeared at +128 (64 B)", "scratch 13: vanished at +0 (128 B)"}));
}

TEST(DiffDoc, WhatIsNotADiffIsRefusedWithItsPath)
{
    EXPECT_EQ(parse_diff("[1]", "d.json").error,
              "d.json: not an arenascope diff (write one with: arena diff A.json B.json --json)");
    EXPECT_EQ(parse_diff("{\"schema\":\"arenascope.diff\",\"version\":2}", "d.json").error,
              "d.json: diff version 2, this viewer reads version 1");
    EXPECT_EQ(parse_diff("{", "d.json").error, "d.json: not JSON");
    const std::string no_index = R"({"schema":"arenascope.diff","version":1,"summary":"s","arenas":[{"index":0,
        "regions":{"changed":[{"name":"t","changes":["moved"],"a":{"offset":1},"b":{"index":1,"offset":2}}],
        "appeared":[],"vanished":[]}}]})";
    EXPECT_EQ(parse_diff(no_index, "d.json").error, "d.json.arenas[0].regions.changed[0].a.index: missing");
    EXPECT_EQ(load_diff_file("/nonexistent/d.json").error, "/nonexistent/d.json: no such file");
}

}  // namespace
