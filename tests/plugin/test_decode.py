"""Decoder and session tests on crafted descriptor images, corrupt ones included."""
import struct

import pytest

from arenascope_plugin.acquire.reader import CountingReader, ImageReader, MemoryReadError
from arenascope_plugin.decode import abi, locate, session
from arenascope_plugin.decode.descriptor import DecodeError, decode_descriptor
from conftest import ABI, ARENA_ADDR, DESC_ADDR, NONE, TABLE_ADDR, demo_like, region_bytes


def reader_for(desc, table, extra=()):
    return ImageReader([(DESC_ADDR, desc), (TABLE_ADDR, table), *extra], name="test image")


@pytest.mark.parametrize("addr_size", [4, 8])
def test_plugin_layout_equals_the_golden_fixture(addr_size):
    for type_name, fields in ABI["types"].items():
        assert [f for f, _ in fields] == [f for f, _ in abi.TYPES[type_name]]
        assert [t for _, t in fields] == [t for _, t in abi.TYPES[type_name]]
        expected = ABI["layouts"][str(addr_size)][type_name]
        ours = abi.layout(type_name, addr_size)
        for field, _ in fields:
            assert ours[field] == expected[field], f"{type_name}.{field}"
        if "_size" in expected:
            assert ours["_size"] == expected["_size"]
    lay = ABI["layouts"][str(addr_size)]["descriptor"]
    assert abi.end_offset(addr_size, 1, abi.layout("arena", addr_size)["_size"]) == lay["_end_one_arena"]
    assert abi.descriptor_size(addr_size) == lay["_size_one_arena"]


@pytest.mark.parametrize("addr_size", [4, 8])
def test_decodes_every_field_of_a_valid_image(addr_size):
    desc_bytes, table = demo_like(addr_size)
    d = session.DescriptorSession(reader_for(desc_bytes, table), DESC_ADDR).read()
    assert (d.abi_major, d.abi_minor, d.addr_size, d.seq_check) == (1, 1, addr_size, d.seq)
    assert d.seq == 10 and d.layout_generation == 5 and d.invokes == 3 and not d.in_invoke
    assert d.canary_pattern == 0xAAAAAAAA and d.stack_paint_pattern == 0xCCCCCCCC
    assert d.stack.low_addr == ARENA_ADDR + 4160 and d.stack.touched_lo == 824
    assert d.guard.size == 64 and not d.guard.touched
    a = d.arenas[0]
    assert (a.base_addr, a.size, a.head, a.temp, a.tail, a.alignment) == (ARENA_ADDR, 4096, 256, 288, 3072, 16)
    assert a.canary.low_addr == ARENA_ADDR + 288 and a.canary.size == 2784
    assert [r.kind for r in a.regions] == ["tensor", "tensor", "tensor", "scratch", "metadata"]
    assert a.regions[0].flag_names == ["input"] and a.regions[2].flag_names == ["output"]
    assert a.regions[4].planned is False and a.regions[4].id == 0xFFFF
    assert (a.regions[1].first_use, a.regions[1].last_use) == (1, 2)


def corrupt(addr_size=4, patch=None, **over):
    desc_bytes, table = demo_like(addr_size, **over)
    desc_bytes = bytearray(desc_bytes)
    if patch:
        patch(desc_bytes)
    return bytes(desc_bytes), table


@pytest.mark.parametrize("image,message", [
    (corrupt(magic=b"ARENASCQ"), 'magic is 41 52 45 4e 41 53 43 51 ("ARENASCQ")'),
    (corrupt(abi_major=2), "has ABI 2.1; this plugin reads ABI 1.x"),
    (corrupt(patch=lambda b: b.__setitem__(12, 3)), "addr_size is 3"),
    (corrupt(descriptor_size=64), "descriptor_size 64 B is smaller"),
    (corrupt(arena_count=2), "arena_count 2 with capacity 1"),
    (corrupt(arena_entry_size=40), "entry sizes 40/16"),
    (corrupt(arena={"region_count": 9, "region_capacity": 8}), "region_count 9 with capacity 8"),
    (corrupt(arena={"region_count": 20000, "region_capacity": 20000}), "at most 16384"),
    (corrupt(arena={"regions_addr": 0}), "regions but no table address"),
    (corrupt(arena={"size_bytes": 0}), "size 0 B is absurd"),
    (corrupt(arena={"tail_offset": 5000}), "tail_offset 5000 is beyond the arena's 4096 B"),
    (corrupt(arena={"temp_bytes": 100}), "temp_bytes 100 is below head_bytes 256"),
    (corrupt(stack={"low_addr": 0x20002040, "high_addr": 0x20002440, "touched_lo": 0x100000, "touched_hi": 0x100400}),
     "stack: measured change 1048576..1049600 does not fit its 1024 B"),
    (corrupt(guard={"low_addr": 0x20002000, "high_addr": 0x20002040, "touched_lo": 0x80, "touched_hi": 0x10}),
     "guard band: measured change 128..16 does not fit its 64 B"),
    (corrupt(stack={"low_addr": 0, "high_addr": 0x1000, "touched_lo": NONE, "touched_hi": NONE}),
     "stack starts at address 0"),
    (corrupt(stack={"low_addr": 0x10000000, "high_addr": 0x20000000, "touched_lo": NONE, "touched_hi": NONE}),
     "is not a range of at most 67108864 B"),
    (corrupt(arena={"canary": {"low_addr": 0x20000000, "high_addr": 0x20400000, "touched_lo": NONE,
                               "touched_hi": NONE}}), "is outside the arena"),
])
def test_corrupt_descriptors_are_refused_with_a_reason(image, message):
    with pytest.raises(DecodeError) as err:
        session.DescriptorSession(reader_for(*image), DESC_ADDR).read()
    assert message in str(err.value)
    assert f"{DESC_ADDR:#x}" in str(err.value)


def test_newer_minor_with_trailing_bytes_is_read():
    desc_bytes, table = demo_like(4, abi_minor=3, descriptor_size=128 + 16)
    d = session.DescriptorSession(reader_for(desc_bytes + bytes(16), table), DESC_ADDR).read()
    assert d.abi_minor == 3 and d.arenas[0].size == 4096


def test_truncated_image_names_the_address():
    desc_bytes, table = demo_like(4)
    with pytest.raises(MemoryReadError) as err:
        session.DescriptorSession(reader_for(desc_bytes[:100], table), DESC_ADDR).read()
    assert f"{DESC_ADDR:#x}" in str(err.value)


def test_unreadable_region_table_names_its_address():
    desc_bytes, _ = demo_like(4)
    with pytest.raises(MemoryReadError) as err:
        session.DescriptorSession(ImageReader([(DESC_ADDR, desc_bytes)]), DESC_ADDR).read()
    assert f"{TABLE_ADDR:#x}" in str(err.value) and "region table of arena 0" in str(err.value)


class LoggingReader(ImageReader):
    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.reads = []

    def read(self, addr, length):
        self.reads.append((addr, length))
        return super().read(addr, length)


def test_region_table_outside_ram_is_named_corrupt_and_never_read():
    desc_bytes, table = demo_like(4, arena={"regions_addr": 0xF0000000})
    reader = LoggingReader([(DESC_ADDR, desc_bytes), (0xF0000000, table)])
    d = session.DescriptorSession(reader, DESC_ADDR, ram_ranges=[(0x20000000, 0x20000100), (0x20000100, 0x20400000),
                                                                  (0x30000000, 0x30001000)]).read()
    assert d.arenas[0].regions == [] and d.arenas[0].head == 256  # the rest of the descriptor is read
    [c] = d.corrupt
    assert c.field == "arena 0 region table" and c.rules == ("plan",)
    # adjacent sections are said as one range
    assert c.value == "(5 entries at 0xf0000000)" and \
        "outside the RAM ranges 0x20000000-0x20400000, 0x30000000-0x30001000, so" in c.why
    # the writer is caught at the descriptor's pointer to the table: arena 0 starts at +72 (docs/agent-abi.md,
    # 4-byte addresses), regions_addr at +4 in it
    assert c.watch == f"watch -l *(unsigned int *){DESC_ADDR + 72 + 4:#x}"
    assert all(not 0xF0000000 <= a < 0xF0001000 for a, _ in reader.reads)  # peripheral space is never read


@pytest.mark.parametrize("kind, flags, said", [(99, 0, "entry 2 has kind 99"), (0, 0, "entry 2 has kind 0"),
                                               (1, 0x80, "entry 2 has flags 0x80")])
def test_a_region_entry_no_agent_writes_makes_the_table_corrupt(kind, flags, said):
    regions = [(0, 128, 1, 1, 2, 0, 1), (128, 128, 2, 1, 0, 1, 2), (0, 64, 3, kind, flags, 2, 2)]
    desc_bytes, table = demo_like(4, regions=regions)
    d = session.DescriptorSession(reader_for(desc_bytes, table), DESC_ADDR).read()
    assert d.arenas[0].regions == [] and d.arenas[0].table_corrupt
    assert said in d.arenas[0].table_corrupt and "1 of 3 entries" in d.arenas[0].table_corrupt
    # the watch is on entry 2's wrong byte: kind at +10 of a 16 B entry, flags at +11 (docs/agent-abi.md)
    assert d.corrupt[0].watch == f"watch -l *(unsigned char *){TABLE_ADDR + 2 * 16 + (11 if flags else 10):#x}"


def test_a_zeroed_region_table_is_corrupt():
    desc_bytes, table = demo_like(4)
    d = session.DescriptorSession(reader_for(desc_bytes, bytes(len(table))), DESC_ADDR).read()
    assert "5 of 5 entries are not the agent's: entry 0 has kind 0" in d.arenas[0].table_corrupt


@pytest.mark.parametrize("over, field, value, rules", [
    ({"canary_pattern": 0}, "canary_pattern", "0x00000000", ("canary", "guard", "headroom")),
    ({"canary_pattern": 0xFFFFFFFF}, "canary_pattern", "0xffffffff", ("canary", "guard", "headroom")),
    ({"stack_paint_pattern": 0}, "stack_paint_pattern", "0x00000000", ("stack",)),
    ({"flags": 0xFF}, "flags", "0xff", ("measured",)),
    ({"arena": {"flags": 0xFF}}, "arena 0 flags", "0xff", ()),
])
def test_a_corrupt_field_that_some_rules_rest_on_is_named_not_fatal(over, field, value, rules):
    desc_bytes, table = demo_like(4, **over)
    d = session.DescriptorSession(reader_for(desc_bytes, table), DESC_ADDR).read()
    [c] = d.corrupt
    assert (c.field, c.value, c.rules) == (field, value, rules)
    assert len(d.arenas[0].regions) == 5
    if field == "flags":
        assert d.flags == 0 and not d.agent_measured  # MEASURED is not believed: the host measures
    if field == "arena 0 flags":
        assert d.arenas[0].flags == 0 and not d.arenas[0].tflm_figures  # no label rests on the byte
    # a watchpoint as wide as the field: flags are one byte (the ABI's table), patterns four
    width = "unsigned char" if "flags" in field else "unsigned int"
    assert c.watch == f"watch -l *({width} *){c.address:#x}"


class FlippingReader(ImageReader):
    """A target that updates the descriptor on every read: seq differs each time."""

    def __init__(self, desc, table):
        super().__init__([(DESC_ADDR, desc), (TABLE_ADDR, table)])
        self.seq = 10

    def read(self, addr, length):
        data = bytearray(super().read(addr, length))
        if addr <= DESC_ADDR + 18 < addr + length:
            self.seq += 2
            struct.pack_into("<H", data, DESC_ADDR + 18 - addr, self.seq)
        return bytes(data)


def test_torn_reads_are_retried_then_reported():
    desc_bytes, table = demo_like(4)
    with pytest.raises(session.TornReadError) as err:
        session.DescriptorSession(FlippingReader(desc_bytes, table), DESC_ADDR, retries=4).read()
    assert "kept changing" in str(err.value) and "4 tries" in str(err.value)


def test_odd_seq_that_does_not_move_is_a_halt_inside_an_update():
    desc_bytes, table = demo_like(4, seq=11)
    d = session.DescriptorSession(reader_for(desc_bytes, table), DESC_ADDR, retries=3).read()
    assert d.halted_in_update and len(d.arenas[0].regions) == 5


@pytest.mark.parametrize("minor,steady", [(1, [132]), (0, [128, 2])])
def test_steady_state_refresh_reads_the_descriptor_only(minor, steady):
    """ABI 1.1: one read of the 132 B block (seq_check inside it); 1.0: the 128 B block, then
    seq's 2 bytes again. The 200-entry table is read once (cached by layout_generation)."""
    desc_bytes, table = demo_like(4, regions=[(i * 16, 16, i, 1, 0, i, i + 1) for i in range(200)],
                                  arena={"region_capacity": 200}, minor=minor)
    counting = CountingReader(reader_for(desc_bytes, table))
    s = session.DescriptorSession(counting, DESC_ADDR)
    assert len(s.read().arenas[0].regions) == 200
    assert counting.bytes >= 200 * 16
    sizes = []
    inner = counting.read
    counting.read = lambda a, n: (sizes.append(n), inner(a, n))[1]
    d = s.read()
    assert sizes == steady and d.abi_minor == minor and d.seq == 10
    assert d.seq_check == (10 if minor else None)


class Moving:
    """A reader over an image whose seq and seq_check are set before each block read by
    `states` (a list of (seq, seq_check)), as a target updating it would have them."""

    def __init__(self, image, table, states):
        self.image, self.states, self.reads = bytearray(image), list(states), 0
        self.table = table
        self.name = "moving image"

    def read(self, addr, length):
        if addr == DESC_ADDR and length > 16 and self.states:
            seq, check = self.states.pop(0) if len(self.states) > 1 else self.states[0]
            struct.pack_into("<H", self.image, 18, seq)
            struct.pack_into("<H", self.image, ABI["layouts"]["4"]["descriptor"]["_end_one_arena"], check)
            self.reads += 1
        return reader_for(bytes(self.image), self.table).read(addr, length)


def test_a_block_whose_seq_check_differs_is_retried_and_the_matching_one_kept():
    image, table = demo_like(4)
    # mid-update (seq odd), then seq even but the next update begun (check ahead), then settled
    r = Moving(image, table, [(11, 12), (12, 14), (14, 14)])
    d = session.DescriptorSession(r, DESC_ADDR).read()
    assert d.seq == 14 and d.seq_check == 14 and r.reads == 4  # 3 tries, then once more after the table


def test_a_11_target_halted_inside_an_update_is_said_so():
    image, table = demo_like(4)
    d = session.DescriptorSession(Moving(image, table, [(13, 14)]), DESC_ADDR).read()
    assert d.halted_in_update and d.seq == 13


def test_a_seq_check_that_never_matches_a_still_seq_is_a_corrupt_descriptor():
    image, table = demo_like(4)
    with pytest.raises(DecodeError, match="seq_check 99 never matches seq 10"):
        session.DescriptorSession(Moving(image, table, [(10, 99)]), DESC_ADDR).read()


def test_an_11_block_cut_before_seq_check_is_refused():
    image, table = demo_like(4)
    short = bytearray(image[:ABI["layouts"]["4"]["descriptor"]["_end_one_arena"]])
    struct.pack_into("<H", short, 10, len(short))  # descriptor_size says 128, abi_minor still 1
    with pytest.raises(DecodeError, match="puts seq_check at 128, past descriptor_size 128 B"):
        session.DescriptorSession(reader_for(bytes(short), table), DESC_ADDR).read()


def test_region_table_is_reread_when_layout_generation_changes():
    regions = [(0, 16, 0, 1, 0, 0, 1)]
    desc_bytes, table = demo_like(4, regions=regions, arena={"region_capacity": 4})
    image = reader_for(desc_bytes, region_bytes(regions * 2))
    s = session.DescriptorSession(image, DESC_ADDR)
    assert len(s.read().arenas[0].regions) == 1
    desc2, _ = demo_like(4, regions=regions * 2, layout_generation=6, arena={"region_capacity": 4})
    image.segments[0] = (DESC_ADDR, desc2)
    assert len(s.read().arenas[0].regions) == 2


def test_scan_finds_the_magic_in_a_range_and_says_what_it_searched():
    desc_bytes, table = demo_like(4)
    ram = bytearray(16384)
    ram[8192:8192 + len(desc_bytes)] = desc_bytes
    ram[100:108] = b"ARENASCP"  # a stray, unaligned and invalid copy is skipped
    reader = ImageReader([(0x20000000, bytes(ram))])
    addr, how = locate.locate(reader, ranges=[(0x20000000, 0x20004000, ".bss")], range_source="test")
    assert addr == 0x20002000 and "scanning" in how
    with pytest.raises(locate.NotFoundError) as err:
        locate.locate(reader, ranges=[(0x20000000, 0x20001000, ".data")], range_source="the ELF's RAM sections")
    text = str(err.value)
    assert ".data 0x20000000-0x20001000" in text and "set arena descriptor-address" in text


def test_decode_descriptor_refuses_short_data():
    with pytest.raises(DecodeError):
        decode_descriptor(b"ARENASCP", DESC_ADDR)
    assert NONE == abi.NONE


def test_a_11_target_halted_after_seq_check_before_seq_goes_odd_is_said_so():
    """seq_begin writes seq_check = seq + 2, then makes seq odd: halted between the two stores."""
    image, table = demo_like(4)
    d = session.DescriptorSession(Moving(image, table, [(12, 14)]), DESC_ADDR).read()
    assert d.halted_in_update and d.seq == 12
