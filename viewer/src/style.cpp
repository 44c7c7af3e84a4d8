// arenascope viewer: the palette and the UI's colours; see style.h.
#include "style.h"

#include <fmt/format.h>

namespace arenascope {

Style::Style()
{
    auto set = [this](Paint p, Rgba c) { paint[int(p)] = c; };
    set(Paint::Background, {24, 24, 28, 255});
    set(Paint::Tensor, {66, 135, 245, 255});
    set(Paint::Scratch, {186, 85, 211, 255});
    set(Paint::Temp, {240, 200, 60, 255});
    set(Paint::Persistent, {0, 170, 170, 255});
    set(Paint::Metadata, {128, 128, 128, 255});
    set(Paint::FreeIntact, {40, 110, 40, 255});
    set(Paint::FreeUnmeasured, {70, 80, 70, 255});
    set(Paint::FreeTouched, {230, 40, 40, 255});
    set(Paint::Guard, {200, 200, 200, 255});
    set(Paint::GuardTouched, {255, 90, 90, 255});
    set(Paint::StackUsed, {255, 140, 0, 255});
    set(Paint::StackUnused, {70, 70, 100, 255});
    set(Paint::HighWater, {255, 255, 255, 255});
    set(Paint::StackPointer, {255, 255, 0, 255});
    set(Paint::RulePass, {60, 180, 75, 255});
    set(Paint::RuleFail, {230, 40, 40, 255});
    set(Paint::Boundary, {250, 250, 250, 255});
    set(Paint::LiveCurve, {255, 255, 255, 255});
    set(Paint::LowerBound, {255, 80, 80, 255});
    set(Paint::Selected, {255, 255, 0, 255});
    set(Paint::HistoryUsed, {120, 200, 255, 255});
    set(Paint::HistoryStackPeak, {255, 120, 170, 255});
    set(Paint::HistoryGap, {150, 230, 90, 255});
    set(Paint::Offline, {255, 255, 160, 255});
    set(Paint::Cluster, {235, 235, 255, 255});
    set(Paint::Changed, {255, 40, 220, 255});
}

const Style &style()
{
    static const Style s;
    return s;
}

Rgba colour(Paint p)
{
    return int(p) >= 0 && int(p) < kPaintCount ? style().paint[int(p)] : Rgba{255, 0, 255, 255};
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

std::string css_rgb(Rgba c)
{
    return fmt::format("rgb({},{},{})", c.r, c.g, c.b);
}

}  // namespace arenascope
