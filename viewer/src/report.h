// arenascope viewer: the static report of a snapshot (no ImGui, no GL, no display needed).
//
//   report_svg    one SVG picture: per arena the map (every lane, labels, cluster marks), the
//                 memory plan, the RAM column and the legend; then the summary and the fault
//                 panels' text in full, wrapped. Nothing is cut off and no mouse hint is drawn.
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

#include "snapshot.h"
#include "text.h"

namespace arenascope {

// generator: what wrote the report, e.g. "arenascope-viewer 0.9.0"; source: the snapshot's file.
std::string report_svg(const Snapshot &s, const std::string &source, const std::string &generator);
std::string report_html(const Snapshot &s, const std::string &source, const std::string &generator);

}  // namespace arenascope
