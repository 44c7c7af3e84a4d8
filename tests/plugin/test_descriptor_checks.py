"""Issue 15, item 6: a stale copy of the descriptor found by the RAM scan, arena bounds against
RAM and the stack, lifetimes with first > last, a tail below the head. Every expected value is
computed here from the image the test builds."""
import pytest

from arenascope_plugin.acquire.reader import ImageReader
from arenascope_plugin.analyse import figures
from arenascope_plugin.decode import locate, session
from arenascope_plugin.decode.descriptor import DecodeError
from conftest import ARENA_ADDR, DESC_ADDR, TABLE_ADDR, demo_like

RAM = 0x20000000
RAM_BYTES = 0x4000           # 0x20000000-0x20004000
# demo_like's arena is 0x20001000-0x20002000, its guard band 0x20002000-0x20002040, its stack
# 0x20002040-0x20002440 and its region table at 0x20000100: a descriptor (or a copy) at LIVE is
# in none of them.
LIVE = 0x20003000
COPY = 0x20000400


def ram_with(placed):
    """A RAM image holding the region table and each (address, descriptor bytes) of placed."""
    _, table = demo_like(4)
    ram = bytearray(RAM_BYTES)
    ram[TABLE_ADDR - RAM:TABLE_ADDR - RAM + len(table)] = table
    for addr, data in placed:
        ram[addr - RAM:addr - RAM + len(data)] = data
    return ImageReader([(RAM, bytes(ram))], name="RAM image")


def locate_with(reader, ranges):
    warnings = []
    addr, how = locate.locate(reader, ranges=ranges, range_source="the test's RAM", warn=warnings.append)
    return addr, how, warnings


# ------------------------------------------------------------------ (a) stale copies in RAM

def test_a_stale_copy_found_first_is_not_taken_for_the_agent():
    live, _ = demo_like(4)                                       # 3 inferences, seq 10
    stale, _ = demo_like(4, invoke_phase=0, seq=4, layout_generation=5)  # copied before the first inference
    reader = ram_with([(COPY, stale), (LIVE, live)])
    addr, how, warnings = locate_with(reader, [(RAM, RAM + RAM_BYTES, ".bss")])
    assert addr == LIVE and "scanning" in how
    assert len(warnings) == 1
    text = warnings[0]
    assert "2 descriptors" in text and f"{COPY:#x}" in text and f"{LIVE:#x}" in text
    assert f"using {LIVE:#x}" in text
    assert f"{6 // 2} inferences" in text and "0 inferences" in text  # each candidate's counters are named
    # The session then reads the live one: 3 inferences, not the copy's 0.
    assert session.DescriptorSession(reader, addr).read().invokes == 6 // 2


def test_seq_decides_when_the_inference_counts_are_equal_and_wraps():
    # The live one moved seq from 65534 past the 16-bit wrap to 2 (two updates); the copy is older.
    live, _ = demo_like(4, seq=(65534 + 4) % 65536)
    stale, _ = demo_like(4, seq=65534)
    reader = ram_with([(COPY, stale), (LIVE, live)])
    addr, _, warnings = locate_with(reader, [(RAM, RAM + RAM_BYTES, ".bss")])
    assert addr == LIVE and f"using {LIVE:#x}" in warnings[0]


def test_a_copy_outside_bss_loses_to_the_one_in_bss_even_when_its_counters_are_higher():
    # A copy in .noinit survives a reset, with the previous boot's (higher) counters; the live
    # descriptor is in .bss, zeroed at every reset.
    live, _ = demo_like(4, invoke_phase=2, seq=6)
    stale, _ = demo_like(4, invoke_phase=40, seq=300)
    reader = ram_with([(COPY, stale), (LIVE, live)])
    ranges = [(RAM, LIVE, ".noinit"), (LIVE, RAM + RAM_BYTES, ".bss")]
    addr, _, warnings = locate_with(reader, ranges)
    assert addr == LIVE
    assert f"{COPY:#x} (.noinit" in warnings[0] and f"{LIVE:#x} (.bss" in warnings[0]
    assert "zeroed at every reset" in warnings[0]


def test_a_copy_inside_the_stack_it_describes_is_not_the_agent():
    live, _ = demo_like(4)
    copy, _ = demo_like(4)                                        # identical counters: only where it is differs
    stack_copy = ARENA_ADDR + 4096 + 64 + 256                     # inside demo_like's stack band
    reader = ram_with([(stack_copy, copy), (LIVE, live)])
    addr, _, warnings = locate_with(reader, [(RAM, RAM + RAM_BYTES, ".bss")])
    assert addr == LIVE
    assert f"{stack_copy:#x}" in warnings[0] and "inside the stack" in warnings[0]


def test_a_lone_copy_inside_the_arena_it_describes_is_used_with_a_warning():
    copy, _ = demo_like(4)
    in_arena = ARENA_ADDR + 1024                                  # inside demo_like's arena (a memcpy into a tensor)
    addr, _, warnings = locate_with(ram_with([(in_arena, copy)]), [(RAM, RAM + RAM_BYTES, ".bss")])
    assert addr == in_arena and len(warnings) == 1
    assert f"the only descriptor found, at {in_arena:#x}, may not be the agent's" in warnings[0]
    assert f"inside arena 0 {ARENA_ADDR:#x}-{ARENA_ADDR + 4096:#x} it describes" in warnings[0]


def test_a_corrupt_candidate_is_rejected_and_the_valid_one_used():
    bad, _ = demo_like(4, arena={"tail_offset": 5000})            # preamble valid, arena entry not
    good, _ = demo_like(4)
    reader = ram_with([(COPY, bad), (LIVE, good)])
    addr, _, warnings = locate_with(reader, [(RAM, RAM + RAM_BYTES, ".bss")])
    assert addr == LIVE and warnings == []                        # one valid descriptor: nothing to warn about
    found, notes, _ = locate.scan(reader, [(RAM, RAM + RAM_BYTES, ".bss")])
    assert found == LIVE
    assert any(f"magic at {COPY:#x} rejected" in n and "tail_offset 5000" in n for n in notes)


def test_identical_copies_are_said_to_be_indistinguishable():
    one, _ = demo_like(4)
    reader = ram_with([(COPY, one), (LIVE, one)])
    addr, _, warnings = locate_with(reader, [(RAM, RAM + RAM_BYTES, ".bss")])
    assert addr == COPY                                           # the first, for want of a difference
    assert "cannot tell" in warnings[0] and "set arena descriptor-address" in warnings[0]


def test_only_corrupt_candidates_say_why_in_the_not_found_error():
    bad, _ = demo_like(4, arena={"temp_bytes": 100})
    reader = ram_with([(COPY, bad)])
    with pytest.raises(locate.NotFoundError) as err:
        locate_with(reader, [(RAM, RAM + RAM_BYTES, ".bss")])
    assert f"magic at {COPY:#x} rejected" in str(err.value) and "temp_bytes 100" in str(err.value)


# ------------------------------------------------------------------ (b) arena bounds

def read(**over):
    desc, table = demo_like(4, **over)
    return session.DescriptorSession(ImageReader([(DESC_ADDR, desc), (TABLE_ADDR, table)]), DESC_ADDR).read()


def rule(desc, name, ram_ranges=None):
    figs = {a.index: figures.arena_figures(a) for a in desc.arenas}
    extra = {} if ram_ranges is None else {"ram_ranges": ram_ranges}
    found = [c for c in figures.checks(desc, figures.stack_figures(desc), figs, **extra) if c.rule == name]
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
    assert figures.worst(figures.checks(d, figures.stack_figures(d), {0: figures.arena_figures(d.arenas[0])})) \
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
    assert f"arena: {ARENA_ADDR:#x}-{ARENA_ADDR + 4096:#x} (4096 B) lies outside every RAM the firmware has" \
        in c.reason
    assert ".data 0x20000000-0x20000800" in c.reason and "external RAM: name it with `set arena memory NAME START " \
        "END`, or place it in a linker section" in c.reason


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
