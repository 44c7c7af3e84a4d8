// arenascope viewer: the arena map's display list; see mapview.h.
#include "mapview.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace arenascope {
namespace {

constexpr int kTextH = 13;  // a label's height, px (Dear ImGui's default font; the report's 12 px monospace)
constexpr int kAreaHead = 0, kAreaTemp = 1, kAreaFree = 2, kAreaTail = 3;
constexpr int kBarLane = -1;
constexpr int kTailIdBase = 4;  // area-bar items: 0..3 the areas, 4 + i tail region i

bool is_tail(const Region &r)
{
    return r.kind == "persistent" || r.kind == "metadata";
}

// The label that fits: the whole label (control characters as spaces); else a tensor's or a
// scratch buffer's number ("4" of "tensor 4 (persistent)"); else the label cut, with "...",
// when at least 4 of its characters fit; else none.
std::string fitting(std::string label, int room, const std::function<float(const std::string &)> &measure)
{
    for (char &c : label) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
    }
    if (measure(label) <= float(room)) return label;
    for (const char *kind : {"tensor ", "scratch "}) {
        const std::size_t n = std::char_traits<char>::length(kind);
        if (label.compare(0, n, kind) == 0) {
            const std::size_t end = label.find_first_not_of("0123456789", n);
            const std::string number = label.substr(n, (end == std::string::npos ? label.size() : end) - n);
            return !number.empty() && measure(number) <= float(room) ? number : std::string();
        }
    }
    // Cut in the middle: "MobilenetV1/...conv_pw_13/Relu6", not "MobilenetV1/Mobilen..." on every lane.
    const std::string cut = cut_middle(label, float(room), measure);
    return cut.size() >= 4 + 3 ? cut : std::string();  // at least 4 bytes of the label besides "..."
}

Rgba label_colour(Rgba fill)
{
    const int lum = fill.r * 299 + fill.g * 587 + fill.b * 114;  // ITU-R BT.601 luma x 1000
    return lum > 110000 ? style().label_on_light : style().label_on_dark;
}

}  // namespace

const char *area_name(int area)
{
    switch (area) {
    case kAreaHead: return "head";
    case kAreaTemp: return "temp";
    case kAreaFree: return "free band";
    default: return "tail";
    }
}

std::vector<bool> damaged_regions(const Snapshot &s, int arena)
{
    if (arena < 0 || arena >= int(s.arenas.size())) return {};
    const std::vector<Region> &rs = s.arenas[std::size_t(arena)].regions;
    std::vector<bool> out(rs.size(), false);
    if (s.fault && arena == 0) {
        for (int i : s.fault->damaged_regions) {
            if (i >= 0 && i < int(rs.size())) out[std::size_t(i)] = true;
        }
    }
    std::vector<std::pair<uint64_t, uint64_t>> smashed;  // (addr, size), sorted
    if (s.tflm) {
        for (const TflmVerdict &v : s.tflm->verdicts) {
            for (const TflmSmashed &o : v.smashed) smashed.push_back({o.addr, o.size});
        }
    }
    std::sort(smashed.begin(), smashed.end());
    for (std::size_t i = 0; i < rs.size(); i++) {
        if (std::binary_search(smashed.begin(), smashed.end(), std::make_pair(rs[i].address, rs[i].size_bytes))) {
            out[i] = true;
        }
    }
    return out;
}

std::string MapPicture::notes(bool can_zoom) const
{
    std::string out;
    if (hidden > 0) {
        out += fmt::format("  {} too small to tell apart here ({} mark{}){}", hidden, clusters,
                           clusters == 1 ? "" : "s", can_zoom ? ": zoom in" : "");
    }
    if (lanes > g.lanes_shown) out += fmt::format("  {} of {} lanes shown", g.lanes_shown, lanes);
    return out;
}

const MapRun *MapPicture::at(int x, int y) const
{
    int lane;
    if (y >= 0 && y < g.bar_h) {
        lane = kBarLane;
    } else if (y >= g.lanes_top && g.lane_h > 0) {
        lane = (y - g.lanes_top) / g.lane_h;
        if (lane >= g.lanes_shown || (g.lane_h > 1 && (y - g.lanes_top) % g.lane_h == g.lane_h - 1)) return nullptr;
    } else {
        return nullptr;
    }
    for (const MapRun &r : runs) {
        if (r.lane == lane && x >= r.x0 && x < r.x1) return &r;
    }
    return nullptr;
}

MapIndex map_index(const Arena &a, const std::vector<int> &lanes)
{
    MapIndex x;
    const uint64_t base = a.base_addr;
    const uint64_t head = std::min(a.head_bytes, a.size_bytes);
    const uint64_t temp = std::clamp(a.temp_bytes, head, a.size_bytes);
    const uint64_t tail = std::clamp(a.tail_offset, temp, a.size_bytes);
    // The area bar: the four areas, the tail's objects over the tail (gaps between them stay "tail").
    std::vector<PixelItem> bar = {
        {base, base + head, kAreaHead}, {base + head, base + temp, kAreaTemp}, {base + temp, base + tail, kAreaFree}};
    std::vector<std::size_t> tail_regions;
    for (std::size_t i = 0; i < a.regions.size(); i++) {
        if (is_tail(a.regions[i])) tail_regions.push_back(i);
    }
    std::stable_sort(tail_regions.begin(), tail_regions.end(),
                     [&](std::size_t p, std::size_t q) { return a.regions[p].offset < a.regions[q].offset; });
    uint64_t at = tail;
    for (std::size_t i : tail_regions) {
        const Region &r = a.regions[i];
        const uint64_t lo = std::max(r.offset, tail), hi = std::min(r.offset + r.size_bytes, a.size_bytes);
        if (hi <= lo) continue;
        if (lo > at) bar.push_back({base + at, base + lo, kAreaTail});
        bar.push_back({base + lo, base + hi, kTailIdBase + int(i)});
        at = std::max(at, hi);
    }
    if (a.size_bytes > at) bar.push_back({base + at, base + a.size_bytes, kAreaTail});
    x.bar = pixel_lane(std::move(bar));
    // The lanes.
    for (int l : lanes) x.lane_count = std::max(x.lane_count, l + 1);
    std::vector<std::vector<PixelItem>> by_lane(std::size_t(std::max(0, x.lane_count)));
    for (std::size_t i = 0; i < a.regions.size() && i < lanes.size(); i++) {
        const Region &r = a.regions[i];
        if (r.size_bytes > 0)
            by_lane[std::size_t(lanes[i])].push_back({base + r.offset, base + r.offset + r.size_bytes, int(i)});
    }
    for (std::vector<PixelItem> &items : by_lane) x.lanes.push_back(pixel_lane(std::move(items)));
    x.paint.reserve(a.regions.size());
    for (const Region &r : a.regions) x.paint.push_back(paint_of_kind(r.kind));
    return x;
}

MapPicture map_picture(const Arena &a, const std::vector<int> &lanes, const MapGeometry &g, int selected,
                       const std::function<bool(int)> &damaged,
                       const std::function<float(const std::string &)> &measure,
                       const std::function<bool(int)> &changed)
{
    return map_picture(a, map_index(a, lanes), g, selected, damaged, measure, changed);
}

namespace {

// What a lane's runs are painted by, from a run's id (a region's index, or an area bar item): its
// colour, what its MapRun names, its label, whether it is striped (offline) and whether the diff
// marks it (may be empty: nothing is).
struct LanePaint {
    std::function<Rgba(int)> colour_of;
    std::function<void(int, MapRun &)> name;
    std::function<std::string(int)> label_of;
    std::function<bool(int)> striped;
    std::function<bool(int)> diffed;
};

// A cluster's count, beside it where no region is.
struct Count {
    MapLabel label;
    int x_end;
};

// map_picture's painting, lane by lane, into p.
struct MapPainter {
    MapPicture &p;
    const MapGeometry &g;
    const std::function<float(const std::string &)> &measure;
    std::vector<std::pair<int, int>> changed_x;  // pixels of the regions the diff marks
    std::vector<Count> counts;                   // a cluster's count, beside it where no region is
    std::vector<MapLabel> count_labels;          // those over empty pixels only: never over another region

    void add_runs(int lane, int y0, int y1, const PixelLane &items, const LanePaint &paint)
    {
        const std::size_t first_run = p.runs.size(), first_count = counts.size();
        for (const PixelRun &run : own_pixels(items, g.view_lo, g.view_hi, g.width)) {
            MapRun mr;
            mr.lane = lane, mr.x0 = run.x0, mr.x1 = run.x1;
            if (run.id < 0) {
                add_cluster(run, y0, y1, mr, paint);
            } else {
                add_region(run, y0, y1, mr, paint);
            }
            p.runs.push_back(std::move(mr));
        }
        keep_counts_clear(first_run, first_count);
    }

    // A run of several items too thin to draw apart, and its count beside it where it fits.
    void add_cluster(const PixelRun &run, int y0, int y1, MapRun &mr, const LanePaint &paint)
    {
        for (int id : run.ids) {
            MapRun tmp;
            paint.name(id, tmp);
            if (tmp.region >= 0) mr.members.push_back(tmp.region);
            if (tmp.area >= 0) mr.areas.push_back(tmp.area);
        }
        // A cluster holding damage is drawn in the damage colour: the one thing never hidden.
        const bool hot = std::any_of(run.ids.begin(), run.ids.end(),
                                     [&](int id) { return paint.colour_of(id) == colour(Paint::FreeTouched); });
        p.fills.push_back({run.x0, y0, run.x1, y1, colour(hot ? Paint::FreeTouched : Paint::Cluster)});
        p.clusters++;
        p.hidden += run.count();
        const std::string n = "(" + std::to_string(run.count()) + ")";
        if (y1 - y0 >= kTextH && measure(n) + 2 <= float(g.width - run.x1)) {
            counts.push_back({MapLabel{run.x1 + 1, y0 + (y1 - y0 - kTextH) / 2, n, colour(Paint::Cluster)},
                              run.x1 + 1 + int(std::ceil(measure(n)))});
        }
    }

    // One item's run: its fill, its edge, its stripe and diff mark, its label where it fits.
    void add_region(const PixelRun &run, int y0, int y1, MapRun &mr, const LanePaint &paint)
    {
        paint.name(run.id, mr);
        const Rgba c = paint.colour_of(run.id);
        const bool edge = run.x1 - run.x0 >= 4;
        p.fills.push_back({run.x0, y0, run.x1 - (edge ? 1 : 0), y1, c});
        if (edge) p.fills.push_back({run.x1 - 1, y0, run.x1, y1, edge_shade(c)});
        if (paint.striped(run.id)) {
            p.fills.push_back(
                {run.x0, y0, run.x1 - (edge ? 1 : 0), y0 + std::max(1, (y1 - y0) / 5), colour(Paint::Offline)});
        }
        if (paint.diffed && paint.diffed(run.id)) {  // the lower half of the lane, and a mark under the bar
            p.fills.push_back({run.x0, y1 - std::max(2, (y1 - y0) / 2), run.x1, y1, colour(Paint::Changed)});
            changed_x.push_back({run.x0, run.x1});
        }
        const int room = run.x1 - run.x0 - 4;
        if (y1 - y0 >= kTextH + 1 && room > 0) {
            const std::string t = fitting(paint.label_of(run.id), room, measure);
            if (!t.empty()) p.labels.push_back({run.x0 + 2, y0 + (y1 - y0 - kTextH) / 2, t, label_colour(c)});
        }
    }

    // The lane's counts (from first_count) kept where no run of the lane (from first_run) is. The
    // lane's runs are in x order: the first one ending past the count's start overlaps it, if any does.
    void keep_counts_clear(std::size_t first_run, std::size_t first_count)
    {
        for (std::size_t k = first_count; k < counts.size(); k++) {
            const Count &c = counts[k];
            const auto r = std::partition_point(p.runs.begin() + std::ptrdiff_t(first_run), p.runs.end(),
                                                [&](const MapRun &m) { return m.x1 <= c.label.x; });
            if (r == p.runs.end() || r->x0 >= c.x_end) count_labels.push_back(c.label);
        }
    }
};

// The area bar's paint: the areas (head, temp, free, tail) and the tail's regions over them.
LanePaint bar_paint(const Arena &a, const MapIndex &index, const std::function<bool(int)> &damaged)
{
    const Rgba free_colour = colour(a.free_band.present ? Paint::FreeIntact : Paint::FreeUnmeasured);
    LanePaint paint;
    paint.colour_of = [&index, damaged, free_colour](int id) {
        if (id >= kTailIdBase) {
            const int i = id - kTailIdBase;
            return colour(damaged(i) ? Paint::FreeTouched : index.paint[std::size_t(i)]);
        }
        return id == kAreaHead   ? colour(Paint::Tensor)
               : id == kAreaTemp ? colour(Paint::Temp)
               : id == kAreaFree ? free_colour
                                 : colour(Paint::Metadata);
    };
    paint.name = [](int id, MapRun &mr) {
        if (id >= kTailIdBase) {
            mr.region = id - kTailIdBase;
        } else {
            mr.area = id;
        }
    };
    paint.label_of = [&a](int id) {
        if (id < kTailIdBase) return std::string(area_name(id));
        // a compact snapshot's coalesced run (count > 1): its label ("100,000 x builtin data
        // (1-2 B each)") on the bar, where it is wide; its lane may be too thin at 100,000 regions
        const Region &r = a.regions[std::size_t(id - kTailIdBase)];
        return r.count > 1 ? r.label : std::string();
    };
    paint.striped = [](int) { return false; };
    return paint;
}

// The damage on the bar: at least 4 px wide, around the damage's centre (a 64-byte overrun in a
// 26 KiB arena is under 2 px at zoom 1, and it is the one thing the map must not hide).
void mark_damage(const Arena &a, const MapGeometry &g, MapPicture &p)
{
    if (!a.damage || a.damage->size_bytes == 0) return;
    const uint64_t base = a.base_addr;
    const double scale = g.width / (g.view_hi - g.view_lo);
    const double d0 = (double(base + a.damage->offset) - g.view_lo) * scale;
    const double d1 = (double(base + a.damage->offset + a.damage->size_bytes) - g.view_lo) * scale;
    int x0 = int(std::lround(d0)), x1 = int(std::lround(d1));
    if (x1 - x0 < 4) {
        const int c = int(std::floor((d0 + d1) / 2));
        x0 = c - 2, x1 = c + 2;
    }
    x0 = std::max(x0, 0), x1 = std::min(x1, g.width);
    if (x1 > x0) p.fills.push_back({x0, 0, x1, g.bar_h, colour(Paint::FreeTouched)});
}

}  // namespace

MapPicture map_picture(const Arena &a, const MapIndex &index, const MapGeometry &g, int selected,
                       const std::function<bool(int)> &damaged,
                       const std::function<float(const std::string &)> &measure,
                       const std::function<bool(int)> &changed)
{
    MapPicture p;
    p.g = g;
    MapPainter painter{p, g, measure, {}, {}, {}};
    painter.add_runs(kBarLane, 0, g.bar_h, index.bar, bar_paint(a, index, damaged));
    mark_damage(a, g, p);

    // The lanes.

    const int lane_count = index.lane_count;
    p.lanes = lane_count;
    const int rows = std::max(1, g.lane_h - 1);
    LanePaint lane_paint;
    lane_paint.colour_of = [&](int i) {
        return colour(i == selected ? Paint::Selected : damaged(i) ? Paint::FreeTouched : index.paint[std::size_t(i)]);
    };
    lane_paint.name = [](int i, MapRun &mr) { mr.region = i; };
    lane_paint.label_of = [&](int i) { return a.regions[std::size_t(i)].label; };
    lane_paint.striped = [&](int i) {
        const auto &f = a.regions[std::size_t(i)].flags;
        return i != selected && std::find(f.begin(), f.end(), "offline") != f.end();
    };
    lane_paint.diffed = changed;
    for (int l = 0; l < std::min(lane_count, g.lanes_shown); l++) {
        const int y0 = g.lanes_top + l * g.lane_h;
        painter.add_runs(l, y0, y0 + rows, index.lanes[std::size_t(l)], lane_paint);
    }
    for (MapLabel &l : painter.count_labels) p.labels.push_back(std::move(l));
    for (auto [x0, x1] : painter.changed_x) {  // at least 3 px wide: the diff's answer must be seen at zoom 1
        if (x1 - x0 < 3) x0 = (x0 + x1) / 2 - 1, x1 = x0 + 3;
        p.fills.push_back({std::max(0, x0), g.bar_h - 5, std::min(g.width, x1), g.bar_h, colour(Paint::Changed)});
    }
    return p;
}

}  // namespace arenascope
