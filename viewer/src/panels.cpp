// arenascope viewer: the summary and fault panels' text; see panels.h.
#include "panels.h"

#include <algorithm>

#include <fmt/format.h>

namespace arenascope {
namespace {

const Rgba kWhite = style().text, kGrey = style().text_grey, kDim = style().text_dim;

Rgba verdict_colour(const std::string &v)
{
    return colour(v == "FAIL" ? Paint::RuleFail : v == "WARN" ? Paint::Temp : Paint::RulePass);
}

}  // namespace

namespace {

// The summary's lines as they are written: each after a gap of `gap` pixels (then none).
struct SummaryText {
    std::vector<PanelLine> out;
    int gap = 0;
    void line(const std::string &t, Rgba c = kWhite, const std::string &tip = {})
    {
        out.push_back({t, c, 0, true, gap, false, tip});
        gap = 0;
    }
};

// The arena's sizes: moved, size, head, tail, used, then minimum and margin (a model's prediction)
// or peak and headroom, and the free band.
void arena_summary(SummaryText &text, const Snapshot &s, const Arena &arena)
{
    const Arena *a = &arena;
    if (a->moved_from) {  // said first: every figure below is the new arena's
        text.line(fmt::format("moved      from {:#x} to {:#x}", *a->moved_from, a->base_addr), verdict_colour("WARN"),
                  "TFLM's arena was allocated again elsewhere since the previous snapshot (a per-inference arena, "
                  "freed after each inference, or the interpreter built again).");
    }
    text.line(fmt::format("size       {}", format_bytes_exact(a->size_bytes)));
    text.line(fmt::format("head       {} (planned)   temp {}", format_bytes_exact(a->head_bytes),
                          format_bytes_exact(a->temp_bytes - std::min(a->temp_bytes, a->head_bytes))));
    text.line(fmt::format("tail       {} (persistent)", format_bytes_exact(a->tail_bytes)));
    text.line(fmt::format("used       {}", format_bytes_exact(a->used_bytes)));
    if (!s.model.empty()) {  // a model's prediction: its peak is the minimum arena TFLM needs
        text.line(fmt::format("minimum    {}", format_bytes_exact(a->minimum_arena_bytes.value_or(a->peak_bytes))),
                  kWhite, "The smallest arena AllocateTensors succeeds in, as arenascope-plan predicts it.");
        text.line(fmt::format("margin     {} B = {:.1f} % over the minimum", a->headroom_bytes, a->headroom_pct),
                  kWhite,
                  "The free space on the map is not spare: AllocateTensors needs it while it runs (its "
                  "temporaries and the planner's arrays). The margin is what the recommended arena adds "
                  "to the minimum.");
    } else {
        text.line(fmt::format("peak       {}", format_bytes_exact(a->peak_bytes)));
        text.line(fmt::format("headroom   {} B = {:.1f} %{}", a->headroom_bytes, a->headroom_pct,
                              a->headroom_is_upper_estimate ? " (upper est.)" : ""),
                  kWhite,
                  a->headroom_is_upper_estimate ? "Measured against the used bytes: TFLM needs more while it "
                                                  "allocates. Never shrink the arena on this figure alone."
                                                : "");
    }
    if (a->free_band.present && a->free_band.intact_bytes) {
        text.line(fmt::format("free band  {} of {} B intact", *a->free_band.intact_bytes, a->free_band.size_bytes),
                  a->free_band.touched ? colour(Paint::RuleFail) : kWhite);
    }
}

// The guard and the stack: its measured peak, the ELF's predicted worst case, the room the rule asks.
void stack_summary(SummaryText &text, const Snapshot &s)
{
    if (s.guard.present && s.guard.intact_bytes) {
        text.line(fmt::format("guard      {} of {} B intact", *s.guard.intact_bytes, s.guard.size_bytes),
                  s.guard.touched ? colour(Paint::RuleFail) : kWhite);
    }
    if (s.stack.peak_bytes) {
        const bool bad = s.stack.overflowed || s.stack.peak_is_lower_bound;
        text.line(fmt::format("stack peak {}{} B of {} B{}", s.stack.peak_is_lower_bound ? ">= " : "",
                              *s.stack.peak_bytes, s.stack.size_bytes, bad ? "  OVERFLOW" : ""),
                  bad ? colour(Paint::RuleFail) : kWhite);
    }
    if (s.stack.predicted_worst_bytes) {
        // Above a worst case that is no floor, the prediction missed something: shown as a failure.
        const bool above =
            s.stack.peak_bytes && !s.stack.predicted_is_floor && *s.stack.peak_bytes > *s.stack.predicted_worst_bytes;
        std::string path;
        for (const std::string &f : s.stack.predicted_path) path += (path.empty() ? "" : " -> ") + f;
        text.line(fmt::format("predicted  {}{} B worst case (ELF)", s.stack.predicted_is_floor ? ">= " : "",
                              *s.stack.predicted_worst_bytes),
                  above ? colour(Paint::RuleFail) : kWhite,
                  fmt::format("The main stack's worst case worked out from the firmware's code before flashing (arena "
                              "budget){}: Reset's deepest path is {} B via {}",
                              s.stack.predicted_is_floor
                                  ? ", a minimum: it leaves out a recursion or a frame it cannot size"
                                  : "",
                              s.stack.predicted_thread_bytes.value_or(0), path));
    }
    if (s.stack.room_bytes && s.stack.required_room_bytes) {
        const bool ok = *s.stack.room_bytes >= *s.stack.required_room_bytes;
        text.line(fmt::format("room       {} B {} {:g} x peak = {} B", *s.stack.room_bytes, ok ? ">=" : "<",
                              s.stack.rule_factor, *s.stack.required_room_bytes),
                  colour(ok ? Paint::RulePass : Paint::RuleFail));
    }
}

// The checks, what failed first, then warnings, then what passed (each in the checks' own order),
// and the RAM map the ELF lays out.
void checks_summary(SummaryText &text, const Snapshot &s)
{
    text.gap = 4;
    auto rank = [](const std::string &v) { return v == "FAIL" ? 0 : v == "WARN" ? 1 : 2; };
    for (int shown = 0; shown < 3; shown++) {
        for (const Check &c : s.checks) {
            if (rank(c.verdict) != shown) continue;
            text.line(fmt::format("{:<4} {}", c.verdict, c.rule), verdict_colour(c.verdict), c.reason);
            if (c.verdict != "PASS") text.out.push_back({c.reason, verdict_colour(c.verdict), 12, false, 0, true, {}});
        }
    }
    if (!s.ram_map.empty()) {  // before flashing: where the linker put each RAM area (arena budget)
        text.gap = 4;
        text.line("RAM map (from the ELF)", kGrey,
                  "Every RAM area the firmware's ELF lays out, lowest first: what `arena budget` judges the stack "
                  "rule on");
        for (const RamArea &r : s.ram_map) {
            const bool key = r.kind == "arena" || r.kind == "stack";
            text.line(fmt::format("  {:#010x} {:>9} B {}", r.low_addr, r.high_addr - r.low_addr, r.what),
                      key ? kWhite : kDim, fmt::format("{:#x}-{:#x}", r.low_addr, r.high_addr));
        }
    }
}

}  // namespace

std::vector<PanelLine> summary_lines(const Snapshot &s, const Arena *a, int selected)
{
    SummaryText text;
    text.line("Summary: verdict " + s.verdict + (s.time.size() >= 19 ? "  at " + s.time.substr(11, 8) + " UTC" : ""),
              verdict_colour(s.verdict), s.time.empty() ? "" : "snapshot taken " + s.time);
    if (a) arena_summary(text, s, *a);
    stack_summary(text, s);
    checks_summary(text, s);
    if (a && selected >= 0 && selected < int(a->regions.size())) {
        const Region &reg = a->regions[std::size_t(selected)];
        text.gap = 4;
        text.line("pinned: " + reg.label, colour(Paint::Selected));
        text.line(
            fmt::format("  {:#x} +{} {}", a->base_addr + reg.offset, reg.offset, format_bytes_exact(reg.size_bytes)));
        text.line(reg.first_use && reg.last_use
                      ? fmt::format("  scopes {}..{}, {}", *reg.first_use, *reg.last_use, reg.kind)
                      : "  whole run, " + reg.kind);
    }
    return text.out;
}

std::vector<PanelLine> fault_lines(const Snapshot &s, bool in_window)
{
    std::vector<PanelLine> out;
    const Tflm *t = s.tflm && !s.tflm->verdicts.empty() ? &*s.tflm : nullptr;
    const Fault *f = s.fault ? &*s.fault : nullptr;
    if (!t && !f) return out;
    const Rgba red = colour(Paint::RuleFail);
    int gap = 0;
    auto shown = [&](const std::string &text) {
        return std::any_of(out.begin(), out.end(), [&](const PanelLine &l) { return l.text == text; });
    };
    auto para = [&](const std::string &text, Rgba c, int indent = 0) {
        out.push_back({text, c, indent, false, gap, indent > 0, {}});
        gap = 0;
    };
    // The answer first: the post-mortem's verdicts, then what TFLM's state is, then the fault.
    if (t) {
        bool any_smashed = false;
        for (const TflmVerdict &v : t->verdicts) any_smashed |= !v.smashed.empty();
        para(std::string("POST-MORTEM of TFLM's objects") +
                 (any_smashed ? "  (red on the map: what the stack overwrote)" : ""),
             red);
        for (const TflmVerdict &v : t->verdicts) {
            para(v.headline, red);
            for (const std::string &e : v.evidence) para(e, kWhite, 8);
            for (const TflmSmashed &o : v.smashed) {
                para(fmt::format("overwritten: {} at {:#x} ({} B): {}", o.name, o.addr, o.size, o.why), kWhite, 8);
            }
        }
        para("TFLM: " + t->condition + ": " + t->meaning, kWhite);
        for (const std::string &e : t->evidence) {
            if (!shown(e)) para(e, kGrey, 8);
        }
        gap = 4;
    }
    if (f) {
        para("FAULT: " + (f->exception.empty() ? std::string("fault") : f->exception) +
                 "  (red on the map: regions overwritten since allocation)",
             red);
        // The verdicts first, then the evidence, so what has to be scrolled to is the detail.
        for (const FaultVerdict &v : f->verdicts) {
            if (!shown(v.headline)) para(v.headline, red);
        }
        if (f->stale)
            para("from before a reset: the arena in memory is this boot's, no verdict is drawn from it", kWhite);
        para("PC " + f->pc_where, kWhite);
        if (!f->lr_where.empty()) para("caller " + f->lr_where, kWhite);
        // The architecture's registers as its port named and decoded them (any architecture).
        for (const FaultRegister &r : f->registers) {
            if (!r.value) continue;
            para(fmt::format("{} {:#010x}", r.name, *r.value) + (r.meaning.empty() ? "" : ": " + r.meaning), kWhite);
        }
        if (!f->source.empty()) para("from " + f->source + (f->arch.empty() ? "" : " (" + f->arch + ")"), kGrey);
        for (const auto &c : f->causes) para(c, kWhite);
        for (const FaultVerdict &v : f->verdicts) {
            for (const std::string &e : v.evidence) {
                if (!shown(e)) para(e, kWhite);
            }
        }
        for (const auto &n : f->notes) {
            if (!shown(n)) para(n, kWhite);
        }
        for (const auto &b : f->bits) para(b, kGrey);
    }
    if (in_window) para("(the whole report: arena fault in GDB)", kDim);
    return out;
}

std::vector<PanelLine> diff_lines(const DiffDoc &d)
{
    std::vector<PanelLine> out;
    const Rgba mark = colour(Paint::Changed);
    out.push_back({"DIFF (stripe on the map): " + d.summary, mark, 0, false, 0, false, {}});
    std::size_t n = 0, total = 0;
    for (const DiffArena &a : d.arenas) total += a.lines.size();
    for (const DiffArena &a : d.arenas) {
        if (a.lines.empty()) continue;
        if (d.arenas.size() > 1) out.push_back({fmt::format("arena {}:", a.index), kWhite, 0, false, 0, false, {}});
        for (const std::string &l : a.lines) {
            if (n++ == 200) {
                out.push_back(
                    {fmt::format("... {} more: arena diff lists them", total - 200), kDim, 8, false, 0, true, {}});
                break;
            }
            out.push_back({l, kWhite, 8, false, 0, true, {}});
        }
    }
    return out;
}

}  // namespace arenascope
