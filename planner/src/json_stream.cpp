// StreamedJson (json_stream.h): the skeleton's placeholders are binary values, which the
// planner's documents never hold otherwise; their subtype is the index of the array they stand for.
#include "arenascope/planner/json_stream.h"

#include <algorithm>
#include <charconv>
#include <numeric>
#include <string>

namespace arenascope::planner {

using nlohmann::json;

json StreamedJson::array(size_t count, Element element)
{
    parts_.push_back({count, std::move(element), {}, {}, nullptr});
    return json::binary({}, parts_.size() - 1);
}

json StreamedJson::rows(size_t count, std::vector<std::string> keys, RowFill fill)
{
    std::vector<size_t> sorted(keys.size());
    std::iota(sorted.begin(), sorted.end(), size_t{0});
    std::sort(sorted.begin(), sorted.end(), [&](size_t a, size_t b) { return keys[a] < keys[b]; });
    parts_.push_back({count, nullptr, std::move(keys), std::move(sorted), std::move(fill)});
    return json::binary({}, parts_.size() - 1);
}

namespace {
json to_json(const StreamedJson::Value &v)
{
    return std::visit(
        [](const auto &x) -> json {
            using X = std::decay_t<decltype(x)>;
            if constexpr (std::is_same_v<X, std::string_view>)
                return std::string(x);
            else if constexpr (std::is_same_v<X, const std::vector<int32_t> *>)
                return *x;
            else if constexpr (std::is_same_v<X, std::vector<std::string_view>>) {
                json a = json::array();
                for (std::string_view e : x) a.push_back(std::string(e));
                return a;
            } else
                return x;
        },
        v);
}
}  // namespace

json StreamedJson::fill(const json &v) const
{
    if (v.is_binary()) {
        const Part &p = parts_.at(static_cast<size_t>(v.get_binary().subtype()));
        json out = json::array();
        StreamedJson::Row row(p.keys.size());
        for (size_t i = 0; i < p.count; ++i) {
            if (p.element) {
                out.push_back(fill(p.element(i)));
                continue;
            }
            p.fill(i, row);
            json o = json::object();
            for (size_t k = 0; k < p.keys.size(); ++k) o[p.keys[k]] = to_json(row[k]);
            out.push_back(std::move(o));
        }
        return out;
    }
    if (v.is_object()) {
        json out = json::object();
        for (const auto &[key, value] : v.items()) out[key] = fill(value);
        return out;
    }
    if (v.is_array()) {
        json out = json::array();
        for (const json &e : v) out.push_back(fill(e));
        return out;
    }
    return v;
}

json StreamedJson::whole() const
{
    return fill(skeleton);
}

// nlohmann's own serializer, appending to a string that is handed to the stream a megabyte at a
// time (std::cout would take each small piece through stdio).
struct JsonSink {
    JsonSink(std::ostream &o, bool c) : out(o), compact(c) {}
    std::ostream &out;
    const bool compact;  // dump(-1): no newline, no indentation, no space after ':'
    std::string text;
    uint64_t written = 0;
    nlohmann::detail::serializer<json> serializer{nlohmann::detail::output_adapter<char, std::string>(text), ' ',
                                                  json::error_handler_t::replace};
    void put(const char *s) { text += s; }
    void put(const std::string &s) { text += s; }
    void indent(int n)
    {
        if (!compact) text.append(static_cast<size_t>(n), ' ');
    }
    // The punctuation of a non-empty array or object: "[\n" / "[", ",\n" / ",", ": " / ":".
    void open(char bracket)
    {
        text += bracket;
        if (!compact) text += '\n';
    }
    void comma() { put(compact ? "," : ",\n"); }
    void colon() { put(compact ? ":" : ": "); }
    void close(char bracket, int n)
    {
        if (!compact) text += '\n';
        indent(n);
        text += bracket;
    }
    // A value holding no placeholder, at nesting `indent`: exactly as dump(1, ...) nests it (or
    // dump(-1, ...), compact).
    void value(const json &v, int indent)
    {
        serializer.dump(v, !compact, false, compact ? 0 : 1, compact ? 0 : static_cast<unsigned>(indent));
    }
    void integer(int64_t n)
    {
        char digits[24];
        const auto r = std::to_chars(digits, digits + sizeof digits, n);
        text.append(digits, r.ptr);
    }
    // A string as the serializer writes it: as is when it has nothing to escape (printable ASCII
    // but '"' and '\\'; DEL is written as is too), else through the serializer (escapes, UTF-8
    // checked, bad bytes replaced).
    void string(std::string_view s)
    {
        const bool plain = std::all_of(s.begin(), s.end(), [](char c) {
            const auto u = static_cast<unsigned char>(c);
            return u >= 0x20 && u <= 0x7f && c != '"' && c != '\\';
        });
        if (!plain) return value(json(std::string(s)), 0);
        text += '"';
        text.append(s.data(), s.size());
        text += '"';
    }
    void row_value(const StreamedJson::Value &v, int indent)
    {
        switch (v.index()) {
        case 0: return put("null");
        case 1: return put(std::get<bool>(v) ? "true" : "false");
        case 2: return integer(std::get<int64_t>(v));
        case 3: return string(std::get<std::string_view>(v));
        case 4: return string(std::get<std::string>(v));
        case 6: {
            const auto &a = std::get<std::vector<std::string_view>>(v);
            if (a.empty()) return put("[]");
            open('[');
            for (size_t i = 0; i < a.size(); ++i) {
                if (i) comma();
                this->indent(indent + 1);
                string(a[i]);
            }
            return close(']', indent);
        }
        default: {
            const std::vector<int32_t> &a = *std::get<const std::vector<int32_t> *>(v);
            if (a.empty()) return put("[]");
            open('[');
            for (size_t i = 0; i < a.size(); ++i) {
                if (i) comma();
                this->indent(indent + 1);
                integer(a[i]);
            }
            close(']', indent);
        }
        }
    }
    void flush(bool always = false)
    {
        if (always || text.size() >= (1u << 20)) {
            out.write(text.data(), static_cast<std::streamsize>(text.size()));
            written += text.size();
            text.clear();
        }
    }
};

uint64_t StreamedJson::write(std::ostream &out, bool compact) const
{
    JsonSink sink(out, compact);
    write(sink, skeleton, 0);
    sink.flush(true);
    return sink.written;
}

// The skeleton as nlohmann's serializer::dump prints it with pretty printing: "{}" / "[]" when
// empty, else one member a line at indent + 1, ",\n" between them, and the closing bracket on a
// line of its own at indent; a placeholder as the array it stands for.
void StreamedJson::write(JsonSink &sink, const json &v, int indent) const
{
    if (v.is_binary()) {
        const Part &p = parts_.at(static_cast<size_t>(v.get_binary().subtype()));
        if (p.count == 0) return sink.put("[]");
        sink.open('[');
        StreamedJson::Row row(p.keys.size());
        for (size_t i = 0; i < p.count; ++i) {
            if (i) sink.comma();
            sink.indent(indent + 1);
            if (p.element) {
                sink.value(p.element(i), indent + 1);
            } else if (p.keys.empty()) {
                sink.put("{}");
            } else {  // a row: as the serializer writes an object, keys in std::map order
                p.fill(i, row);
                sink.open('{');
                for (size_t k = 0; k < p.sorted.size(); ++k) {
                    if (k) sink.comma();
                    sink.indent(indent + 2);
                    sink.string(p.keys[p.sorted[k]]);
                    sink.colon();
                    sink.row_value(row[p.sorted[k]], indent + 2);
                }
                sink.close('}', indent + 1);
            }
            sink.flush();
        }
        sink.close(']', indent);
    } else if (v.is_object() && !v.empty()) {
        sink.open('{');
        bool first = true;
        for (const auto &[key, value] : v.items()) {
            if (!first) sink.comma();
            sink.indent(indent + 1);
            sink.value(json(key), indent + 1);
            sink.colon();
            write(sink, value, indent + 1);
            first = false;
        }
        sink.close('}', indent);
    } else if (v.is_array() && !v.empty()) {
        sink.open('[');
        bool first = true;
        for (const json &e : v) {
            if (!first) sink.comma();
            sink.indent(indent + 1);
            write(sink, e, indent + 1);
            first = false;
        }
        sink.close(']', indent);
    } else {
        sink.value(v, indent);
    }
}

}  // namespace arenascope::planner
