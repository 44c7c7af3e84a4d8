// The RTOS tasks panel (viewer/src/panel_tasks.cpp): the snapshot's `tasks` parsed, the panel's
// space in the window and its lines, through the panel interface (panel.h) only. Expected values
// are written out here from the snapshot's figures and the documented layout rules.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "layout.h"
#include "panel.h"
#include "snapshot.h"
#include "style.h"

using namespace arenascope;
using json = nlohmann::json;

namespace {

// Three tasks as the plugin writes them (docs/snapshot-schema.md, "tasks"): one fine, one that
// overflowed (its fill gone down to pxStack), one never scanned.
json tasks_object()
{
    json t = {{"kernel", "FreeRTOS"}, {"current_tcb", 0x20000100}, {"problems", json::array()}};
    auto task = [](const char *name, const char *state, int prio, uint64_t low, uint64_t high) {
        return json{{"name", name},
                    {"tcb_addr", 0x20000100 + prio},
                    {"state", state},
                    {"priority", prio},
                    {"low_addr", low},
                    {"high_addr", high},
                    {"high_source", "pxEndOfStack"},
                    {"sp", high - 64},
                    {"sp_live", false},
                    {"hwm_addr", nullptr},
                    {"never_used_bytes", nullptr},
                    {"peak_bytes", nullptr},
                    {"peak_is_lower_bound", false},
                    {"overflowed", false},
                    {"below", "an ELF object"},
                    {"arena_index", nullptr},
                    {"room_bytes", nullptr},
                    {"required_room_bytes", nullptr},
                    {"problems", json::array()}};
    };
    json main = task("main", "running", 2, 0x20008000, 0x20008800);
    main["hwm_addr"] = 0x20008400, main["never_used_bytes"] = 1024, main["peak_bytes"] = 1024;
    json infer = task("infer", "blocked", 1, 0x20009000, 0x20009400);
    infer["hwm_addr"] = 0x20009000, infer["never_used_bytes"] = 0, infer["peak_bytes"] = 1024;
    infer["peak_is_lower_bound"] = true, infer["overflowed"] = true;
    json idle = task("IDLE", "ready", 0, 0x2000a000, 0x2000a100);
    t["list"] = {main, infer, idle};
    return t;
}

json fixture()
{
    std::ifstream f(ARENASCOPE_FIXTURE);
    std::stringstream ss;
    ss << f.rdbuf();
    return json::parse(ss.str());
}

Snapshot parsed(const json &j)
{
    LoadResult r = parse_snapshot(j.dump());
    EXPECT_TRUE(r.snapshot) << r.error;
    return r.snapshot ? *r.snapshot : Snapshot{};
}

Snapshot with_tasks()
{
    json j = fixture();
    j["tasks"] = tasks_object();
    return parsed(j);
}

// The panels' texts in the report, in their order (report.h's ReportPart::report).
std::vector<ReportText> report_texts(const Snapshot &s)
{
    std::vector<ReportText> out;
    for (const ReportPart *p : report_parts(s).parts) p->report(s, out);
    return out;
}

Panel *find(std::vector<std::unique_ptr<Panel>> &panels, const std::string &name)
{
    for (auto &p : panels)
        if (p->name() == name) return p.get();
    return nullptr;
}

const std::vector<std::string> kLines = {
    "RTOS tasks (FreeRTOS): 3",       "main  running p2",
    "stack 0x20008000..0x20008800",   "peak 1024 B  HWM 0x20008400",
    "infer  blocked p1  OVERFLOW",    "stack 0x20009000..0x20009400",
    "peak >= 1024 B  HWM 0x20009000", "IDLE  ready p0",
    "stack 0x2000a000..0x2000a100",   "peak unknown  HWM ?",
};

}  // namespace

TEST(TasksPanel, TheSnapshotsTasksAreReadAsWritten)
{
    const Snapshot s = with_tasks();
    ASSERT_TRUE(s.tasks);
    EXPECT_EQ(s.tasks->kernel, "FreeRTOS");
    EXPECT_EQ(s.tasks->current_tcb, 0x20000100u);
    ASSERT_EQ(s.tasks->list.size(), 3u);
    const RtosTask &infer = s.tasks->list[1];
    EXPECT_EQ(infer.name, "infer");
    EXPECT_EQ(infer.low_addr, 0x20009000u);
    EXPECT_EQ(infer.high_addr, 0x20009400u);
    EXPECT_EQ(infer.peak_bytes, 1024u);
    EXPECT_TRUE(infer.overflowed && infer.peak_is_lower_bound);
    EXPECT_FALSE(s.tasks->list[2].peak_bytes);
    EXPECT_TRUE(parsed(fixture()).tasks == std::nullopt);  // no tasks: no panel
}

TEST(TasksPanel, AMalformedTasksIsLeftOutAndSaid)
{
    json j = fixture();
    j["tasks"] = tasks_object();
    j["tasks"]["list"][1]["high_addr"] = 0x20008000;  // below its low_addr
    const Snapshot s = parsed(j);
    EXPECT_FALSE(s.tasks);
    EXPECT_EQ(s.tasks_error, "$.tasks.list[1]: high_addr 0x20008000 below low_addr 0x20009000");
    EXPECT_EQ(s.arenas.size(), 1u);  // the rest is shown
    j["tasks"] = "yes";
    EXPECT_EQ(parsed(j).tasks_error, "$.tasks: expected an object or null, found string");
}

TEST(TasksPanel, ItsLinesSayEachTasksFiguresAndTheOverflowInRed)
{
    const Snapshot s = with_tasks();
    std::vector<ReportText> texts = report_texts(s);
    ASSERT_EQ(texts.size(), 2u);  // the summary, then the tasks (no fault in this snapshot)
    EXPECT_EQ(texts[0].id, "summary");
    const ReportText &t = texts[1];
    EXPECT_EQ(t.id, "tasks");
    EXPECT_EQ(t.title, "RTOS tasks");
    std::vector<std::string> lines;
    for (const PanelLine &l : t.lines) lines.push_back(l.text);
    EXPECT_EQ(lines, kLines);
    EXPECT_EQ(t.lines[4].colour, colour(Paint::RuleFail));  // infer: OVERFLOW
    EXPECT_EQ(t.lines[5].colour, style().text_grey);
    EXPECT_EQ(t.lines[1].colour, style().text);
    EXPECT_EQ(t.lines[2].colour, style().text_grey);
    EXPECT_EQ(report_texts(parsed(fixture())).size(), 1u);  // no tasks: no part
}

TEST(TasksPanel, ItTakesItsLinesHeightAboveTheLegendAndTheSummaryGivesItUp)
{
    const Snapshot s = with_tasks();
    auto panels = make_panels();
    Panel *tasks = find(panels, "tasks");
    ASSERT_TRUE(tasks);
    View v;
    v.snapshot = &s;
    v.body_h = body_height(800);  // 800 - 38 - 8 = 754
    EXPECT_FLOAT_EQ(v.body_h, 754);
    ASSERT_TRUE(tasks->shown(v));
    // 10 lines of 16 px, 3 px above each task's headline, 2 x 6 px of padding and one more line
    // (the "more below" mark's room): 197 px, within 90 px and 30 % of the column (226.2 px).
    const Space sp = tasks->wants(v);
    EXPECT_EQ(sp.column, Column::Right);
    EXPECT_EQ(sp.size, Space::Fixed);
    EXPECT_FLOAT_EQ(sp.px, 197);
    // The whole window at 1280x800: the right column (x 939.2, 332.8 wide) is the summary, the
    // tasks and the legend (one column of 16 rows, 248 px: (754 - 8) x 0.38 holds it).
    std::vector<Space> spaces;
    std::vector<std::string> names;
    for (const auto &p : panels) {
        if (!p->shown(v)) continue;
        spaces.push_back(p->wants(v));
        names.push_back(p->name());
    }
    const std::vector<Rect> rects = screen_layout(1280, 800, spaces);
    auto rect = [&](const std::string &n) {
        for (std::size_t i = 0; i < names.size(); i++)
            if (names[i] == n) return rects[i];
        return Rect{};
    };
    EXPECT_NEAR(rect("summary").h, 754 - 197 - 248 - 16, 1e-3);
    EXPECT_NEAR(rect("tasks").x, 939.2, 1e-3);
    EXPECT_NEAR(rect("tasks").w, 332.8, 1e-3);
    EXPECT_NEAR(rect("tasks").y, 38 + 293 + 8, 1e-3);
    EXPECT_NEAR(rect("tasks").h, 197, 1e-3);
    EXPECT_NEAR(rect("legend").y, 38 + 293 + 8 + 197 + 8, 1e-3);
    EXPECT_NEAR(rect("legend").h, 248, 1e-3);
    // Without tasks the panel takes no space.
    const Snapshot plain = parsed(fixture());
    v.snapshot = &plain;
    EXPECT_FALSE(tasks->shown(v));
}

TEST(TasksPanel, TheReportHasItsSectionAfterTheSummary)
{
    const Snapshot s = with_tasks();
    const std::string html = report_html(s, "tasks.json", "test", report_parts(s).parts);
    const std::size_t summary = html.find("<h2>Summary</h2>"), tasks = html.find("<h2>RTOS tasks</h2>");
    ASSERT_NE(tasks, std::string::npos);
    EXPECT_LT(summary, tasks);
    EXPECT_NE(html.find("<div class=\"panel\" id=\"tasks\">"), std::string::npos);
    // The overflowed task's headline in the failure red (230, 40, 40: Style's RuleFail).
    const std::size_t infer = html.find(">infer  blocked p1  OVERFLOW</div>");
    ASSERT_NE(infer, std::string::npos);
    const std::size_t line = html.rfind("<div class=\"line\"", infer);
    EXPECT_EQ(html.substr(line, 60).find("color:rgb(230,40,40)"), 25u) << html.substr(line, 80);
    const std::string svg = report_svg(s, "tasks.json", "test", report_parts(s).parts);
    EXPECT_NE(svg.find(">RTOS tasks</text>"), std::string::npos);
    EXPECT_NE(svg.find("fill=\"rgb(230,40,40)\">infer &#160;blocked p1 &#160;OVERFLOW</text>"), std::string::npos);
}
