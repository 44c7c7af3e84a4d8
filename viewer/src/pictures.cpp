// arenascope viewer: the RAM column and the plan as display lists; see pictures.h.
#include "pictures.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include <fmt/format.h>

#include "textfit.h"

namespace arenascope {
namespace {

const Rgba kFrame = style().frame, kText = style().text, kAxis = style().text_dim;

void frame(Picture &p, const Rect &r)
{
    p.line(r.x, r.y, r.x + r.w, r.y, kFrame);
    p.line(r.x, r.y + r.h, r.x + r.w, r.y + r.h, kFrame);
    p.line(r.x, r.y, r.x, r.y + r.h, kFrame);
    p.line(r.x + r.w, r.y, r.x + r.w, r.y + r.h, kFrame);
}

}  // namespace

Picture ram_picture(const Snapshot &s, const Arena *ap, const Rect &r, const Measure &measure, RamColumn &column)
{
    Picture p;
    Arena none;  // no arena: the column shows the stack and the guard band only
    if (!ap) none.base_addr = s.guard.present ? s.guard.low_addr : s.stack.low_addr;
    const Arena &a = ap ? *ap : none;
    frame(p, r);
    p.text(r.x + 6, r.y + 3, "RAM", kText);
    const Rect col_area{r.x + 8, r.y + 24, r.w * 0.45f, r.h - 32};
    column = ram_column(s, a, col_area);
    const RamColumn &ram = column;
    const float x0 = col_area.x, x1 = col_area.x + col_area.w;
    auto Y = [&](uint64_t addr) { return ram.y_of(std::clamp(addr, ram.lo, ram.hi)); };
    auto box = [&](float xa, float ya, float xb, float yb, Paint c) { p.box(xa, ya, xb, yb, colour(c)); };
    // The arena (bottom), drawn by area.
    const uint64_t b = a.base_addr;
    if (ap) {
        box(x0, Y(b + a.head_bytes), x1, Y(b), Paint::Tensor);
        box(x0, Y(b + a.temp_bytes), x1, Y(b + a.head_bytes), Paint::Temp);
        box(x0, Y(b + a.tail_offset), x1, Y(b + a.temp_bytes),
            a.free_band.present ? Paint::FreeIntact : Paint::FreeUnmeasured);
        if (a.damage) {
            const float y_top = Y(b + a.damage->offset + a.damage->size_bytes), y_bot = Y(b + a.damage->offset);
            box(x0, std::min(y_top, y_bot - 2), x1, y_bot, Paint::FreeTouched);  // at least 2 px
        }
        box(x0, Y(b + a.size_bytes), x1, Y(b + a.tail_offset), Paint::Persistent);
    }
    if (s.guard.present) {
        box(x0, Y(s.guard.high_addr), x1, Y(s.guard.low_addr), s.guard.touched ? Paint::GuardTouched : Paint::Guard);
    }
    // Labels right of the column, pushed apart so they never overlap (sorted top to bottom).
    std::vector<std::pair<float, std::string>> labels;
    if (s.stack.high_addr > s.stack.low_addr) {
        const uint64_t hwm = std::max(s.stack.hwm_addr.value_or(s.stack.low_addr), s.stack.low_addr);
        box(x0, Y(hwm), x1, Y(s.stack.low_addr), Paint::StackUnused);
        box(x0, Y(s.stack.high_addr), x1, Y(hwm), Paint::StackUsed);
        if (s.stack.hwm_addr) {
            const float y = Y(*s.stack.hwm_addr);
            p.line(x0 - 4, y, x1 + 4, y, colour(Paint::HighWater), 2);
            labels.push_back({y, s.stack.peak_is_lower_bound ? "HWM below" : "HWM"});
        }
        if (s.stack.sp && *s.stack.sp >= s.stack.low_addr && *s.stack.sp <= s.stack.high_addr) {
            const float y = Y(*s.stack.sp);
            p.line(x0, y, x1, y, colour(Paint::StackPointer), 1);
            labels.push_back({y, "SP"});
        }
        // The gap from the high-water mark down to the arena's end, coloured by the stack rule
        // (room >= rule_factor x peak: the snapshot's required_room_bytes).
        // Only beside the arena the stack rule measures (the one ending at arena_end_addr).
        if (s.stack.hwm_addr && s.stack.arena_end_addr &&
            (!ap || ap->base_addr + ap->size_bytes == *s.stack.arena_end_addr)) {
            const bool ok = s.stack.room_bytes && s.stack.required_room_bytes &&
                            *s.stack.room_bytes >= *s.stack.required_room_bytes && !s.stack.peak_is_lower_bound;
            const Paint verdict = ok ? Paint::RulePass : Paint::RuleFail;
            const float gx = r.x + r.w - 14;
            box(gx, Y(*s.stack.hwm_addr), gx + 8, Y(*s.stack.arena_end_addr) + 2, verdict);
            const uint64_t gap =
                *s.stack.hwm_addr > *s.stack.arena_end_addr ? *s.stack.hwm_addr - *s.stack.arena_end_addr : 0;
            // On a dark box: the label sits over the arena's colours.
            const std::string label = cut_to_width("gap " + format_bytes(gap), r.w - 24, measure);
            p.box(r.x + 4, r.y + r.h - 19, r.x + 8 + measure(label), r.y + r.h - 3, colour(Paint::Background));
            p.text(r.x + 6, r.y + r.h - 18, label, colour(verdict));
        }
        labels.push_back({(Y(s.stack.high_addr) + Y(s.stack.low_addr)) / 2 - 7,
                          s.stack.in_memory.empty() ? "stack" : "stack, " + s.stack.in_memory});
    }
    if (s.guard.present) labels.push_back({Y(s.guard.high_addr) - 2, "guard"});
    if (ap)
        labels.push_back(
            {(Y(b + a.size_bytes) + Y(b)) / 2 - 7, a.in_memory.empty() ? "arena" : "arena, " + a.in_memory});
    std::sort(labels.begin(), labels.end());
    float next = r.y + 20;
    for (auto &[y, t] : labels) {
        const float at = std::max(y - 7, next);
        if (at < r.y + r.h - 34) p.text(x1 + 6, at, cut_to_width(t, r.x + r.w - 18 - (x1 + 6), measure), kText);
        next = at + 14;
    }
    return p;
}

std::vector<PlanItem> plan_order(const Arena &a)
{
    std::vector<PlanItem> items;
    for (std::size_t i = 0; i < a.regions.size(); i++) {
        const Region &r = a.regions[i];
        if (!r.first_use || !r.last_use || *r.last_use < 0) continue;  // never live (-1..-1): no bar
        items.push_back({int(i), *r.first_use, *r.last_use, r.offset, r.size_bytes, paint_of_kind(r.kind)});
    }
    std::sort(items.begin(), items.end(), [](const PlanItem &x, const PlanItem &y) {
        return std::tie(x.first, x.last, x.offset, x.region) < std::tie(y.first, y.last, y.offset, y.region);
    });
    return items;
}

void plan_boxes(const PlanGeometry &g, int selected, const std::vector<PlanItem> &order,
                const std::function<void(const Shape &)> &box)
{
    const Rgba bg = colour(Paint::Background);
    for (const PlanItem &it : order) {
        const Rect rr = g.lifetime_rect(it.first, it.last, it.offset, it.size);
        if (rr.w <= 0) continue;
        const float x0 = rr.x, y0 = rr.y, x1 = x0 + rr.w, y1 = y0 + rr.h;
        box({Shape::Box, x0, y0, x1, y1, colour(it.region == selected ? Paint::Selected : it.paint), 1, {}});
        if (rr.w > 3 && rr.h > 3) {  // a one-pixel frame just inside: neighbours stay apart
            box({Shape::Box, x0, y0, x1, y0 + 1, bg, 1, {}});
            box({Shape::Box, x0, y1 - 1, x1, y1, bg, 1, {}});
            box({Shape::Box, x0, y0, x0 + 1, y1, bg, 1, {}});
            box({Shape::Box, x1 - 1, y0, x1, y1, bg, 1, {}});
        }
    }
}

std::vector<Shape> plan_boxes(const Arena &a, const PlanGeometry &g, int selected)
{
    std::vector<Shape> out;
    plan_boxes(g, selected, plan_order(a), [&](const Shape &b) { out.push_back(b); });
    return out;
}

Picture plan_overlay(const Arena &a, const PlanGeometry &g, const Rect &r)
{
    Picture p;
    frame(p, r);
    const Rect &area = g.area;
    p.text(r.x + 6, r.y + 3,
           fmt::format("Memory plan: operator across, offset down; live bytes (white), lower bound {} (red)",
                       format_bytes(a.plan.lower_bound_bytes)),
           kText);
    // The live-bytes curve (a step per scope) and the lower bound, on the same byte axis.
    const Rgba live = colour(Paint::LiveCurve);
    for (int t = 0; t < a.plan.scopes && t < int(a.plan.live_bytes.size()); t++) {
        const float y = g.y_of_offset(double(a.plan.live_bytes[std::size_t(t)]));
        p.line(g.x_of_scope(t), y, g.x_of_scope(t + 1), y, live, 2);
        if (t + 1 < a.plan.scopes && t + 1 < int(a.plan.live_bytes.size())) {
            p.line(g.x_of_scope(t + 1), y, g.x_of_scope(t + 1),
                   g.y_of_offset(double(a.plan.live_bytes[std::size_t(t + 1)])), live, 1);
        }
    }
    const float ylb = g.y_of_offset(double(a.plan.lower_bound_bytes));
    p.line(area.x, ylb, area.x + area.w, ylb, colour(Paint::LowerBound), 1);
    // Axes.
    const int every = std::max(1, int(a.plan.scopes / std::max(1.f, area.w / 40)));
    for (int t = 0; t < a.plan.scopes; t += every) {
        p.text(g.x_of_scope(t + 0.5) - 6, area.y + area.h + 2, t == 0 ? "in" : std::to_string(t - 1), kAxis);
    }
    const uint64_t step = tick_step(0, double(g.extent), int(area.h / 40));
    for (uint64_t off = 0; off <= g.extent; off += step) {
        p.text(r.x + 4, g.y_of_offset(double(off)) - 7, "+" + format_bytes(off), kAxis);
    }
    return p;
}

}  // namespace arenascope
