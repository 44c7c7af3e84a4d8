// The JSON Schema subset the project's schemas use (json_schema_check.h). Semantics from JSON
// Schema 2020-12 (json-schema.org/draft/2020-12/json-schema-validation): "integer" is a number
// with no fraction; "pattern" is an ECMA-262 regex matched anywhere (std::regex ECMAScript).
#include "json_schema_check.h"

#include <map>
#include <optional>
#include <regex>
#include <set>

namespace arenascope::fuzz {

namespace {

using nlohmann::json;

// Keywords that only annotate: they never make a document invalid.
const std::set<std::string> kAnnotations = {"$schema", "$id",      "$comment", "title",      "description",
                                            "default", "examples", "$defs",    "definitions"};

bool has_type(const json &doc, const std::string &type)
{
    if (type == "null") return doc.is_null();
    if (type == "boolean") return doc.is_boolean();
    if (type == "object") return doc.is_object();
    if (type == "array") return doc.is_array();
    if (type == "string") return doc.is_string();
    if (type == "number") return doc.is_number();
    if (type == "integer")
        return doc.is_number_integer() ||
               (doc.is_number_float() &&
                doc.get<double>() == static_cast<double>(static_cast<int64_t>(doc.get<double>())));
    throw std::invalid_argument("unknown JSON Schema type '" + type + "'");
}

const std::regex &compiled(const std::string &pattern)
{
    static std::map<std::string, std::regex> cache;
    auto it = cache.find(pattern);
    if (it == cache.end()) it = cache.emplace(pattern, std::regex(pattern, std::regex::ECMAScript)).first;
    return it->second;
}

class Checker {
public:
    explicit Checker(const json &root) : root_(root) {}

    // Empty when valid, else the first violation.
    std::string check(const json &schema, const json &doc, const std::string &where) const
    {
        if (schema.is_boolean()) return schema.get<bool>() ? "" : where + ": no value is allowed here";
        if (!schema.is_object()) throw std::invalid_argument(where + ": a schema is an object or a boolean");
        for (const auto &[key, value] : schema.items()) {
            if (kAnnotations.count(key) || key == "then" || key == "else") continue;
            const std::string err = keyword(schema, key, value, doc, where);
            if (!err.empty()) return err;
        }
        return "";
    }

private:
    const json &root_;

    const json &resolve(const std::string &ref) const
    {
        for (const char *prefix : {"#/$defs/", "#/definitions/"}) {
            const std::string p = prefix;
            if (ref.compare(0, p.size(), p) == 0) return root_.at(p.substr(2, p.size() - 3)).at(ref.substr(p.size()));
        }
        throw std::invalid_argument("unsupported $ref '" + ref + "'");
    }

    // The keywords on one value (type, enum, const, bounds, lengths, pattern, item counts): the
    // violation or "", or nullopt for another keyword.
    std::optional<std::string> value_keyword(const std::string &key, const json &value, const json &doc,
                                             const std::string &where) const
    {
        if (key == "type") {
            const json types = value.is_array() ? value : json::array({value});
            for (const json &t : types)
                if (has_type(doc, t.get<std::string>())) return "";
            return where + ": " + doc.type_name() + " where the schema wants " + value.dump();
        }
        if (key == "enum") {
            for (const json &v : value)
                if (v == doc) return "";
            return where + ": " + doc.dump().substr(0, 200) + " is not one of " + value.dump();
        }
        if (key == "const")
            return value == doc ? "" : where + ": " + doc.dump().substr(0, 200) + " is not " + value.dump();
        if (key == "minimum" || key == "maximum" || key == "exclusiveMinimum" || key == "exclusiveMaximum") {
            if (!doc.is_number()) return "";
            const double d = doc.get<double>(), v = value.get<double>();
            const bool ok = key == "minimum"            ? d >= v
                            : key == "maximum"          ? d <= v
                            : key == "exclusiveMinimum" ? d > v
                                                        : d < v;
            return ok ? "" : where + ": " + doc.dump() + " breaks " + key + " " + value.dump();
        }
        if (key == "minLength" || key == "maxLength") {
            if (!doc.is_string()) return "";
            const size_t n = doc.get_ref<const std::string &>().size(), v = value.get<size_t>();
            return (key == "minLength" ? n >= v : n <= v) ? "" : where + ": string breaks " + key;
        }
        if (key == "pattern") {
            if (!doc.is_string()) return "";
            return std::regex_search(doc.get_ref<const std::string &>(), compiled(value.get<std::string>()))
                       ? ""
                       : where + ": " + doc.dump().substr(0, 200) + " does not match " + value.dump();
        }
        if (key == "minItems" || key == "maxItems") {
            if (!doc.is_array()) return "";
            const size_t n = doc.size(), v = value.get<size_t>();
            return (key == "minItems" ? n >= v : n <= v) ? ""
                                                         : where + ": " + std::to_string(n) + " items break " + key;
        }
        return std::nullopt;
    }

    std::string keyword(const json &schema, const std::string &key, const json &value, const json &doc,
                        const std::string &where) const
    {
        if (key == "$ref") return check(resolve(value.get<std::string>()), doc, where);
        if (auto found = value_keyword(key, value, doc, where)) return *found;
        if (key == "items") {
            if (!doc.is_array()) return "";
            for (size_t i = 0; i < doc.size(); ++i) {
                const std::string err = check(value, doc[i], where + "/" + std::to_string(i));
                if (!err.empty()) return err;
            }
            return "";
        }
        if (key == "required") {
            if (!doc.is_object()) return "";
            for (const json &k : value)
                if (!doc.contains(k.get<std::string>())) return where + ": missing '" + k.get<std::string>() + "'";
            return "";
        }
        if (key == "properties") {
            if (!doc.is_object()) return "";
            for (const auto &[name, sub] : value.items())
                if (doc.contains(name)) {
                    const std::string err = check(sub, doc.at(name), where + "/" + name);
                    if (!err.empty()) return err;
                }
            return "";
        }
        if (key == "additionalProperties") {
            if (!doc.is_object()) return "";
            const json &props = schema.contains("properties") ? schema.at("properties") : json::object();
            for (const auto &[name, sub] : doc.items())
                if (!props.contains(name)) {
                    const std::string err = check(value, sub, where + "/" + name);
                    if (!err.empty()) return err;
                }
            return "";
        }
        if (key == "allOf" || key == "anyOf" || key == "oneOf") {
            int passed = 0;
            std::string first;
            for (const json &sub : value) {
                const std::string err = check(sub, doc, where);
                if (err.empty())
                    ++passed;
                else if (first.empty())
                    first = err;
            }
            if (key == "allOf") return first;
            if (key == "anyOf") return passed ? "" : where + ": matches none of anyOf (" + first + ")";
            return passed == 1 ? "" : where + ": matches " + std::to_string(passed) + " of oneOf, not one";
        }
        if (key == "not") return check(value, doc, where).empty() ? where + ": matches what 'not' forbids" : "";
        if (key == "if") {
            const bool cond = check(value, doc, where).empty();
            const char *branch = cond ? "then" : "else";
            return schema.contains(branch) ? check(schema.at(branch), doc, where) : "";
        }
        throw std::invalid_argument("JSON Schema keyword '" + key + "' is not in the fuzz checker's subset (" + where +
                                    "): add it to planner/fuzz/json_schema_check.cpp");
    }
};

}  // namespace

std::string schema_violation(const json &schema, const json &doc)
{
    return Checker(schema).check(schema, doc, "");
}

}  // namespace arenascope::fuzz
