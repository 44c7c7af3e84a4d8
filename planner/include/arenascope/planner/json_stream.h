// arenascope planner: a JSON document written without holding it whole.
//
// nlohmann::json keeps every value as a separate allocation (an object is a std::map): a
// 100,000-operator model's budget as one document takes gigabytes. A StreamedJson is the
// document's skeleton with its large arrays left as placeholders, each produced element by
// element while it is written; write() prints exactly what dump(1, ' ', false, replace) of the
// whole document prints (keys in std::map order, one space per level), and whole() builds the
// whole document for callers that want it. The largest arrays are arrays of flat objects (rows):
// their keys are given once and each element's values filled in place, with no nlohmann::json
// made for them at all on the way out.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace arenascope::planner {

struct JsonSink;

class StreamedJson {
public:
    using Element = std::function<nlohmann::json(size_t)>;
    // A row's value: null, a boolean, an integer, a string (a view of one that outlives the
    // write, or an owned one), an array of integers, or an array of strings (views of literals).
    using Value = std::variant<std::nullptr_t, bool, int64_t, std::string_view, std::string,
                               const std::vector<int32_t> *, std::vector<std::string_view>>;
    using Row = std::vector<Value>;  // in the order of the keys given to rows()
    using RowFill = std::function<void(size_t, Row &)>;

    nlohmann::json skeleton;
    // A placeholder to put in the skeleton for an array of `count` elements, element(i) each
    // (which holds no placeholder itself).
    nlohmann::json array(size_t count, Element element);
    // A placeholder for an array of `count` objects with these keys; fill(i, row) sets element i's
    // values, row[k] for keys[k].
    nlohmann::json rows(size_t count, std::vector<std::string> keys, RowFill fill);
    // The document with every placeholder filled in.
    nlohmann::json whole() const;
    // The document as dump(1, ' ', false, error_handler_t::replace) prints it; compact: as
    // dump(-1, ...) prints it (no whitespace at all: the large models' form). Returns the bytes written.
    uint64_t write(std::ostream &out, bool compact = false) const;

private:
    struct Part {
        size_t count;
        Element element;                // an array of values, or
        std::vector<std::string> keys;  // an array of rows
        std::vector<size_t> sorted;     // key indices in std::map order
        RowFill fill;
    };
    std::vector<Part> parts_;
    nlohmann::json fill(const nlohmann::json &v) const;
    void write(JsonSink &sink, const nlohmann::json &v, int indent) const;
};

}  // namespace arenascope::planner
