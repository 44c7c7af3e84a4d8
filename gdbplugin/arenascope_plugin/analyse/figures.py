"""Figures, checks, the plan over time and address ownership, from a decoded Descriptor
(pure Python). Every number the commands print and the snapshot carries is computed here once.

Definitions (units: bytes):
- used = max(head, temp) + (size - tail): TFLM's MicroAllocator::used_bytes() formula
  (tensorflow/lite/micro/micro_allocator.cc; arena_used_bytes()).
- peak = used, raised to the end of any canary damage in the free band: the most of the arena
  anything has been seen to use.
- headroom = size - peak, and as a percentage of peak. Measured against the used bytes, it is an
  UPPER estimate: TFLM needs more than arena_used_bytes() while it allocates (its planner takes
  all free space), up to 58 % more for real models (../shared/tflm-figures: hello_world int8 on
  a Cortex-M4, 676 B used, 1068 B needed). The minimum arena comes from the planner tool later.
- stack peak = stack high - high-water mark; stack room = stack high - end of the arena below
  the stack (the room the stack has before it reaches the arena); rule: room >= 1.5 x peak.
- live bytes at scope t = sum of sizes of the planned regions with first_use <= t <= last_use;
  lower bound = the largest live bytes over all scopes (no plan can use less head).
"""
import bisect
import heapq
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from arenascope_plugin.acquire import targetmemory
from arenascope_plugin.decode import abi
from arenascope_plugin.decode.descriptor import Arena, Band, Descriptor, Region
from arenascope_plugin.decode.plan import scratch_label
from arenascope_plugin.remedy import Remedy

# Shared with the planner's snapshot (planner/include/arenascope/planner/budget.h), each checked
# against tests/fixtures/shared_definitions_golden.json: the stack rule's factor (snapshots carry
# it as stack.rule_factor, which the viewer reads), headroom_pct_2dp and scratch_label.
STACK_RULE_FACTOR = 1.5
HEADROOM_WARN_PCT = 10.0
HEADROOM_NOTE_PCT = 20.0
PASS, WARN, FAIL = "PASS", "WARN", "FAIL"


@dataclass
class Check:
    rule: str
    verdict: str
    reason: str


@dataclass
class ArenaFigures:
    used: int
    peak: int
    headroom: int
    headroom_pct: float
    free_band_size: int
    free_intact: int
    damage: tuple | None             # (start offset, end offset) in the arena, or None
    minimum_arena: int | None = None      # from the planner tool, when it can tell


@dataclass
class StackFigures:
    low: int
    high: int
    sp: int | None
    hwm: int | None                  # lowest address that lost its paint; None: unknown
    source: str                      # "agent", "scan" or "none"
    painted: bool                    # some painted word is left (False: never painted)
    arena_end: int | None            # end of the arena just below the stack
    guard_low: int | None = None     # set when the stack went through the whole guard band
    # The deepest sign of the stack below its limit (a stacked return address, a frame the ELF's
    # call frame information sizes: analyse/postmortem.deepest_evidence), set by the post-mortem
    # when the stack ran into the arena; paint left at the limit does not show it.
    reach_low: int | None = None
    unread: str = ""                 # why the stack's words could not be read (a RAM dump lacking them)
    apart: str = ""                  # the memory apart from the stack's that arenas lie in (external RAM)
    sp_object: tuple | None = None   # (name, offset) of the ELF's data object SP is in when off the stack
    corrupt: str = ""                # the corrupt descriptor field the paint rests on (Descriptor.corrupt)

    @property
    def sp_on_stack(self) -> bool:
        return self.sp is not None and self.low <= self.sp <= self.high

    @property
    def peak_is_lower_bound(self) -> bool:
        return self.guard_low is not None or self.reach_low is not None

    @property
    def lowest(self) -> int | None:
        """The lowest address the stack is known to have reached: its high-water mark, the guard
        band's low end when it went through it, or the post-mortem's deepest evidence below its
        limit, whichever is lowest; None when unknown."""
        known = [a for a in (self.hwm, self.guard_low, self.reach_low) if a is not None]
        return min(known) if known else None

    @property
    def size(self) -> int:
        return self.high - self.low

    @property
    def peak(self) -> int | None:
        """Bytes of stack used at the deepest; at least high - guard_low when it went through
        the guard band, or high - reach_low when it ran into the arena (what it did below that
        is not measured). None when unknown: no high-water mark, or no paint to measure it against
        (a stack never painted has lost its "paint" everywhere, which says nothing of its use)."""
        if (self.hwm is None or not self.painted) and self.reach_low is None and self.guard_low is None:
            return None
        low = self.guard_low if self.guard_low is not None else self.hwm
        if self.reach_low is not None:
            low = self.reach_low if low is None else min(low, self.reach_low)
        return self.high - low

    @property
    def overflowed(self) -> bool:
        """The stack went down to its limit or past it: its paint is gone down to the limit, or
        the post-mortem found its values below it (reach_low)."""
        return (self.painted and self.hwm is not None and self.hwm <= self.low) or \
            (self.reach_low is not None and self.reach_low < self.low)

    @property
    def room(self) -> int | None:
        return None if self.arena_end is None else self.high - self.arena_end

    @property
    def room_left(self) -> int | None:
        """Bytes between the deepest point the stack reached (its high-water mark; the guard band's
        low end when it went through it) and the end of the arena below it: room - peak. None
        when either is unknown."""
        return None if self.room is None or self.peak is None else self.room - self.peak

    @property
    def required_room(self) -> int | None:
        return None if self.peak is None else math.ceil(self.peak * STACK_RULE_FACTOR)


@dataclass
class Plan:
    scopes: int                       # scopes 0..scopes-1
    live_bytes: list[int]
    live_regions: list[list[int]]     # region indices live at each scope
    lower_bound: int
    lower_bound_scope: int


@dataclass
class Overlap:
    a: int
    b: int
    start: int
    end: int


def headroom_pct_2dp(headroom: int, peak: int) -> float:
    """The snapshot's headroom_pct: 100 x headroom / peak rounded half up (toward +infinity) to
    0.01, in integers as the planner's headroom_pct_hundredths (Python's round() would round half
    to even, and on a float); 0.0 when peak is 0."""
    return (20000 * headroom + peak) // (2 * peak) / 100 if peak > 0 else 0.0


def rule_text() -> str:
    """The stack rule's factor as the commands print it ("1.5")."""
    return f"{STACK_RULE_FACTOR:g}"


def changed_range(data: bytes, pattern: int) -> tuple[int, int]:
    """(first, end) byte offsets of the words of data that differ from the 32-bit pattern, as the
    agent's arenascope_measure computes them (whole little-endian words; a partial last word is
    ignored), or (NONE, NONE) when every word holds it."""
    words = len(data) // 4
    body, full = bytes(data[:4 * words]), pattern.to_bytes(4, "little") * words
    if body == full:
        return abi.NONE, abi.NONE
    # Binary searches on whole-slice comparisons (memcmp), not a Python loop a word: the live
    # poller asks again at each slice of a band that changed (analyse/bands.py).
    a, b = 0, words          # the first a words hold the pattern, the first b do not
    while b - a > 1:
        k = (a + b) // 2
        a, b = (k, b) if body[:4 * k] == full[:4 * k] else (a, k)
    lo = a                   # the first differing word
    a, b = lo, words         # the words from b on hold the pattern, those from a do not
    while b - a > 1:
        k = (a + b) // 2
        a, b = (a, k) if body[4 * k:] == full[4 * k:] else (k, b)
    return 4 * lo, 4 * b     # b: just past the last differing word


def used_bytes(head: int, temp: int, tail: int, size: int) -> int:
    """TFLM's arena_used_bytes(): max(head, temp) + (size - tail), offsets in bytes."""
    return max(head, temp) + (size - tail)


def arena_figures(arena: Arena, minimum_arena: int | None = None) -> ArenaFigures:
    """minimum_arena: the planner's minimum for this firmware's model and kernels, when known;
    the headroom is then measured against it (AllocateTensors needs it), not against used bytes."""
    used = used_bytes(arena.head, arena.temp, arena.tail, arena.size)
    band = arena.canary
    damage = None
    high_water = max(arena.head, arena.temp)
    if band.filled and band.touched:
        start = band.low_addr - arena.base_addr + band.touched_lo
        end = band.low_addr - arena.base_addr + band.touched_hi
        damage = (start, end)
        high_water = max(high_water, end)
    peak = high_water + (arena.size - arena.tail)
    if minimum_arena:
        peak = max(peak, minimum_arena)
    headroom = arena.size - peak
    return ArenaFigures(used=used, peak=peak, headroom=headroom,
                        headroom_pct=(100.0 * headroom / peak) if peak else 0.0,
                        free_band_size=band.size, free_intact=band.size - band.touched_bytes, damage=damage,
                        minimum_arena=minimum_arena)


def stack_below(desc: Descriptor, apart: Callable[[int], str | None] | None = None) -> Arena | None:
    """The arena whose end is nearest below the stack's low end (the one the stack runs into),
    among those not in a memory apart from the stack's (apart(address) names that memory, or
    None: the stack cannot run into external RAM)."""
    below = [a for a in desc.arenas if a.end_addr <= desc.stack.low_addr and not (apart and apart(a.base_addr))]
    return max(below, key=lambda a: a.end_addr) if below else None


def stack_figures(desc: Descriptor, sp: int | None = None, scanned_hwm: int | None = None,
                  bounds: tuple[int, int] | None = None, painted: bool | None = None,
                  apart: Callable[[int], str | None] | None = None) -> StackFigures:
    """Stack figures from the agent's measurement, else from a host scan (scanned_hwm, and
    painted: whether any painted word was left). apart(address): the name of the memory apart
    from the stack's holding it (external RAM), or None (stack_below)."""
    low, high = bounds if bounds else (desc.stack.low_addr, desc.stack.high_addr)
    arena = stack_below(desc, apart)
    elsewhere = sorted({m for a in desc.arenas if apart and (m := apart(a.base_addr))})
    hwm, source = None, "none"
    if scanned_hwm is not None:
        hwm, source = scanned_hwm, "scan"
    elif desc.agent_measured and desc.stack.filled and bounds is None and not desc.not_judged("stack"):
        hwm = desc.stack.high_addr if desc.stack.touched_lo == abi.NONE else desc.stack.low_addr + desc.stack.touched_lo
        source = "agent"
    if painted is None:  # the agent's measurement cannot tell "never painted" from "all used"
        painted = hwm is not None
    return StackFigures(low=low, high=high, sp=sp, hwm=hwm, source=source, painted=painted,
                        arena_end=arena.end_addr if arena else None, guard_low=through_guard(desc.guard, low, hwm),
                        apart=", ".join(elsewhere),
                        corrupt=", ".join(c.field for c in desc.not_judged("stack")) if hwm is None else "")


def through_guard(g: Band, low: int, hwm: int | None) -> int | None:
    """The guard band's low end when a stack whose limit is `low` went through all of it: no paint
    left at the stack's bottom, and the band right below it changed from its low end up (into
    what lies below). None otherwise."""
    hit = hwm is not None and hwm <= low and g.filled and g.high_addr == low and g.touched and g.touched_lo == 0
    return g.low_addr if hit else None


def per_table(fn: Callable | None = None, *, also: Callable | None = None) -> Callable:
    """fn(arena), a pure function of the arena's regions, worked out once for each table: a live
    refresh reuses the last result while the table is unchanged (the descriptor session attaches
    the same Region objects until the layout generation moves, decode/session.py), and so do the
    checks that ask twice. A table is told by the identity of its Region objects, which are kept
    beside the result (so no identity is reused), and by also(arena) when given (what fn reads
    that may be set after decoding: present/snapshot.py's names); a region's place and lifetime
    never change once the arena's figures are asked for. Used as @per_table or
    @per_table(also=...)."""
    if fn is None:
        return lambda f: per_table(f, also=also)
    kept: dict[tuple, tuple[list, object]] = {}

    def once(arena: Arena):
        key = (tuple(map(id, arena.regions)), also(arena) if also is not None else None)
        hit = kept.get(key)
        if hit is not None:
            return hit[1]
        if len(kept) >= 4:
            kept.clear()
        result = fn(arena)
        kept[key] = (list(arena.regions), result)
        return result
    once.__doc__, once.__name__ = fn.__doc__, fn.__name__
    return once


@per_table
def plan(arena: Arena) -> Plan:
    """Live bytes and live regions per allocation scope (inclusive lifetimes), the lower bound and
    its first scope. A sweep over the scopes: linear in scopes plus live regions, not scopes x
    regions (a 20,000-operator model took over a minute in GDB)."""
    planned = [r for r in arena.regions if r.planned and r.kind in ("tensor", "scratch")]
    scopes = max((r.last_use for r in planned), default=-1) + 1
    starts = {}
    for k, r in enumerate(planned):
        if r.last_use >= max(r.first_use, 0):  # never live: lifetime -1..-1, or inverted
            starts.setdefault(max(r.first_use, 0), []).append(k)
    live_bytes, live_regions, active = [], [], []
    for t in range(scopes):
        active = [k for k in active + starts.get(t, []) if planned[k].last_use >= t]
        active.sort()  # the regions' order, as they are listed
        live_regions.append([planned[k].index for k in active])
        live_bytes.append(sum(planned[k].size for k in active))
    lower = max(live_bytes, default=0)
    return Plan(scopes=scopes, live_bytes=live_bytes, live_regions=live_regions, lower_bound=lower,
                lower_bound_scope=live_bytes.index(lower) if live_bytes else 0)


@per_table
def past_the_end(arena: Arena) -> list[Region]:
    """The regions that extend past the arena's size (a corrupt region table)."""
    return [r for r in arena.regions if r.end > arena.size]


@per_table
def inverted_lifetimes(arena: Arena) -> list[Region]:
    """Planned regions whose first_use is after their last_use: a corrupt region entry (TFLM's
    allocation scopes always give first <= last)."""
    return [r for r in arena.regions if r.planned and r.first_use > r.last_use]


@per_table
def overlaps(arena: Arena) -> list[Overlap]:
    """Pairs of regions that share bytes while both are live (each a plan error), in the order of
    their offsets; persistent regions live for the whole run, regions of no size share nothing.

    A sweep over lifetimes, not over pairs: each region, as it becomes live, is checked against
    the regions live then, kept ordered by offset (bisect), so a sound plan costs O(n log n). A
    scan of every pair that shares bytes at some time was quadratic: a 100,000-operator chain
    reuses a few offsets 30,000 times each. A planned region whose lifetime is inverted (a
    corrupt entry) shares the lifetime of a region whose lifetime spans its two ends."""
    sized = [r for r in arena.regions if r.size]
    rank = {id(r): k for k, r in enumerate(sorted(arena.regions, key=lambda r: r.offset))}
    never, ever = float("-inf"), float("inf")
    starts, queries = [], []
    for r in sized:
        if not r.planned:
            starts.append((never, ever, r))
        elif r.first_use <= r.last_use:
            starts.append((r.first_use, r.last_use, r))
        else:
            queries.append(r)  # inverted: asked at its first_use, of the regions live from its last_use on
    starts.sort(key=lambda e: e[0])
    queries.sort(key=lambda r: r.first_use)
    widest = max((r.size for r in sized), default=0)
    live: list[tuple[int, int]] = []          # (offset, key) of the live regions, ordered
    by_key: dict[int, tuple[float, Region]] = {}
    ends: list[tuple[float, int]] = []        # a heap of (last_use, key): who leaves the live set when
    pairs = []

    def sharing(r):
        """(first_use, region) of the live regions that share bytes with r."""
        k = bisect.bisect_left(live, (r.end, -1))
        while k > 0 and live[k - 1][0] > r.offset - widest:
            k -= 1
            first, other = by_key[live[k][1]]
            if other.end > r.offset:
                yield first, other

    def advance(t):
        """The live set at time t: the regions whose lifetime ended before t leave it."""
        while ends and ends[0][0] < t:
            key = heapq.heappop(ends)[1]
            del live[bisect.bisect_left(live, (by_key.pop(key)[1].offset, key))]

    def ask(r):
        """An inverted region r: the live regions from before its last_use on, at its first_use."""
        advance(r.first_use)
        pairs.extend((other, r) for first, other in sharing(r) if first <= r.last_use)

    q = 0
    for key, (first, last, r) in enumerate(starts):
        while q < len(queries) and queries[q].first_use < first:
            ask(queries[q])
            q += 1
        advance(first)
        pairs.extend((other, r) for _, other in sharing(r))
        by_key[key] = (first, r)
        heapq.heappush(ends, (last, key))
        bisect.insort(live, (r.offset, key))
    for r in queries[q:]:
        ask(r)
    out = []
    for a, b in pairs:
        if rank[id(b)] < rank[id(a)]:
            a, b = b, a
        out.append((rank[id(a)], rank[id(b)], Overlap(a.index, b.index, b.offset, min(a.end, b.end))))
    return [o for _, _, o in sorted(out, key=lambda e: e[:2])]


def region_label(r: Region) -> str:
    if r.name:
        return r.name
    if r.kind == "tensor":
        return f"tensor {r.id}"
    if r.kind == "scratch":
        return scratch_label(r.id) if r.id != abi.ID_NONE else "scratch"
    if r.kind == "persistent" and r.id != abi.ID_NONE:
        return f"tensor {r.id} (persistent)"
    return r.kind


def _near(arena, offset):
    """The region that ends nearest at or below offset: who probably wrote past its end."""
    below = [r for r in arena.regions if r.end <= offset and r.kind in ("tensor", "scratch")]
    if not below:
        return ""
    r = max(below, key=lambda r: (r.end, -r.offset))
    return f"; the nearest region below is {region_label(r)} at +{r.offset}..+{r.end}"


def _bounds_check(desc, arena, tag, ram_ranges):
    """The arena's bytes must be RAM the firmware has (the ELF's writable sections, when known)
    and must not overlap the stack or the guard band the descriptor gives.

    A FAIL, not a corrupt descriptor: the agent stores the base and size it was given, and the
    usual cause is a real bug (TFLM and the agent told a size larger than the arena's buffer, or
    arenascope_init given the wrong stack bounds), which the map and figures help to see."""
    lo, hi = arena.base_addr, arena.end_addr
    what = f"{tag}: {lo:#x}-{hi:#x} ({arena.size} B)"
    problems, outside = [], False
    for band, name in ((desc.stack, "the stack"), (desc.guard, "the guard band")):
        if band.filled and lo < band.high_addr and band.low_addr < hi:
            shared = min(hi, band.high_addr) - max(lo, band.low_addr)
            problems.append(f"overlaps {name} {band.low_addr:#x}-{band.high_addr:#x} ({shared} B shared)")
    named = [r for r in ram_ranges or () if r[1] > r[0]]
    if named:
        home = next(((a, b) for a, b in targetmemory.merged(named) if a <= lo < b), None)
        if home is None:
            listing = ", ".join(f"{r[2] if len(r) > 2 else 'RAM'} {r[0]:#x}-{r[1]:#x}" for r in named[:6])
            problems.append(f"lies outside every RAM the firmware has ({listing}{', ...' if len(named) > 6 else ''})")
            outside = True
        elif hi > home[1]:
            problems.append(f"runs past the end of RAM at {home[1]:#x} by {hi - home[1]} B (the memory it starts "
                            "in ends there)")
    if problems:
        over_band = any(p.startswith("overlaps") for p in problems)
        cause = ("a corrupt base address, or an arena in memory neither the ELF nor the target's memory map "
                 f"describes (external RAM: name it with {Remedy('memory', 'NAME START END'):q}, or place it in a "
                 "linker section)" if outside and len(problems) == 1 else
                 "the size given to TFLM and to arenascope_arena_add is larger than the arena's buffer"
                 + (", the stack bounds given to arenascope_init are wrong" if over_band else "")
                 + ", or the descriptor is corrupt")
        return Check("bounds", FAIL, f"{what} " + "; it ".join(problems) + f": {cause}")
    if named:
        where = sorted({r[2] for r in named if len(r) > 2 and r[0] < hi and lo < r[1]})
        home_text = f"lies in {', '.join(where)}" if where else "lies in RAM"
    else:
        home_text = "(RAM sections unknown: not checked against them) is"
    return Check("bounds", PASS, f"{what} {home_text}, its bounds apart from the stack's and the guard band's "
                                 "(how far the stack grew is the stack rule)")


@dataclass(frozen=True)
class GuardWriter:
    """Who touched the guard band, when more than the band says it (pipeline.checks_of finds it):
    stack_limit: the agent armed MSPLIM at the stack's low bound and CFSR says STKOF, so the fault
    port ran the handler on the guard band below the limit (its own frames, not an overflow);
    task: the RTOS task whose stack sits right above the band and overflowed (its name, pxStack, and
    whether its stack ran through the band)."""
    stack_limit: bool = False
    task: str | None = None
    task_low: int = 0
    task_through: bool = False


def canary_damage(desc: Descriptor, figures_by_arena: dict[int, ArenaFigures]) -> list[Check]:
    """The failing `canary` checks of the arenas (as checks() words them): what wrote past its
    buffer into a free band (the fault analysis's overrun verdict)."""
    if desc.agentless:
        return []
    tagged = [(a, f"arena {a.index}" if len(desc.arenas) > 1 else "arena") for a in desc.arenas]
    return [c for a, tag in tagged if (c := _canary_check(a, figures_by_arena[a.index], tag)).verdict == FAIL]


def _canary_check(arena: Arena, fig: ArenaFigures, tag: str) -> Check:
    """The `canary` rule of one arena (the agent fills its free band with 0xAA)."""
    band = arena.canary
    if not band.filled:
        return Check("canary", WARN, f"{tag}: free band not filled (arenascope_canary_fill not called)")
    if fig.damage:
        s, e = fig.damage
        return Check("canary", FAIL, f"{tag}: free band overwritten at +{s}..+{e} "
                                     f"({arena.base_addr + s:#x}-{arena.base_addr + e:#x}, {e - s} B)"
                                     f"{_near(arena, s)}: something wrote past its buffer")
    return Check("canary", PASS, f"{tag}: free band intact ({band.size} B)")


def checks(desc: Descriptor, stack: StackFigures, figures_by_arena: dict[int, ArenaFigures], seq_odd: bool = False,
           ram_ranges: Sequence[tuple[int, int, str]] | None = None,
           guard_writer: GuardWriter | None = None) -> list[Check]:
    """The `arena check` rules, each PASS/WARN/FAIL with a reason. ram_ranges: [(lo, hi, name)]
    of the ELF's RAM sections, when known (the bounds rule checks every arena against them);
    guard_writer: who touched the guard band when the caller knows (the guard rule's reason)."""
    out = []
    if not desc.arenas:
        out.append(Check("arena", WARN, "no arena published yet (arenascope_arena_add not called): nothing to "
                                        "check but the stack and the guard band"))
    if not desc.agentless and not desc.agent_measured:
        out.append(Check("measured", WARN, "the agent has not measured yet (arenascope_measure not called): the "
                                           "canary and stack figures come from the host's own scan or are unknown"))
    if seq_odd:
        out.append(Check("consistent", WARN, "the target was halted while it updated the descriptor (odd seq): "
                                             "figures may mix old and new values; step past the update"))
    for arena in desc.arenas:
        fig = figures_by_arena[arena.index]
        tag = f"arena {arena.index}" if len(desc.arenas) > 1 else "arena"
        if not desc.agentless:  # no canary without the agent: not a warning, a mode
            out.append(_canary_check(arena, fig, tag))
        out += [_alignment_check(arena, tag), _bounds_check(desc, arena, tag, ram_ranges),
                _plan_check(desc, arena, tag), _used_check(arena, fig, tag), _headroom_check(fig, tag)]
    if desc.guard.filled:
        out.append(_guard_check(desc.guard, stack, guard_writer or GuardWriter()))
    out.append(_stack_check(stack))
    return _not_judged(desc, out)


def _alignment_check(arena: Arena, tag: str) -> Check:
    """The `alignment` rule: TFLM aligns the arena's base up to 16 B (or the arena's own)."""
    if arena.base_addr % 16 or (arena.alignment and arena.base_addr % arena.alignment):
        return Check("alignment", FAIL, f"{tag}: base {arena.base_addr:#x} is not {max(16, arena.alignment)}"
                                        "-byte aligned (TFLM aligns up and loses up to 15 B)")
    return Check("alignment", PASS, f"{tag}: base {arena.base_addr:#x} is 16-byte aligned")


def _plan_check(desc: Descriptor, arena: Arena, tag: str) -> Check:
    """The `plan` rule: no region past the arena's end, no inverted lifetime, and no two regions
    sharing bytes while both are live (TFLM's greedy planner never gives one)."""
    bad, backwards, ov = past_the_end(arena), inverted_lifetimes(arena), overlaps(arena)
    if bad:
        r = bad[0]
        return Check("plan", FAIL, f"{tag}: {len(bad)} region(s) extend past the arena's {arena.size} B, "
                                   f"first {region_label(r)} at +{r.offset}..+{r.end}")
    if backwards:
        r = backwards[0]
        return Check("plan", FAIL, f"{tag}: corrupt region table: {len(backwards)} region(s) end their "
                                   f"lifetime before it starts, first region {r.index} "
                                   f"({region_label(r)}) with first_use {r.first_use} > last_use "
                                   f"{r.last_use}; TFLM's planner never gives such a lifetime, so the "
                                   "lifetimes and the plan figures cannot be trusted")
    if ov:
        o = ov[0]
        a, b = arena.regions[o.a], arena.regions[o.b]
        return Check("plan", FAIL, f"{tag}: {len(ov)} pair(s) of regions share bytes while both are live, "
                                   f"first {region_label(a)} and {region_label(b)} at +{o.start}..+{o.end}")
    if desc.unplanned is not None:  # agentless without the plan: the head's regions are not known
        return Check("plan", WARN, f"{tag}: the memory plan is not checked: the head's tensors come from "
                                   f"the plan, and there is none ({desc.unplanned})")
    return Check("plan", PASS, f"{tag}: no two regions with overlapping lifetimes share bytes "
                               f"({len(arena.regions)} regions)")


def _used_check(arena: Arena, fig: ArenaFigures, tag: str) -> Check:
    """The `used` rule: the head (or temp) stays below the tail, the peak within the arena."""
    if fig.peak > arena.size or max(arena.head, arena.temp) > arena.tail:
        return Check("used", FAIL, f"{tag}: head/temp end {max(arena.head, arena.temp)} B runs into the tail "
                                   f"at {arena.tail} B (peak {fig.peak} B of {arena.size} B)")
    return Check("used", PASS, f"{tag}: peak {fig.peak} B <= size {arena.size} B")


def _headroom_check(fig: ArenaFigures, tag: str) -> Check:
    """The `headroom` rule: 10-20 % of the peak spare is the band to aim for."""
    basis = ("against the planner's minimum arena" if fig.minimum_arena else
             "an upper estimate, measured against used bytes: TFLM needs more while it allocates; never "
             "shrink the arena on this figure alone")
    pct = f"{fig.headroom_pct:.1f} %"
    if fig.peak == 0:
        return Check("headroom", PASS, f"{tag}: nothing allocated yet (0 B used): the headroom is measured "
                                       "once TFLM has allocated (after AllocateTensors; with the TFLM "
                                       "adapter, after its Publish)")
    if fig.headroom_pct < HEADROOM_WARN_PCT:
        return Check("headroom", WARN, f"{tag}: headroom {fig.headroom} B = {pct} of peak, below the "
                                       f"10-20 % band ({basis})")
    if fig.headroom_pct > HEADROOM_NOTE_PCT:
        return Check("headroom", PASS, f"{tag}: headroom {fig.headroom} B = {pct} of peak, above 20 % "
                                       f"(note: room to spare; {basis})")
    return Check("headroom", PASS, f"{tag}: headroom {fig.headroom} B = {pct} of peak ({basis})")


def _guard_check(g: Band, stack: StackFigures, w: GuardWriter) -> Check:
    """The `guard` rule: the filled guard band between the stack and the arena is intact; when it
    is not, who reached it (the caller's GuardWriter, else the stack's figures)."""
    if not g.touched:
        return Check("guard", PASS, f"guard band intact ({g.size} B at {g.low_addr:#x})")
    where = f"guard band overwritten at {g.low_addr + g.touched_lo:#x}-{g.low_addr + g.touched_hi:#x} " \
            f"({g.touched_bytes} B)"
    if w.stack_limit:
        return Check("guard", WARN, f"{where}: the fault handler's own frames, after the stack limit "
                                    "register (MSPLIM) stopped an overflow (STKOF): not the arena; "
                                    "`arena fault` gives the verdict")
    who = (f"{w.task}, whose 0xA5 fill is gone down to its pxStack {w.task_low:#x}, "
           + ("ran through all of it into the arena below" if w.task_through else "reached it from above")
           if w.task else
           "the stack ran through all of it into the arena below" if stack.peak_is_lower_bound else
           "the stack, whose paint is gone down to its limit, reached it from above"
           if stack.overflowed and g.high_addr <= stack.low else
           "the stack (from above) or the arena (from below) reached it")
    return Check("guard", FAIL, f"{where}: {who}")


def _not_judged(desc: Descriptor, out: list[Check]) -> list[Check]:
    """The checks with each rule that rests on a corrupt descriptor field (Descriptor.corrupt)
    replaced by a WARN naming it, after a `descriptor` FAIL naming every corrupt field: no PASS
    and no FAIL rests on a word that is not believed."""
    if not desc.corrupt:
        return out
    watch = next((c.watch for c in desc.corrupt if c.watch), None)
    named = Check("descriptor", FAIL, f"the arenascope descriptor at {desc.address:#x} is corrupt: "
                  + "; ".join(c.text() for c in desc.corrupt)
                  + ". Something wrote over the agent's data" + (f": `{watch}` and run again to catch the writer"
                                                                 if watch else ""))
    judged = []
    for c in out:
        rests_on = desc.not_judged(c.rule)
        judged.append(Check(c.rule, WARN, "not judged: it rests on the corrupt " +
                            ", ".join(r.field for r in rests_on)) if rests_on else c)
    return [named] + judged


def _stack_check(s):
    if s.reach_low is not None and (s.guard_low is None or s.reach_low < s.guard_low):
        return Check("stack", FAIL, f"the stack ran {s.low - s.reach_low} B past its limit {s.low:#x} into what lies "
                                    f"below (peak >= {s.peak} B of a {s.size} B stack; its deepest evidence, "
                                    "`arena fault`): enlarge the stack or cut recursion/locals")
    if s.hwm is None and s.unread:
        return Check("stack", WARN, f"the stack {s.low:#x}-{s.high:#x} could not be read ({s.unread}): its high-water "
                                    "mark is unknown; give the whole stack (a RAM dump: --ram covering it)")
    if s.hwm is None:
        return Check("stack", WARN, "stack high-water mark unknown (no agent measurement, stack not painted)")
    if not s.painted:
        return Check("stack", WARN, f"no paint anywhere in the stack {s.low:#x}-{s.high:#x}: not painted (yet?); "
                                    "paint it in the reset handler (arenascope_port_stack_paint)")
    if s.peak_is_lower_bound:
        return Check("stack", FAIL, f"the stack ran past its limit {s.low:#x} through the whole guard band into "
                                    f"the arena below (peak >= {s.peak} B of a {s.size} B stack): the arena's "
                                    "persistent tail at its top may be overwritten; enlarge the stack or cut "
                                    "recursion/locals")
    if s.overflowed:
        return Check("stack", FAIL, f"stack paint gone down to its limit {s.low:#x}: the stack overflowed; "
                                    "enlarge it or cut recursion/locals")
    if s.room is None:
        where = f"the arena is in {s.apart}, apart from the stack's memory: the stack cannot run into it" \
            if s.apart else "no arena below the stack"
        return Check("stack", PASS, f"stack peak {s.peak} B of {s.size} B ({where})")
    verdict = PASS if s.room >= s.required_room else FAIL
    op = ">=" if verdict == PASS else "<"
    advice = "" if verdict == PASS else ": move the arena away from the stack or give the stack more room"
    return Check("stack", verdict, f"room from stack top to arena end {s.room} B {op} {rule_text()} x peak "
                                   f"{s.peak} B = {s.required_room} B{advice}")


def worst(check_list: Iterable[Check]) -> str:
    order = {PASS: 0, WARN: 1, FAIL: 2}
    return max((c.verdict for c in check_list), key=order.get, default=PASS)


def place(desc: Descriptor, addr: int) -> list[tuple[Arena, int, str, list[Region]]]:
    """[(arena, offset, area, regions that own the byte)] of every arena holding addr; area is
    "head (planned)", "temp", "free band" or "persistent tail"."""
    out = []
    for arena in desc.arenas:
        if arena.base_addr <= addr < arena.end_addr:
            off = addr - arena.base_addr
            owners = [r for r in arena.regions if r.offset <= off < r.end]
            area = ("head (planned)" if off < arena.head else "temp" if off < arena.temp else
                    "persistent tail" if off >= arena.tail else "free band")
            out.append((arena, off, area, owners))
    return out


def _life(r: Region) -> str:
    return f"lifetime {r.first_use}..{r.last_use}" if r.planned else "whole run"


def owner_brief(desc: Descriptor, addr: int, nbytes: int | None = None, tensor: int | None = None) -> str | None:
    """One line for a tensor's data pointer (the pretty-printers): "arena 0 +8000: input_mfcc
    (tensor 0, head (planned), lifetime 0..1)". Of the regions that start at addr (the head's
    overlay shares bytes over time) the one of tensor index `tensor` when given and there, else
    the one whose size is nbytes rounded up to TFLM's 16 is named; without one: how many regions
    own it. None when addr is in no arena."""
    found = place(desc, addr)
    if not found:
        return None
    arena, off, area, owners = found[0]
    where = f"arena {arena.index} +{off}"
    starting = [r for r in owners if r.offset == off]
    if tensor is not None:
        starting = [r for r in starting if r.kind == "tensor" and r.id == tensor] or starting
    if nbytes is not None:
        starting = [r for r in starting if nbytes <= r.size < nbytes + 16] or starting
    unknown = _owner_unknown(desc, arena, off, owners)
    if unknown:
        return f"{where}: owner unknown: {unknown}"
    if len(starting) == 1:
        r = starting[0]
        tensor = f"tensor {r.id}, " if r.kind == "tensor" and r.id != abi.ID_NONE and r.name else ""
        return f"{where}: {region_label(r)} ({tensor}{area}, {_life(r)})"
    if owners:
        names = ", ".join(region_label(r) for r in owners[:3]) + (", ..." if len(owners) > 3 else "")
        return f"{where} ({area}): one of {len(owners)} regions over time ({names})"
    return f"{where} ({area}): no region owns it"


def _owner_unknown(desc: Descriptor, arena, off: int, owners) -> str | None:
    """Why no region owning +off is not "no region owns it": agentless without the plan, whose
    tensors make the head's regions (desc.unplanned), an offset in the head is not known. None
    otherwise."""
    if desc.unplanned is None or owners or off >= arena.head:
        return None
    return f"the head's tensors come from the plan, and there is none ({desc.unplanned})"


def where(desc: Descriptor, addr: int, stack: StackFigures | None = None,
          memory: Iterable[tuple[int, int, str]] = ()) -> dict:
    """What holds addr, as facts (`arena whereis --json`, and whereis()'s lines): {"address",
    "memory": the first of `memory`'s [(lo, hi, what)] spans holding it (the heap, a RAM section,
    flash: Symbols.memory_spans), else None,
    "arenas": [{"arena", "offset", "area", "regions": [region index], "owner_unknown": why no region
    is known there, else None}] (place()), "guard_offset"
    (into the filled guard band, else None), "stack": {"low_addr", "high_addr", "used"} (used:
    at or above the lowest point the stack is known to have reached (StackFigures.lowest), None
    unknown; None when addr is not in the stack),
    "descriptor_offset" (into the arenascope descriptor, else None), "stack_reached" (below the
    stack's limit, where the stack is known to have run: StackFigures.lowest)}."""
    g, s = desc.guard, stack
    return {
        "address": addr,
        "memory": next((what for lo, hi, what in memory if lo <= addr < hi), None),
        "arenas": [{"arena": arena.index, "offset": off, "area": area, "regions": [r.index for r in owners],
                    "owner_unknown": _owner_unknown(desc, arena, off, owners)}
                   for arena, off, area, owners in place(desc, addr)],
        "guard_offset": addr - g.low_addr if g.filled and g.low_addr <= addr < g.high_addr else None,
        "stack": {"low_addr": s.low, "high_addr": s.high, "used": None if s.lowest is None else addr >= s.lowest}
        if s is not None and s.low <= addr < s.high else None,
        "descriptor_offset": addr - desc.address if desc.address <= addr < desc.address + desc.descriptor_size
        else None,
        # below the stack's limit, down where it is known to have run (its deepest evidence)
        "stack_reached": s is not None and s.lowest is not None and s.lowest <= addr < s.low,
    }


def whereis(desc: Descriptor, addr: int, stack: StackFigures | None = None,
            memory: Iterable[tuple[int, int, str]] = ()) -> list[str]:
    """What owns addr: where()'s facts as lines (regions may share bytes over time); outside every
    arena and the stack, which memory holds it (`memory`, as where() takes it)."""
    w, lines = where(desc, addr, stack, memory), []
    for inside in w["arenas"]:
        arena = next(a for a in desc.arenas if a.index == inside["arena"])
        lines.append(f"{addr:#x} is in arena {arena.index} at +{inside['offset']} ({inside['area']})")
        for r in (r for r in arena.regions if r.index in inside["regions"]):
            life = (f"live in scopes {r.first_use}..{r.last_use}" if r.planned else "whole run")
            lines.append(f"  owned by {region_label(r)}: +{r.offset}..+{r.end} ({r.size} B, {r.kind}, {life})")
        if inside["owner_unknown"]:
            lines.append(f"  owner unknown: {inside['owner_unknown']}")
        elif not inside["regions"]:
            lines.append("  no region owns it")
    if w["guard_offset"] is not None:
        g = desc.guard
        lines.append(f"{addr:#x} is in the guard band {g.low_addr:#x}-{g.high_addr:#x} (+{w['guard_offset']})")
    if w["stack"] is not None:
        used = w["stack"]["used"]
        state = "" if used is None else (" (used: at or above the high-water mark)" if used else " (never used so far)")
        lines.append(f"{addr:#x} is in the stack {stack.low:#x}-{stack.high:#x}{state}")
    if w["descriptor_offset"] is not None:
        lines.append(f"{addr:#x} is in the arenascope descriptor (+{w['descriptor_offset']})")
    if not lines:
        lines.append(f"{addr:#x} is outside every arena, the guard band and the stack"
                     + (f"; it is in {w['memory']}" if w["memory"] else "; it is in no memory the ELF describes"
                        if memory else ""))
    if w["stack_reached"]:
        lines.append(f"{addr:#x} is below the stack's limit {stack.low:#x}, where the stack ran down to "
                     f"{stack.lowest:#x}: its frames overwrote it")
    return lines
