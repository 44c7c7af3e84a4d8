// What the fuzz harnesses check each of the planner's writers produced (writers.h): an empty
// string when the output is well-formed, else what is wrong. A harness aborts on any.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "arenascope/planner/writers.h"

namespace arenascope::fuzz {

// The search for a better plan (plan.h plan_search) with a budget small enough for a sanitized
// build's per-input timeout; the walk is the same at any budget.
inline constexpr int64_t kSearchBudget = 200000;

// The fuzz input as a model file for make_budget (which reads a path): written to a temporary
// directory under a name with the bytes a writer must escape ("*/", quotes, a backslash, a
// question mark, a newline, a non-ASCII byte), so that every run checks the escaping of the path.
std::string write_model_file(const uint8_t *data, size_t size);

// budget_json, dumped as arenascope-plan --json dumps it and parsed back: valid against
// docs/planner-schema.json, and its figures agree with the budget (offsets inside the head, the
// recommendation at least the minimum, ...).
std::string check_json(const planner::Budget &b);
// budget_snapshot: valid against docs/snapshot-schema.json; every region inside the arena, head
// regions below the head's end, tail regions inside the tail and not sharing bytes.
std::string check_snapshot(const planner::Budget &b);
// budget_header: printable ASCII; comments, strings and brackets closed and balanced; every
// token a C identifier, a number, a string or a punctuator the header uses; every macro name
// and conditional balanced; every table entry's values in its field's range.
std::string check_header(const std::string &header);
// budget_table after printable(..., true), as the tool prints it: printable ASCII and newlines.
std::string check_table(const std::string &table);

// With ARENASCOPE_FUZZ_HEADERS=DIR in the environment, write `header` to DIR (named by its hash),
// so that tests/integration/test_planner_fuzz.py compiles what the fuzzed corpus produced.
void save_header(const std::string &header);

// Abort with the harness's name and what broke.
[[noreturn]] void fail(const char *what, const std::string &why);

}  // namespace arenascope::fuzz
