"""Reading a consistent descriptor (and its region tables) through a MemoryReader.

The seqlock rule (docs/agent-abi.md): read seq, the block and the tables, then seq again; trust
the read only when both are equal and even. ABI 1.1 carries the second value in the block
(seq_check, its last field, written first by each update), so one ascending read of the block is
enough: the window is one read, however often the target updates. Region tables are cached by
layout_generation, so a steady-state refresh reads the descriptor (132 B on Cortex-M; 1.0: 128 B
and 2 bytes of seq), nothing else.
"""
import struct

from arenascope_plugin.acquire import targetmemory
from arenascope_plugin.acquire.reader import MemoryReader, MemoryReadError
from arenascope_plugin.decode import abi
from arenascope_plugin.decode.descriptor import (
    Corruption,
    DecodeError,
    Descriptor,
    Region,
    TableEntryError,
    decode_descriptor,
    decode_regions,
    preamble,
)
from arenascope_plugin.errors import ArenascopeError

SEQ_OFFSET = 18     # abi.layout("descriptor", n)["seq"], the same for both address sizes
DEFAULT_RETRIES = 8


class TornReadError(ArenascopeError):
    """The target kept changing the descriptor while it was read."""


class DescriptorSession:
    """Reads the descriptor at `address` through `reader`; keeps the region tables of the last
    layout_generation. Create one per (reader, address)."""

    def __init__(self, reader: MemoryReader, address: int, retries: int = DEFAULT_RETRIES,
                 ram_ranges: list[tuple[int, int]] | None = None) -> None:
        self.reader, self.address, self.retries = reader, address, retries
        self.ram_ranges = ram_ranges  # [(lo, hi)] the tables must lie in, or None: no check
        self._size: int | None = None
        self._one_read = False  # ABI 1.1: the block alone is checked (seq_check)
        # arena index -> ((layout_generation, regions_addr, count), _regions' answer for them)
        self._tables: dict[int, tuple[tuple[int, int, int], tuple]] = {}
        self.last_seq = None

    def _block_and_seq(self):
        """The descriptor's bytes and then its seq again: from the block itself (ABI 1.1's
        seq_check, read last in the same ascending read), else a second read, in one request
        where the reader can (read_many: one round trip over a probe link)."""
        assert self._size is not None  # read() reads the preamble first
        if self._one_read:
            desc = self._decode(self.reader.read(self.address, self._size))
            if desc.seq_check is not None:
                return desc, desc.seq_check
            self._one_read = False  # a 1.0 agent after all (a reflashed target): two reads from now on
        pieces = [(self.address, self._size), (self.address + SEQ_OFFSET, 2)]
        many = getattr(self.reader, "read_many", None)
        data, seq = many(pieces) if many else [self.reader.read(a, n) for a, n in pieces]
        return self._decode(data), struct.unpack("<H", seq)[0]

    def _decode(self, data):
        try:
            return decode_descriptor(data, self.address)
        except DecodeError:
            self._size = None  # re-read the preamble next time, then report if it persists
            raise

    def read(self, fresh_tables: bool = False) -> Descriptor:
        """A consistent Descriptor with every arena's regions, or raises DecodeError,
        MemoryReadError or TornReadError. fresh_tables: re-read the region tables even when
        layout_generation says they did not change (a stray write into a table does not
        change it). A descriptor whose seq stays odd over every try belongs to a target halted
        inside an update: it is returned with `halted_in_update` set, for the caller to say so.

        The seqlock (docs/agent-abi.md): the block is trusted when seq, read before it (inside
        it) and after it, is the same even number. Region tables, long to read over a probe,
        are trusted when the layout_generation of a trusted block before and of one after them
        are equal: the agent changes a table only under a new layout_generation, while other
        updates (arenascope_measure) may move seq meanwhile without spoiling them."""
        if fresh_tables:
            self._tables.clear()
        seqs = []                   # every seq value seen, for the message
        heads = []                  # (seq, its check) of each block read
        desc = None
        for _ in range(self.retries):
            if self._size is None:
                head = self.reader.read(self.address, 16)
                _, self._size = preamble(head, self.address)
                self._one_read = head[9] >= 1   # abi_minor: 1.1 carries seq_check
            desc, after = self._block_and_seq()
            if desc.descriptor_size != self._size:
                self._size = desc.descriptor_size
                continue
            seqs.append(desc.seq)
            heads.append((desc.seq, after))
            if desc.seq % 2 or after != desc.seq:
                if self._halted_in_update(desc, after, heads):
                    break
                if after != desc.seq:
                    seqs.append(after)
                continue
            if all(self._cached(desc, a) for a in desc.arenas):
                for arena in desc.arenas:
                    _attach(desc, arena, self._regions(desc, arena))
                self.last_seq = desc.seq
                return desc
            tables = {a.index: self._regions(desc, a, use_cache=False) for a in desc.arenas}
            again, after = self._block_and_seq()
            if again.seq % 2 or after != again.seq or again.layout_generation != desc.layout_generation or \
                    [(a.regions_addr, a.region_count) for a in again.arenas] != \
                    [(a.regions_addr, a.region_count) for a in desc.arenas]:
                self._tables.clear()
                seqs.append(again.seq)
                continue
            for arena in again.arenas:
                _attach(again, arena, tables[arena.index])
            self.last_seq = again.seq
            return again
        if desc is not None and len(heads) >= 3 and len(set(heads[-3:])) == 1 and (
                heads[-1][0] % 2 or heads[-1][1] == (heads[-1][0] + 2) & 0xFFFF):
            for arena in desc.arenas:
                _attach(desc, arena, self._regions(desc, arena))
            desc.halted_in_update = True
            self._tables.clear()  # the table may be half-written: do not keep it
            return desc
        raise TornReadError(
            f"descriptor at {self.address:#x} kept changing while it was read ({self.retries} tries, seq values "
            f"{', '.join(str(s) for s in seqs[-6:])}): the target is updating it; halt it (or retry)")

    def _halted_in_update(self, desc, after, heads) -> bool:
        """Whether the descriptor, read with seq odd or seq_check `after` unequal to it, stopped
        moving inside an update: the last three (seq, check) pairs in `heads` the same, with seq odd
        (or seq_check written, seq not yet odd). DecodeError when they stopped with seq_check never
        matching an even seq."""
        if len(heads) >= 3 and len(set(heads[-3:])) == 1:
            if desc.seq % 2 or after == (desc.seq + 2) & 0xFFFF:
                return True  # not moving, odd (or seq_check written, seq not yet odd): halted in an update
            if desc.seq_check is not None:
                raise DecodeError(
                    f"descriptor at {self.address:#x}: seq_check {after} never matches seq {desc.seq}, "
                    "though neither moves (corrupt descriptor, or an agent that says ABI 1.1 and does not "
                    "write seq_check)")
        return False

    def _cached(self, desc, arena):
        cached = self._tables.get(arena.index)
        return cached is not None and cached[0] == (desc.layout_generation, arena.regions_addr, arena.region_count)

    def _regions(self, desc, arena, use_cache=True):
        """(regions, None, None), or ([], why, (watch address, width)) for a table not believed:
        outside the RAM ranges (then not read at all: a corrupt regions_addr must not make the
        probe read peripheral space; the watch is on that pointer) or holding entries no agent
        writes (the watch is on the first wrong byte). A read that fails inside RAM raises (the
        link)."""
        cached = self._tables.get(arena.index)
        key = (desc.layout_generation, arena.regions_addr, arena.region_count)
        if use_cache and cached and cached[0] == key:
            return cached[1]
        count, entry = arena.region_count, desc.region_entry_size
        table: tuple[list[Region], str | None, tuple[int, int] | None] = ([], None, None)
        if count:
            try:
                self._check_in_ram(arena, count * entry)
                try:
                    data = self.reader.read(arena.regions_addr, count * entry)
                except MemoryReadError as exc:
                    raise MemoryReadError(exc.addr, exc.length,
                                          f"{exc.why} (region table of arena {arena.index}, from the descriptor at "
                                          f"{self.address:#x}; a corrupt regions_addr?)") from None
                table = (decode_regions(data, count, entry), None, None)
            except TableEntryError as exc:  # the writer is caught at the entry's byte
                table = ([], str(exc), (arena.regions_addr + exc.offset, exc.width))
            except DecodeError as exc:      # at the descriptor's pointer to the table
                field = abi.header_size(desc.addr_size) + arena.index * desc.arena_entry_size + \
                    abi.layout("arena", desc.addr_size)["regions_addr"]
                table = ([], str(exc), (self.address + field, desc.addr_size))
        self._tables[arena.index] = (key, table)
        return table

    def _check_in_ram(self, arena, length):
        if not self.ram_ranges:
            return
        lo, hi = arena.regions_addr, arena.regions_addr + length
        if not any(r_lo <= lo and hi <= r_hi for r_lo, r_hi in self.ram_ranges):
            ranges = ", ".join(f"{a:#x}-{b:#x}" for a, b in targetmemory.merged(self.ram_ranges))
            raise DecodeError(f"the table ({hi - lo} B) is outside the RAM ranges {ranges}, so it was not read")


def _attach(desc, arena, table):
    """Gives the arena its regions, or names its table corrupt in desc.corrupt (the `plan` rule
    rests on it; the rest of the post-mortem does not)."""
    arena.regions, arena.table_corrupt, watch = table
    if arena.table_corrupt:
        desc.corrupt.append(Corruption(f"arena {arena.index} region table",
                                       f"({arena.region_count} entries at {arena.regions_addr:#x})",
                                       f"{arena.table_corrupt}; not believed, so no region is shown", ("plan",),
                                       None, width=watch[1], watch_at=watch[0]))
