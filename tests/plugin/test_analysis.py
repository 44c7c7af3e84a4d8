"""Figures, checks, plan, rendering and snapshot from crafted descriptors (no GDB). Expected
numbers are worked out by hand in the comments, or taken from the real TFLM figures."""
import json

import hypothesis
import pytest
from hypothesis import strategies as st

from arenascope_plugin.acquire.reader import ImageReader
from arenascope_plugin.analyse import figures
from arenascope_plugin.decode.descriptor import Arena, Band, Region
from arenascope_plugin.decode.session import DescriptorSession
from arenascope_plugin.present import render, snapshot, style
from conftest import ARENA_ADDR, DESC_ADDR, NONE, SHARED, TABLE_ADDR, demo_like


def read(**over):
    desc, table = demo_like(4, **over)
    return DescriptorSession(ImageReader([(DESC_ADDR, desc), (TABLE_ADDR, table)]), DESC_ADDR).read()


def test_arena_figures_by_hand():
    d = read()
    f = figures.arena_figures(d.arenas[0])
    assert f.used == 288 + (4096 - 3072)          # max(head 256, temp 288) + tail
    assert f.peak == f.used and f.damage is None
    assert f.headroom == 4096 - 1312 and round(f.headroom_pct, 1) == round(100 * 2784 / 1312, 1)
    assert (f.free_band_size, f.free_intact) == (3072 - 288, 3072 - 288)


def test_canary_damage_raises_the_peak_and_names_its_neighbour():
    d = read(arena={"canary": {"low_addr": ARENA_ADDR + 288, "high_addr": ARENA_ADDR + 3072,
                               "touched_lo": 100, "touched_hi": 140}})
    a = d.arenas[0]
    f = figures.arena_figures(a)
    assert f.damage == (388, 428) and f.peak == 428 + 1024 and f.free_intact == 2784 - 40
    checks = {c.rule: c for c in figures.checks(d, figures.stack_figures(d), {0: f})}
    assert checks["canary"].verdict == "FAIL"
    assert "+388..+428" in checks["canary"].reason and f"{ARENA_ADDR + 388:#x}" in checks["canary"].reason
    assert "tensor 2 at +128..+256" in checks["canary"].reason  # the region ending nearest below


def test_stack_figures_and_rule():
    d = read()
    s = figures.stack_figures(d, sp=d.stack.high_addr - 40)
    assert s.source == "agent" and s.hwm == d.stack.low_addr + 824
    assert s.peak == 200 and s.room == 64 + 1024 and s.required_room == 300
    assert figures.checks(d, s, {0: figures.arena_figures(d.arenas[0])})[-1].verdict == "PASS"
    deep = read(stack={"low_addr": ARENA_ADDR + 4160, "high_addr": ARENA_ADDR + 5184, "touched_lo": 400,
                       "touched_hi": 1024})
    s = figures.stack_figures(deep)
    assert s.peak == 624 and s.required_room == 936 and s.room == 1088
    over = read(stack={"low_addr": ARENA_ADDR + 4160, "high_addr": ARENA_ADDR + 5184, "touched_lo": 0,
                       "touched_hi": 1024})
    s = figures.stack_figures(over)
    assert s.overflowed
    check = figures.checks(over, s, {0: figures.arena_figures(over.arenas[0])})[-1]
    assert check.verdict == "FAIL" and "overflowed" in check.reason


def test_rule_room_below_one_and_a_half_peaks_fails():
    # stack 1024 B right above a 64 B guard; peak 800 B needs 1200 B of room, has 1088.
    d = read(stack={"low_addr": ARENA_ADDR + 4160, "high_addr": ARENA_ADDR + 5184, "touched_lo": 224,
                    "touched_hi": 1024})
    check = figures.checks(d, figures.stack_figures(d), {0: figures.arena_figures(d.arenas[0])})[-1]
    assert check.verdict == "FAIL" and "1088 B < 1.5 x peak 800 B = 1200 B" in check.reason


def test_plan_live_bytes_and_lower_bound_by_hand():
    p = figures.plan(read().arenas[0])
    # scope 0: tensor 1 (128); scope 1: tensors 1+2 (256); scope 2: tensors 2+3 + scratch (256)
    assert p.scopes == 3 and p.live_bytes == [128, 256, 256]
    assert (p.lower_bound, p.lower_bound_scope) == (256, 1)  # the first scope at the maximum


def test_overlap_rules():
    ok = read()
    assert figures.overlaps(ok.arenas[0]) == []  # tensor 1 and 3 share bytes but never live together
    # tensor 2 (+128..+256, scopes 1..2) and a scratch at +200 live in scope 2: a plan error.
    bad = read(regions=[(128, 128, 2, 1, 0, 1, 2), (200, 64, 0, 2, 0, 2, 2)])
    o = figures.overlaps(bad.arenas[0])
    assert len(o) == 1 and (o[0].start, o[0].end) == (200, 256)
    # a persistent region lives for the whole run: sharing any byte with it is an error
    tail = read(regions=[(3000, 100, 7, 3, 1, -1, -1), (2990, 16, 1, 1, 0, 5, 5)])
    assert len(figures.overlaps(tail.arenas[0])) == 1
    checks = {c.rule: c.verdict for c in figures.checks(bad, figures.stack_figures(bad),
                                                          {0: figures.arena_figures(bad.arenas[0])})}
    assert checks["plan"] == "FAIL"


def test_headroom_band_verdicts():
    def headroom_verdict(tail):
        d = read(arena={"tail_offset": tail, "canary": {"low_addr": ARENA_ADDR + 288,
                                                        "high_addr": ARENA_ADDR + tail, "touched_lo": NONE,
                                                        "touched_hi": NONE}})
        c = {c.rule: c for c in figures.checks(d, figures.stack_figures(d), {0: figures.arena_figures(d.arenas[0])})}
        return c["headroom"]
    # size 4096; peak = 288 + (4096 - tail)
    assert headroom_verdict(480).verdict == "WARN"          # peak 3904, headroom 4.9 %
    assert headroom_verdict(900).verdict == "PASS"          # peak 3484, headroom 17.6 %
    note = headroom_verdict(3072)                           # peak 1312, headroom 212 %
    assert note.verdict == "PASS" and "above 20 %" in note.reason and "upper estimate" in note.reason


def test_headroom_before_anything_is_allocated_is_not_a_warning():
    # head 0, temp 0, tail at the arena's end (4096): peak 0, so no percentage of it exists
    d = read(arena={"head_bytes": 0, "temp_bytes": 0, "tail_offset": 4096}, regions=[])
    fig = figures.arena_figures(d.arenas[0])
    assert (fig.used, fig.peak, fig.headroom) == (0, 0, 4096)
    c = {c.rule: c for c in figures.checks(d, figures.stack_figures(d), {0: fig})}
    assert c["headroom"].verdict == "PASS" and "nothing allocated yet" in c["headroom"].reason


def test_misaligned_arena_and_region_past_the_end_fail():
    d = read(arena={"base_addr": ARENA_ADDR + 4}, regions=[(4000, 200, 1, 1, 0, 0, 1)])
    c = {c.rule: c for c in figures.checks(d, figures.stack_figures(d), {0: figures.arena_figures(d.arenas[0])})}
    assert c["alignment"].verdict == "FAIL" and c["plan"].verdict == "FAIL"
    assert "extend past the arena's 4096 B" in c["plan"].reason


def test_changed_range_matches_the_agents_definition():
    word = (0xAAAAAAAA).to_bytes(4, "little")
    data = bytearray(word * 16)
    assert figures.changed_range(bytes(data), 0xAAAAAAAA) == (NONE, NONE)
    data[21] = 0xAA ^ 1     # word 5 (bytes 20..24)
    data[44] = 0            # word 11
    assert figures.changed_range(bytes(data), 0xAAAAAAAA) == (20, 48)


def test_whereis():
    d = read()
    s = figures.stack_figures(d)
    lines = figures.whereis(d, ARENA_ADDR + 130, s)
    assert lines[0] == f"{ARENA_ADDR + 130:#x} is in arena 0 at +130 (head (planned))"
    assert any("tensor 2: +128..+256" in line for line in lines) and len(lines) == 2
    lines = figures.whereis(d, ARENA_ADDR + 70, s)
    assert any("tensor 1: +0..+128" in line for line in lines) and any("scratch 0: +64..+128" in line for line in lines)
    assert "free band" in figures.whereis(d, ARENA_ADDR + 1000, s)[0]
    assert "guard band" in figures.whereis(d, ARENA_ADDR + 4100, s)[0]
    assert "stack" in figures.whereis(d, ARENA_ADDR + 5000, s)[0]
    assert "outside" in figures.whereis(d, 0x100, s)[0]
    # Issue 35: outside every arena and the stack, which memory holds it (the heap first)
    memory = [(0x20010000, 0x20020000, "the heap (end/__HeapLimit)"), (0x20000000, 0x20000100, "RAM (.bss)")]
    assert figures.whereis(d, 0x20010040, s, memory) == [
        "0x20010040 is outside every arena, the guard band and the stack; it is in the heap (end/__HeapLimit)"]
    assert figures.where(d, 0x20000010, s, memory)["memory"] == "RAM (.bss)"
    assert figures.whereis(d, 0x5A5A5A58, s, memory)[0].endswith("; it is in no memory the ELF describes")


def test_map_plain_markers_and_width():
    style.enabled = False
    d = read(arena={"canary": {"low_addr": ARENA_ADDR + 288, "high_addr": ARENA_ADDR + 3072,
                               "touched_lo": 100, "touched_hi": 140}})
    lines = render.map_lines(d, {0: figures.arena_figures(d.arenas[0])}, width=32)
    bar = lines[0].split("[")[1].split("]")[0]
    assert len(bar) == 32
    # 128 B a cell: cells 0-1 head (T), cell 2 the 32 B of temp (t), cell 3 holds the damage at +388..+428 (X),
    # 24.. tail (m: metadata)
    assert bar[:3] == "TTt" and bar[3] == "X" and set(bar[4:24]) == {"."} and set(bar[24:]) == {"m"}
    assert "\x1b[" not in "\n".join(lines)
    style.enabled = True
    assert "\x1b[" in "\n".join(render.map_lines(d, {0: figures.arena_figures(d.arenas[0])}, width=32))


def test_snapshot_is_json_with_every_figure():
    d = read()
    figs = {0: figures.arena_figures(d.arenas[0])}
    s = figures.stack_figures(d)
    snap = snapshot.build(d, figs, s, figures.checks(d, s, figs), {"elf": None})
    text = json.dumps(snap)
    back = json.loads(text)
    import jsonschema

    from conftest import ROOT
    jsonschema.validate(back, json.loads((ROOT / "docs" / "snapshot-schema.json").read_text()))
    a = back["arenas"][0]
    assert back["version"] == 3 and a["used_bytes"] == 1312 and a["plan"]["live_bytes"] == [128, 256, 256]
    assert a["regions"][4]["first_use"] is None and a["regions"][0]["flags"] == ["input"]
    assert back["stack"]["peak_bytes"] == 200 and back["verdict"] in ("PASS", "WARN", "FAIL")


TFLM_FIGURES = SHARED / "tflm-figures" / "tflm-figures.json"


@pytest.mark.skipif(not TFLM_FIGURES.exists(), reason="../shared/tflm-figures absent")
def test_plan_figures_equal_tflms_on_every_real_model():
    models = json.loads(TFLM_FIGURES.read_text())["models"]
    checked = 0
    for name, builds in models.items():
        fig = builds["arm_m4"]
        if not fig.get("plan"):
            continue
        regions = [Region(index=i, offset=p["offset"], size=p["size"], id=p["id"], kind="tensor", flags=0,
                          first_use=p["first_used"], last_use=p["last_used"]) for i, p in enumerate(fig["plan"])]
        arena = Arena(index=0, base_addr=0x20000000, regions_addr=0, model_addr=0, size=1 << 20,
                      head=fig["head_bytes"], temp=fig["head_bytes"], tail=1 << 20, model_size=0,
                      canary=Band(0, 0, NONE, NONE), alignment=16, region_count=len(regions),
                      region_capacity=len(regions), flags=0, regions=regions)
        p = figures.plan(arena)
        assert p.lower_bound == fig["lower_bound_bytes"], name
        assert p.lower_bound_scope == fig["lower_bound_time_step"], name
        assert max(r.end for r in regions) == fig["plan_extent_bytes"], name
        assert figures.overlaps(arena) == [], f"{name}: TFLM's own plan must pass the overlap rule"
        checked += 1
    assert checked >= 8


def _plan_by_definition(arena):
    """figures.plan as its contract says, scope by scope over every region (the test's own)."""
    planned = [r for r in arena.regions if r.planned and r.kind in ("tensor", "scratch")]
    scopes = max((r.last_use for r in planned), default=-1) + 1
    live = [[r.index for r in planned if r.first_use <= t <= r.last_use] for t in range(scopes)]
    return scopes, live, [sum(arena.regions[i].size for i in ids) for ids in live]


def test_plan_sweep_equals_the_definition():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    region = st.tuples(st.sampled_from(["tensor", "scratch", "persistent"]), st.integers(-1, 40),
                       st.integers(-1, 40), st.integers(1, 1000))

    @settings(max_examples=300, deadline=None)
    @given(st.lists(region, max_size=40))
    def check(spec):
        regions = [Region(index=i, offset=16 * i, size=size, id=i, kind=kind, flags=0, first_use=first,
                          last_use=last) for i, (kind, first, last, size) in enumerate(spec)]
        arena = Arena(index=0, base_addr=0x20000000, regions_addr=0, model_addr=0, size=1 << 20, head=0, temp=0,
                      tail=1 << 20, model_size=0, canary=Band(0, 0, NONE, NONE), alignment=16,
                      region_count=len(regions), region_capacity=len(regions), flags=0, regions=regions)
        p = figures.plan(arena)
        scopes, live, live_bytes = _plan_by_definition(arena)
        assert (p.scopes, p.live_regions, p.live_bytes) == (scopes, live, live_bytes)
        assert p.lower_bound == max(live_bytes, default=0)

    check()


def test_plan_chart_of_an_arena_without_a_plan_says_so():
    regions = [Region(index=0, offset=0, size=64, id=0, kind="persistent", flags=0, first_use=-1, last_use=-1)]
    arena = Arena(index=1, base_addr=0x20000000, regions_addr=0, model_addr=0, size=4096, head=0, temp=0,
                  tail=4096 - 64, model_size=0, canary=Band(0, 0, NONE, NONE), alignment=16, region_count=1,
                  region_capacity=1, flags=0, regions=regions)
    lines = render.plan_lines(arena, figures.plan(arena))
    assert len(lines) == 1 and "arena 1 plan: none: this arena holds no planned tensor" in lines[0], lines


def test_map_shows_a_metadata_region_in_the_head_as_metadata():
    # the demo-like arena with a user's metadata region at +0..+128 of the 256 B head (cell 0 of
    # 32 cells of 128 B) and a tensor at +128..+256 (cell 1): the bar reads m, T, then temp
    style.enabled = False
    regions = [(0, 128, 0xFFFF, 4, 0, -1, -1), (128, 128, 2, 1, 0, 1, 2), (3072, 1024, 0xFFFF, 4, 0, -1, -1)]
    d = read(regions=regions)
    bar = render.map_lines(d, {0: figures.arena_figures(d.arenas[0])}, width=32)[0].split("[")[1].split("]")[0]
    assert bar[:3] == "mTt" and set(bar[24:]) == {"m"}, bar
    style.enabled = True


def test_an_sp_just_below_the_stack_limit_is_this_stacks_overflow():
    """An SP under the limit by less than the stack's size is this stack overflowed (it ran into
    what lies below), not another thread's; farther away it may be another stack."""
    from arenascope_plugin.analyse.figures import StackFigures
    from arenascope_plugin.present import render

    def sp_line(sp):
        s = StackFigures(low=0x20012d20, high=0x20014d20, sp=sp, hwm=0x20012d20, source="scan", painted=True,
                         arena_end=0x20012d20)
        return next(ln for ln in render.stack_lines(s, indent="") if ln.startswith("current SP:"))

    assert sp_line(0x20012ca8).endswith("0x20012ca8 is 120 B below this stack's limit 0x20012d20: the stack has "
                                        "overflowed (`arena whereis $sp` says into what, `arena fault` the verdict)")
    assert "is not on this stack" in sp_line(0x20000100)   # 77 KiB away: perhaps another thread's stack
    assert "is not on this stack" in sp_line(0x20014d24)   # above the top
    assert sp_line(0x20014d00).endswith("(32 B in use now)")


def test_a_stack_never_painted_has_no_peak_in_any_output():
    """A new user's trial (issue 36): a stack with no paint left anywhere (never painted) had
    `arena stack` say "peak depth: unknown" while its JSON, the snapshot and the report said the
    whole stack was used. No paint says nothing of its use: the peak and high-water mark are
    unknown (null) everywhere, unless the guard band or the post-mortem shows how deep it went."""
    from arenascope_plugin.analyse import figures as fig
    from arenascope_plugin.present import snapshot as snap
    bare = fig.StackFigures(low=0x1000, high=0x2000, sp=0x1F00, hwm=0x1000, source="scan", painted=False,
                            arena_end=0xF00)
    assert bare.peak is None and bare.required_room is None
    doc = snap.stack_json(bare)
    assert doc["hwm_addr"] is None and doc["peak_bytes"] is None and doc["required_room_bytes"] is None
    painted = fig.StackFigures(low=0x1000, high=0x2000, sp=0x1F00, hwm=0x1800, source="scan", painted=True,
                               arena_end=0xF00)
    assert painted.peak == 0x800 and snap.stack_json(painted)["hwm_addr"] == 0x1800
    reached = fig.StackFigures(low=0x1000, high=0x2000, sp=0x1F00, hwm=0x1000, source="scan", painted=False,
                               arena_end=0xF00, reach_low=0xF80)
    assert reached.peak == 0x1080  # the post-mortem's evidence counts without paint


def _changed_range_word_by_word(data, pattern):
    """The agent's definition, a word at a time (the reference figures.changed_range must match)."""
    word = pattern.to_bytes(4, "little")
    n = len(data) // 4 * 4
    lo = next((i for i in range(0, n, 4) if data[i:i + 4] != word), None)
    if lo is None:
        return NONE, NONE
    return lo, next(i for i in range(n - 4, lo - 4, -4) if data[i:i + 4] != word) + 4


@hypothesis.settings(max_examples=500, deadline=None)
@hypothesis.given(st.integers(0, 300), st.lists(st.tuples(st.integers(0, 299), st.integers(0, 255)), max_size=4),
                  st.sampled_from([0xAAAAAAAA, 0xCCCCCCCC, 0x12345678]))
def test_changed_range_by_binary_search_is_the_word_by_word_one(size, writes, pattern):
    data = bytearray(pattern.to_bytes(4, "little") * (size // 4 + 1))[:size]
    for at, value in writes:
        if at < size:
            data[at] = value
    assert figures.changed_range(bytes(data), pattern) == _changed_range_word_by_word(bytes(data), pattern)
