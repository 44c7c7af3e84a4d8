// arenascope-fuzz-checks-selftest: the harnesses' checks (writer_checks.h, json_schema_check.h)
// pass what the writers produce for a real budget and catch each defect they are there for, so
// that a harness that never aborts is not a check that cannot fail. Exit 0 when every case
// holds; else each failing case is named. Run by tests/integration/test_planner_fuzz.py.
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "fuzz_schemas.h"
#include "json_schema_check.h"
#include "model_builder.h"
#include "writer_checks.h"

namespace {

using arenascope::fuzz::check_header;
using arenascope::fuzz::schema_violation;
using nlohmann::json;

int failures = 0;

void expect(bool ok, const std::string &what)
{
    if (!ok) {
        std::fprintf(stderr, "FAIL: %s\n", what.c_str());
        ++failures;
    }
}

// `text` with its first `from` replaced by `to` (the case fails when `from` is not there).
std::string edit(std::string text, const std::string &from, const std::string &to)
{
    const size_t at = text.find(from);
    if (at == std::string::npos) return "";
    return text.replace(at, from.size(), to);
}

// `text` with `line` inserted as the head table's first entry.
std::string head_entry(const std::string &text, const std::string &line)
{
    const size_t table = text.find("arenascope_plan_head[");
    const size_t at = table == std::string::npos ? table : text.find("] = {\n", table);
    if (at == std::string::npos) return "";
    return text.substr(0, at + 6) + line + text.substr(at + 6);
}

}  // namespace

int main()
{
    using namespace arenascope;
    // A two-operator chain with a variable tensor (a tail region with a tensor index).
    const test_models::SG sg{
        {{{1, 64}}, {{1, 64}, 9, false, true}, {{1, 64}}, {{1, 64}}}, {{0, {0, 1}, {2}}, {19, {2}, {3}}}, {0}, {3}};
    const std::vector<uint8_t> bytes = test_models::build({sg});
    const planner::Budget b = planner::make_budget(fuzz::write_model_file(bytes.data(), bytes.size()));

    // What the writers produce passes.
    const std::string header = planner::budget_header(b);
    expect(check_header(header).empty(), "a real header passes: " + check_header(header));
    expect(fuzz::check_json(b).empty(), "real JSON passes: " + fuzz::check_json(b));
    expect(fuzz::check_snapshot(b).empty(), "a real snapshot passes: " + fuzz::check_snapshot(b));
    expect(fuzz::check_table(planner::printable(planner::budget_table(b), true)).empty(), "a real table passes");

    // Each defect of a header is caught.
    const std::vector<std::pair<const char *, std::string>> bad_headers{
        {"an unbalanced brace", header + "}\n"},
        {"an unclosed comment", header + "/* x\n"},
        {"a nested comment", edit(header, "/* TFLM greedy head */", "/* TFLM /* greedy head */")},
        {"a control byte", edit(header, "TFLM greedy head", "TFLM\x1b greedy head")},
        {"a byte beyond ASCII", edit(header, "TFLM greedy head", "TFLM\xc3\xa9 greedy head")},
        {"a macro defined twice", header + "#define ARENASCOPE_PLAN_H\n"},
        {"an unclosed #ifndef", edit(header, "#endif /* ARENASCOPE_PLAN_H */", "")},
        {"a bad identifier", edit(header, "ARENASCOPE_PLAN_HEAD_BYTES", "3ARENASCOPE_PLAN_HEAD_BYTES")},
        {"an unescaped question mark", edit(header, "\"ADD\"", "\"ADD??\"")},
        {"a newline in a string", edit(header, "\"ADD\"", "\"A\nDD\"")},
        {"a number beyond 32 bits",
         edit(header, "#define ARENASCOPE_PLAN_ALIGNMENT 16u", "#define ARENASCOPE_PLAN_ALIGNMENT 4294967296u")},
        {"an id beyond 0xFFFE (0xFFFF is ARENASCOPE_ID_NONE)",
         head_entry(header, "    {0u, 16u, 65535u, ARENASCOPE_KIND_TENSOR, 0, 1, 2},\n")},
        {"a scope beyond int16", head_entry(header, "    {0u, 16u, 1u, ARENASCOPE_KIND_TENSOR, 0, 1, 40000},\n")},
    };
    for (const auto &[what, text] : bad_headers)
        expect(!text.empty() && !check_header(text).empty(), std::string("the header check catches ") + what);

    // Each kind of schema violation is caught.
    const json schema = json::parse(kPlannerSchema), doc = planner::budget_json(b);
    expect(schema_violation(schema, doc).empty(), "real JSON is valid");
    const std::vector<std::pair<const char *, std::function<void(json &)>>> bad_docs{
        {"a missing key", [](json &d) { d.erase("tail"); }},
        {"a wrong type", [](json &d) { d["file_bytes"] = "many"; }},
        {"a value below its minimum", [](json &d) { d["buffers"][0]["size"] = -16; }},
        {"a value outside its enum", [](json &d) { d["tail"]["regions"][0]["kind"] = "other"; }},
        {"a wrong const", [](json &d) { d["schema"] = "arenascope-plan/0"; }},
        {"a pattern mismatch", [](json &d) { d["subgraphs"][0]["tensors"][0]["type"] = "int8"; }},
        {"an additional property", [](json &d) { d["arena"]["extra"] = 1; }},
        {"a $ref'd definition broken", [](json &d) { d["steps"][0].erase("kind"); }},
    };
    for (const auto &[what, change] : bad_docs) {
        json d = doc;
        change(d);
        expect(!schema_violation(schema, d).empty(), std::string("the schema check catches ") + what);
    }
    const json snapshot_schema = json::parse(kSnapshotSchema);
    json snap = planner::budget_snapshot(b);
    expect(schema_violation(snapshot_schema, snap).empty(), "a real snapshot is valid");
    snap["arenas"][0]["regions"][0].erase("offset");
    expect(!schema_violation(snapshot_schema, snap).empty(), "the snapshot schema check catches a missing offset");

    std::printf("arenascope-fuzz-checks-selftest: %d of %zu cases failed\n", failures,
                4 + bad_headers.size() + 1 + bad_docs.size() + 2);
    return failures ? 1 : 0;
}
