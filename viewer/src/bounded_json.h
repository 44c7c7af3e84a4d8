// arenascope viewer: a JSON reader whose memory is bounded whatever the input (no ImGui, no GL).
//
// nlohmann::json's DOM costs 50-160 B per value: a 63 MB file of `{}` is 2 GB of DOM. This reader
// parses with nlohmann's SAX interface and builds a DOM only of what is kept, within limits:
//  - the places it is told to stream (e.g. $.arenas[*].regions) hand each entry, one at a time, to
//    a callback and keep none of them (the DOM holds an empty array there);
//  - the places it is told to skip (members the viewer never reads) are checked as JSON, not kept;
//  - everything else is kept, at most JsonLimits::max_values values;
//  - nesting, every string and every streamed entry are bounded too.
// A limit passed, or text that is not JSON, is a JsonError naming the JSON path and the byte.
#pragma once

#include <cstddef>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace arenascope {

struct JsonLimits {
    std::size_t max_depth = 32;               // containers inside containers
    std::size_t max_values = 1u << 17;        // values kept in the DOM (streamed and skipped ones aside)
    std::size_t max_string_bytes = 1u << 20;  // one string or key, after unescaping
    std::size_t max_entry_values = 1024;      // values in one streamed entry
};

// A limit passed or a syntax error: message is one line, "$.path: what (byte N)" or
// "not valid JSON (byte N): ...", never longer than about 300 bytes (a parse error quotes the
// input: long tokens are cut). byte is the offset in the input (0-based): a limit's, the last
// byte read when it was passed (the end of the value or key that passed it); a syntax error's, nlohmann's.
struct JsonError {
    std::string message;
    std::size_t byte = 0;
    bool syntax = false;  // the text is not JSON (else: valid so far, a limit passed)
};

// One place of the document, by its path from the root: keys, and "[]" for any array index
// (e.g. {"arenas", "[]", "regions"} is $.arenas[i].regions for every i).
struct JsonPlace {
    std::vector<std::string> pattern;
    bool skip = false;  // true: the value there is checked as JSON and not kept
    // A limit passed inside the value there (depth, values, a string) does not refuse the
    // document: on_error gets the message, the value becomes null and the rest of it is not kept.
    std::function<void(const std::string &message)> on_error;
    std::size_t max_entries = 0;  // streamed array: more entries is a JsonError
    // Streamed array (skip false): called when the array starts (again, for a repeated key),
    // with the indices the "[]" of the pattern matched.
    std::function<void(const std::vector<std::size_t> &indices)> on_start;
    // ... then once per entry, in order: the indices, the entry's index, the entry (its own small
    // DOM, released after the call) and its path ("$.arenas[0].regions[7]"). May throw.
    std::function<void(const std::vector<std::size_t> &indices, std::size_t index, nlohmann::json &&entry,
                       const std::string &path)>
        on_entry;
};

// Parses text (or all of file, read as it goes) and returns the DOM of what is kept. Throws
// JsonError; an exception a callback throws goes through unchanged. A value at a streamed place
// that is not an array is kept as any other (the caller's validation says what is wrong).
nlohmann::json parse_bounded(std::string_view text, const std::vector<JsonPlace> &places = {},
                             const JsonLimits &limits = {});
nlohmann::json parse_bounded(std::FILE *file, const std::vector<JsonPlace> &places = {}, const JsonLimits &limits = {});

}  // namespace arenascope
