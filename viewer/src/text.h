// arenascope viewer: text as bytes of UTF-8 (no ImGui, no GL).
//
//   utf8_at      the character at a byte offset: its code point and length, or how many bytes
//                there are not UTF-8 (one decoder for the viewer: the report's cleaning and the
//                error messages' printable() both use it)
//   xml_escape   text cleaned and escaped for the report's SVG and HTML: every string from a
//                snapshot, a check, a fault or --name goes into the report through it
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace arenascope {

// The UTF-8 sequence at s[i] (i < s.size()). ok: a well-formed character (RFC 3629: no overlong
// form, no surrogate, nothing past U+10FFFF) of `length` bytes, code point `cp`. Else `length`
// is how many bytes to take as one bad character (WHATWG's decoder, "maximal subpart": the start
// of a sequence cut short is one, a stray byte is one) and cp is U+FFFD.
struct Utf8 {
    char32_t cp = 0xFFFD;
    std::size_t length = 1;
    bool ok = false;
};
Utf8 utf8_at(std::string_view s, std::size_t i);

// Text cleaned and escaped for XML (SVG) and HTML content and attribute values, in one pass:
//  - & < > " ' escaped (&amp; &lt; &gt; &quot; &#39;);
//  - tab, line feed and carriage return each become a space: a report line is one line (an SVG
//    text cannot break, and the map shows them as spaces too);
//  - every other character XML 1.0 forbids or HTML calls an error becomes U+FFFD (the
//    replacement character): the C0 controls (U+0000..U+001F), DEL (U+007F), the C1 controls
//    (U+0080..U+009F), the noncharacters (U+FFFE, U+FFFF, U+FDD0..U+FDEF and the last two of
//    every plane), and bytes that are not UTF-8 (one U+FFFD per bad sequence, as utf8_at cuts
//    them);
//  - everything else is copied as it is.
// The output is well-formed XML character data whatever the bytes in; time and memory are linear.
std::string xml_escape(std::string_view text);

}  // namespace arenascope
