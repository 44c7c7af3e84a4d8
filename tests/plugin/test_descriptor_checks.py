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
