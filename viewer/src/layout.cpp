// arenascope viewer: layout arithmetic; see layout.h.
#include "layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <queue>
#include <string_view>

namespace arenascope {

float body_height(float height)
{
    return height - (kLayoutMargin + kStatusHeight + kLayoutMargin) - kLayoutMargin;
}

namespace {

// The heights of one column's spaces (positions in `spaces`, top to bottom) in body_h.
std::vector<float> column_heights(const std::vector<Space> &spaces, const std::vector<std::size_t> &in, float body_h)
{
    const float m = kLayoutMargin;
    int fills = 0;
    for (std::size_t i : in) fills += spaces[i].size == Space::Fill;
    const bool shared = fills > 1;
    std::vector<float> h(in.size(), 0);
    float left = body_h;  // what the Fill panels split (subtracted in order: the same floats as before)
    int rest = 0;         // Fill panels that split it
    for (std::size_t k = 0; k < in.size(); k++) {
        const Space &s = spaces[in[k]];
        if (s.size == Space::Fixed) {
            h[k] = shared && s.shared_px > 0 ? s.shared_px : s.px;
        } else if (s.size == Space::Share) {
            h[k] = std::clamp(body_h * s.share, s.min_px, s.max_px);
        } else if (shared && s.shared_share > 0) {
            h[k] = body_h * s.shared_share;
        } else {
            rest++;
            continue;
        }
        left -= h[k];
    }
    left -= m * float(in.empty() ? 0 : in.size() - 1);
    for (std::size_t k = 0; k < in.size(); k++) {
        const Space &s = spaces[in[k]];
        if (s.size == Space::Fill && !(shared && s.shared_share > 0)) h[k] = left / float(rest);
    }
    return h;
}

}  // namespace

std::vector<Rect> screen_layout(float width, float height, const std::vector<Space> &spaces)
{
    const float m = kLayoutMargin, ram_w = std::max(120.f, width * 0.14f), side_w = std::max(260.f, width * 0.26f);
    const float top = m + kStatusHeight + m, body_h = body_height(height);
    const float left_w = width - ram_w - side_w - 4 * m;
    const float x[] = {m, m, m + left_w + m, m + left_w + m + ram_w + m};  // by Column
    const float w[] = {width - 2 * m, left_w, ram_w, side_w};
    std::vector<Rect> out(spaces.size());
    for (Column c : {Column::Status, Column::Left, Column::Middle, Column::Right}) {
        std::vector<std::size_t> in;
        for (std::size_t i = 0; i < spaces.size(); i++)
            if (spaces[i].column == c) in.push_back(i);
        std::stable_sort(in.begin(), in.end(),
                         [&](std::size_t a, std::size_t b) { return spaces[a].order < spaces[b].order; });
        if (c == Column::Status) {
            for (std::size_t i : in) out[i] = {m, m, width - 2 * m, kStatusHeight};
            continue;
        }
        const std::vector<float> h = column_heights(spaces, in, body_h);
        float y = top;
        for (std::size_t k = 0; k < in.size(); k++) {
            out[in[k]] = {x[int(c)], y, w[int(c)], h[k]};
            y = y + h[k] + m;
        }
    }
    return out;
}

void AddressAxis::zoom_at(float px, double factor)
{
    const double at = to_addr(px);
    double span = (view_hi - view_lo) / factor;
    span = std::clamp(span, std::min(double(pw) / 8.0, full_hi - full_lo), full_hi - full_lo);
    const double frac = double(px - px0) / pw;
    view_lo = at - frac * span;
    view_hi = view_lo + span;
    pan_px(0);
}

void AddressAxis::pan_px(float dpx)
{
    const double span = view_hi - view_lo;
    view_lo -= double(dpx) / pw * span;
    view_lo = std::clamp(view_lo, full_lo, full_hi - span);
    view_hi = view_lo + span;
}

uint64_t tick_step(double lo, double hi, int max_ticks)
{
    const double span = std::max(1.0, hi - lo);
    uint64_t step = 1;
    while (span / double(step) > std::max(1, max_ticks) && step < (uint64_t(1) << 62)) {
        step <<= 1;
    }
    return step;
}

std::string format_bytes(uint64_t n)
{
    if (n < 1024) return fmt::format("{} B", n);
    if (n < 1024 * 1024) return fmt::format("{:.1f} KiB", n / 1024.0);
    return fmt::format("{:.2f} MiB", n / (1024.0 * 1024.0));
}

std::string format_bytes_exact(uint64_t n)
{
    return n < 1024 ? fmt::format("{} B", n) : fmt::format("{} B ({})", n, format_bytes(n));
}

int assign_lanes(const std::vector<Region> &regions, std::vector<int> &lanes)
{
    lanes.assign(regions.size(), 0);
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < regions.size(); i++) {
        if (regions[i].kind == "tensor" || regions[i].kind == "scratch") order.push_back(i);
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return regions[a].offset < regions[b].offset; });
    // First fit: the lowest-numbered lane whose last region ends at or before this one's start.
    // Free lanes wait in a min-heap by number; busy ones in a min-heap by end: O(n log n).
    std::priority_queue<std::pair<uint64_t, int>, std::vector<std::pair<uint64_t, int>>, std::greater<>> busy;
    std::priority_queue<int, std::vector<int>, std::greater<>> free_lanes;
    int count = 0;
    for (std::size_t i : order) {
        const Region &r = regions[i];
        while (!busy.empty() && busy.top().first <= r.offset) {
            free_lanes.push(busy.top().second);
            busy.pop();
        }
        int lane;
        if (free_lanes.empty()) {
            lane = count++;
        } else {
            lane = free_lanes.top();
            free_lanes.pop();
        }
        busy.push({r.offset + std::max<uint64_t>(r.size_bytes, 1), lane});
        lanes[i] = lane + 1;
    }
    return count + 1;
}

Rect PlanGeometry::region_rect(const Region &r) const
{
    if (!r.first_use || !r.last_use || *r.last_use < 0) return {};  // never live (-1..-1): no bar
    return lifetime_rect(*r.first_use, *r.last_use, r.offset, r.size_bytes);
}

Rect PlanGeometry::lifetime_rect(int first, int last, uint64_t offset, uint64_t size) const
{
    const float x0 = x_of_scope(first), x1 = x_of_scope(last + 1);
    const float y0 = y_of_offset(double(offset)), y1 = y_of_offset(double(offset + size));
    return {x0, y0, x1 - x0, std::max(1.f, y1 - y0)};
}

PlanGeometry plan_geometry(const Arena &a, Rect area)
{
    PlanGeometry g;
    g.area = area;
    g.scopes = std::max(1, a.plan.scopes);
    uint64_t extent = std::max<uint64_t>(a.head_bytes, a.plan.lower_bound_bytes);
    for (const Region &r : a.regions) {
        if (r.first_use && (r.kind == "tensor" || r.kind == "scratch"))
            extent = std::max(extent, r.offset + r.size_bytes);
    }
    for (uint64_t v : a.plan.live_bytes) extent = std::max(extent, v);
    g.extent = std::max<uint64_t>(extent, 1);
    return g;
}

int hit_plan(const std::vector<Region> &regions, const PlanGeometry &g, float px, float py)
{
    int best = -1;
    for (std::size_t i = 0; i < regions.size(); i++) {
        const Rect rr = g.region_rect(regions[i]);
        if (rr.w > 0 && rr.contains(px, py)) {
            if (best < 0 || regions[i].size_bytes < regions[best].size_bytes) best = int(i);  // the smallest wins
        }
    }
    return best;
}

RamColumn ram_column(const Snapshot &s, const Arena &a, Rect area)
{
    RamColumn c;
    c.area = area;
    c.lo = a.base_addr;
    c.hi = std::max(s.stack.high_addr, a.base_addr + a.size_bytes);
    if (s.stack.high_addr < a.base_addr) c.hi = a.base_addr + a.size_bytes;  // stack below the arena: arena only
    if (a.apart_from_stack) c.hi = a.base_addr + a.size_bytes;  // in another memory (external RAM): the arena alone
    if (c.hi <= c.lo) c.hi = c.lo + 1;
    return c;
}

float HistoryGeometry::x_of(double t) const
{
    if (!(t1 > t0)) return plot.x + plot.w;
    return plot.x + float(std::clamp((t - t0) / (t1 - t0), 0.0, 1.0)) * plot.w;
}

float HistoryGeometry::y_of(int series, double bytes) const
{
    const Rect &r = lane[series];
    return r.y + float((hi[series] - bytes) / (hi[series] - lo[series])) * r.h;
}

std::optional<double> history_value(const LivePoint &p, int series)
{
    if (series == 0) return double(p.used_bytes);
    if (series == 1) return p.stack_peak_bytes ? std::optional<double>(double(*p.stack_peak_bytes)) : std::nullopt;
    return p.gap_bytes ? std::optional<double>(double(*p.gap_bytes)) : std::nullopt;
}

const char *history_series_name(int series)
{
    return series == 0 ? "used" : series == 1 ? "stack peak" : "gap";
}

Paint history_paint(int series)
{
    return series == 0 ? Paint::HistoryUsed : series == 1 ? Paint::HistoryStackPeak : Paint::HistoryGap;
}

HistoryGeometry history_geometry(const Live &live, Rect panel)
{
    HistoryGeometry g;
    g.plot = {panel.x + 72, panel.y + 40, std::max(1.f, panel.w - 80), std::max(3.f, panel.h - 46)};
    const float slice = g.plot.h / HistoryGeometry::kSeries, pad = std::min(4.f, slice / 4);
    for (int i = 0; i < HistoryGeometry::kSeries; i++) {
        g.lane[i] = {g.plot.x, g.plot.y + i * slice + pad, g.plot.w, slice - 2 * pad};
        double lo = 0, hi = 0;  // the scale always spans 0: a gap that crosses it is the news
        for (const LivePoint &p : live.history) {
            if (auto v = history_value(p, i)) {
                lo = std::min(lo, *v);
                hi = std::max(hi, *v);
                g.known[i] = true;
            }
        }
        g.lo[i] = lo;
        g.hi[i] = hi > lo ? hi : lo + 1;
    }
    if (!live.history.empty()) {
        g.t0 = live.history.front().t_unix_s;
        g.t1 = live.history.back().t_unix_s;
    }
    return g;
}

std::string live_status(const Live &live, double now_unix_s, bool &lost)
{
    const double age = std::max(0.0, now_unix_s - live.captured_at_unix_s);
    lost = live.link_lost || live.link_untrusted;
    if (lost) {
        return fmt::format("{}: {}; showing data {:.1f} s old", live.link_lost ? "LINK LOST" : "DATA NOT TRUSTED",
                           live.link_error.empty() ? "no reason given" : live.link_error, age);
    }
    return fmt::format("live via {}: {:.1f} refreshes/s, data {:.1f} s old, refresh {}", live.reader, live.refresh_hz,
                       age, live.refresh_index);
}

}  // namespace arenascope

namespace arenascope {
namespace {

// [first, last) pixel indices covered along one axis, clamped to [0, n), at least one pixel.
void span(float a, float b, int n, int &first, int &last)
{
    first = int(std::lround(a));
    last = std::max(int(std::lround(b)), first + 1);
    first = std::clamp(first, 0, n);
    last = std::clamp(last, 0, n);
}

}  // namespace

void Raster::reset(int width, int height, Rgba background)
{
    w = std::max(0, width);
    h = std::max(0, height);
    px.assign(std::size_t(w) * h, background.imgui());
}

void Raster::fill(float x0, float y0, float x1, float y1, Rgba c)
{
    int xa, xb, ya, yb;
    span(x0, x1, w, xa, xb);
    span(y0, y1, h, ya, yb);
    const uint32_t v = c.imgui();
    for (int y = ya; y < yb; y++) {
        std::fill(px.begin() + std::ptrdiff_t(y) * w + xa, px.begin() + std::ptrdiff_t(y) * w + xb, v);
    }
}

void Raster::frame(float x0, float y0, float x1, float y1, Rgba c)
{
    int xa, xb, ya, yb;
    span(x0, x1, w, xa, xb);
    span(y0, y1, h, ya, yb);
    if (xb - xa < 3 || yb - ya < 3) return;
    const uint32_t v = c.imgui();
    for (int x = xa; x < xb; x++) px[std::size_t(ya) * w + x] = px[std::size_t(yb - 1) * w + x] = v;
    for (int y = ya; y < yb; y++) px[std::size_t(y) * w + xa] = px[std::size_t(y) * w + xb - 1] = v;
}

}  // namespace arenascope
