// arenascope viewer: the arena maps (top left): one strip per arena (up to 4; compare mode: the
// snapshot before above each), each an address axis with its own zoom; the area bar and the
// regions in lanes, exact to the pixel (mapview.h, pixelmap.h).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "mapview.h"
#include "panel.h"
#include "svg.h"
#include "ui.h"

namespace arenascope {
namespace {

// One arena's map.
struct MapStrip {
    int arena = -1;       // its position in the snapshot's arenas
    bool before = false;  // compare mode: an arena of the snapshot before
    Rect rect;
    AddressAxis axis;
    bool axis_init = false;
    MapIndex index;  // the regions by lane and address, once per snapshot (map_index)
    int lane_count = 1;
    std::vector<bool> damaged;  // regions in the damage colour (damaged_regions)
    std::vector<bool> changed;  // regions the diff marks (compare mode)
    MapPicture map;             // the display list at the last rebuild (mapview.h)
    Raster map_raster;
    unsigned map_tex = 0;  // its GL texture
    std::string key, map_title;
    float bar_y0 = 0, bar_y1 = 0, lanes_top = 0, lane_h = 0;  // geometry of the last frame
};
constexpr int kMaxStrips = 4;  // arenas drawn at once; Tab brings the others

// The regions of arena a (of snapshot `from`) the diff marks: it names them by their "index".
std::vector<bool> diff_marks(const DiffDoc *diff, const Arena &a, bool before)
{
    std::vector<bool> out(a.regions.size(), false);
    if (!diff) return out;
    std::vector<int> marked;
    for (const DiffArena &d : diff->arenas) {
        if (d.index == a.index) marked = before ? d.before : d.after;
    }
    std::sort(marked.begin(), marked.end());
    for (std::size_t r = 0; r < a.regions.size(); r++) {
        out[r] = std::binary_search(marked.begin(), marked.end(), a.regions[r].index);
    }
    return out;
}

// The mouse over an area of the bar (no region): the offset and what area it is.
std::string area_tip(const Arena &a, const MapRun &run, uint64_t off)
{
    const bool touched = a.damage && off >= a.damage->offset && off < a.damage->offset + a.damage->size_bytes;
    const std::string area =
        run.area == 0   ? "head (planned tensors and scratch)"
        : run.area == 1 ? "temp"
        : run.area == 2
            ? (touched ? fmt::format("free band, canary TOUCHED at +{}..+{} ({} B)", a.damage->offset,
                                     a.damage->offset + a.damage->size_bytes, a.damage->size_bytes)
                       : std::string(a.free_band.present ? "free band, canary intact" : "free, no canary to measure"))
            : "persistent tail";
    return fmt::format("+{} B ({:#x}): {}", off, a.base_addr + off, area);
}

// A cluster mark under the mouse: what it holds.
void cluster_tip(const Arena &a, const MapRun &run)
{
    std::string names;
    for (int k : run.areas) names += fmt::format("\n{} (area of the bar)", area_name(k));
    for (std::size_t k = 0; k < run.members.size() && k < 12; k++) {
        const Region &m = a.regions[std::size_t(run.members[k])];
        names += fmt::format("\n{}  +{}  {} B", m.label, m.offset, m.size_bytes);
    }
    if (run.members.size() > 12) names += fmt::format("\n... and {} more", run.members.size() - 12);
    ImGui::SetTooltip("%zu regions or areas too small to tell apart at this zoom (zoom in):%s",
                      run.members.size() + run.areas.size(), names.c_str());
}

// The map of arena ai at y, offsets [lo, hi) of it (every lane); returns the panel's height.
float report_map(Svg &svg, const Snapshot &s, int ai, float y, uint64_t lo, uint64_t hi)
{
    const Arena &a = s.arenas[std::size_t(ai)];
    std::vector<int> lanes;
    const int lane_count = assign_lanes(a.regions, lanes);
    MapGeometry g;
    g.width = int(kReportWidth - 2 * kReportMargin - 16);
    g.view_lo = double(a.base_addr + lo), g.view_hi = double(a.base_addr + std::max(hi, lo + 1));
    g.bar_h = 26, g.lanes_top = 32;
    g.lane_h = std::clamp(int(720 / std::max(1, lane_count)), 2, 18);
    g.lanes_shown = std::min(lane_count, 4000 / g.lane_h);
    const std::vector<bool> damaged = damaged_regions(s, ai);
    const MapPicture p = map_picture(
        a, lanes, g, -1, [&](int i) { return std::size_t(i) < damaged.size() && damaged[std::size_t(i)]; },
        report_measure);
    const float x0 = kReportMargin + 8, top = y + 22;
    const float lanes_bottom = top + float(g.lanes_top + g.lanes_shown * g.lane_h);
    const float h = lanes_bottom - y + 22;
    svg.frame(kReportMargin, y, kReportWidth - 2 * kReportMargin, h);
    const std::string notes = p.notes(false);
    svg.text(
        kReportMargin + 6, y + 3,
        fmt::format("Arena {}{}  {:#x}..{:#x}  ({}){}{}", a.index,
                    s.arenas.size() > 1 ? fmt::format(" ({} of {})", ai + 1, s.arenas.size()) : "", a.base_addr,
                    a.base_addr + a.size_bytes, format_bytes_exact(a.size_bytes),
                    lo == 0 && hi == a.size_bytes ? std::string() : fmt::format(": the head zoomed, +{}..+{}", lo, hi),
                    notes),
        notes.empty() ? style().text : colour(Paint::Temp));
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
        svg.line(x + 0.5f, lanes_bottom + 2, x + 0.5f, lanes_bottom + 6, style().text_dim);
        const std::string label = "+" + format_bytes(off);
        if (x + 2 + report_measure(label) <= kReportWidth - kReportMargin - 2)
            svg.text(x + 2, lanes_bottom + 4, label, style().text_dim);
    }
    return h;
}

nlohmann::json strip_json(const MapStrip &st)
{
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
        {"rect", rect_json(st.rect)},
        {"axis",
         {{"px0", st.axis.px0}, {"pw", st.axis.pw}, {"view_lo", st.axis.view_lo}, {"view_hi", st.axis.view_hi}}},
        {"area_bar", {{"y0", st.bar_y0}, {"y1", st.bar_y1}}},
        {"lanes",
         {{"top", st.lanes_top}, {"lane_h", st.lane_h}, {"count", st.lane_count}, {"shown", st.map.g.lanes_shown}}},
        {"map_title", st.map_title},
        {"map_picture", {{"labels", labels}, {"clusters", marks}, {"hidden", st.map.hidden}}}};
}

class MapsPanel : public Panel {
public:
    const char *name() const override { return "map"; }
    bool shown(const View &) const override { return true; }
    Space wants(const View &) const override
    {
        Space s{Column::Left, 0, Space::Share};
        s.share = 0.42f;
        return s;
    }

    void draw(View &v, const Rect &m) override
    {
        if (!v.snapshot) return;
        if (v.snapshot->arenas.empty()) {
            text(ImGui::GetWindowDrawList(), m.x + 8, m.y + 8,
                 "No arena published yet: the stack, the guard band and the checks are on the right.");
            return;
        }
        // The arenas one above the other, each with its own axis (docs: viewer/README.md).
        const float h = std::floor(m.h / float(std::max<std::size_t>(1, strips_.size())));
        for (std::size_t k = 0; k < strips_.size(); k++) {
            strips_[k].rect = Rect{m.x, m.y + float(k) * h, m.w, k + 1 == strips_.size() ? m.h - float(k) * h : h - 4};
            const Snapshot &from = strips_[k].before ? *v.before : *v.snapshot;
            draw_strip(v, strips_[k], from.arenas[std::size_t(strips_[k].arena)]);
        }
    }

    // Each map strip (the arenas one above the other); the chosen arena's also at the top level
    // (the one the plan, the RAM column and the summary show). Pictures in window pixels (the
    // picture's origin is the axis' px0 and the bar's top).
    void describe(const View &v, const Rect &r, nlohmann::json &out) const override
    {
        out["map"] = rect_json(r);
        out["maps"] = nlohmann::json::array();
        for (const MapStrip &st : strips_) out["maps"].push_back(strip_json(st));
        out["arena_shown"] = v.arena_index;
        if (const MapStrip *st = chosen(v)) {
            const nlohmann::json chosen_json = strip_json(*st);
            for (const auto &[k, val] : chosen_json.items()) {
                if (k != "arena" && k != "rect") out[k] = val;
            }
        }
    }

    void changed(const View &v, bool fresh) override
    {
        if (fresh) strips_.clear();
        build(v);
    }
    void invalidate() override
    {
        for (MapStrip &st : strips_) st.key.clear();
    }
    // What a mouse does to every map at frame `frame`, in a cycle of 60 frames: the wheel zooms
    // in around a point (20 frames), a drag pans right then left (20), the wheel zooms out (20).
    void motion(int frame) override
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

    ReportSpace report_space() const override { return {ReportSpace::Stack}; }
    // The whole arena, then its head zoomed where it is under a quarter of the arena: at the whole
    // arena's scale it is a few pixels wide.
    float report_picture(Svg &svg, const Snapshot &s, int ai, const Rect &r) const override
    {
        if (ai < 0) return 0;
        const Arena &a = s.arenas[std::size_t(ai)];
        float y = r.y;
        y += report_map(svg, s, ai, y, 0, a.size_bytes) + 8;
        if (a.temp_bytes > 0 && a.temp_bytes * 4 < a.size_bytes) {
            const uint64_t hi = std::min(a.size_bytes, a.temp_bytes + std::max<uint64_t>(64, a.temp_bytes / 10));
            y += report_map(svg, s, ai, y, 0, hi) + 8;
        }
        return y - r.y;
    }

private:
    const MapStrip *chosen(const View &v) const
    {
        for (const MapStrip &st : strips_)
            if (st.arena == v.arena_index && !st.before) return &st;
        return strips_.empty() ? nullptr : &strips_[0];
    }

    // The strips for the snapshot (and the one before), keeping each one's zoom where it stays:
    // up to kMaxStrips, the chosen arena and the first others.
    void build(const View &v)
    {
        const int n = v.snapshot ? int(v.snapshot->arenas.size()) : 0;
        if (n == 0) {
            strips_.clear();
            return;
        }
        std::vector<std::pair<int, bool>> shown;  // (arena, before)
        const int per = v.before ? 2 : 1, room = kMaxStrips / per;
        for (int i = 0; i < n && int(shown.size()) < kMaxStrips; i++) {
            const int arena = int(shown.size()) / per == room - 1 && v.arena_index >= i ? v.arena_index : i;
            if (v.before && arena < int(v.before->arenas.size())) shown.push_back({arena, true});
            shown.push_back({arena, false});
            if (arena != i) break;
        }
        strips_.resize(shown.size());
        for (std::size_t k = 0; k < shown.size(); k++) {
            MapStrip &st = strips_[k];
            if (st.arena != shown[k].first || st.before != shown[k].second) {
                st = MapStrip{}, st.arena = shown[k].first, st.before = shown[k].second;
            }
            const Snapshot &from = st.before ? *v.before : *v.snapshot;
            const Arena &a = from.arenas[std::size_t(st.arena)];
            std::vector<int> lanes;
            st.lane_count = assign_lanes(a.regions, lanes);
            st.index = map_index(a, lanes);
            st.damaged = damaged_regions(from, st.arena);
            st.changed = diff_marks(v.diff, a, st.before);
            st.key.clear();
        }
    }

    void place(const View &v, MapStrip &st, const Arena &a, const Rect &r);
    void rebuild(const View &v, MapStrip &st, const Arena &a, float lanes_bottom);
    std::string title(const View &v, const MapStrip &st, const Arena &a, const std::string &notes) const;
    void draw_strip(View &v, MapStrip &st, const Arena &a);
    void draw_axis(ImDrawList *dl, const MapStrip &st, const Arena &a, float lanes_bottom) const;
    void interact(View &v, MapStrip &st, const Arena &a) const;

    std::vector<MapStrip> strips_;  // the maps drawn, one per arena (at most kMaxStrips)
};

// The strip's axis (reset to the arena, then --zoom/--center, at its first frame) and geometry.
void MapsPanel::place(const View &v, MapStrip &st, const Arena &a, const Rect &r)
{
    const double lo = double(a.base_addr), hi = double(a.base_addr + a.size_bytes);
    if (!st.axis_init || st.axis.full_lo != lo || st.axis.full_hi != hi) {
        st.axis.full_lo = lo;
        st.axis.full_hi = hi;
        st.axis.reset();
        if (v.zoom > 1 || v.center) {  // --zoom, --center: clamped to the arena
            const double w = (hi - lo) / v.zoom;
            const double c = lo + v.center.value_or((hi - lo) / 2);
            st.axis.view_lo = std::clamp(c - w / 2, lo, hi - w);
            st.axis.view_hi = st.axis.view_lo + w;
        }
        st.axis_init = true;
    }
    // Whole pixels, so that pixel k of the picture shows exactly the k-th 1/pw of the view.
    st.axis.px0 = std::floor(r.x + 8);
    st.axis.pw = std::max(1.f, std::floor(r.w - 16));
    st.bar_y0 = std::floor(r.y + 22);
    st.bar_y1 = st.bar_y0 + 26;
    // The lanes below the bar.
    st.lanes_top = st.bar_y1 + 6;
    const float lanes_bottom = std::floor(r.y + r.h - 22);
    st.lane_h = std::floor(std::clamp((lanes_bottom - st.lanes_top) / float(std::max(1, st.lane_count)), 2.f, 18.f));
}

// The picture (mapview.h), rasterised on the CPU into one texture (rebuilt only when the
// snapshot, the zoom, the size or the selection changes) and drawn as one quad.
void MapsPanel::rebuild(const View &v, MapStrip &st, const Arena &a, float lanes_bottom)
{
    const bool chosen = st.arena == v.arena_index && !st.before;
    const int pinned = chosen ? v.selected : -1;
    const int cw = int(st.axis.pw), ch = std::max(1, int(lanes_bottom - st.bar_y0));
    const std::string key = fmt::format("{}/{}/{}/{}/{}/{}/{}/{}", v.serial, st.axis.view_lo, st.axis.view_hi, cw, ch,
                                        st.lane_h, pinned, st.arena);
    if (key == st.key) return;
    st.key = key;
    MapGeometry g;
    g.width = cw, g.view_lo = st.axis.view_lo, g.view_hi = st.axis.view_hi;
    g.bar_h = int(st.bar_y1 - st.bar_y0), g.lanes_top = int(st.lanes_top - st.bar_y0), g.lane_h = int(st.lane_h);
    g.lanes_shown = std::max(0, int((lanes_bottom - st.lanes_top + 1) / st.lane_h));
    st.map = map_picture(
        a, st.index, g, pinned, [&](int i) { return std::size_t(i) < st.damaged.size() && st.damaged[std::size_t(i)]; },
        measure, [&](int i) { return std::size_t(i) < st.changed.size() && st.changed[std::size_t(i)]; });
    st.map_raster.reset(cw, ch, colour(Paint::Background));
    for (const MapFill &f : st.map.fills)
        st.map_raster.fill(float(f.x0), float(f.y0), float(f.x1), float(f.y1), f.colour);
    upload(st.map_tex, st.map_raster);
}

// The title: what is shown, what the map could not show, then (in a window) how to move.
std::string MapsPanel::title(const View &v, const MapStrip &st, const Arena &a, const std::string &notes) const
{
    const int n_arenas = int(v.snapshot->arenas.size());
    const bool chosen = st.arena == v.arena_index && !st.before;
    const double lo = double(a.base_addr), hi = double(a.base_addr + a.size_bytes);
    const std::string side = !v.before ? ""
                             : st.before
                                 ? "BEFORE " + v.before_source.substr(v.before_source.find_last_of('/') + 1) + ": "
                                 : "AFTER " + v.source.substr(v.source.find_last_of('/') + 1) + ": ";
    return side + fmt::format("Arena {}{}  {:#x}..{:#x}  ({})  zoom x{:.1f}{}{}", a.index,
                              n_arenas > 1 ? fmt::format(" ({} of {}{})", st.arena + 1, n_arenas,
                                                         chosen && strips_.size() > 1 ? ", in the plan below" : "")
                                           : "",
                              a.base_addr, a.base_addr + a.size_bytes, format_bytes_exact(a.size_bytes),
                              (hi - lo) / (st.axis.view_hi - st.axis.view_lo), notes,
                              v.offscreen ? ""
                                          : fmt::format("  (wheel zoom, drag pan, double-click reset{})",
                                                        n_arenas > 1 ? ", Tab or click: plan this arena" : ""));
}

void MapsPanel::draw_strip(View &v, MapStrip &st, const Arena &a)
{
    const Rect &r = st.rect;
    ImDrawList *dl = ImGui::GetWindowDrawList();
    place(v, st, a, r);
    frame_rect(dl, r);
    const float lanes_bottom = std::floor(r.y + r.h - 22);
    rebuild(v, st, a, lanes_bottom);
    const std::string notes = st.map.notes(true);
    st.map_title = title(v, st, a, notes);
    text_fit(dl, r.x + 6, r.y + 3, st.map_title, r.w - 12, !notes.empty() ? col(Paint::Temp) : style().text.imgui());
    const int cx = int(st.axis.px0), cy = int(st.bar_y0);
    const int cw = int(st.axis.pw), ch = std::max(1, int(lanes_bottom - st.bar_y0));
    opaque_image(dl, st.map_tex, float(cx), float(cy), float(cx + cw), float(cy + ch));
    for (const MapLabel &l : st.map.labels) text(dl, float(cx + l.x), float(cy + l.y), l.text, l.colour.imgui());
    draw_axis(dl, st, a, lanes_bottom);
    interact(v, st, a);
}

// Boundaries (head end, temp end, tail start): marks above the bar, never over a region; then
// ticks at power-of-two offsets from the base.
void MapsPanel::draw_axis(ImDrawList *dl, const MapStrip &st, const Arena &a, float lanes_bottom) const
{
    const Rect &r = st.rect;
    const double lo = double(a.base_addr);
    for (uint64_t off : {a.head_bytes, a.temp_bytes, a.tail_offset}) {
        const float x = std::floor(st.axis.to_px(lo + double(off)));
        if (x >= st.axis.px0 && x < st.axis.px0 + st.axis.pw) {
            dl->AddLine(ImVec2(x, st.bar_y0 - 5), ImVec2(x, st.bar_y0 - 1), col(Paint::Boundary), 1.0f);
        }
    }
    const ImU32 dim = style().text_dim.imgui();
    const uint64_t step = tick_step(st.axis.view_lo - lo, st.axis.view_hi - lo, int(st.axis.pw / 90));
    for (uint64_t off = uint64_t(std::max(0.0, st.axis.view_lo - lo)) / step * step;
         lo + double(off) <= st.axis.view_hi; off += step) {
        const float x = st.axis.to_px(lo + double(off));
        if (x < st.axis.px0 - 1) continue;
        dl->AddLine(ImVec2(x, lanes_bottom + 2), ImVec2(x, lanes_bottom + 6), dim);
        const std::string label = "+" + format_bytes(off);
        if (x + 2 + ImGui::CalcTextSize(label.c_str()).x <= r.x + r.w - 2)
            text(dl, x + 2, lanes_bottom + 4, label, dim);
    }
}

// Wheel zoom, drag pan, double-click reset, hover tooltip, click to pin (or to choose the arena).
void MapsPanel::interact(View &v, MapStrip &st, const Arena &a) const
{
    const ImGuiIO &io = ImGui::GetIO();
    if (!st.rect.contains(io.MousePos.x, io.MousePos.y)) return;
    const bool chosen = st.arena == v.arena_index && !st.before;
    if (io.MouseWheel != 0) st.axis.zoom_at(io.MousePos.x, io.MouseWheel > 0 ? 1.25 : 0.8);
    if (ImGui::IsMouseDragging(ImGuiMouseButton_Left)) st.axis.pan_px(io.MouseDelta.x);
    if (ImGui::IsMouseDoubleClicked(ImGuiMouseButton_Left)) st.axis.reset();
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Left) && !chosen && !st.before) {  // this arena in the plan
        v.arena_index = st.arena;
        v.selected = -1;
    }
    const int cx = int(st.axis.px0), cy = int(st.bar_y0);
    const MapRun *run = st.map.at(int(std::floor(io.MousePos.x)) - cx, int(std::floor(io.MousePos.y)) - cy);
    const uint64_t off = uint64_t(std::max(0.0, st.axis.to_addr(io.MousePos.x) - double(a.base_addr)));
    if (run && run->region >= 0) {
        region_tooltip(a, a.regions[std::size_t(run->region)]);
        if (ImGui::IsMouseClicked(ImGuiMouseButton_Left) && !st.before) {
            v.arena_index = st.arena;
            v.selected = run->region;
        }
    } else if (run && run->area < 0) {
        cluster_tip(a, *run);
    } else if (run) {
        ImGui::SetTooltip("%s", area_tip(a, *run, off).c_str());
    }
}

const PanelRegistration kRegistered{[]() -> std::unique_ptr<Panel> { return std::make_unique<MapsPanel>(); }};

}  // namespace
}  // namespace arenascope
