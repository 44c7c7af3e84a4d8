// arenascope viewer: layout arithmetic; see layout.h.
#include "layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <queue>
#include <string_view>

namespace arenascope {

Rgba colour(Paint p)
{
    switch (p) {
    case Paint::Background: return {24, 24, 28, 255};
    case Paint::Tensor: return {66, 135, 245, 255};
    case Paint::Scratch: return {186, 85, 211, 255};
    case Paint::Temp: return {240, 200, 60, 255};
    case Paint::Persistent: return {0, 170, 170, 255};
    case Paint::Metadata: return {128, 128, 128, 255};
    case Paint::FreeIntact: return {40, 110, 40, 255};
    case Paint::FreeUnmeasured: return {70, 80, 70, 255};
    case Paint::FreeTouched: return {230, 40, 40, 255};
    case Paint::Guard: return {200, 200, 200, 255};
    case Paint::GuardTouched: return {255, 90, 90, 255};
    case Paint::StackUsed: return {255, 140, 0, 255};
    case Paint::StackUnused: return {70, 70, 100, 255};
    case Paint::HighWater: return {255, 255, 255, 255};
    case Paint::StackPointer: return {255, 255, 0, 255};
    case Paint::RulePass: return {60, 180, 75, 255};
    case Paint::RuleFail: return {230, 40, 40, 255};
    case Paint::Boundary: return {250, 250, 250, 255};
    case Paint::LiveCurve: return {255, 255, 255, 255};
    case Paint::LowerBound: return {255, 80, 80, 255};
    case Paint::Selected: return {255, 255, 0, 255};
    case Paint::HistoryUsed: return {120, 200, 255, 255};
    case Paint::HistoryStackPeak: return {255, 120, 170, 255};
    case Paint::HistoryGap: return {150, 230, 90, 255};
    case Paint::Offline: return {255, 255, 160, 255};
    case Paint::Cluster: return {235, 235, 255, 255};
    case Paint::Changed: return {255, 40, 220, 255};
    }
    return {255, 0, 255, 255};
}

Rgba edge_shade(Rgba c)
{
    return {uint8_t(c.r * 3 / 5), uint8_t(c.g * 3 / 5), uint8_t(c.b * 3 / 5), c.a};
}

Paint paint_of_kind(const std::string &kind)
{
    if (kind == "tensor") return Paint::Tensor;
    if (kind == "scratch") return Paint::Scratch;
    if (kind == "persistent") return Paint::Persistent;
    return Paint::Metadata;
}

const char *paint_short_name(Paint p)
{
    switch (p) {
    case Paint::Tensor: return "tensor";
    case Paint::Metadata: return "TFLM metadata";
    case Paint::Persistent: return "persistent";
    case Paint::Scratch: return "scratch";
    case Paint::FreeIntact: return "free, intact";
    case Paint::FreeTouched: return "touched/overwr.";
    case Paint::FreeUnmeasured: return "free, no canary";
    case Paint::GuardTouched: return "guard, touched";
    case Paint::StackUsed: return "stack used";
    case Paint::StackUnused: return "stack unused";
    case Paint::HighWater: return "high-water";
    case Paint::Offline: return "offline plan";
    case Paint::Cluster: return "too small: N";
    case Paint::Changed: return "changed (diff)";
    default: return paint_name(p);
    }
}

const char *paint_name(Paint p)
{
    switch (p) {
    case Paint::Tensor: return "tensor (planned, head)";
    case Paint::Scratch: return "scratch buffer";
    case Paint::Temp: return "temp";
    case Paint::Persistent: return "persistent (tail)";
    case Paint::Metadata: return "TFLM metadata (tail)";
    case Paint::FreeIntact: return "free, canary intact";
    case Paint::FreeTouched: return "touched: free band's canary, or overwritten since allocation";
    case Paint::FreeUnmeasured: return "free, no canary (not filled, agentless, or a model)";
    case Paint::Guard: return "guard band";
    case Paint::GuardTouched: return "guard band, touched";
    case Paint::StackUsed: return "stack used (above the high-water mark)";
    case Paint::StackUnused: return "stack never used (paint intact)";
    case Paint::HighWater: return "high-water mark";
    case Paint::StackPointer: return "current SP";
    case Paint::LowerBound: return "lower bound";
    case Paint::LiveCurve: return "live bytes";
    case Paint::HistoryUsed: return "history: used bytes";
    case Paint::HistoryStackPeak: return "history: stack peak";
    case Paint::HistoryGap: return "history: gap (stack HWM - arena end)";
    case Paint::Offline: return "stripe: placed by the model's offline plan";
    case Paint::Cluster: return "regions too small to tell apart here (N of them): zoom in";
    case Paint::Changed: return "stripe: moved, grew, shrank, appeared or vanished (arena diff)";
    default: return "";
    }
}

ScreenLayout screen_layout(float width, float height, bool history, bool fault)
{
    const float m = 8, status_h = 22, ram_w = std::max(120.f, width * 0.14f), side_w = std::max(260.f, width * 0.26f);
    ScreenLayout l;
    l.status = {m, m, width - 2 * m, status_h};
    const float top = m + status_h + m;
    const float body_h = height - top - m;
    const float left_w = width - ram_w - side_w - 4 * m;
    l.map = {m, top, left_w, body_h * 0.42f};
    l.plan = {m, l.map.y + l.map.h + m, left_w, body_h - l.map.h - m};
    if (history) {
        const float hh = std::clamp(body_h * 0.2f, 120.f, 200.f);
        l.plan.h -= hh + m;
        l.history = {m, l.plan.y + l.plan.h + m, left_w, hh};
    }
    l.ram = {m + left_w + m, top, ram_w, body_h};
    if (fault) {
        const float legend_h = 8 * 15 + 8;
        l.summary = {l.ram.x + ram_w + m, top, side_w, body_h * 0.40f};
        l.fault = {l.summary.x, l.summary.y + l.summary.h + m, side_w, body_h - l.summary.h - legend_h - 2 * m};
        l.legend = {l.summary.x, l.fault.y + l.fault.h + m, side_w, legend_h};
    } else {
        // The legend as tall as its content: one column of 16 rows where 38 % of the column holds
        // it, else two columns of 8; the summary takes the rest.
        const float legend_h = (body_h - m) * 0.38f >= 16 * 15 + 8 ? 16 * 15 + 8 : 8 * 15 + 8;
        l.summary = {l.ram.x + ram_w + m, top, side_w, body_h - legend_h - m};
        l.legend = {l.summary.x, l.summary.y + l.summary.h + m, side_w, legend_h};
    }
    return l;
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

namespace {

bool continues(char c)
{
    return (static_cast<unsigned char>(c) & 0xC0) == 0x80;  // a UTF-8 continuation byte, 10xxxxxx
}

// Where a text's characters start: at byte 0 and at every byte that is not a continuation byte,
// so no cut splits a UTF-8 sequence. Found only as far as they are asked for, from the front or
// from the back: asking about the first or the last k characters costs O(k) whatever the length.
class CharStarts {
public:
    static constexpr std::size_t kPast = std::string::npos;  // the text has fewer characters
    explicit CharStarts(std::string_view text) : t_(text), front_{0}, back_{text.size()} {}
    // Byte offset of character k (0-based); the text's size when it has k characters exactly.
    std::size_t front(std::size_t k)
    {
        if (t_.empty()) return k == 0 ? 0 : kPast;
        while (front_.size() <= k && front_.back() < t_.size()) {
            std::size_t i = front_.back() + 1;
            while (i < t_.size() && continues(t_[i])) i++;
            front_.push_back(i);
        }
        return k < front_.size() ? front_[k] : kPast;
    }
    // Byte offset where the last k characters start (the size for k = 0; 0 for all of them).
    std::size_t back(std::size_t k)
    {
        while (back_.size() <= k && back_.back() > 0) {
            std::size_t i = back_.back() - 1;
            while (i > 0 && continues(t_[i])) i--;
            back_.push_back(i);
        }
        return k < back_.size() ? back_[k] : kPast;
    }

private:
    std::string_view t_;
    std::vector<std::size_t> front_, back_;
};

// The largest k in [0, n] with fits(k), where fits(0) holds and fits is true up to some k and
// false after it (a text's width grows with what is kept of it). Gallops from 0 (1, 3, 7, 15, ...)
// then halves: O(log k) calls, none past 2k + 1, so a search over a long text costs what fits.
std::size_t longest(std::size_t n, const std::function<bool(std::size_t)> &fits)
{
    std::size_t lo = 0, hi = n + 1;  // fits(lo); hi: the first known not to fit (or past n)
    for (std::size_t step = 1; lo < n; step *= 2) {
        const std::size_t k = lo + std::min(step, n - lo);
        if (!fits(k)) {
            hi = k;
            break;
        }
        lo = k;
    }
    while (hi - lo > 1) {
        const std::size_t mid = lo + (hi - lo) / 2;
        (fits(mid) ? lo : hi) = mid;
    }
    return lo;
}

}  // namespace

std::string cut_middle(const std::string &text, float max_px, const Measure &measure)
{
    if (measure(text) <= max_px) return text;
    // Keep a third from the start and the rest from the end ("MobilenetV1/...conv_pw_13/Relu6"):
    // the end of a tensor's name tells it from its siblings, its start says which model part.
    // The most characters (fewer than all) whose cut fits; none: "...".
    CharStarts at(text);
    const auto cut = [&](std::size_t keep) {
        const std::size_t head = keep / 3, tail = keep - head;
        return text.substr(0, at.front(head)) + "..." + text.substr(at.back(tail));
    };
    const std::size_t keep = longest(text.size(), [&](std::size_t k) {
        const std::size_t head = k / 3, from = at.back(k - head), to = at.front(head);
        return to != CharStarts::kPast && from != CharStarts::kPast && to < from && measure(cut(k)) <= max_px;
    });
    return keep == 0 ? std::string("...") : cut(keep);
}

std::string cut_to_width(std::string text, float max_px, const Measure &measure)
{
    if (measure(text) <= max_px) return text;
    // Its longest start, fewer characters than all, that fits with "..." after it; none: "...".
    CharStarts at(text);
    const std::size_t keep = longest(text.size(), [&](std::size_t k) {
        const std::size_t to = at.front(k);
        return to < text.size() && measure(text.substr(0, to) + "...") <= max_px;
    });
    text.resize(at.front(keep));
    return text + "...";
}

std::vector<std::string> wrap_at_spaces(const std::string &text, float first_px, float rest_px,
                                        const std::function<float(const std::string &)> &measure)
{
    std::vector<std::string> lines;
    std::string line, joined;  // joined: the line with the next segment (its buffer reused)
    auto limit = [&] { return lines.empty() ? first_px : rest_px; };
    std::size_t i = 0;
    while (i < text.size()) {
        // The next segment, text[i, j): its leading spaces and one word.
        std::size_t j = i;
        while (j < text.size() && text[j] == ' ') j++;
        while (j < text.size() && text[j] != ' ') j++;
        joined.assign(line).append(text, i, j - i);
        if (measure(joined) <= limit()) {
            line.swap(joined);
            i = j;
            continue;
        }
        if (!line.empty()) {
            lines.push_back(line);
            line.clear();
        }
        while (i < j && text[i] == ' ') i++;
        // The word, text[i, j), on as many lines as it needs: on each, its longest start that
        // fits (at least one character); what fits whole starts the next line.
        while (i < j) {
            const std::string_view rest(text.data() + i, j - i);
            CharStarts at(rest);
            const float room = limit();
            const std::size_t fit = longest(rest.size(), [&](std::size_t k) {
                const std::size_t to = at.front(k);
                return to != CharStarts::kPast && (k <= 1 || measure(std::string(rest.substr(0, to))) <= room);
            });
            const std::size_t to = at.front(fit);
            if (to == rest.size() && measure(std::string(rest)) <= room) {
                line.assign(rest);
                break;
            }
            lines.emplace_back(rest.substr(0, to));
            i += to;
        }
        i = j;
    }
    if (!line.empty() || lines.empty()) lines.push_back(line);
    return lines;
}

}  // namespace arenascope
