// arenascope viewer: text as bytes of UTF-8; see text.h.
#include "text.h"

namespace arenascope {

Utf8 utf8_at(std::string_view s, std::size_t i)
{
    const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
    const unsigned char c = byte(i);
    if (c < 0x80) return {c, 1, true};
    // The sequence's length and the range of its second byte (no overlong form, no surrogate,
    // nothing past U+10FFFF); the bytes after the second are 0x80..0xBF.
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    char32_t cp = 0;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2, cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3, cp = c & 0x0F;
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4, cp = c & 0x07;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
    } else {
        return {};  // a continuation byte, C0, C1 or F5..FF: never a character's start
    }
    for (std::size_t k = 1; k < n; k++) {
        if (i + k >= s.size() || byte(i + k) < lo || byte(i + k) > hi) return {0xFFFD, k, false};
        cp = cp << 6 | (byte(i + k) & 0x3F);
        lo = 0x80, hi = 0xBF;
    }
    return {cp, n, true};
}

std::string xml_escape(std::string_view text)
{
    std::string out;
    out.reserve(text.size() + text.size() / 8);
    for (std::size_t i = 0; i < text.size();) {
        const Utf8 u = utf8_at(text, i);
        const char32_t c = u.cp;
        const bool control = c < 0x20 || (c >= 0x7F && c <= 0x9F);
        const bool nonchar = (c & 0xFFFE) == 0xFFFE || (c >= 0xFDD0 && c <= 0xFDEF);
        if (c == '\t' || c == '\n' || c == '\r') {
            out += ' ';
        } else if (!u.ok || control || nonchar) {
            out += "\xEF\xBF\xBD";  // U+FFFD
        } else if (c == '&') {
            out += "&amp;";
        } else if (c == '<') {
            out += "&lt;";
        } else if (c == '>') {
            out += "&gt;";
        } else if (c == '"') {
            out += "&quot;";
        } else if (c == '\'') {
            out += "&#39;";
        } else {
            out.append(text, i, u.length);
        }
        i += u.length;
    }
    return out;
}

}  // namespace arenascope
