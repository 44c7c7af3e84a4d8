"""ports/faultread.damaged_regions: which checksummed (immutable) tail regions changed, and the
live poller's cache of that answer (one hash pass per boot, fault and region-table generation)."""
from types import SimpleNamespace

from arenascope_plugin.acquire.reader import CountingReader, ImageReader
from arenascope_plugin.analyse import faults
from arenascope_plugin.ports import faultread

BASE, TABLE = 0x20001000, 0x20000F00


def fnv1a32(data):
    # FNV-1a, 32 bits (offset basis 2166136261, prime 16777619): what the agent's fault.c takes.
    h = 0x811C9DC5
    for b in data:
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h


def region(i, offset, size):
    return SimpleNamespace(index=i, offset=offset, size=size, end=offset + size)


def make_target(arena_bytes, sums, pin, generation=1, fault_count=1):
    table = b"".join(s.to_bytes(4, "little") for s in sums)
    reader = CountingReader(ImageReader([(BASE, arena_bytes), (TABLE, table)]))
    regions = [region(0, 0, 16), region(1, 16, 32), region(2, 48, 16)]
    desc = SimpleNamespace(arenas=[SimpleNamespace(base_addr=BASE, regions=regions)], layout_generation=generation)
    rec = SimpleNamespace(checksums_addr=TABLE, checksum_count=3, boot_count=4, fault_boot=4, fault_count=fault_count)
    ctx = SimpleNamespace(reader=reader, cache={"pin": True} if pin else {}, intact_regions=[], warn=lambda *a: None)
    return reader, desc, rec, ctx


def test_a_changed_region_is_named_and_the_others_are_intact():
    arena = bytearray(range(64))
    sums = [fnv1a32(arena[0:16]), fnv1a32(arena[16:48]), fnv1a32(arena[48:64])]
    arena[20] ^= 0xFF
    _, desc, rec, ctx = make_target(bytes(arena), sums, pin=False)
    assert [r.index for r in faultread.damaged_regions(ctx, desc, rec)] == [1]
    assert [r.index for r in ctx.intact_regions] == [0, 2]


def test_live_polling_hashes_once_per_fault_and_generation():
    arena = bytearray(range(64))
    sums = [fnv1a32(arena[0:16]), 0x12345678, fnv1a32(arena[48:64])]
    reader, desc, rec, ctx = make_target(bytes(arena), sums, pin=True)
    first = faultread.damaged_regions(ctx, desc, rec)
    assert [r.index for r in first] == [1] and reader.bytes == 12 + 64
    again = faultread.damaged_regions(ctx, desc, rec)
    assert [r.index for r in again] == [1] and [r.index for r in ctx.intact_regions] == [0, 2]
    assert reader.bytes == 12 + 64, "a second refresh of the same fault must not re-hash the tail"
    rec.fault_count = 2  # a new fault: hashed again
    faultread.damaged_regions(ctx, desc, rec)
    assert reader.bytes == 2 * (12 + 64)
    desc.layout_generation = 2  # a new region table: hashed again
    faultread.damaged_regions(ctx, desc, rec)
    assert reader.bytes == 3 * (12 + 64)


def test_at_a_stop_every_command_hashes_again():
    arena = bytes(range(64))
    sums = [fnv1a32(arena[0:16]), fnv1a32(arena[16:48]), fnv1a32(arena[48:64])]
    reader, desc, rec, ctx = make_target(arena, sums, pin=False)
    faultread.damaged_regions(ctx, desc, rec)
    faultread.damaged_regions(ctx, desc, rec)
    assert reader.bytes == 2 * (12 + 64)


def test_a_region_small_enough_for_a_frames_padding_does_not_stop_the_stacks_reach():
    """stack_reach: an 80-byte RV32 frame (64 B of locals and ra, 16-byte aligned) leaves 12 B
    unwritten, where an 8 B region stays intact while the stack overwrote the regions above and
    below it; an intact region of 16 B stops the reach: what changed below it is another writer's."""
    top, small, mid, big, low = region(0, 100, 28), region(1, 92, 8), region(2, 40, 52), region(3, 24, 16), region(
        4, 0, 24)
    reached, beyond = faults.stack_reach([top, mid, low], [small, big])
    assert (reached, beyond) == ([top, mid], [low])
    below = region(6, 40, 44)
    assert faults.stack_reach([top, below], [region(5, 84, 16)]) == ([top], [below])  # 16 B intact: it stopped
