// arenascope viewer: what the panels draw with in the window (Dear ImGui): text cut to a width,
// a scrolling text panel, display lists, opaque raster textures, a region's tooltip.
#pragma once

#include <imgui.h>

#include <string>
#include <vector>

#include "layout.h"
#include "panels.h"
#include "pictures.h"
#include "snapshot.h"
#include "style.h"
#include "textfit.h"

namespace arenascope {

ImU32 col(Paint p);
// ImGui's width of a text, px.
float measure(const std::string &t);
void text(ImDrawList *dl, float x, float y, const std::string &s, ImU32 c = style().text.imgui());
// Text cut to max_w pixels (whole characters, "..." at the end): cheaper than a clip rectangle,
// which costs a draw call of its own on a software renderer. Returns the width drawn.
float text_fit(ImDrawList *dl, float x, float y, const std::string &text, float max_w, ImU32 c = style().text.imgui());
void rect(ImDrawList *dl, float x0, float y0, float x1, float y1, Paint p);
void frame_rect(ImDrawList *dl, const Rect &r);  // a panel's border, style().frame
// A display list (pictures.h) into the window's draw list.
void draw_picture(ImDrawList *dl, const Picture &p);
// Uploads a raster into a GL texture (created on first use), nearest filtering so that one
// texel is one pixel: the regions keep their exact colours and edges.
void upload(unsigned &tex, const Raster &r);
// Draws a raster texture with blending off: its pixels are opaque, and a software renderer
// saves reading back every covered pixel.
void opaque_image(ImDrawList *dl, unsigned tex, float x0, float y0, float x1, float y1);
// What the map and the plan show under the mouse for a region.
void region_tooltip(const Arena &a, const Region &reg);

// A text panel that scrolls with the mouse wheel when its lines do not fit: an ImGui child
// window (ImGui clips and scrolls it; a scrollbar shows there is more). Lines are placed at the
// layout cursor and advance it, so the child knows its content's height. `more` is kept by the
// caller from frame to frame: when the content did not fit at the last frame, the panel's
// bottom line is given to a "more below: scroll" mark (also in a screenshot), so it hides no text.
class ScrollPanel {
public:
    ScrollPanel(const char *id, const Rect &r, ImU32 border, bool &more) : more_(more)
    {
        ImDrawList *parent = ImGui::GetWindowDrawList();
        parent->AddRect(ImVec2(r.x, r.y), ImVec2(r.x + r.w, r.y + r.h), border);
        const float mark_h = more ? 16.f : 0.f;
        if (more) {
            const ImVec2 t = ImGui::CalcTextSize(kMore);
            parent->AddText(ImVec2(r.x + r.w - t.x - 16, r.y + r.h - t.y - 2), style().more_mark.imgui(), kMore);
        }
        ImGui::SetCursorScreenPos(ImVec2(r.x + 1, r.y + 1));
        ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(5, 3));
        ImGui::PushStyleVar(ImGuiStyleVar_ItemSpacing, ImVec2(0, 0));
        ImGui::PushStyleVar(ImGuiStyleVar_ScrollbarSize, 10);
        ImGui::BeginChild(id, ImVec2(r.w - 2, r.h - 2 - mark_h), false,
                          ImGuiWindowFlags_NoBackground | ImGuiWindowFlags_AlwaysUseWindowPadding);
        dl = ImGui::GetWindowDrawList();
    }
    ~ScrollPanel()
    {
        more_ = ImGui::GetScrollY() < ImGui::GetScrollMaxY();
        ImGui::EndChild();
        ImGui::PopStyleVar(3);
    }
    ScrollPanel(const ScrollPanel &) = delete;
    ScrollPanel &operator=(const ScrollPanel &) = delete;

    float width() const { return ImGui::GetContentRegionAvail().x; }
    ImVec2 at() const { return ImGui::GetCursorScreenPos(); }
    void advance(float h) const { ImGui::Dummy(ImVec2(1, h)); }
    // Draws text wrapped at spaces, `indent` px in, its continuation lines `hang` px further in
    // (a label's value column); returns the height it took, including `gap` below it.
    float text(const std::string &t, ImU32 c, float indent = 0, float hang = 0, float gap = 3) const
    {
        const ImVec2 p = at();
        const float w = width() - indent;
        const float lh = ImGui::GetTextLineHeight();
        const auto lines = wrap_at_spaces(t, w, w - hang, measure);
        for (size_t i = 0; i < lines.size(); i++) {
            const char *b = lines[i].c_str();
            dl->AddText(ImVec2(p.x + indent + (i ? hang : 0), p.y + float(i) * lh), c, b, b + lines[i].size());
        }
        const float h = float(lines.size()) * lh + gap;
        advance(h);
        return h;
    }
    // The line's rectangle is under the mouse (for its tooltip).
    bool hovered(float y, float h) const
    {
        const ImVec2 m = ImGui::GetIO().MousePos;
        return ImGui::IsWindowHovered() && m.y >= y && m.y < y + h;
    }

    static constexpr const char *kMore = "more below: scroll";

    ImDrawList *dl;

private:
    bool &more_;
};

// The lines of a text panel (panels.h) into a ScrollPanel, with their tooltips; returns the
// lines said (the details too when details_too), for the layout JSON. value_column: where a hanging line's
// continuation starts, px.
std::vector<std::string> draw_lines(const ScrollPanel &panel, const std::vector<PanelLine> &lines, float value_column,
                                    bool details_too = false);

}  // namespace arenascope
