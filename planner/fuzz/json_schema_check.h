// The fuzz harnesses' JSON Schema check: the subset of JSON Schema (draft 2020-12) that
// docs/planner-schema.json and docs/snapshot-schema.json use, so that what budget_json and
// budget_snapshot write for any model is checked against the contract the plugin and viewer read.
// A keyword outside the subset is an error (the schemas grew past the checker: extend it), never
// silently ignored.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace arenascope::fuzz {

// Empty when `doc` is valid against `schema` (its "$defs" resolved by "$ref": "#/$defs/NAME"),
// else the first violation with its JSON pointer, e.g. "/arenas/0/regions/3: missing 'offset'".
std::string schema_violation(const nlohmann::json &schema, const nlohmann::json &doc);

}  // namespace arenascope::fuzz
