"""A live refresh that reads what the last full one read: the same snapshot, without the work.

The pipeline (gather, then snapshot) is a function of the bytes it reads, the core's state, the
settings and what it keeps between refreshes. A live refresh fetches its reads in one request
(acquire/batch.py); when that request brings, for every piece the last full refresh read, the
same bytes, the pipeline would read the same pieces and work out the same snapshot. So the poller
keeps the last full refresh (record()) and, when the next request's bytes match (replay()), takes
its snapshot again instead of working it out: on the rig's busy firmware the host's work was
what the emulated link lost to it (tools/bench_live.py, docs/performance.md).

What may differ and still match:
- the descriptor's counters, seq, seq_check and invoke_phase (docs/agent-abi.md): a busy
  firmware moves them at every inference. They are masked in the comparison and taken from the
  new bytes into the snapshot's `state` (the only place they reach); a replay needs them
  consistent (seq even and equal to seq_check, ABI 1.1), else the full refresh deals with it;
- the band scans' slices (analyse/bands.py): the scanner steps as it would, on the same bands, and
  a replay needs every band's result unchanged.
What it never replays: a halted core (its registers), a core whose state changed, other
settings, an agentless or ABI 1.0 descriptor, and anything after FULL_AFTER_S: a full refresh
runs at least that often, so what the pipeline reads outside target memory (the ELF on disk,
the stack-depth job's result) is at most that old."""
import copy
import dataclasses
import struct
import time

from arenascope_plugin.decode import abi
from arenascope_plugin.present import snapshot as snapshot_json

FULL_AFTER_S = 0.25  # a full refresh at least this often


@dataclasses.dataclass
class _Entry:
    reads: list[tuple[tuple[int, int], bytes]]   # the full refresh's reads outside the band scans
    masked: list[tuple[int, int]]                # [lo, hi) of the descriptor's counters
    block: tuple[int, int]                       # the read holding all three (the descriptor's one read)
    desc: object                                 # its Descriptor
    scans: list[tuple[list, dict]]               # the scanner's measure() calls: (bands, results)
    core: tuple                                  # the core's state then
    settings: object                             # a copy of the settings
    snap: dict
    point: tuple                                 # its history point: (used, stack peak, gap)
    at: float                                    # monotonic time of the full refresh


def core_key(core) -> tuple | None:
    """What the pipeline sees of the core, or None when a replay must not stand in for it: a
    halted core with registers (the fault's analysis unwinds them)."""
    if core.register("pc") is not None or core.register("sp") is not None:
        return None
    return (type(core).__name__, getattr(core, "state", None))


def counter_ranges(desc) -> list[tuple[int, int]] | None:
    """[lo, hi) addresses of the descriptor's seq, invoke_phase and seq_check, or None when it
    is not an agent's ABI 1.1 descriptor (no seq_check: its seqlock takes two reads)."""
    if desc is None or desc.agentless or desc.abi_minor < 1 or desc.seq_check is None:
        return None
    lay = abi.layout("descriptor", desc.addr_size)
    end = abi.end_offset(desc.addr_size, desc.arena_capacity, desc.arena_entry_size)
    a = desc.address
    return [(a + lay["seq"], a + lay["seq"] + 2), (a + lay["invoke_phase"], a + lay["invoke_phase"] + 4),
            (a + end, a + end + 2)]


def _masked(piece: tuple[int, int], data: bytes, ranges: list[tuple[int, int]]) -> bytes:
    """data read at piece with the bytes inside `ranges` zeroed."""
    lo, n = piece
    if not any(a < lo + n and lo < b for a, b in ranges):
        return data
    out = bytearray(data)
    for a, b in ranges:
        for addr in range(max(a, lo), min(b, lo + n)):
            out[addr - lo] = 0
    return bytes(out)


class Memo:
    """The last full refresh of a live poller, and its replay. hits: refreshes replayed."""

    def __init__(self) -> None:
        self.entry: _Entry | None = None
        self.hits = 0

    def forget(self) -> None:
        self.entry = None

    def record(self, reads, scans, desc, core, settings, snap: dict, point: tuple) -> None:
        """Keeps a full refresh: its reads [(piece, bytes)] outside the band scans, the scanner's
        measure() calls, its Descriptor, the core, the settings, its snapshot and history point."""
        ranges = counter_ranges(desc)
        key = core_key(core)
        block = next((p for p, _ in reads if ranges and p[0] <= ranges[0][0] and ranges[-1][1] <= p[0] + p[1]), None)
        if block is None or key is None or snap.get("fault"):
            self.entry = None
            return
        self.entry = _Entry([(p, _masked(p, d, ranges)) for p, d in reads], ranges, block, desc, scans, key,
                            copy.copy(settings), snap, point, time.monotonic())

    def replay(self, reader, scanner, core, settings) -> tuple[dict, tuple] | None:
        """(snapshot, history point) of this refresh when its request brought the bytes of the
        last full one (the pieces then read from `reader`, a BatchedReader, and the scanner
        stepped as the pipeline would step it), else None: the full refresh runs (after a band's
        result changed here, on the steps taken here: BandScanner.keep_steps)."""
        e = self.entry
        if e is None or time.monotonic() - e.at > FULL_AFTER_S or core_key(core) != e.core or settings != e.settings:
            return None
        for piece, data in e.reads:
            got = reader.peek(piece)
            if got is None or _masked(piece, got, e.masked) != data:
                return None
        counters = self._counters(reader, e)
        if counters is None:
            return None
        for bands, results in e.scans:  # first: on a miss, the reads stay for the full refresh
            if scanner.measure(reader, bands) != results:
                scanner.keep_steps()  # the full refresh gets these steps' results, not new steps
                self.entry = None
                return None
        for piece, _ in e.reads:
            reader.read(*piece)
        self.hits += 1
        desc = dataclasses.replace(e.desc, seq=counters[0], invoke_phase=counters[1], seq_check=counters[0])
        snap = dict(e.snap, state=snapshot_json.state_json(desc),
                    source=dict(e.snap["source"], time=snapshot_json.now_text()))
        return snap, e.point

    @staticmethod
    def _counters(reader, e: _Entry) -> tuple[int, int] | None:
        """(seq, invoke_phase) from the descriptor's read in this request, when seq is even and
        equal to seq_check (an update was not under way), else None."""
        data, lo = reader.peek(e.block), e.block[0]  # there: replay() compared it
        (seq_at, _), (phase_at, _), (check_at, _) = e.masked
        seq, check = struct.unpack_from("<H", data, seq_at - lo)[0], struct.unpack_from("<H", data, check_at - lo)[0]
        return (seq, struct.unpack_from("<I", data, phase_at - lo)[0]) if seq % 2 == 0 and seq == check else None
