// arenascope viewer: cutting and wrapping text to a width in pixels (no ImGui, no GL).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace arenascope {

// A text's width in pixels, in the caller's font (ImGui's in the window, the report's monospace).
using Measure = std::function<float(const std::string &)>;

// Cutting and wrapping cost time linear in the text's length, whatever it is (a snapshot's label
// may be 1 MiB): each measures the whole text at most once or twice and finds the cut with
// O(log k) calls on strings of O(k) characters, k what is kept, so `measure` must grow with the
// text (a start of a text no wider than the text; true of any font without negative advances).
// A character is a UTF-8 sequence: no cut splits one.
//
// cut_middle: the text cut in the middle to fit max_px ("start...end"), keeping a third of its
// characters from the start and the rest from the end: for names whose end tells them apart
// (tensor names). cut_to_width: `text` whole when no wider than max_px, else its longest start
// (whole characters) that fits with "..." after it ("..." alone when nothing does): every cut
// label and line.
std::string cut_middle(const std::string &text, float max_px, const Measure &measure);
std::string cut_to_width(std::string text, float max_px, const Measure &measure);

// The lines of `text` no wider than first_px (the first line) and rest_px (the others), broken
// at spaces only, so an address range such as "+12064..+12288" stays whole (ImGui's own wrap
// also breaks after '.'); a word wider than a line is cut by characters (at least one a line).
// Runs of spaces inside a line are kept (aligned columns); a line never starts with a space.
// measure(s): s's width, px. Linear in the text's length too (times the width of a line).
std::vector<std::string> wrap_at_spaces(const std::string &text, float first_px, float rest_px,
                                        const std::function<float(const std::string &)> &measure);

}  // namespace arenascope
