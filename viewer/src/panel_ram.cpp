// arenascope viewer: the RAM column (middle): from the arena's base up to the stack's top, the
// arena by area, the guard band, the stack, the high-water mark, SP and the gap (pictures.h).
#include <fmt/format.h>

#include "panel.h"
#include "svg.h"
#include "ui.h"

namespace arenascope {
namespace {

// What lies at addr: the stack, the guard band, an area of the arena (a: may be null).
std::string what_is_at(const Snapshot &s, const Arena *a, uint64_t addr)
{
    if (s.stack.high_addr > s.stack.low_addr && addr >= s.stack.low_addr && addr < s.stack.high_addr) {
        return fmt::format("stack {:#x}-{:#x}; high-water mark {}; SP {}", s.stack.low_addr, s.stack.high_addr,
                           s.stack.hwm_addr ? fmt::format("{:#x}", *s.stack.hwm_addr) : "unknown",
                           s.stack.sp ? fmt::format("{:#x}", *s.stack.sp) : "unknown");
    }
    if (s.guard.present && addr >= s.guard.low_addr && addr < s.guard.high_addr) {
        return fmt::format("guard band {:#x}-{:#x} ({} B), {}", s.guard.low_addr, s.guard.high_addr, s.guard.size_bytes,
                           s.guard.touched ? "TOUCHED" : "intact");
    }
    if (a && addr >= a->base_addr && addr < a->base_addr + a->size_bytes) {
        const uint64_t b = a->base_addr, off = addr - b;
        return fmt::format("arena {:#x}-{:#x}, +{}: {}", b, b + a->size_bytes, off,
                           off < a->head_bytes    ? "head"
                           : off < a->temp_bytes  ? "temp"
                           : off < a->tail_offset ? "free band"
                                                  : "persistent tail");
    }
    return "between regions";
}

class RamPanel : public Panel {
public:
    const char *name() const override { return "ram"; }
    bool shown(const View &) const override { return true; }
    Space wants(const View &) const override { return {Column::Middle, 0, Space::Fill}; }

    void draw(View &v, const Rect &r) override
    {
        if (!v.snapshot) return;
        const Snapshot &s = *v.snapshot;
        draw_picture(ImGui::GetWindowDrawList(), ram_picture(s, v.arena(), r, measure, ram_));
        // Hover: what is at this address.
        const Rect &area = ram_.area;
        const ImGuiIO &io = ImGui::GetIO();
        if (area.contains(io.MousePos.x, io.MousePos.y)) {
            const uint64_t addr =
                ram_.lo + uint64_t(double(area.y + area.h - io.MousePos.y) / area.h * double(ram_.hi - ram_.lo));
            ImGui::SetTooltip("%#llx  %s", (unsigned long long)addr, what_is_at(s, v.arena(), addr).c_str());
        }
    }

    void describe(const View &, const Rect &r, nlohmann::json &out) const override
    {
        out["ram"] = rect_json(r);
        out["ram_column"] = {{"rect", rect_json(ram_.area)}, {"lo", ram_.lo}, {"hi", ram_.hi}};
    }

    ReportSpace report_space() const override { return {ReportSpace::Row, 200}; }
    float report_picture(Svg &svg, const Snapshot &s, int ai, const Rect &r) const override
    {
        RamColumn column;
        svg.picture(ram_picture(s, ai < 0 ? nullptr : &s.arenas[std::size_t(ai)], r, report_measure, column));
        return r.h;
    }

private:
    RamColumn ram_;  // where the last frame put the addresses
};

const PanelRegistration kRegistered{[]() -> std::unique_ptr<Panel> { return std::make_unique<RamPanel>(); }};

}  // namespace
}  // namespace arenascope
