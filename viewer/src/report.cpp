// arenascope viewer: the static report; see report.h.
#include "report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "layout.h"
#include "mapview.h"
#include "panels.h"
#include "pictures.h"
#include "svg.h"
#include "textfit.h"

namespace arenascope {
namespace {

constexpr float kLineH = kReportLineH, kWidth = kReportWidth, kMargin = kReportMargin;
const Rgba kText = style().text;

float measure(const std::string &s)
{
    return report_measure(s);
}

std::string rgb(Rgba c)
{
    return css_rgb(c);
}

// Panel text wrapped to width w at x; returns the height.
float draw_lines(Svg &svg, const std::vector<PanelLine> &lines, float x, float y, float w, const std::string &title)
{
    float at = y;
    svg.text(x, at, title, kText);
    at += kLineH + 4;
    for (const PanelLine &l : lines) {
        at += float(l.gap_before);
        const float indent = float(l.indent), hang = l.hang ? measure("stack peak ") : 0;
        const auto wrapped = wrap_at_spaces(l.text, w - indent, w - indent - hang, measure);
        for (std::size_t i = 0; i < wrapped.size(); i++) {
            svg.text(x + indent + (i ? hang : 0), at, wrapped[i], l.colour);
            at += kLineH;
        }
    }
    return at - y;
}

struct Built {
    std::string svg;
    float height = 0;
};

// The parts' texts, in their order.
std::vector<ReportText> texts_of(const Snapshot &s, const std::vector<const ReportPart *> &parts)
{
    std::vector<ReportText> out;
    for (const ReportPart *p : parts) p->report(s, out);
    return out;
}

// Arena ai's pictures at y (or, without an arena, ai -1, what the parts draw of the stack): the
// parts that stack across the width (the maps), then one 420 px row of the others, left to
// right, 8 px apart (the plan, the RAM column, the legend). Returns their height.
float draw_arena(Svg &svg, const Snapshot &s, int ai, float y, const std::vector<const ReportPart *> &parts)
{
    const float y0 = y, row_h = 420;
    for (const ReportPart *p : parts) {
        if (p->report_space().kind == ReportSpace::Stack)
            y += p->report_picture(svg, s, ai, Rect{kMargin, y, kWidth - 2 * kMargin, 0});
    }
    float x = kMargin;
    for (const ReportPart *p : parts) {
        const ReportSpace sp = p->report_space();
        if (sp.kind != ReportSpace::Row) continue;
        const float w = sp.width > 0 ? sp.width : kWidth - kMargin - x;
        p->report_picture(svg, s, ai, Rect{x, y, w, row_h});
        x += w + 8;
    }
    return y + row_h + 12 - y0;
}

// The text panels' parts, two to a row, each wrapped in its column; returns their height.
float draw_texts(Svg &svg, const std::vector<ReportText> &texts, float y)
{
    const float y0 = y, col_w = (kWidth - 3 * kMargin) / 2;
    for (std::size_t i = 0; i < texts.size(); i += 2) {
        float h = draw_lines(svg, texts[i].lines, kMargin, y, col_w, texts[i].title);
        if (i + 1 < texts.size())
            h = std::max(h, draw_lines(svg, texts[i + 1].lines, 2 * kMargin + col_w, y, col_w, texts[i + 1].title));
        y += h + 8;
    }
    return y - y0;
}

Rgba verdict_colour(const std::string &verdict)
{
    return colour(verdict == "FAIL" ? Paint::RuleFail : verdict == "WARN" ? Paint::Temp : Paint::RulePass);
}

// with_texts: false in the HTML, which says the heading and the texts in its own elements.
Built build_svg(const Snapshot &s, const std::string &source, const std::string &generator,
                const std::vector<const ReportPart *> &parts, bool with_texts)
{
    Svg svg;
    float y = kMargin;
    if (with_texts) {
        svg.text(kMargin, y,
                 fmt::format("arenascope report: {}{}  |  verdict {}{}  |  {}", source,
                             s.dump.empty() ? "" : "  |  from a RAM DUMP: " + s.dump, s.verdict,
                             s.time.empty() ? "" : "  |  taken " + s.time, generator),
                 verdict_colour(s.verdict));
        y += kLineH + 8;
    }
    if (s.arenas.empty()) {
        svg.text(kMargin, y, "No arena published: the stack, the guard band and the checks are below.", kText);
        y += kLineH + 8;
        y += draw_arena(svg, s, -1, y, parts);
    }
    for (int ai = 0; ai < int(s.arenas.size()); ai++) y += draw_arena(svg, s, ai, y, parts);
    if (with_texts) y += draw_texts(svg, texts_of(s, parts), y);
    Built b;
    b.height = y + kMargin;
    b.svg = fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{:g}" height="{:g}" viewBox="0 0 {:g} {:g}" )"
                        R"(shape-rendering="crispEdges" font-family="DejaVu Sans Mono, monospace" font-size="12px" )"
                        R"(xml:space="preserve" style="white-space:pre">)"
                        "\n",
                        kWidth, b.height, kWidth, b.height) +
            fmt::format(R"(<rect x="0" y="0" width="{:g}" height="{:g}" fill="{}"/>)", kWidth, b.height,
                        rgb(colour(Paint::Background))) +
            "\n" + svg.out + "</svg>\n";
    return b;
}

// The HTML's style sheet, its colours from style.h.
std::string css()
{
    const Style &st = style();
    return fmt::format(
        R"(body {{ background: {}; color: {}; font: 12px "DejaVu Sans Mono", monospace; margin: 16px; }}
h1 {{ font-size: 16px; margin: 0 0 8px 0; }} h2 {{ font-size: 14px; margin: 20px 0 6px 0; }}
#pictures svg {{ max-width: 100%; height: auto; }}
.panel {{ border: 1px solid {}; padding: 6px 8px; max-width: 1552px; }}
.line {{ white-space: pre-wrap; }} .line.hang {{ text-indent: -11ch; }}
table {{ border-collapse: collapse; }} td, th {{ border: 1px solid {}; padding: 2px 6px; text-align: left; }}
th {{ background: {}; }} td.num {{ text-align: right; }} tr.damaged td {{ color: {}; }}
input {{ font: inherit; background: {}; color: inherit; border: 1px solid {}; padding: 3px; width: 40ch; }}
)",
        rgb(colour(Paint::Background)), rgb(st.text), rgb(st.frame), rgb(st.table_border), rgb(st.table_head),
        rgb(colour(Paint::RuleFail)), rgb(st.table_head), rgb(st.frame));
}

std::string html_lines(const std::vector<PanelLine> &lines)
{
    std::string out;
    for (const PanelLine &l : lines) {
        // A hanging line: its continuation in the value column, 11 characters in (as the window).
        out += fmt::format(
                   R"(<div class="line{}" style="color:{};padding-left:calc({}px + {}ch);margin-top:{}px"{}>{}</div>)",
                   l.hang ? " hang" : "", rgb(l.colour), l.indent, l.hang ? 11 : 0, l.gap_before,
                   l.tip.empty() ? "" : " title=\"" + xml_escape(l.tip) + "\"", xml_escape(l.text)) +
               "\n";
    }
    return out;
}

// Every region of every arena, a table row each.
std::string region_rows(const Snapshot &s)
{
    std::string h;
    for (int ai = 0; ai < int(s.arenas.size()); ai++) {
        const Arena &a = s.arenas[std::size_t(ai)];
        const std::vector<bool> damaged = damaged_regions(s, ai);
        for (std::size_t i = 0; i < a.regions.size(); i++) {
            const Region &r = a.regions[i];
            std::string flags, shape;
            for (const auto &f : r.flags) flags += (flags.empty() ? "" : ", ") + f;
            for (auto d : r.shape) shape += (shape.empty() ? "" : "x") + std::to_string(d);
            const std::string life = r.last_use && *r.last_use < 0 ? "none"
                                     : r.first_use && r.last_use   ? fmt::format("{}..{}", *r.first_use, *r.last_use)
                                                                   : "whole run";
            const bool bad = i < damaged.size() && damaged[i];
            h +=
                fmt::format("<tr{}><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td><td>{}</td>"
                            "<td class=\"num\">{}</td><td class=\"num\">+{}</td><td>{:#x}</td><td class=\"num\">{}</td>"
                            "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                            bad ? " class=\"damaged\"" : "", a.index, r.index, xml_escape(r.label), xml_escape(r.kind),
                            r.id ? std::to_string(*r.id) : "-", r.offset, a.base_addr + r.offset, r.size_bytes, life,
                            xml_escape(flags), xml_escape(r.name.value_or("")), xml_escape(r.dtype.value_or("")), shape,
                            bad ? "overwritten" : "");
        }
    }
    return h;
}

// The HTML's head and heading: the source, a RAM dump's files, the verdict.
std::string html_head(const Snapshot &s, const std::string &source, const std::string &generator)
{
    std::string h;
    h += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    h += "<title>arenascope report: " + xml_escape(source) + "</title>\n";
    h += "<style>\n" + css() + "</style>\n</head>\n<body>\n";
    h += "<h1>arenascope report: " + xml_escape(source) + "</h1>\n";
    if (!s.dump.empty()) {
        h += "<p id=\"dump\" style=\"color:" + rgb(colour(Paint::Temp)) +
             "\">From a RAM DUMP, not a live target: " + xml_escape(s.dump) +
             " (the time below is when the snapshot was made from it, not when the board crashed)</p>\n";
    }
    h += fmt::format("<p id=\"verdict\" style=\"color:{}\">verdict {}{}; written by {}</p>\n",
                     rgb(verdict_colour(s.verdict)), xml_escape(s.verdict),
                     s.time.empty() ? "" : xml_escape(", snapshot taken " + s.time), xml_escape(generator));
    return h;
}

}  // namespace

std::string report_svg(const Snapshot &s, const std::string &source, const std::string &generator,
                       const std::vector<const ReportPart *> &parts)
{
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + build_svg(s, source, generator, parts, true).svg;
}

std::string report_html(const Snapshot &s, const std::string &source, const std::string &generator,
                        const std::vector<const ReportPart *> &parts)
{
    std::string h = html_head(s, source, generator);
    h += "<div id=\"pictures\">\n" + build_svg(s, source, generator, parts, false).svg + "</div>\n";
    for (const ReportText &t : texts_of(s, parts)) {
        h += "<h2>" + xml_escape(t.title) + "</h2>\n<div class=\"panel\" id=\"" + t.id + "\">\n" + html_lines(t.lines) +
             "</div>\n";
    }
    std::size_t total = 0;
    for (const Arena &a : s.arenas) total += a.regions.size();
    h += fmt::format("<h2>Regions ({})</h2>\n", total);
    h += "<p><input id=\"filter\" type=\"search\" placeholder=\"filter: any text of a row\" "
         "aria-label=\"filter the regions\"> <span id=\"shown\"></span></p>\n";
    h += "<table id=\"regions\">\n<thead><tr><th>arena</th><th>#</th><th>label</th><th>kind</th><th>id</th>"
         "<th>offset</th><th>address</th><th>bytes</th><th>lifetime (scopes)</th><th>flags</th><th>name</th>"
         "<th>type</th><th>shape</th><th>state</th></tr></thead>\n<tbody>\n";
    h += region_rows(s);
    h += "</tbody>\n</table>\n";
    h += R"(<script>
(function () {
  var input = document.getElementById("filter"), rows = document.querySelectorAll("#regions tbody tr");
  var shown = document.getElementById("shown");
  function apply() {
    var q = input.value.toLowerCase(), n = 0;
    rows.forEach(function (r) { var on = r.textContent.toLowerCase().indexOf(q) >= 0; r.hidden = !on; n += on; });
    shown.textContent = q ? n + " of " + rows.length + " shown" : "";
  }
  input.addEventListener("input", apply);
  var m = /[#&]filter=([^&]*)/.exec(location.hash);  // a link can carry a filter: report.html#filter=scratch
  if (m) input.value = decodeURIComponent(m[1]);
  apply();
})();
</script>
</body>
</html>
)";
    return h;
}

}  // namespace arenascope
