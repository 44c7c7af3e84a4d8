// arenascope viewer: the panels' ImGui helpers; see ui.h.
#include "ui.h"

#include <GL/gl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "textfit.h"

namespace arenascope {

ImU32 col(Paint p)
{
    return colour(p).imgui();
}

void text(ImDrawList *dl, float x, float y, const std::string &s, ImU32 c)
{
    dl->AddText(ImVec2(x, y), c, s.c_str());
}

// Text cut to max_w pixels (whole characters, "..." at the end): cheaper than a clip rectangle,
// which costs a draw call of its own on a software renderer. Returns the width drawn.
float measure(const std::string &t)
{
    return ImGui::CalcTextSize(t.c_str(), t.c_str() + t.size()).x;
}

float text_fit(ImDrawList *dl, float x, float y, const std::string &text, float max_w, ImU32 c)
{
    const std::string s = cut_to_width(text, max_w, measure);
    dl->AddText(ImVec2(x, y), c, s.c_str());
    return measure(s);
}

// A display list (pictures.h) into the window's draw list.
void draw_picture(ImDrawList *dl, const Picture &p)
{
    for (const Shape &sh : p.shapes) {
        const ImU32 c = sh.colour.imgui();
        if (sh.kind == Shape::Box) {
            dl->AddRectFilled(ImVec2(sh.x0, sh.y0), ImVec2(sh.x1, sh.y1), c);
        } else if (sh.kind == Shape::Line) {
            dl->AddLine(ImVec2(sh.x0, sh.y0), ImVec2(sh.x1, sh.y1), c, sh.width);
        } else {
            dl->AddText(ImVec2(sh.x0, sh.y0), c, sh.text.c_str(), sh.text.c_str() + sh.text.size());
        }
    }
}

void rect(ImDrawList *dl, float x0, float y0, float x1, float y1, Paint p)
{
    if (x1 > x0 && y1 > y0) dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), col(p));
}

// Uploads a raster into a GL texture (created on first use), nearest filtering so that one
// texel is one pixel: the regions keep their exact colours and edges.
void upload(unsigned &tex, const Raster &r)
{
    if (tex == 0) {
        GLuint t = 0;
        glGenTextures(1, &t);
        tex = t;
        glBindTexture(GL_TEXTURE_2D, tex);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, 0x812F);  // GL_CLAMP_TO_EDGE
        glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, 0x812F);
    }
    glBindTexture(GL_TEXTURE_2D, tex);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
    glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, r.w, r.h, 0, GL_RGBA, GL_UNSIGNED_BYTE, r.px.data());
}

// Draws a raster texture with blending off: its pixels are opaque, and a software renderer
// saves reading back every covered pixel.
void opaque_image(ImDrawList *dl, unsigned tex, float x0, float y0, float x1, float y1)
{
    dl->AddCallback([](const ImDrawList *, const ImDrawCmd *) { glDisable(GL_BLEND); }, nullptr);
    dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(tex)), ImVec2(x0, y0), ImVec2(x1, y1));
    dl->AddCallback(ImDrawCallback_ResetRenderState, nullptr);
}

void region_tooltip(const Arena &a, const Region &reg)
{
    ImGui::BeginTooltip();
    ImGui::Text("%s", reg.label.c_str());
    ImGui::Text("kind %s, id %s", reg.kind.c_str(), reg.id ? std::to_string(*reg.id).c_str() : "-");
    ImGui::Text("%#llx..%#llx  (+%llu, %s)", (unsigned long long)(a.base_addr + reg.offset),
                (unsigned long long)(a.base_addr + reg.offset + reg.size_bytes), (unsigned long long)reg.offset,
                format_bytes(reg.size_bytes).c_str());
    if (reg.last_use && *reg.last_use < 0) {
        ImGui::Text("lifetime: none (no operator uses it; TFLM plans it with -1..-1)");
    } else if (reg.first_use && reg.last_use) {
        ImGui::Text("lifetime: scopes %d..%d (operators %d..%d)", *reg.first_use, *reg.last_use, *reg.first_use - 1,
                    *reg.last_use - 1);
    } else {
        ImGui::Text("lifetime: the whole run (persistent)");
    }
    if (!reg.flags.empty()) {
        std::string f;
        for (const auto &x : reg.flags)
            f += (f.empty() ? "" : ", ") +
                 (x == "offline" ? x + " (placed by the model's offline plan: the stripe)" : x);
        ImGui::Text("flags: %s", f.c_str());
    }
    if (reg.name) ImGui::Text("name: %s", reg.name->c_str());
    if (!reg.shape.empty()) {
        std::string sh;
        for (auto d : reg.shape) sh += (sh.empty() ? "" : "x") + std::to_string(d);
        ImGui::Text("shape %s %s", sh.c_str(), reg.dtype ? reg.dtype->c_str() : "");
    }
    ImGui::EndTooltip();
}

void frame_rect(ImDrawList *dl, const Rect &r)
{
    dl->AddRect(ImVec2(r.x, r.y), ImVec2(r.x + r.w, r.y + r.h), style().frame.imgui());
}

std::vector<std::string> draw_lines(const ScrollPanel &panel, const std::vector<PanelLine> &lines, float value_column,
                                    bool details_too)
{
    std::vector<std::string> said;
    for (const PanelLine &l : lines) {
        if (l.gap_before) panel.advance(float(l.gap_before));
        if (!l.detail || details_too) said.push_back(l.text);
        const float y = panel.at().y;
        const float h = panel.text(l.text, l.colour.imgui(), float(l.indent), l.hang ? value_column : 0);
        if (!l.tip.empty() && panel.hovered(y, h)) ImGui::SetTooltip("%s", l.tip.c_str());
    }
    return said;
}

}  // namespace arenascope
