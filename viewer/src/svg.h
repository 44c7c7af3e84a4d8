// arenascope viewer: the static report's SVG, drawn by the report and by each panel's part of it
// (report.h's ReportPart). No ImGui, no GL.
#pragma once

#include <string>

#include <fmt/format.h>

#include "pictures.h"
#include "style.h"
#include "text.h"

namespace arenascope {

// The report's text: 12 px DejaVu Sans Mono (Debian's fonts-dejavu-core; any monospace font of
// 0.6 em advance measures the same), 15 px a line; the picture is 1600 px wide, 16 px margins.
constexpr float kReportCharW = 7.25f, kReportLineH = 15;
constexpr float kReportWidth = 1600, kReportMargin = 16;
// A text's width in the report's font.
float report_measure(const std::string &s);

// An SVG fragment, in pixels; text y is the top of the line, as in the window.
struct Svg {
    std::string out;
    void box(float x0, float y0, float x1, float y1, Rgba c)
    {
        if (x1 > x0 && y1 > y0)
            out += fmt::format(R"(<rect x="{:g}" y="{:g}" width="{:g}" height="{:g}" fill="{}"/>)", x0, y0, x1 - x0,
                               y1 - y0, css_rgb(c)) +
                   "\n";
    }
    void line(float x0, float y0, float x1, float y1, Rgba c, float w = 1)
    {
        out += fmt::format(R"(<line x1="{:g}" y1="{:g}" x2="{:g}" y2="{:g}" stroke="{}" stroke-width="{:g}"/>)", x0, y0,
                           x1, y1, css_rgb(c), w) +
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
        out += fmt::format(R"(<text x="{:g}" y="{:g}" fill="{}">{}</text>)", x, y + 10, css_rgb(c), kept) + "\n";
    }
    void frame(float x, float y, float w, float h)
    {
        out += fmt::format(R"(<rect x="{:g}" y="{:g}" width="{:g}" height="{:g}" fill="none" stroke="{}"/>)", x + 0.5f,
                           y + 0.5f, w, h, css_rgb(style().frame)) +
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

}  // namespace arenascope
