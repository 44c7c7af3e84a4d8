// arenascope viewer: the text of the summary and fault panels (no ImGui), so the window and the
// report say the same lines in the same order and colours.
#pragma once

#include <string>
#include <vector>

#include "diffdoc.h"
#include "layout.h"
#include "snapshot.h"
#include "style.h"

namespace arenascope {

struct PanelLine {
    std::string text;
    Rgba colour;
    int indent = 0;       // px from the panel's left edge
    bool hang = false;    // wrapped lines continue in the value column (after "stack peak ")
    int gap_before = 0;   // px of space above the line
    bool detail = false;  // a check's reason, or evidence: below its headline
    std::string tip;      // what the window shows under the mouse (the report: a title attribute)
};

// The summary: the verdict, the arena's figures (a), the guard and stack figures, every check
// (what failed first, then warnings, then what passed; a failed or warned check's reason below
// it), then the pinned region (selected: a position in a->regions, or -1).
std::vector<PanelLine> summary_lines(const Snapshot &s, const Arena *a, int selected);

// The fault panel: the post-mortem's verdicts of TFLM's objects first, then the fault's decode
// (verdicts, PC, causes, evidence, notes, BFAR/MMFAR, the fault status bits). A line already
// said is not said again (the fault's verdict repeats the post-mortem's words). Empty when the
// snapshot has neither a fault nor post-mortem verdicts. in_window: end with the pointer to
// `arena fault` (the window's panel is a digest; the report is whole).
std::vector<PanelLine> fault_lines(const Snapshot &s, bool in_window);

// Compare mode: the diff's summary, then one line per change, arena by arena (at most 200, then
// how many more: `arena diff` lists them all).
std::vector<PanelLine> diff_lines(const DiffDoc &d);

}  // namespace arenascope
