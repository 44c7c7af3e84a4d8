// Unit tests of the viewer's text handling (issue 37, "slow on hostile sizes"): the report's one
// cleaner and escaper (text.h, byte for byte), cutting and wrapping costs that follow the text's
// length (the number of measure calls and the bytes they measure are counted, not timed), the
// same cuts as before on ordinary text, and a report with control characters everywhere.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "layout.h"
#include "mapview.h"
#include "panel.h"
#include "report.h"
#include "text.h"
#include "textfit.h"

using namespace arenascope;

namespace {

const std::string kFffd = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

std::string times(const std::string &s, std::size_t n)
{
    std::string out;
    for (std::size_t i = 0; i < n; i++) out += s;
    return out;
}

// 7 px a character (a UTF-8 code point), counting its calls and the bytes it was given; past a
// budget it throws, so a search that measures too much fails at once instead of running on.
struct Overspent {};
struct Counting {
    std::size_t max_calls = SIZE_MAX, max_bytes = SIZE_MAX;
    std::size_t calls = 0, bytes = 0;
    Measure fn()
    {
        return [this](const std::string &s) {
            calls++;
            bytes += s.size();
            if (calls > max_calls || bytes > max_bytes) throw Overspent{};
            float n = 0;
            for (unsigned char c : s) n += (c & 0xC0) != 0x80;
            return 7.f * n;
        };
    }
};

// The offset of the first character XML 1.0 forbids, or that is a control character, a
// noncharacter or not UTF-8 (npos: none): what the report must never write, whatever it was
// given. markup: the report's own tab and newlines between elements are allowed.
std::size_t first_unclean(const std::string &text, bool markup = false)
{
    for (std::size_t i = 0; i < text.size();) {
        const Utf8 u = utf8_at(text, i);
        const char32_t c = u.cp;
        const bool space = c == '\t' || c == '\n' || c == '\r';
        if (!u.ok || (c < 0x20 && !(markup && space)) || (c >= 0x7F && c <= 0x9F) || (c & 0xFFFE) == 0xFFFE ||
            (c >= 0xFDD0 && c <= 0xFDEF))
            return i;
        i += u.length;
    }
    return std::string::npos;
}

TEST(XmlEscape, EscapesMarkupAndKeepsText)
{
    EXPECT_EQ(xml_escape("a<b>&\"'c"), "a&lt;b&gt;&amp;&quot;&#39;c");
    EXPECT_EQ(xml_escape("conv_pw_13/Relu6 \xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80"),
              "conv_pw_13/Relu6 \xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80");     // é, 中, an emoji
    EXPECT_EQ(xml_escape("\xC2\xA0\xEF\xBF\xBD"), "\xC2\xA0\xEF\xBF\xBD");  // no-break space, U+FFFD itself
    EXPECT_EQ(xml_escape(""), "");
}

TEST(XmlEscape, TabAndNewlinesAreSpacesOtherControlsAreReplacementCharacters)
{
    EXPECT_EQ(xml_escape("a\tb\nc\rd\r\n"), "a b c d  ");
    // Every other C0 control, DEL and the C1 controls: U+FFFD each.
    for (int c = 0; c < 0x20; c++) {
        if (c == '\t' || c == '\n' || c == '\r') continue;
        EXPECT_EQ(xml_escape(std::string("x") + char(c) + "y"), "x" + kFffd + "y") << c;
    }
    EXPECT_EQ(xml_escape("\x7F"), kFffd);
    EXPECT_EQ(xml_escape("\xC2\x80\xC2\x85\xC2\x9F"), kFffd + kFffd + kFffd);
    EXPECT_EQ(xml_escape(std::string("a\0b", 3)), "a" + kFffd + "b");
    EXPECT_EQ(xml_escape("\x1B[31mred"), kFffd + "[31mred");  // a terminal escape is inert text
}

TEST(XmlEscape, NoncharactersAndBytesThatAreNotUtf8AreReplaced)
{
    EXPECT_EQ(xml_escape("\xEF\xBF\xBE|\xEF\xBF\xBF"), kFffd + "|" + kFffd);   // U+FFFE, U+FFFF
    EXPECT_EQ(xml_escape("\xEF\xB7\x90\xEF\xB7\xAF"), kFffd + kFffd);          // U+FDD0, U+FDEF
    EXPECT_EQ(xml_escape("\xF0\x9F\xBF\xBE\xF4\x8F\xBF\xBF"), kFffd + kFffd);  // U+1FFFE, U+10FFFF
    EXPECT_EQ(xml_escape("\xEF\xB7\xB0"), "\xEF\xB7\xB0");                     // U+FDF0: a character
    EXPECT_EQ(xml_escape("a\xFF-\xFE"), "a" + kFffd + "-" + kFffd);            // never UTF-8
    EXPECT_EQ(xml_escape("\x80\xBF"), kFffd + kFffd);                          // stray continuation bytes
    EXPECT_EQ(xml_escape("\xC0\x80"), kFffd + kFffd);                          // overlong NUL
    EXPECT_EQ(xml_escape("\xE0\x80\xAF"), kFffd + kFffd + kFffd);              // overlong '/'
    EXPECT_EQ(xml_escape("\xED\xA0\x80"), kFffd + kFffd + kFffd);              // a surrogate, U+D800
    EXPECT_EQ(xml_escape("\xF4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd);  // past U+10FFFF
    // A sequence cut short is one character (WHATWG's "maximal subpart"), what follows is kept.
    EXPECT_EQ(xml_escape("\xE2\x82<"), kFffd + "&lt;");
    EXPECT_EQ(xml_escape("\xF0\x9F\x98"), kFffd);
    EXPECT_EQ(xml_escape("\xC3"), kFffd);
}

TEST(XmlEscape, AnyBytesGiveCleanTextInLinearSize)
{
    std::mt19937 rng(37);
    for (int n = 0; n < 2000; n++) {
        std::string s(std::size_t(rng() % 40), '\0');
        for (char &c : s) c = char(rng());
        const std::string e = xml_escape(s);
        EXPECT_EQ(first_unclean(e), std::string::npos) << n;
        EXPECT_EQ(e.find_first_of("<>\"'"), std::string::npos);
        EXPECT_LE(e.size(), 6 * s.size());  // "&quot;" is the longest a byte becomes
    }
    const std::string big = times(std::string("\x01<", 2), 512u << 10);  // 1 MiB
    EXPECT_EQ(xml_escape(big), times(kFffd + "&lt;", 512u << 10));
}

TEST(Utf8, DecodesWellFormedSequences)
{
    const std::string s = "A\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80";
    const Utf8 a = utf8_at(s, 0), e = utf8_at(s, 1), zh = utf8_at(s, 3), emoji = utf8_at(s, 6);
    EXPECT_TRUE(a.ok && a.cp == U'A' && a.length == 1);
    EXPECT_TRUE(e.ok && e.cp == 0xE9 && e.length == 2);
    EXPECT_TRUE(zh.ok && zh.cp == 0x4E2D && zh.length == 3);
    EXPECT_TRUE(emoji.ok && emoji.cp == 0x1F600 && emoji.length == 4);
    const Utf8 cut = utf8_at(s, 7);  // inside the emoji
    EXPECT_TRUE(!cut.ok && cut.length == 1);
}

// The cuts as the viewer made them before issue 37 (one measure call per character dropped):
// the reference for ordinary text, where both must agree.
std::string old_cut_to_width(std::string text, float max_px, const Measure &measure)
{
    if (measure(text) <= max_px) return text;
    do {
        std::size_t start = text.size() - 1;
        while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) start--;
        text.resize(start);
    } while (!text.empty() && measure(text + "...") > max_px);
    return text + "...";
}
std::string old_cut_middle(const std::string &text, float max_px, const Measure &measure)
{
    if (measure(text) <= max_px) return text;
    std::vector<std::size_t> starts;
    for (std::size_t i = 0; i < text.size(); i++)
        if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) starts.push_back(i);
    const std::size_t n = starts.size();
    for (std::size_t keep = n; keep-- > 0;) {
        const std::size_t head = keep / 3, tail = keep - head;
        const std::size_t from = tail ? starts[n - tail] : text.size();
        const std::string cut = text.substr(0, starts[head]) + "..." + text.substr(from);
        if (measure(cut) <= max_px || keep == 0) return keep == 0 ? std::string("...") : cut;
    }
    return "...";
}
std::vector<std::string> old_wrap(const std::string &text, float first_px, float rest_px, const Measure &measure)
{
    std::vector<std::string> lines;
    std::string line;
    auto limit = [&] { return lines.empty() ? first_px : rest_px; };
    size_t i = 0;
    while (i < text.size()) {
        size_t j = i;
        while (j < text.size() && text[j] == ' ') j++;
        while (j < text.size() && text[j] != ' ') j++;
        std::string segment = text.substr(i, j - i);
        i = j;
        if (measure(line + segment) <= limit()) {
            line += segment;
            continue;
        }
        if (!line.empty()) {
            lines.push_back(line);
            line.clear();
        }
        segment.erase(0, segment.find_first_not_of(' '));
        while (!segment.empty() && measure(segment) > limit()) {
            size_t fit = 1;
            while (fit < segment.size() && measure(segment.substr(0, fit + 1)) <= limit()) fit++;
            lines.push_back(segment.substr(0, fit));
            segment.erase(0, fit);
        }
        line = segment;
    }
    if (!line.empty() || lines.empty()) lines.push_back(line);
    return lines;
}

TEST(LinearText, OrdinaryTextIsCutAndWrappedAsBefore)
{
    // Random text of ASCII, spaces, é, 中 and an emoji (the wrap's old cut counted bytes, so its
    // comparison is on ASCII only), at every width from nothing to wider than the text.
    const std::vector<std::string> pieces = {
        "a", "b", "/", "_", " ", " ", "\xC3\xA9", "\xE4\xB8\xAD", "\xF0\x9F\x98\x80"};
    const Measure ascii_px = [](const std::string &s) { return 7.f * float(s.size()); };
    Counting counting;
    const Measure px = counting.fn();
    std::mt19937 rng(33);
    for (int n = 0; n < 400; n++) {
        std::string text, plain;
        const std::size_t len = rng() % 40;
        for (std::size_t k = 0; k < len; k++) {
            text += pieces[rng() % pieces.size()];
            plain += pieces[rng() % 6];
        }
        for (float w = 0; w < 7 * 44; w += 3.5f) {
            EXPECT_EQ(cut_to_width(text, w, px), old_cut_to_width(text, w, px)) << text << " " << w;
            EXPECT_EQ(cut_middle(text, w, px), old_cut_middle(text, w, px)) << text << " " << w;
            EXPECT_EQ(wrap_at_spaces(plain, w, w * 0.7f, ascii_px), old_wrap(plain, w, w * 0.7f, ascii_px))
                << plain << " " << w;
        }
    }
}

TEST(LinearText, AWordWiderThanALineIsCutBetweenCharacters)
{
    Counting c;
    // 3 characters a line (21 px), 2 bytes each: the old cut counted bytes and split them.
    EXPECT_EQ(wrap_at_spaces("\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9 x", 21, 21, c.fn()),
              (std::vector<std::string>{"\xC3\xA9\xC3\xA9\xC3\xA9", "\xC3\xA9 x"}));
    // Narrower than one character: one character a line all the same.
    EXPECT_EQ(wrap_at_spaces("\xE4\xB8\xAD\xE4\xB8\xAD", 3, 3, c.fn()),
              (std::vector<std::string>{"\xE4\xB8\xAD", "\xE4\xB8\xAD"}));
}

// Issue 37: a 1 MiB label (the most the viewer reads) stalled the report for minutes, because
// cut_to_width measured the whole string again per character it dropped (about 10^6 calls and
// 5 x 10^11 bytes measured here). Now: O(log) calls, and the whole label measured about once.
TEST(LinearText, CuttingAMebibyteLabelMeasuresItAboutOnce)
{
    const std::string label = times("MobilenetV1/Conv2d_13_pointwise/Relu6;\xC3\xA9", (1u << 20) / 40);
    const std::size_t n = label.size();
    ASSERT_GT(n, 1000000u);
    Counting c{30, n + 1000};  // 12 calls, n + 369 bytes
    std::string cut;
    EXPECT_NO_THROW(cut = cut_to_width(label, 300, c.fn())) << c.calls << " calls, " << c.bytes << " bytes";
    // 42 characters of 7 px in 300 px: 39 of the label (its first 38 are ASCII, then an é).
    EXPECT_EQ(cut, label.substr(0, 40) + "...");

    Counting m{30, n + 1000};
    std::string middle;
    EXPECT_NO_THROW(middle = cut_middle(label, 300, m.fn())) << m.calls << " calls, " << m.bytes << " bytes";
    EXPECT_EQ(middle, "MobilenetV1/C...onv2d_13_pointwise/Relu6;\xC3\xA9");  // 13 from the start, 26 from the end
}

// The report's own loops over a hostile text: the map's labels (cut in the middle where a lane
// has room) and the panels' lines (a check's reason, a fault's text, wrapped). A 256 KiB tensor
// name from a real model took 14.7 s; a word of 256 KiB wrapped measured the rest of it per line.
TEST(LinearText, TheReportsLabelsAndLinesCostWhatTheirLengthIs)
{
    const std::string name = times("model/block_3/depthwise_conv2d;", (256u << 10) / 31);
    const std::size_t n = name.size();
    Arena a;
    a.base_addr = 0, a.size_bytes = 1000, a.head_bytes = 1000, a.temp_bytes = 1000, a.tail_offset = 1000;
    Region r;
    r.index = 0, r.id = 0, r.kind = "tensor", r.offset = 0, r.address = 0, r.size_bytes = 1000;
    r.label = name;
    a.regions = {r};
    MapGeometry g;
    g.width = 1000, g.view_lo = 0, g.view_hi = 1000, g.lane_h = 18, g.lanes_shown = 2;
    Counting c{60, 4 * n};  // 18 calls, 2n bytes: the label, and it again before it is cut
    MapPicture p;
    EXPECT_NO_THROW(p = map_picture(
                        a, {1}, g, -1, [](int) { return false; }, c.fn()))
        << c.calls << " calls, " << c.bytes << " bytes";
    bool cut = false;
    for (const MapLabel &l : p.labels) cut |= l.text.find("...") != std::string::npos && l.text.size() < 200;
    EXPECT_TRUE(cut);

    // A 256 KiB word, then words: 2,384 lines of 110 characters (12 calls and 990 bytes a line;
    // before: the rest of the word measured again on every line, 3 x 10^8 bytes).
    const std::string text = std::string(256u << 10, 'x') + " and then some words";
    const std::size_t lines_wanted = (256u << 10) / 110 + 1;
    Counting w{20 * lines_wanted, 20 * text.size()};
    std::vector<std::string> lines;
    EXPECT_NO_THROW(lines = wrap_at_spaces(text, 770, 770, w.fn())) << w.calls << " calls, " << w.bytes << " bytes";
    ASSERT_EQ(lines.size(), lines_wanted);
    EXPECT_EQ(lines.back(), std::string((256u << 10) % 110, 'x') + " and then some words");
}

// Control characters in a check's reason, a fault's text, a label and the name given with
// --name: the SVG and the HTML hold none of them (each is U+FFFD, or a space for tab and
// newlines), nor a byte that is not UTF-8, so the SVG is well-formed XML.
TEST(LinearText, AReportHoldsNoControlCharacterWhateverTheSnapshotSays)
{
    LoadResult loaded = load_snapshot_file(std::string(ARENASCOPE_FIXTURES_DIR) + "/demo_stack_fault_snapshot.json");
    ASSERT_TRUE(loaded.snapshot) << loaded.error;
    Snapshot s = *loaded.snapshot;
    static const char kHostile[] = "\x00\x01\x08\x0B\x0C\x1B[2J\x7F\xC2\x85\xEF\xBF\xBE\t\n\r<&";
    const std::string hostile(kHostile, sizeof kHostile - 1);
    for (Check &c : s.checks) {
        c.verdict = "FAIL";
        c.reason += hostile;
    }
    ASSERT_TRUE(s.fault);
    for (FaultVerdict &v : s.fault->verdicts) v.headline += hostile;
    s.fault->notes.push_back("note" + hostile);
    s.arenas[0].regions[0].label = "tensor 0" + hostile;
    s.arenas[0].regions[1].label = "subgraph 0 operator 3 (CONV_2D): output" + hostile + times("x", 300);
    const std::string name = "fw.elf" + hostile + "\xFF\xFE";
    for (const std::string &out : {report_svg(s, name, "arenascope-viewer test", report_parts(s).parts),
                                   report_html(s, name, "arenascope-viewer test", report_parts(s).parts)}) {
        const std::size_t bad = first_unclean(out, true);
        EXPECT_EQ(bad, std::string::npos) << out.substr(bad == std::string::npos ? 0 : bad, 40);
        EXPECT_NE(out.find("fw.elf" + kFffd + kFffd + kFffd + kFffd + kFffd + kFffd + "[2J" + kFffd + kFffd + kFffd),
                  std::string::npos);
    }
}

}  // namespace
