// arenascope viewer: the static report of a snapshot (no ImGui, no GL, no display needed).
//
//   report_svg    one SVG picture: per arena the map (every lane, labels, cluster marks), the
//                 memory plan, the RAM column and the legend; then the text panels' parts
//                 (ReportText: the summary, the fault, the RTOS tasks) in full, wrapped. Nothing is cut off and no mouse hint is drawn.
//   report_html   one self-contained HTML file (inline SVG and CSS, a few lines of inline
//                 script for the table's filter; no external file, font or network): the same
//                 pictures, the summary and fault text as text, and every region in a table.
//
// The pictures come from the display lists the window draws (mapview.h, pictures.h) and the
// text from panels.h, so the report and the window cannot disagree. Every text written into the
// SVG or the HTML goes through xml_escape (text.h): escaped (a label may hold "<script>") and
// cleaned of control characters and bytes that are not UTF-8, so the SVG is well-formed XML
// whatever a snapshot or --name holds. Labels and lines are cut and wrapped in time linear in
// their length (layout.h).
#pragma once

#include <string>

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

// generator: what wrote the report, e.g. "arenascope-viewer 0.9.0"; source: the snapshot's file;
// texts: the panels' parts, in the panels' order.
std::string report_svg(const Snapshot &s, const std::string &source, const std::string &generator,
                       const std::vector<ReportText> &texts);
std::string report_html(const Snapshot &s, const std::string &source, const std::string &generator,
                        const std::vector<ReportText> &texts);

}  // namespace arenascope
