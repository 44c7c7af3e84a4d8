// arenascope viewer: the static report; see report.h.
#include "report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "layout.h"
#include "mapview.h"
#include "panels.h"
#include "pictures.h"
#include "textfit.h"

namespace arenascope {
namespace {

// The report's text: 12 px DejaVu Sans Mono (Debian's fonts-dejavu-core; any monospace font of
// 0.6 em advance measures the same), 15 px a line.
constexpr float kCharW = 7.25f, kLineH = 15;
constexpr float kWidth = 1600, kMargin = 16;
const Rgba kText = style().text, kAxis = style().text_dim, kFrame = style().frame;

float measure(const std::string &s)
{
    std::size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;  // UTF-8 code points
    return kCharW * float(n);
}

std::string rgb(Rgba c)
{
    return css_rgb(c);
}

// An SVG fragment, in pixels; text y is the top of the line, as in the window.
struct Svg {
    std::string out;
    void box(float x0, float y0, float x1, float y1, Rgba c)
    {
        if (x1 > x0 && y1 > y0)
            out += fmt::format(R"(<rect x="{:g}" y="{:g}" width="{:g}" height="{:g}" fill="{}"/>)", x0, y0, x1 - x0,
                               y1 - y0, rgb(c)) +
                   "\n";
    }
    void line(float x0, float y0, float x1, float y1, Rgba c, float w = 1)
    {
        out += fmt::format(R"(<line x1="{:g}" y1="{:g}" x2="{:g}" y2="{:g}" stroke="{}" stroke-width="{:g}"/>)", x0, y0,
                           x1, y1, rgb(c), w) +
               "\n";
    }
    void text(float x, float y, const std::string &t, Rgba c)
    {
        // Runs of spaces kept (aligned figures): all but the first of a run as no-break spaces,
        // which SVG renderers do not collapse.
        const std::string e = xml_escape(t);
        std::string kept;
        kept.reserve(e.size());
        for (std::size_t i = 0; i < e.size(); i++) {
            if (e[i] == ' ' && i > 0 && e[i - 1] == ' ') {
                kept += "&#160;";
            } else {
                kept += e[i];
            }
        }
        out += fmt::format(R"(<text x="{:g}" y="{:g}" fill="{}">{}</text>)", x, y + 10, rgb(c), kept) + "\n";
    }
    void frame(float x, float y, float w, float h)
    {
        out += fmt::format(R"(<rect x="{:g}" y="{:g}" width="{:g}" height="{:g}" fill="none" stroke="{}"/>)", x + 0.5f,
                           y + 0.5f, w, h, rgb(kFrame)) +
               "\n";
    }
    void picture(const Picture &p)
    {
        for (const Shape &sh : p.shapes) {
            if (sh.kind == Shape::Box) box(sh.x0, sh.y0, sh.x1, sh.y1, sh.colour);
            if (sh.kind == Shape::Line) line(sh.x0, sh.y0, sh.x1, sh.y1, sh.colour, sh.width);
            if (sh.kind == Shape::Text) text(sh.x0, sh.y0, sh.text, sh.colour);
        }
    }
};

// The map of arena ai at y, offsets [lo, hi) of it (every lane); returns the panel's height.
float draw_map(Svg &svg, const Snapshot &s, int ai, float y, uint64_t lo, uint64_t hi)
{
    const Arena &a = s.arenas[std::size_t(ai)];
    std::vector<int> lanes;
    const int lane_count = assign_lanes(a.regions, lanes);
    MapGeometry g;
    g.width = int(kWidth - 2 * kMargin - 16);
    g.view_lo = double(a.base_addr + lo), g.view_hi = double(a.base_addr + std::max(hi, lo + 1));
    g.bar_h = 26, g.lanes_top = 32;
    g.lane_h = std::clamp(int(720 / std::max(1, lane_count)), 2, 18);
    g.lanes_shown = std::min(lane_count, 4000 / g.lane_h);
    const std::vector<bool> damaged = damaged_regions(s, ai);
    const MapPicture p = map_picture(
        a, lanes, g, -1, [&](int i) { return std::size_t(i) < damaged.size() && damaged[std::size_t(i)]; }, measure);
    const float x0 = kMargin + 8, top = y + 22;
    const float lanes_bottom = top + float(g.lanes_top + g.lanes_shown * g.lane_h);
    const float h = lanes_bottom - y + 22;
    svg.frame(kMargin, y, kWidth - 2 * kMargin, h);
    const std::string notes = p.notes(false);
    svg.text(
        kMargin + 6, y + 3,
        fmt::format("Arena {}{}  {:#x}..{:#x}  ({}){}{}", a.index,
                    s.arenas.size() > 1 ? fmt::format(" ({} of {})", ai + 1, s.arenas.size()) : "", a.base_addr,
                    a.base_addr + a.size_bytes, format_bytes_exact(a.size_bytes),
                    lo == 0 && hi == a.size_bytes ? std::string() : fmt::format(": the head zoomed, +{}..+{}", lo, hi),
                    notes),
        notes.empty() ? kText : colour(Paint::Temp));
    svg.out += fmt::format("<g transform=\"translate({:g},{:g})\">\n", x0, top);
    for (const MapFill &f : p.fills) svg.box(float(f.x0), float(f.y0), float(f.x1), float(f.y1), f.colour);
    for (const MapLabel &l : p.labels) svg.text(float(l.x), float(l.y), l.text, l.colour);
    svg.out += "</g>\n";
    const double span = g.view_hi - g.view_lo;
    auto X = [&](double off) { return x0 + float((off - double(lo)) / span * g.width); };
    for (uint64_t off : {a.head_bytes, a.temp_bytes, a.tail_offset}) {
        const float x = std::floor(X(double(off)));
        if (x >= x0 && x < x0 + float(g.width)) svg.line(x + 0.5f, top - 5, x + 0.5f, top - 1, colour(Paint::Boundary));
    }
    const uint64_t step = tick_step(double(lo), double(lo) + span, int(float(g.width) / 90));
    for (uint64_t off = (lo + step - 1) / step * step; double(off) <= double(lo) + span; off += step) {
        const float x = X(double(off));
        svg.line(x + 0.5f, lanes_bottom + 2, x + 0.5f, lanes_bottom + 6, kAxis);
        const std::string label = "+" + format_bytes(off);
        if (x + 2 + measure(label) <= kWidth - kMargin - 2) svg.text(x + 2, lanes_bottom + 4, label, kAxis);
    }
    return h;
}

// The legend: every colour and its name, one column.
void draw_legend(Svg &svg, const Rect &r)
{
    svg.frame(r.x, r.y, r.w, r.h);
    const Paint paints[] = {Paint::Tensor,    Paint::Scratch,      Paint::Temp,           Paint::Persistent,
                            Paint::Metadata,  Paint::FreeIntact,   Paint::FreeUnmeasured, Paint::FreeTouched,
                            Paint::Guard,     Paint::GuardTouched, Paint::StackUsed,      Paint::StackUnused,
                            Paint::HighWater, Paint::StackPointer, Paint::LiveCurve,      Paint::LowerBound,
                            Paint::Cluster,   Paint::Offline};
    float y = r.y + 6;
    for (Paint p : paints) {
        const bool line =
            p == Paint::HighWater || p == Paint::StackPointer || p == Paint::LiveCurve || p == Paint::LowerBound;
        if (line) {
            svg.line(r.x + 5, y + 7, r.x + 19, y + 7, colour(p), 2);
        } else {
            svg.box(r.x + 6, y + 2, r.x + 18, y + 12, colour(p));
        }
        svg.text(r.x + 24, y, paint_name(p), kText);
        y += kLineH;
    }
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

// Arena ai's row (its map, its head zoomed, the plan, the RAM column, the legend) at y, or the
// RAM column alone without an arena (ai -1); returns its height.
float draw_arena(Svg &svg, const Snapshot &s, int ai, float y)
{
    const float y0 = y;
    const Arena *a = ai < 0 ? nullptr : &s.arenas[std::size_t(ai)];
    if (a) y += draw_map(svg, s, ai, y, 0, a->size_bytes) + 8;
    // The head (tensors, scratch buffers, temp) zoomed, where it is under a quarter of the
    // arena: at the whole arena's scale it is a few pixels wide.
    if (a && a->temp_bytes > 0 && a->temp_bytes * 4 < a->size_bytes) {
        const uint64_t hi = std::min(a->size_bytes, a->temp_bytes + std::max<uint64_t>(64, a->temp_bytes / 10));
        y += draw_map(svg, s, ai, y, 0, hi) + 8;
    }
    const float h = 420;
    const Rect plan_r{kMargin, y, 900, h}, ram_r{kMargin + 908, y, 200, h},
        legend_r{kMargin + 1116, y, kWidth - 2 * kMargin - 1116, h};
    if (a) {
        const PlanGeometry g = plan_geometry(*a, Rect{plan_r.x + 60, plan_r.y + 24, plan_r.w - 70, plan_r.h - 44});
        for (const Shape &b : plan_boxes(*a, g, -1)) svg.box(b.x0, b.y0, b.x1, b.y1, b.colour);
        svg.picture(plan_overlay(*a, g, plan_r));
    }
    RamColumn column;
    svg.picture(ram_picture(s, a, ram_r, measure, column));
    draw_legend(svg, legend_r);
    return y + h + 12 - y0;
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

// texts: null in the HTML, which says the heading and the texts in its own elements.
Built build_svg(const Snapshot &s, const std::string &source, const std::string &generator,
                const std::vector<ReportText> *texts)
{
    Svg svg;
    float y = kMargin;
    if (texts) {
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
        y += draw_arena(svg, s, -1, y);
    }
    for (int ai = 0; ai < int(s.arenas.size()); ai++) y += draw_arena(svg, s, ai, y);
    if (texts) y += draw_texts(svg, *texts, y);
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
                       const std::vector<ReportText> &texts)
{
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + build_svg(s, source, generator, &texts).svg;
}

std::string report_html(const Snapshot &s, const std::string &source, const std::string &generator,
                        const std::vector<ReportText> &texts)
{
    std::string h = html_head(s, source, generator);
    h += "<div id=\"pictures\">\n" + build_svg(s, source, generator, nullptr).svg + "</div>\n";
    for (const ReportText &t : texts) {
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
