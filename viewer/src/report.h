// arenascope viewer: the static report of a snapshot (no ImGui, no GL, no display needed).
//
//   report_svg    one SVG picture: per arena the map (every lane, labels, cluster marks), the
//                 memory plan, the RAM column and the legend; then the text panels' parts
//                 (ReportText: the summary, the fault, the RTOS tasks) in full, wrapped. Nothing is cut off and no mouse hint is drawn.
//   report_html   one self-contained HTML file (inline SVG and CSS, a few lines of inline
//                 script for the table's filter; no external file, font or network): the same
//                 pictures, the summary and fault text as text, and every region in a table.
//
// The pictures and the texts are the panels' own (ReportPart: each panel draws its part from the
// display lists the window draws, mapview.h, pictures.h, and the text of panels.h), so the report
// and the window cannot disagree; this file lays them out and writes the rest. Every text written into the
// SVG or the HTML goes through xml_escape (text.h): escaped (a label may hold "<script>") and
// cleaned of control characters and bytes that are not UTF-8, so the SVG is well-formed XML
// whatever a snapshot or --name holds. Labels and lines are cut and wrapped in time linear in
// their length (layout.h).
#pragma once

#include <string>

#include "layout.h"
#include "panels.h"
#include "snapshot.h"
#include "text.h"

namespace arenascope {

// A text panel's part of the report (panel.h's Panel::report): its title, its HTML id and its
// lines. The SVG sets them two to a row under the pictures; the HTML one after the other.
struct ReportText {
    std::string title, id;
    std::vector<PanelLine> lines;
};

struct Svg;  // svg.h

// Where a part's picture goes in the report, for each arena: Stack parts one below the other
// across the whole width (the maps), then the Row parts side by side in one 420 px row, `width`
// px each (0: the rest of the row).
struct ReportSpace {
    enum Kind { None, Stack, Row } kind = None;
    float width = 0;
};

// A panel's part of the report (panel.h's Panel is one): its picture of each arena and its text.
class ReportPart {
public:
    virtual ~ReportPart() = default;
    virtual ReportSpace report_space() const { return {}; }
    // Draws arena `arena` of s (-1: the snapshot has none) into r (a Stack part: r.h is 0, and it
    // returns the height it took); returns that height.
    virtual float report_picture(Svg &, const Snapshot &, int /*arena*/, const Rect &) const { return 0; }
    // Its text panel, if any.
    virtual void report(const Snapshot &, std::vector<ReportText> &) const {}
};

// generator: what wrote the report, e.g. "arenascope-viewer 0.9.0"; source: the snapshot's file;
// parts: the panels' parts, in the window's order (panel.h's report_parts).
std::string report_svg(const Snapshot &s, const std::string &source, const std::string &generator,
                       const std::vector<const ReportPart *> &parts);
std::string report_html(const Snapshot &s, const std::string &source, const std::string &generator,
                        const std::vector<const ReportPart *> &parts);

}  // namespace arenascope
