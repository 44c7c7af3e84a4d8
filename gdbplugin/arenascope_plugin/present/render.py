"""Text the commands print, from analysis results (pure Python). Units are always shown."""
import math

from arenascope_plugin.analyse import figures
from arenascope_plugin.decode import abi
from arenascope_plugin.present import style
from arenascope_plugin.remedy import Remedy


def kib(n):
    return f"{n} B" if n < 1024 else f"{n} B ({n / 1024:.1f} KiB)"


NO_ARENA = "no arena published yet (the firmware has not called arenascope_arena_add)"


def info_lines(desc, figs, stack, located_by, kernels=()):
    """kernels: agentless, the line(s) saying which TFLM kernels the planner assumed."""
    if desc.agentless:
        out = [style.paint(f"TFLM's own objects, no arenascope agent ({located_by}), {desc.addr_size}-byte "
                           "addresses", "title"),
               "  inferences completed:   unavailable (agentless: only the agent counts them)",
               "  band measurements:      unavailable (agentless: canary and guard bands need the agent)"]
        out += [f"  kernels:                {k}" for k in kernels]
    else:
        out = [style.paint(f"arenascope descriptor at {desc.address:#x} ({located_by}), ABI "
                           f"{desc.abi_major}.{desc.abi_minor}, {desc.addr_size}-byte addresses", "title"),
               f"  inferences completed:   {desc.invokes}{' (one running now)' if desc.in_invoke else ''}",
               "  band measurements:      " + (
                   "none yet (the agent has not run arenascope_measure)" if not desc.measured else
                   "by the agent at its last arenascope_measure (`arena check` re-reads memory now)"
                   if desc.measured_by == "agent" else desc.measured_by)]
    out += [style.paint(f"  corrupt:                {c.text()}", "FAIL") for c in desc.corrupt]
    if desc.halted_in_update:
        out.append(style.paint("  warning: the target stopped inside an agent update (seq odd): figures may mix old "
                               "and new values; step past the agent call and look again", "WARN"))
    if not desc.arenas:
        out.append(NO_ARENA)
    for a in desc.arenas:
        f = figs[a.index]
        src = ("TFLM's own figures" if a.tflm_figures else
               "rebuilt from the ELF and the planner's prediction" if desc.agentless else "published by the firmware")
        two = f", the {a.memory} buffer of TFLM's two-arena mode" if a.memory else ""
        out += [style.paint(f"arena {a.index}", "title") + f" ({src}{two})",
                f"  bounds:                 {a.base_addr:#x}-{a.end_addr:#x}, size {kib(a.size)}",
                f"  head (planned):         {kib(a.head)}, 0..+{a.head}",
                f"  temp high-water:        {kib(a.temp)} from base ({a.temp - a.head} B above the head)",
                f"  tail (persistent):      {kib(a.size - a.tail)}, +{a.tail}..+{a.size}",
                f"  used:                   {kib(f.used)} = max(head, temp) + tail (TFLM arena_used_bytes)",
                f"  peak:                   {kib(f.peak)}" + (" (raised by canary damage)" if f.damage else
                                                              " (the planner's minimum arena: what AllocateTensors "
                                                              "needs)" if f.minimum_arena and f.peak == f.minimum_arena
                                                              and f.peak > f.used else "")]
        if desc.not_judged("canary"):
            out.append("  free band intact:       not judged: the canary_pattern is corrupt")
        elif f.free_band_size:
            out.append(f"  free band intact:       {f.free_intact} B of {f.free_band_size} B"
                       + (f" (damaged +{f.damage[0]}..+{f.damage[1]})" if f.damage else ""))
        else:
            out.append("  free band intact:       " + ("unavailable (agentless: no canary without the agent)"
                                                     if desc.agentless else
                                                     "unknown (canary not filled)"))
        est = "" if f.minimum_arena else " (upper estimate: measured against used bytes, not the minimum arena)"
        out.append(f"  headroom:               {f.headroom} B = {f.headroom_pct:.1f} % of peak{est}")
        out.append(f"  regions:                {a.region_count} of {a.region_capacity} table entries"
                   + (" (the table is corrupt: none shown)" if a.table_corrupt else ""))
    g = desc.guard
    if g.filled:
        state = ("not judged: the canary_pattern is corrupt" if desc.not_judged("guard") else
                 f"{g.size - g.touched_bytes} B of {g.size} B intact" if desc.measured else "not measured yet")
        out.append(f"guard band:               {g.low_addr:#x}-{g.high_addr:#x}, {state}")
    out += stack_lines(stack, indent="")
    return out


def stack_lines(s, indent="  ", sp_owner=None, reach=None):
    """sp_owner: whose stack the SP is on when it is not this one (an RTOS task's), or None; reach
    (default: the stack figures' reach_low, the post-mortem's):
    the deepest address the post-mortem found the stack wrote below its limit (analyse/postmortem's
    stack-into-arena verdict), or None."""
    if reach is None:
        reach = getattr(s, "reach_low", None)
    if s.high <= s.low:
        return [f"{indent}stack:                    unknown: no bounds (no agent, no linker symbols such as "
                f"__StackLimit/__StackTop): {Remedy('stack-range', 'LOW HIGH'):q}"]
    out = [f"{indent}stack:                    {s.low:#x}-{s.high:#x}, size {kib(s.size)}"]
    if s.sp is not None:
        out.append(indent + _sp_text(s, sp_owner))
    if s.hwm is not None:
        paint = ("none anywhere: not painted (yet?)" if not s.painted else
                 "none left at the bottom: the stack reached its limit" if s.hwm <= s.low else
                 f"{s.hwm - s.low} B at the bottom still painted")
        out.append(f"{indent}paint:                    {paint}")
    if s.hwm is None and getattr(s, "corrupt", ""):
        out.append(f"{indent}high-water mark:          not judged: the descriptor's {s.corrupt} is corrupt "
                   f"({Remedy('stack-paint-pattern'):q} names the real one)")
    elif s.hwm is None and getattr(s, "unread", ""):
        out.append(f"{indent}high-water mark:          unknown: the stack could not be read ({s.unread})")
    elif s.hwm is None:
        out.append(f"{indent}high-water mark:          unknown (not measured by the agent; stack not painted?)")
    else:
        src = "measured by the agent" if s.source == "agent" else "scanned from target memory"
        out.append(f"{indent}high-water mark:          {s.hwm:#x} ({src}"
                   + ("; paint a frame never wrote: the stack went lower, below" if reach is not None and
                      reach < s.low and s.hwm > reach else "") + ")")
        if not s.painted:
            out.append(f"{indent}peak depth:               unknown (no paint to measure against)")
        elif reach is not None and reach < s.low:
            out.append(f"{indent}peak depth:               >= {kib(s.high - reach)}: {s.low - reach} B past the "
                       f"{kib(s.size)} stack, into what lies below (OVERFLOW; the deepest evidence, `arena fault`)")
        elif s.peak_is_lower_bound:
            out.append(f"{indent}peak depth:               >= {kib(s.peak)}: past the {kib(s.size)} stack and through "
                       f"the whole guard band, into the arena below (OVERFLOW)")
        else:
            out.append(f"{indent}peak depth:               {kib(s.peak)} of {kib(s.size)}"
                       + (" (paint gone at the limit: OVERFLOW)" if s.overflowed else ""))
        if reach is not None and reach < s.low and s.room is not None:
            need = math.ceil(figures.STACK_RULE_FACTOR * (s.high - reach))
            out.append(f"{indent}stack rule:               room to arena end {s.room} B < {figures.rule_text()} x "
                       f"peak (>= {s.high - reach} B) = {need} B: " + style.paint("FAIL", "FAIL"))
        elif s.room is not None and s.painted and s.room > 0:
            ok = s.room >= s.required_room
            out.append(f"{indent}stack rule:               room to arena end {s.room} B "
                       f"{'>=' if ok else '<'} {figures.rule_text()} x peak = {s.required_room} B: "
                       + style.paint("PASS" if ok else "FAIL", "PASS" if ok else "FAIL"))
    return out



def _sp_text(s, sp_owner):
    """stack_lines' line on the current SP of stack figures s (not indented): where it is, on or off
    the stack."""
    if s.sp_on_stack:
        return f"current SP:               {s.sp:#x} ({s.high - s.sp} B in use now)"
    if sp_owner:
        return f"current SP:               {s.sp:#x} is on {sp_owner}, not on this (main) stack"
    if s.sp_object is not None:
        name, off = s.sp_object
        return (f"current SP:               {s.sp:#x} is in {name} (+{off}), a data object of the "
                "ELF, not on this stack: a handler's own stack (such as the agent's trap stack)")
    if s.low - s.size <= s.sp < s.low:  # just below the limit: this stack overflowed, not another's
        return (f"current SP:               {s.sp:#x} is {s.low - s.sp} B below this stack's limit "
                f"{s.low:#x}: the stack has overflowed (`arena whereis $sp` says into what, `arena fault` "
                "the verdict)")
    return (f"current SP:               {s.sp:#x} is not on this stack (another thread's or "
            "the main stack? select the thread that runs the inferences)")


def _mostly_metadata(a, lo, hi):
    """True when metadata regions (TFLM's, or a user's own named ones) hold at least half of
    [lo, hi): the cell then shows metadata, in the head as in the tail."""
    meta = sum(min(r.end, hi) - max(r.offset, lo) for r in a.regions
               if r.kind == "metadata" and r.offset < hi and lo < r.end)
    return meta * 2 >= hi - lo


def _cell_kind(a, f, lo, hi):
    """What one map cell [lo, hi) shows: damage wins, then the head, temp, the tail, free; a
    head or tail cell mostly held by metadata regions shows metadata."""
    if f.damage and lo < f.damage[1] and f.damage[0] < hi:
        return "damage"
    if lo < a.head:
        return "metadata" if _mostly_metadata(a, lo, min(hi, a.head)) else "tensor"
    if lo < a.temp and a.head < hi and a.temp > a.head:
        return "temp"
    if hi > a.tail:
        return "metadata" if _mostly_metadata(a, max(lo, a.tail), min(hi, a.size)) else "persistent"
    return "free"


def _keep_small_areas(a, f, kinds, width):
    """Gives the head, temp and damage one cell each when the cell rule hid them (an area smaller
    than a cell beside a larger one), taking it from a neighbour that has more than one cell."""
    for kind, lo, hi in (("tensor", 0, a.head), ("temp", a.head, a.temp),
                         ("damage", *(f.damage or (0, 0)))):
        if hi <= lo or kind in kinds:
            continue
        c = min(width - 1, lo * width // a.size)
        for cand in (c, c + 1, c - 1):
            if 0 <= cand < width and kinds.count(kinds[cand]) > 1:
                kinds[cand] = kind
                break


def map_lines(desc, figs, width=64, overwritten=frozenset()):
    """The arena as a bar of `width` cells (plus the guard band), a legend, then the regions;
    overwritten: {(arena index, region index)} drawn as damage and marked."""
    if not desc.arenas:
        return [NO_ARENA]
    out = []
    for a in desc.arenas:
        f = figs[a.index]
        kinds = [_cell_kind(a, f, a.size * c // width, max(a.size * (c + 1) // width, a.size * c // width + 1))
                 for c in range(width)]
        _keep_small_areas(a, f, kinds, width)
        for r in (r for r in a.regions if (a.index, r.index) in overwritten and r.size):
            for c in range(r.offset * width // max(a.size, 1), min(width, -(-r.end * width // max(a.size, 1)))):
                kinds[c] = "damage"
        cells = [style.block(k) for k in kinds]
        gtxt = ""
        g = desc.guard
        if g.filled and a is figures.stack_below(desc):
            gcells = max(1, width * g.size // max(a.size, 1))
            gtxt = "".join(style.block("damage" if g.touched else "guard") for _ in range(min(gcells, 8)))
        out.append(f"arena {a.index} {a.base_addr:#x} [{''.join(cells)}]{gtxt} {a.end_addr:#x}"
                   + (" + guard" if gtxt else ""))
        out.append(f"  {width} cells of {a.size / width:.0f} B; head 0..+{a.head}, temp ..+{a.temp}, "
                   f"free +{a.temp}..+{a.tail}, tail +{a.tail}..+{a.size}")
        offline = [r for r in a.regions if "offline" in r.flag_names]
        if offline:
            out.append(f"  {len(offline)} of the head's regions are placed by the model's offline plan "
                       "(OfflineMemoryAllocation): flag \"offline\" below")
    legend = [("tensor", "head (planned tensors + scratch)"), ("temp", "temp"), ("free", "free band"),
              ("persistent", "persistent tail"), ("metadata", "TFLM metadata"), ("guard", "guard band"),
              ("damage", "canary damage, overwritten regions")]
    out.append("legend: " + "  ".join(f"{style.block(k)} {text}" for k, text in legend))
    for a in desc.arenas:
        out.append(style.paint(f"regions of arena {a.index} by address:", "title"))
        for r in sorted(a.regions, key=lambda r: (r.offset, r.index)):
            out.append("  " + _region_row(a, r) + (" " + style.paint(OVERWRITTEN, "FAIL")
                                                   if (a.index, r.index) in overwritten else ""))
    return out


def _region_row(a, r):
    life = f"{r.first_use:>3}..{r.last_use:<3}" if r.planned else "  whole  "
    flags = ",".join(r.flag_names) or "-"
    return (f"+{r.offset:<6} {a.base_addr + r.offset:#010x} {r.size:>6} B  {style.paint(f'{r.kind:<10}', r.kind)} "
            f"{life} {flags:<10} {figures.region_label(r)}")


SORT_KEYS = {
    "address": lambda r: (r.offset, r.index),
    "size": lambda r: (-r.size, r.offset),
    "lifetime": lambda r: (r.first_use if r.planned else 1 << 30, r.last_use, r.offset),
}


OVERWRITTEN = "OVERWRITTEN"  # a region holding bytes found overwritten (analyse/diagnosis: checksums, objects)


def region_table(desc, sort="address", overwritten=frozenset()):
    """`arena regions`: each arena's regions; overwritten: {(arena index, region index)} marked."""
    if not desc.arenas:
        return [NO_ARENA]
    out = []
    for a in desc.arenas:
        out.append(style.paint(f"arena {a.index}: {len(a.regions)} regions, sorted by {sort}", "title"))
        out.append(f"  {'#':>3} {'id':>5} {'kind':<10} {'offset':>7} {'address':>10} {'size':>8} "
                   f"{'first':>5} {'last':>5} {'flags':<14} name/shape/type")
        for r in sorted(a.regions, key=SORT_KEYS[sort]):
            ident = "-" if r.id == abi.ID_NONE else str(r.id)
            first = str(r.first_use) if r.planned else "-"
            last = str(r.last_use) if r.planned else "-"
            extra = " ".join(x for x in (r.name, str(r.shape) if r.shape else None, r.dtype) if x) or "(unknown)"
            mark = style.paint(OVERWRITTEN, "FAIL") + " " if (a.index, r.index) in overwritten else ""
            out.append(f"  {r.index:>3} {ident:>5} {style.paint(f'{r.kind:<10}', r.kind)} {r.offset:>7} "
                       f"{a.base_addr + r.offset:#010x} {r.size:>6} B {first:>5} {last:>5} "
                       f"{','.join(r.flag_names) or '-':<14} {mark}{extra}")
    return out


_ORD = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def plan_lines(arena, p, width=64):
    """One row per scope: live bytes, a bar over the head (one letter per live tensor, '*' for
    scratch, '!' where two live regions share bytes), and the lower bound marked."""
    planned = [r for r in arena.regions if r.planned and r.kind in ("tensor", "scratch")]
    if not p.scopes:  # a tail-only arena (two-arena mode's persistent buffer), or no plan made yet
        return [style.paint(f"arena {arena.index} plan: none: this arena holds no planned tensor or scratch "
                            "buffer (a persistent buffer, or TFLM has not planned the head: AllocateTensors did "
                            "not finish); `arena plan --model FILE.tflite` charts the model's plan", "title")]
    extent = max([r.end for r in planned] + [arena.head, 1])
    letters = {r.index: ("*" if r.kind == "scratch" else _ORD[i % len(_ORD)])
               for i, r in enumerate(r for r in planned if r.kind == "tensor")}
    for r in planned:
        letters.setdefault(r.index, "*")
    out = [style.paint(f"arena {arena.index} plan: {p.scopes} scopes (scope 0 = model inputs, operator i runs in "
                       f"scope i+1), bar = head 0..{extent} B, {extent / width:.1f} B a cell", "title"),
           f"  {'op':>4} {'scope':>5} {'live':>8}  bar"]
    for t in range(p.scopes):
        cells = []
        for c in range(width):
            lo, hi = extent * c // width, max(extent * (c + 1) // width, extent * c // width + 1)
            here = [i for i in p.live_regions[t] if arena.regions[i].offset < hi and lo < arena.regions[i].end]
            # Several regions side by side in one cell: draw the smallest, so that a small
            # buffer next to a large one stays visible (the large one shows in its other cells).
            cells.append("." if not here else "!" if len(here) > 1 and _share(arena, here, lo, hi)
                         else letters[min(here, key=lambda i: (arena.regions[i].size, i))])
        op = "in" if t == 0 else str(t - 1)
        mark = "  <- lower bound" if t == p.lower_bound_scope else ""
        out.append(f"  {op:>4} {t:>5} {p.live_bytes[t]:>6} B  {''.join(cells)}{mark}")
    head = arena.head
    ratio = f"{head / p.lower_bound:.2f}" if p.lower_bound else "-"
    out.append(f"  lower bound {p.lower_bound} B (scope {p.lower_bound_scope}); planned head {head} B; "
               f"head / lower bound = {ratio}")
    out.append("  key: " + ", ".join(f"{letters[r.index]}={figures.region_label(r)}"
                                     for r in planned if r.kind == "tensor") + ", *=scratch")
    return out


def _share(arena, idx, lo, hi):
    spans = sorted((max(arena.regions[i].offset, lo), min(arena.regions[i].end, hi)) for i in idx)
    return any(spans[k + 1][0] < spans[k][1] for k in range(len(spans) - 1))


def check_lines(check_list):
    out = [f"  {style.paint(f'{c.verdict:<4}', c.verdict)}  {c.rule:<10} {c.reason}" for c in check_list]
    v = figures.worst(check_list)
    out.append(f"arena check: {style.paint(v, v)} ({sum(c.verdict == 'FAIL' for c in check_list)} fail, "
               f"{sum(c.verdict == 'WARN' for c in check_list)} warn, {len(check_list)} rules)")
    return out
