// arenascope viewer: views; see app.h.
#include "app.h"

#include "panels.h"
#include "pictures.h"
#include "textfit.h"

#include <fmt/format.h>
#include <imgui.h>

#include <GL/gl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>

namespace arenascope {
namespace {

ImU32 col(Paint p)
{
    return colour(p).imgui();
}

void text(ImDrawList *dl, float x, float y, const std::string &s, ImU32 c = style().text.imgui())
{
    dl->AddText(ImVec2(x, y), c, s.c_str());
}

// Text cut to max_w pixels (whole characters, "..." at the end): cheaper than a clip rectangle,
// which costs a draw call of its own on a software renderer. Returns the width drawn.
float measure(const std::string &t)
{
    return ImGui::CalcTextSize(t.c_str(), t.c_str() + t.size()).x;
}

float text_fit(ImDrawList *dl, float x, float y, const std::string &text, float max_w, ImU32 c = style().text.imgui())
{
    const std::string s = cut_to_width(text, max_w, measure);
    dl->AddText(ImVec2(x, y), c, s.c_str());
    return measure(s);
}

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

// "-500 B", "22.2 KiB": an axis label for a signed byte count.
std::string signed_bytes(double v)
{
    return (v < 0 ? "-" : "") + format_bytes(uint64_t(std::llround(std::fabs(v))));
}

double now_unix_s()
{
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
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

}  // namespace

void App::set_snapshot(Snapshot s, std::string source)
{
    const bool same_arena = snapshot_ && !snapshot_->arenas.empty() && !s.arenas.empty() &&
                            snapshot_->arenas[0].base_addr == s.arenas[0].base_addr &&
                            snapshot_->arenas[0].size_bytes == s.arenas[0].size_bytes;
    snapshot_ = std::move(s);
    source_ = std::move(source);
    serial_++;
    error_.clear();
    if (!same_arena) selected_ = -1, strips_.clear();
    build_strips();
}

void App::build_strips()
{
    if (!snapshot_) return;
    // One map strip per arena, up to kMaxStrips (more: the chosen one and the first others).
    const int n = int(snapshot_->arenas.size());
    if (n == 0) {
        strips_.clear();
        return;
    }
    arena_index_ = std::clamp(arena_index_, 0, n - 1);
    std::vector<std::pair<int, bool>> shown;  // (arena, before)
    const int per = before_ ? 2 : 1, room = kMaxStrips / per;
    for (int i = 0; i < n && int(shown.size()) < kMaxStrips; i++) {
        const int arena = int(shown.size()) / per == room - 1 && arena_index_ >= i ? arena_index_ : i;
        if (before_ && arena < int(before_->arenas.size())) shown.push_back({arena, true});
        shown.push_back({arena, false});
        if (arena != i) break;
    }
    strips_.resize(shown.size());
    for (std::size_t k = 0; k < shown.size(); k++) {
        MapStrip &st = strips_[k];
        if (st.arena != shown[k].first || st.before != shown[k].second) {
            st = MapStrip{}, st.arena = shown[k].first, st.before = shown[k].second;
        }
        const Snapshot &from = st.before ? *before_ : *snapshot_;
        const Arena &a = from.arenas[std::size_t(st.arena)];
        std::vector<int> lanes;
        st.lane_count = assign_lanes(a.regions, lanes);
        st.index = map_index(a, lanes);
        st.damaged = damaged_regions(from, st.arena);
        st.changed.assign(a.regions.size(), false);
        if (diff_) {  // the diff names regions by their "index"
            std::vector<int> marked;
            for (const DiffArena &d : diff_->arenas) {
                if (d.index == a.index) marked = st.before ? d.before : d.after;
            }
            std::sort(marked.begin(), marked.end());
            for (std::size_t r = 0; r < a.regions.size(); r++) {
                st.changed[r] = std::binary_search(marked.begin(), marked.end(), a.regions[r].index);
            }
        }
        st.key.clear();
    }
    if (selected_ >= int(snapshot_->arenas[std::size_t(arena_index_)].regions.size())) selected_ = -1;
}

void App::bench_motion(int frame)
{
    const int phase = frame % 60;
    for (MapStrip &st : strips_) {
        const float at = st.axis.px0 + st.axis.pw * 0.37f;  // the mouse, a little left of the middle
        if (phase < 20) {
            st.axis.zoom_at(at, 1.25);  // a wheel notch in (draw_strip's factor)
        } else if (phase < 40) {
            st.axis.pan_px(phase < 30 ? 9.f : -9.f);  // a drag, 9 px a frame
        } else {
            st.axis.zoom_at(at, 0.8);  // a notch out
        }
    }
}

void App::frame(float width, float height)
{
    if (link_) {
        if (auto s = link_->take()) set_snapshot(std::move(*s), "live");
        if (!snapshot_ && !link_->last_error().empty()) error_ = link_->last_error();
    }
    ImGui::SetNextWindowPos(ImVec2(0, 0));
    ImGui::SetNextWindowSize(ImVec2(width, height));
    // No window background: the GL clear colour is the background, so no full-window blended
    // fill is drawn (a software renderer pays for every pixel of it).
    ImGui::PushStyleColor(ImGuiCol_WindowBg, colour(Paint::Background).imgui());
    ImGui::Begin("arenascope", nullptr,
                 ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoScrollWithMouse |
                     ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoSavedSettings |
                     ImGuiWindowFlags_NoBackground);
    layout_ =
        screen_layout(width, height, snapshot_ && snapshot_->live, snapshot_ && (snapshot_->fault || has_postmortem()));
    draw_status(layout_);
    if (snapshot_) {
        const Arena *a = nullptr;
        if (!snapshot_->arenas.empty()) {
            arena_index_ = std::clamp(arena_index_, 0, int(snapshot_->arenas.size()) - 1);
            if (int(snapshot_->arenas.size()) > 1 && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Tab))) {
                select_arena((arena_index_ + 1) % int(snapshot_->arenas.size()));
            }
            a = &snapshot_->arenas[arena_index_];
            // The arenas one above the other, each with its own axis (docs: viewer/README.md).
            const Rect &m = layout_.map;
            const float h = std::floor(m.h / float(std::max<std::size_t>(1, strips_.size())));
            for (std::size_t k = 0; k < strips_.size(); k++) {
                strips_[k].rect =
                    Rect{m.x, m.y + float(k) * h, m.w, k + 1 == strips_.size() ? m.h - float(k) * h : h - 4};
                const Snapshot &from = strips_[k].before ? *before_ : *snapshot_;
                draw_strip(strips_[k], from.arenas[std::size_t(strips_[k].arena)], strips_[k].rect);
            }
            draw_plan(*a, layout_.plan);
        } else {
            text(ImGui::GetWindowDrawList(), layout_.map.x + 8, layout_.map.y + 8,
                 "No arena published yet: the stack, the guard band and the checks are on the right.");
        }
        if (snapshot_->live) draw_history(*snapshot_->live, layout_.history);
        draw_ram(a, layout_.ram);
        draw_summary(a, layout_.summary);
        fault_lines_.clear();
        if (snapshot_->fault || has_postmortem()) {
            draw_fault(layout_.fault);
        }
        draw_legend(layout_.legend);
    } else {
        ImDrawList *dl = ImGui::GetWindowDrawList();
        const std::string msg = !error_.empty() ? "Cannot show this snapshot:\n" + error_
                                : snapshot_     ? "The snapshot has no arena."
                                                : "Waiting for a snapshot...";
        dl->AddText(nullptr, 0, ImVec2(layout_.map.x + 8, layout_.map.y + 8),
                    error_.empty() ? style().text.imgui() : col(Paint::RuleFail), msg.c_str(), nullptr, width - 40);
    }
    ImGui::End();
    ImGui::PopStyleColor();
}

void App::draw_status(const ScreenLayout &l)
{
    ImDrawList *dl = ImGui::GetWindowDrawList();
    // A live refresh first (its rate, its age, or that the reader lost the target), then the
    // link's state unless the live part already says it is connected, then the snapshot.
    const Live *lv = snapshot_ && snapshot_->live ? &*snapshot_->live : nullptr;
    status_lost_ = false;
    const std::string live = lv ? live_status(*lv, now_unix_s(), status_lost_) : "";
    std::string s = !link_ ? "file: " + source_ : lv && link_->state() == Link::State::Connected ? "" : link_->status();
    if (snapshot_ && !snapshot_->tflm_error.empty()) {  // said before the rest, which the width may cut
        s += "  |  post-mortem not shown: " + snapshot_->tflm_error;
    }
    if (snapshot_ && !snapshot_->model.empty()) {
        const std::string &m = snapshot_->model;  // the file name: a path can be any length
        const size_t slash = m.find_last_of('/');
        s += fmt::format("  |  model {}: predicted by arenascope-plan for {}, no target  |  verdict {}",
                         (slash == std::string::npos ? m : m.substr(slash + 1)).substr(0, 80), snapshot_->target,
                         snapshot_->verdict);
    } else if (snapshot_ && !snapshot_->dump.empty()) {
        s += fmt::format("  |  RAM DUMP, not a live target: {}  |  verdict {}", snapshot_->dump, snapshot_->verdict);
    } else if (snapshot_ && snapshot_->located_by.rfind("agentless", 0) == 0) {
        s += fmt::format("  |  agentless: TFLM's own objects, no agent (inference count and canary unavailable)  |  "
                         "verdict {}",
                         snapshot_->verdict);
    } else if (snapshot_) {
        s += fmt::format("  |  {} inference(s), {}  |  verdict {}", snapshot_->invokes,
                         snapshot_->measured ? "measured by " + snapshot_->measured_by : "not measured",
                         snapshot_->verdict);
    }
    if (!link_ && !snapshot_ && !error_.empty()) s += " (cannot show it: the reason is below)";
    if (link_ && snapshot_ && !link_->last_error().empty()) s += "  |  last message refused: " + link_->last_error();
    if (s.rfind("  |  ", 0) == 0) s.erase(0, 5);
    if (!live.empty() && !s.empty()) s = "  |  " + s;
    status_text_ = live + s;
    float x = l.status.x;
    if (!live.empty())
        x += text_fit(dl, x, l.status.y + 3, live, l.status.w,
                      status_lost_ ? col(Paint::RuleFail) : style().text.imgui());
    if (l.status.x + l.status.w - x > 40) text_fit(dl, x, l.status.y + 3, s, l.status.x + l.status.w - x);
}

void App::draw_history(const Live &lv, const Rect &r)
{
    ImDrawList *dl = ImGui::GetWindowDrawList();
    dl->AddRect(ImVec2(r.x, r.y), ImVec2(r.x + r.w, r.y + r.h), style().frame.imgui());
    history_ = history_geometry(lv, r);
    const HistoryGeometry &g = history_;
    const ImU32 grey = style().text_dim.imgui();
    text_fit(dl, r.x + 6, r.y + 3,
             fmt::format("Live history, each lane scaled to its own range (0 included): last {:.1f} s, {} refreshes",
                         g.t1 - g.t0, lv.history.size()),
             r.w - 12);
    // Legend: each series' colour and its latest value (the last point is this refresh).
    float x = r.x + 6;
    for (int i = 0; i < HistoryGeometry::kSeries; i++) {
        const auto v = lv.history.empty() ? std::nullopt : history_value(lv.history.back(), i);
        const std::string t = fmt::format("{} {}", history_series_name(i),
                                          v ? fmt::format("{} B", std::llround(*v)) : std::string("unknown"));
        if (x + 40 > r.x + r.w) break;
        rect(dl, x, r.y + 22, x + 12, r.y + 32, history_paint(i));
        x += 16 + text_fit(dl, x + 16, r.y + 20, t, r.x + r.w - 8 - (x + 16)) + 20;
    }
    if (x + 60 < r.x + r.w) {
        text_fit(dl, x, r.y + 20, fmt::format("{} read per refresh", format_bytes(lv.bytes_last_refresh)),
                 r.x + r.w - 8 - x, grey);
    }
    std::vector<ImVec2> pts;
    for (int i = 0; i < HistoryGeometry::kSeries; i++) {
        const Rect &ln = g.lane[i];
        // The lane's top value; its bottom is 0 unless the series went below (then that too,
        // and a line at 0).
        text_fit(dl, r.x + 4, ln.y - 2, signed_bytes(g.hi[i]), g.plot.x - r.x - 8, grey);
        if (g.lo[i] < 0) {
            if (ln.h >= 26) text_fit(dl, r.x + 4, ln.y + ln.h - 12, signed_bytes(g.lo[i]), g.plot.x - r.x - 8, grey);
            const float y0 = g.y_of(i, 0);
            dl->AddLine(ImVec2(ln.x, y0), ImVec2(ln.x + ln.w, y0), style().zero_line.imgui(), 1.0f);
        }
        if (i > 0) {
            const float ys = (g.lane[i - 1].y + g.lane[i - 1].h + ln.y) / 2;
            dl->AddLine(ImVec2(ln.x, ys), ImVec2(ln.x + ln.w, ys), style().lane_separator.imgui(), 1.0f);
        }
        if (!g.known[i]) {
            text(dl, ln.x + 6, ln.y + ln.h / 2 - 7, std::string(history_series_name(i)) + ": unknown", grey);
            continue;
        }
        // One polyline per run of known values: a null breaks the line.
        const ImU32 c = col(history_paint(i));
        auto flush = [&] {
            if (pts.size() == 1) rect(dl, pts[0].x - 1, pts[0].y - 1, pts[0].x + 1, pts[0].y + 1, history_paint(i));
            if (pts.size() > 1) dl->AddPolyline(pts.data(), int(pts.size()), c, 0, 2.0f);
            pts.clear();
        };
        for (const LivePoint &p : lv.history) {
            if (auto v = history_value(p, i)) {
                const ImVec2 q(g.x_of(p.t_unix_s), g.y_of(i, *v));
                const std::size_t n = pts.size();  // a plateau is one segment: the same pixels, fewer vertices
                if (n >= 2 && pts[n - 1].y == q.y && pts[n - 2].y == q.y) {
                    pts[n - 1] = q;
                } else {
                    pts.push_back(q);
                }
            } else {
                flush();
            }
        }
        flush();
    }
}

void App::draw_strip(MapStrip &st, const Arena &a, const Rect &r)
{
    ImDrawList *dl = ImGui::GetWindowDrawList();
    const double lo = double(a.base_addr), hi = double(a.base_addr + a.size_bytes);
    if (!st.axis_init || st.axis.full_lo != lo || st.axis.full_hi != hi) {
        st.axis.full_lo = lo;
        st.axis.full_hi = hi;
        st.axis.reset();
        if (view_zoom_ > 1 || view_center_) {  // --zoom, --center: clamped to the arena
            const double w = (hi - lo) / view_zoom_;
            const double c = lo + view_center_.value_or((hi - lo) / 2);
            st.axis.view_lo = std::clamp(c - w / 2, lo, hi - w);
            st.axis.view_hi = st.axis.view_lo + w;
        }
        st.axis_init = true;
    }
    // Whole pixels, so that pixel k of the picture shows exactly the k-th 1/pw of the view.
    st.axis.px0 = std::floor(r.x + 8);
    st.axis.pw = std::max(1.f, std::floor(r.w - 16));
    dl->AddRect(ImVec2(r.x, r.y), ImVec2(r.x + r.w, r.y + r.h), style().frame.imgui());
    const int n_arenas = int(snapshot_->arenas.size());
    const bool chosen = st.arena == arena_index_ && !st.before;  // the arena the plan, RAM column and summary show
    const int pinned = chosen ? selected_ : -1;
    st.bar_y0 = std::floor(r.y + 22);
    st.bar_y1 = st.bar_y0 + 26;
    // The lanes below the bar.
    st.lanes_top = st.bar_y1 + 6;
    const float lanes_bottom = std::floor(r.y + r.h - 22);
    st.lane_h = std::floor(std::clamp((lanes_bottom - st.lanes_top) / float(std::max(1, st.lane_count)), 2.f, 18.f));
    // The picture (mapview.h), rasterised on the CPU into one texture (rebuilt only when the
    // snapshot, the zoom, the size or the selection changes) and drawn as one quad.
    const int cx = int(st.axis.px0), cy = int(st.bar_y0);
    const int cw = int(st.axis.pw), ch = std::max(1, int(lanes_bottom - st.bar_y0));
    const std::string key = fmt::format("{}/{}/{}/{}/{}/{}/{}/{}", serial_, st.axis.view_lo, st.axis.view_hi, cw, ch,
                                        st.lane_h, pinned, st.arena);
    if (key != st.key) {
        st.key = key;
        MapGeometry g;
        g.width = cw, g.view_lo = st.axis.view_lo, g.view_hi = st.axis.view_hi;
        g.bar_h = int(st.bar_y1 - st.bar_y0), g.lanes_top = int(st.lanes_top - st.bar_y0), g.lane_h = int(st.lane_h);
        g.lanes_shown = std::max(0, int((lanes_bottom - st.lanes_top + 1) / st.lane_h));
        st.map = map_picture(
            a, st.index, g, pinned,
            [&](int i) { return std::size_t(i) < st.damaged.size() && st.damaged[std::size_t(i)]; }, measure,
            [&](int i) { return std::size_t(i) < st.changed.size() && st.changed[std::size_t(i)]; });
        st.map_raster.reset(cw, ch, colour(Paint::Background));
        for (const MapFill &f : st.map.fills)
            st.map_raster.fill(float(f.x0), float(f.y0), float(f.x1), float(f.y1), f.colour);
        upload(st.map_tex, st.map_raster);
    }
    // The title: what is shown, what the map could not show, then (in a window) how to move.
    const std::string notes = st.map.notes(true);
    const std::string side = !before_ ? ""
                             : st.before
                                 ? "BEFORE " + before_source_.substr(before_source_.find_last_of('/') + 1) + ": "
                                 : "AFTER " + source_.substr(source_.find_last_of('/') + 1) + ": ";
    st.map_title =
        side + fmt::format("Arena {}{}  {:#x}..{:#x}  ({})  zoom x{:.1f}{}{}", a.index,
                           n_arenas > 1 ? fmt::format(" ({} of {}{})", st.arena + 1, n_arenas,
                                                      chosen && strips_.size() > 1 ? ", in the plan below" : "")
                                        : "",
                           a.base_addr, a.base_addr + a.size_bytes, format_bytes_exact(a.size_bytes),
                           (hi - lo) / (st.axis.view_hi - st.axis.view_lo), notes,
                           offscreen_ ? ""
                                      : fmt::format("  (wheel zoom, drag pan, double-click reset{})",
                                                    n_arenas > 1 ? ", Tab or click: plan this arena" : ""));
    text_fit(dl, r.x + 6, r.y + 3, st.map_title, r.w - 12, !notes.empty() ? col(Paint::Temp) : style().text.imgui());
    opaque_image(dl, st.map_tex, float(cx), float(cy), float(cx + cw), float(cy + ch));
    for (const MapLabel &l : st.map.labels) text(dl, float(cx + l.x), float(cy + l.y), l.text, l.colour.imgui());
    // Boundaries (head end, temp end, tail start): marks above the bar, never over a region.
    for (uint64_t off : {a.head_bytes, a.temp_bytes, a.tail_offset}) {
        const float x = std::floor(st.axis.to_px(lo + double(off)));
        if (x >= st.axis.px0 && x < st.axis.px0 + st.axis.pw) {
            dl->AddLine(ImVec2(x, st.bar_y0 - 5), ImVec2(x, st.bar_y0 - 1), col(Paint::Boundary), 1.0f);
        }
    }
    // Ticks: power-of-two offsets from the base.
    const uint64_t step = tick_step(st.axis.view_lo - lo, st.axis.view_hi - lo, int(st.axis.pw / 90));
    for (uint64_t off = uint64_t(std::max(0.0, st.axis.view_lo - lo)) / step * step;
         lo + double(off) <= st.axis.view_hi; off += step) {
        const float x = st.axis.to_px(lo + double(off));
        if (x < st.axis.px0 - 1) continue;
        dl->AddLine(ImVec2(x, lanes_bottom + 2), ImVec2(x, lanes_bottom + 6), style().text_dim.imgui());
        const std::string label = "+" + format_bytes(off);
        if (x + 2 + ImGui::CalcTextSize(label.c_str()).x <= r.x + r.w - 2) {
            text(dl, x + 2, lanes_bottom + 4, label, style().text_dim.imgui());
        }
    }
    // Interaction: wheel zoom, drag pan, hover tooltip, click to pin.
    const ImGuiIO &io = ImGui::GetIO();
    if (r.contains(io.MousePos.x, io.MousePos.y)) {
        if (io.MouseWheel != 0) st.axis.zoom_at(io.MousePos.x, io.MouseWheel > 0 ? 1.25 : 0.8);
        if (ImGui::IsMouseDragging(ImGuiMouseButton_Left)) st.axis.pan_px(io.MouseDelta.x);
        if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) st.axis.reset();
        if (ImGui::IsMouseClicked(ImGuiMouseButton_Left) && !chosen &&
            !st.before) {  // this arena in the plan and the summary
            arena_index_ = st.arena;
            selected_ = -1;
        }
        const MapRun *run = st.map.at(int(std::floor(io.MousePos.x)) - cx, int(std::floor(io.MousePos.y)) - cy);
        const uint64_t off = uint64_t(std::max(0.0, st.axis.to_addr(io.MousePos.x) - lo));
        if (run && run->region >= 0) {
            draw_region_tooltip(a, a.regions[std::size_t(run->region)]);
            if (ImGui::IsMouseClicked(ImGuiMouseButton_Left) && !st.before) {
                arena_index_ = st.arena;
                selected_ = run->region;
            }
        } else if (run && run->area < 0) {  // a cluster mark
            std::string names;
            for (int k : run->areas) names += fmt::format("\n{} (area of the bar)", area_name(k));
            for (std::size_t k = 0; k < run->members.size() && k < 12; k++) {
                const Region &m = a.regions[std::size_t(run->members[k])];
                names += fmt::format("\n{}  +{}  {} B", m.label, m.offset, m.size_bytes);
            }
            if (run->members.size() > 12) names += fmt::format("\n... and {} more", run->members.size() - 12);
            ImGui::SetTooltip("%zu regions or areas too small to tell apart at this zoom (zoom in):%s",
                              run->members.size() + run->areas.size(), names.c_str());
        } else if (run) {
            const bool touched = a.damage && off >= a.damage->offset && off < a.damage->offset + a.damage->size_bytes;
            const std::string area =
                run->area == 0   ? "head (planned tensors and scratch)"
                : run->area == 1 ? "temp"
                : run->area == 2
                    ? (touched ? fmt::format("free band, canary TOUCHED at +{}..+{} ({} B)", a.damage->offset,
                                             a.damage->offset + a.damage->size_bytes, a.damage->size_bytes)
                               : std::string(a.free_band.present ? "free band, canary intact"
                                                                 : "free, no canary to measure"))
                    : "persistent tail";
            ImGui::SetTooltip("+%llu B (%#llx): %s", (unsigned long long)off, (unsigned long long)(a.base_addr + off),
                              area.c_str());
        }
    }
}

void App::draw_region_tooltip(const Arena &a, const Region &reg)
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

void App::draw_ram(const Arena *ap, const Rect &r)
{
    const Snapshot &s = *snapshot_;
    draw_picture(ImGui::GetWindowDrawList(), ram_picture(s, ap, r, measure, ram_));
    const Rect &col_area = ram_.area;
    const uint64_t b = ap ? ap->base_addr : 0;
    static const Arena kNone;  // not `ap ? *ap : Arena{}`: that copies the arena, every region, every frame
    const Arena &a = ap ? *ap : kNone;
    // Hover: what is at this address.
    const ImGuiIO &io = ImGui::GetIO();
    if (col_area.contains(io.MousePos.x, io.MousePos.y)) {
        const uint64_t addr = ram_.lo + uint64_t(double(col_area.y + col_area.h - io.MousePos.y) / col_area.h *
                                                 double(ram_.hi - ram_.lo));
        std::string what = "between regions";
        if (s.stack.high_addr > s.stack.low_addr && addr >= s.stack.low_addr && addr < s.stack.high_addr) {
            what = fmt::format("stack {:#x}-{:#x}; high-water mark {}; SP {}", s.stack.low_addr, s.stack.high_addr,
                               s.stack.hwm_addr ? fmt::format("{:#x}", *s.stack.hwm_addr) : "unknown",
                               s.stack.sp ? fmt::format("{:#x}", *s.stack.sp) : "unknown");
        } else if (s.guard.present && addr >= s.guard.low_addr && addr < s.guard.high_addr) {
            what = fmt::format("guard band {:#x}-{:#x} ({} B), {}", s.guard.low_addr, s.guard.high_addr,
                               s.guard.size_bytes, s.guard.touched ? "TOUCHED" : "intact");
        } else if (ap && addr >= b && addr < b + a.size_bytes) {
            const uint64_t off = addr - b;
            what = fmt::format("arena {:#x}-{:#x}, +{}: {}", b, b + a.size_bytes, off,
                               off < a.head_bytes    ? "head"
                               : off < a.temp_bytes  ? "temp"
                               : off < a.tail_offset ? "free band"
                                                     : "persistent tail");
        }
        ImGui::SetTooltip("%#llx  %s", (unsigned long long)addr, what.c_str());
    }
}

void App::draw_plan(const Arena &a, const Rect &r)
{
    ImDrawList *dl = ImGui::GetWindowDrawList();
    const Rect area{r.x + 60, r.y + 24, r.w - 70, r.h - 44};
    const int px = int(std::floor(area.x)), py = int(std::floor(area.y));
    const int pw = std::max(1, int(area.w)), ph = std::max(1, int(area.h) + 1);
    // The geometry (it reads every region for its extent) and the draw order once per snapshot,
    // arena and panel size; the raster again only when the pin changes too.
    const std::string key = fmt::format("{}/{}/{}/{}/{}/{}", serial_, arena_index_, area.x, area.y, area.w, area.h);
    if (key != plan_key_) {
        plan_key_ = key;
        plan_ = plan_geometry(a, area);
        plan_order_ = plan_order(a);
        plan_drawn_ = false;
    }
    if (!plan_drawn_ || plan_selected_ != selected_) {
        plan_drawn_ = true, plan_selected_ = selected_;
        plan_raster_.reset(pw, ph, colour(Paint::Background));
        plan_boxes(plan_, selected_, plan_order_, [&](const Shape &b) {
            plan_raster_.fill(b.x0 - float(px), b.y0 - float(py), b.x1 - float(px), b.y1 - float(py), b.colour);
        });
        upload(plan_tex_, plan_raster_);
    }
    opaque_image(dl, plan_tex_, float(px), float(py), float(px + pw), float(py + ph));
    draw_picture(dl, plan_overlay(a, plan_, r));
    const ImGuiIO &io = ImGui::GetIO();
    if (area.contains(io.MousePos.x, io.MousePos.y)) {
        const int hit = hit_plan(a.regions, plan_, io.MousePos.x, io.MousePos.y);
        if (hit >= 0) {
            draw_region_tooltip(a, a.regions[hit]);
            if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) selected_ = hit;
        }
    }
}

void App::draw_summary(const Arena *a, const Rect &r)
{
    const ScrollPanel panel("summary", r, style().frame.imgui(), summary_more_);
    summary_lines_.clear();
    // A line wraps where the panel is narrow (the panel scrolls): no figure is cut off, and a
    // figure's continuation stays in its value column (after the 11-character label).
    const float value_column = ImGui::CalcTextSize("stack peak ").x;
    // Compare mode: what changed first, then the after snapshot's summary.
    std::vector<PanelLine> lines = diff_ ? diff_lines(*diff_) : std::vector<PanelLine>{};
    const std::size_t first = lines.size();
    for (PanelLine &l : summary_lines(*snapshot_, a, selected_)) lines.push_back(std::move(l));
    if (first > 0 && lines.size() > first) lines[first].gap_before = 6;
    for (const PanelLine &l : lines) {
        if (l.gap_before) panel.advance(float(l.gap_before));
        if (!l.detail) summary_lines_.push_back(l.text);
        const float y = panel.at().y;
        const float h = panel.text(l.text, l.colour.imgui(), float(l.indent), l.hang ? value_column : 0);
        if (!l.tip.empty() && panel.hovered(y, h)) ImGui::SetTooltip("%s", l.tip.c_str());
    }
}

void App::draw_fault(const Rect &r)
{
    const ScrollPanel panel("fault", r, col(Paint::RuleFail), fault_more_);
    for (const PanelLine &l : fault_lines(*snapshot_, true)) {
        if (l.gap_before) panel.advance(float(l.gap_before));
        fault_lines_.push_back(l.text);
        panel.text(l.text, l.colour.imgui(), float(l.indent));
    }
}

// Every colour and what it means: areas as squares, lines (high-water mark, SP, live bytes,
// lower bound) as lines. In two columns of short names, split evenly, when one column does not
// fit (the fault panel shares the column); the full name shows under the mouse (a name cut
// with "..." too).
void App::draw_legend(const Rect &r)
{
    ImDrawList *dl = ImGui::GetWindowDrawList();
    dl->AddRect(ImVec2(r.x, r.y), ImVec2(r.x + r.w, r.y + r.h), style().frame.imgui());
    const Paint paints[] = {Paint::Tensor,    Paint::Scratch,      Paint::Temp,           Paint::Persistent,
                            Paint::Metadata,  Paint::FreeIntact,   Paint::FreeUnmeasured, Paint::FreeTouched,
                            Paint::Guard,     Paint::GuardTouched, Paint::StackUsed,      Paint::StackUnused,
                            Paint::HighWater, Paint::StackPointer, Paint::LiveCurve,      Paint::LowerBound};
    const int n = int(std::size(paints));
    const int fit = std::max(1, int((r.h - 8) / 15));
    const int columns = fit >= n ? 1 : 2;
    const int rows = (n + columns - 1) / columns;
    const float cw = r.w / float(columns);
    const ImVec2 mouse = ImGui::GetIO().MousePos;
    for (int i = 0; i < n; i++) {
        if (i % rows >= fit) continue;
        const Paint p = paints[i];
        const float x = r.x + float(i / rows) * cw, y = r.y + 4 + float(i % rows) * 15;
        const bool line =
            p == Paint::HighWater || p == Paint::StackPointer || p == Paint::LiveCurve || p == Paint::LowerBound;
        if (line) {
            dl->AddLine(ImVec2(x + 5, y + 7), ImVec2(x + 19, y + 7), col(p), 2.0f);
        } else {
            rect(dl, x + 6, y + 2, x + 18, y + 12, p);
        }
        const float w = text_fit(dl, x + 22, y, columns == 1 ? paint_name(p) : paint_short_name(p), cw - 26);
        if (mouse.x >= x && mouse.x < x + 22 + w && mouse.y >= y && mouse.y < y + 15) {
            ImGui::SetTooltip("%s", paint_name(p));
        }
    }
}

std::string App::layout_json() const
{
    nlohmann::json j;
    auto R = [](const Rect &r) { return nlohmann::json{{"x", r.x}, {"y", r.y}, {"w", r.w}, {"h", r.h}}; };
    j["map"] = R(layout_.map);
    j["ram"] = R(layout_.ram);
    j["plan"] = R(layout_.plan);
    j["summary"] = R(layout_.summary);
    j["legend"] = R(layout_.legend);
    j["summary_lines"] = summary_lines_;
    if (layout_.fault.h > 0) {
        j["fault"] = R(layout_.fault);
        j["fault_lines"] = fault_lines_;
        j["fault_more"] = fault_more_;
    }
    // Each map strip (the arenas one above the other); the chosen arena's also at the top level
    // (the one the plan, the RAM column and the summary show). Pictures in window pixels (the
    // picture's origin is the axis' px0 and the bar's top).
    auto strip_json = [&](const MapStrip &st) {
        nlohmann::json labels = nlohmann::json::array(), marks = nlohmann::json::array();
        for (const MapLabel &l : st.map.labels) {
            labels.push_back({{"x", st.axis.px0 + float(l.x)}, {"y", st.bar_y0 + float(l.y)}, {"text", l.text}});
        }
        for (const MapRun &r : st.map.runs) {
            if (r.region >= 0 || r.area >= 0) continue;
            marks.push_back({{"lane", r.lane},
                             {"x0", st.axis.px0 + float(r.x0)},
                             {"x1", st.axis.px0 + float(r.x1)},
                             {"regions", r.members},
                             {"areas", r.areas}});
        }
        return nlohmann::json{
            {"arena", st.arena},
            {"before", st.before},
            {"rect", R(st.rect)},
            {"axis",
             {{"px0", st.axis.px0}, {"pw", st.axis.pw}, {"view_lo", st.axis.view_lo}, {"view_hi", st.axis.view_hi}}},
            {"area_bar", {{"y0", st.bar_y0}, {"y1", st.bar_y1}}},
            {"lanes",
             {{"top", st.lanes_top}, {"lane_h", st.lane_h}, {"count", st.lane_count}, {"shown", st.map.g.lanes_shown}}},
            {"map_title", st.map_title},
            {"map_picture", {{"labels", labels}, {"clusters", marks}, {"hidden", st.map.hidden}}}};
    };
    j["maps"] = nlohmann::json::array();
    for (const MapStrip &st : strips_) j["maps"].push_back(strip_json(st));
    j["arena_shown"] = arena_index_;
    if (const MapStrip *st = chosen_strip()) {
        const nlohmann::json chosen = strip_json(*st);
        for (const auto &[k, v] : chosen.items()) {
            if (k != "arena" && k != "rect") j[k] = v;
        }
    }
    j["plan_area"] = {{"rect", R(plan_.area)}, {"scopes", plan_.scopes}, {"extent", plan_.extent}};
    j["ram_column"] = {{"rect", R(ram_.area)}, {"lo", ram_.lo}, {"hi", ram_.hi}};
    j["status"] = {{"rect", R(layout_.status)}, {"text", status_text_}, {"lost", status_lost_}};
    if (layout_.history.h > 0) {
        nlohmann::json lanes = nlohmann::json::array();
        for (int i = 0; i < HistoryGeometry::kSeries; i++) {
            lanes.push_back({{"series", history_series_name(i)},
                             {"rect", R(history_.lane[i])},
                             {"lo", history_.lo[i]},
                             {"hi", history_.hi[i]}});
        }
        j["history"] = {{"rect", R(layout_.history)},
                        {"plot", R(history_.plot)},
                        {"t0", history_.t0},
                        {"t1", history_.t1},
                        {"lanes", lanes}};
    }
    return j.dump(1);
}

}  // namespace arenascope
