"""Issue 15, item 6: a stale copy of the descriptor found by the RAM scan, arena bounds against
RAM and the stack, lifetimes with first > last, a tail below the head. Every expected value is
computed here from the image the test builds."""
import pytest

from arenascope_plugin import analysis, locate, session
from arenascope_plugin.decode import DecodeError
from arenascope_plugin.reader import ImageReader
from conftest import ARENA_ADDR, DESC_ADDR, TABLE_ADDR, demo_like


# ------------------------------------------------------------------ (b) arena bounds

def read(**over):
    desc, table = demo_like(4, **over)
    return session.DescriptorSession(ImageReader([(DESC_ADDR, desc), (TABLE_ADDR, table)]), DESC_ADDR).read()


def rule(desc, name, ram_ranges=None):
    figs = {a.index: analysis.arena_figures(a) for a in desc.arenas}
    extra = {} if ram_ranges is None else {"ram_ranges": ram_ranges}
    found = [c for c in analysis.checks(desc, analysis.stack_figures(desc), figs, **extra) if c.rule == name]
    assert len(found) == 1, found
    return found[0]


def test_a_16_mib_arena_over_the_stack_fails():
    size = 16 << 20
    d = read(arena={"size_bytes": size})
    c = rule(d, "bounds")
    assert c.verdict == "FAIL"
    stack_lo, stack_hi = ARENA_ADDR + 4096 + 64, ARENA_ADDR + 4096 + 64 + 1024
    assert f"arena: {ARENA_ADDR:#x}-{ARENA_ADDR + size:#x} ({size} B) overlaps the stack {stack_lo:#x}-{stack_hi:#x}" \
        in c.reason
    assert f"({stack_hi - stack_lo} B shared)" in c.reason and "larger than the arena's buffer" in c.reason
    assert analysis.worst(analysis.checks(d, analysis.stack_figures(d), {0: analysis.arena_figures(d.arenas[0])})) \
        == "FAIL"


def test_an_arena_over_the_guard_band_fails():
    d = read(arena={"size_bytes": 4096 + 32})   # ends 32 B into the 64 B guard band
    c = rule(d, "bounds")
    assert c.verdict == "FAIL"
    assert f"overlaps the guard band {ARENA_ADDR + 4096:#x}-{ARENA_ADDR + 4096 + 64:#x} ({32} B shared)" in c.reason


def test_an_arena_outside_the_elfs_ram_fails():
    ram = [(0x20000000, 0x20000800, ".data"), (0x20000800, 0x20000c00, ".bss")]
    c = rule(read(), "bounds", ram_ranges=ram)
    assert c.verdict == "FAIL"
    assert f"arena: {ARENA_ADDR:#x}-{ARENA_ADDR + 4096:#x} (4096 B) lies outside every RAM section of the ELF" \
        in c.reason
    assert ".data 0x20000000-0x20000800" in c.reason and "external RAM: place it in a linker section" in c.reason


def test_an_arena_running_past_the_end_of_ram_fails():
    end = ARENA_ADDR + 1024                       # the section holds the arena's first 1 KiB only
    c = rule(read(), "bounds", ram_ranges=[(0x20000000, end, ".bss")])
    assert c.verdict == "FAIL"
    assert f"runs past the end of RAM at {end:#x}" in c.reason and f"{ARENA_ADDR + 4096 - end} B" in c.reason


def test_an_arena_in_ram_clear_of_the_stack_passes():
    # Adjacent sections count as one RAM range: the arena may straddle their boundary.
    ram = [(0x20000000, ARENA_ADDR + 100, ".bss"), (ARENA_ADDR + 100, 0x20004000, ".tensor_arena")]
    c = rule(read(), "bounds", ram_ranges=ram)
    assert c.verdict == "PASS" and f"{ARENA_ADDR:#x}-{ARENA_ADDR + 4096:#x}" in c.reason
    assert rule(read(), "bounds").verdict == "PASS"   # no RAM ranges known: the stack is still checked


# ------------------------------------------------------------------ (c) lifetimes

def test_a_region_whose_first_use_is_after_its_last_use_fails_the_plan():
    regions = [(0, 128, 1, 1, 0, 0, 1), (128, 128, 2, 1, 0, 3, 1)]  # tensor 2: scopes 3..1
    d = read(regions=regions)
    c = rule(d, "plan")
    assert c.verdict == "FAIL"
    assert "region 1 (tensor 2)" in c.reason and "first_use 3 > last_use 1" in c.reason
    assert "corrupt region table" in c.reason


# ------------------------------------------------------------------ (d) a tail below the head

@pytest.mark.parametrize("head,temp,tail", [(3500, 3500, 3072), (256, 3500, 3072)])
def test_a_tail_below_the_head_or_temp_is_a_corrupt_descriptor(head, temp, tail):
    desc, table = demo_like(4, arena={"head_bytes": head, "temp_bytes": temp, "tail_offset": tail,
                                      "canary": {"low_addr": 0, "high_addr": 0, "touched_lo": 0xFFFFFFFF,
                                                 "touched_hi": 0xFFFFFFFF}})
    with pytest.raises(DecodeError) as err:
        session.DescriptorSession(ImageReader([(DESC_ADDR, desc), (TABLE_ADDR, table)]), DESC_ADDR).read()
    text = str(err.value)
    assert f"tail_offset {tail} is below the head/temp end {max(head, temp)}" in text
    assert "corrupt descriptor" in text and f"{DESC_ADDR:#x}" in text
