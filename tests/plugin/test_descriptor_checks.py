"""Issue 15, item 6: a stale copy of the descriptor found by the RAM scan, arena bounds against
RAM and the stack, lifetimes with first > last, a tail below the head. Every expected value is
computed here from the image the test builds."""
import pytest

from arenascope_plugin import analysis, locate, session
from arenascope_plugin.decode import DecodeError
from arenascope_plugin.reader import ImageReader
from conftest import ARENA_ADDR, DESC_ADDR, TABLE_ADDR, demo_like


def read(**over):
    desc, table = demo_like(4, **over)
    return session.DescriptorSession(ImageReader([(DESC_ADDR, desc), (TABLE_ADDR, table)]), DESC_ADDR).read()


def rule(desc, name, ram_ranges=None):
    figs = {a.index: analysis.arena_figures(a) for a in desc.arenas}
    extra = {} if ram_ranges is None else {"ram_ranges": ram_ranges}
    found = [c for c in analysis.checks(desc, analysis.stack_figures(desc), figs, **extra) if c.rule == name]
    assert len(found) == 1, found
    return found[0]


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
