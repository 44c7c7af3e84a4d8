"""One scanner for the filled bands (the guard band and each arena's free band, 0xAA canary; the
painted stack, 0xCC): a whole scan at a stop, or `budget` bytes per call in turn while the core
runs (the live poller), each band re-read whole every few calls; from its first whole pass on, a
band's result is its bytes as last read, so a change shows at the call that reads it. The result of a band is
(touched_lo, touched_hi, painted): the offsets of the lowest and highest word that lost the
pattern (figures.changed_range; abi.NONE when none did) and whether any patterned word is left."""
from collections.abc import Iterable

from arenascope_plugin.acquire.reader import MemoryReader
from arenascope_plugin.analyse import figures
from arenascope_plugin.decode.descriptor import MAX_STACK_BYTES
from arenascope_plugin.errors import TargetError
from arenascope_plugin.remedy import Remedy

Result = tuple[int, int, bool]
CHUNK = 4096  # bytes a read: GDB's remote packets carry at most 4 KiB


def read_chunked(reader: MemoryReader, addr: int, length: int) -> bytes:
    """length bytes at addr, in reads of at most CHUNK bytes."""
    out = bytearray()
    while len(out) < length:
        out += reader.read(addr + len(out), min(CHUNK, length - len(out)))
    return bytes(out)


def _result(data, pattern) -> Result:
    lo, hi = figures.changed_range(data, pattern)
    return lo, hi, pattern.to_bytes(4, "little") in data[: len(data) // 4 * 4]


class _Partial:
    """A band being re-read `budget` bytes at a time; result: from its last whole pass, or None."""

    def __init__(self, low, high, pattern):
        self.key = (low, high, pattern)
        self.low, self.pattern = low, pattern
        self.data = bytearray(max(0, high - low))
        self.cursor = 0
        self.result: Result | None = None
        self.reads: list[tuple[int, int]] = []  # (addr, length) of each step, for the scanner's caller

    def next_len(self, budget, cursor=None):
        """Bytes the next step reads with this budget (whole words; 0: the band is empty), from
        the band's cursor or from `cursor` (BandScanner.plan looking further ahead)."""
        left = len(self.data) - (self.cursor if cursor is None else cursor)
        return min(budget, left) // 4 * 4 or min(4, left)

    def step(self, reader, budget):
        """Reads up to budget bytes at the cursor; returns the bytes read. After the first whole
        pass the result is the band's as last read, word by word: a slice that changed moves it
        at once (a write into the band shows at the refresh that reads it, not a pass later)."""
        n = self.next_len(budget)
        if n <= 0:
            return 0
        self.reads.append((self.low + self.cursor, n))
        new = reader.read(self.low + self.cursor, n)
        changed = self.data[self.cursor:self.cursor + n] != new
        self.data[self.cursor:self.cursor + n] = new
        self.cursor += n
        if self.cursor >= len(self.data):
            self.result, self.cursor = _result(self.data, self.pattern), 0
        elif changed and self.result is not None:
            self.result = _result(self.data, self.pattern)
        return n


class BandScanner:
    """budget None: every band read whole at each measure (a stop). budget N: N bytes a call,
    bands in turn, partial passes kept between calls (live)."""

    def __init__(self, budget: int | None = None, memo: dict | None = None):
        self.budget = budget
        # Whole scans only: {(low, high, pattern): Result} of memory that cannot have changed since
        # (GDB's front end keeps one a stop: gdb/framework.py), so `arena map` then `arena
        # snapshot` at one stop read each band once.
        self.memo = memo if budget is None else None
        self._partial: dict[str, _Partial] = {}
        self._order: list[_Partial] = []   # the bands of the last incremental call, in its order
        self._turn = 0
        self._calls: list[tuple[list, dict]] = []  # incremental measure() calls since take_calls()
        self._kept: list[tuple[list, dict]] = []   # steps taken already this refresh, served again (keep_steps)

    def take_reads(self) -> list[tuple[int, int]]:
        """The (addr, length) pieces the incremental scans read since the last call."""
        out = [r for p in self._partial.values() for r in p.reads]
        for p in self._partial.values():
            p.reads = []
        return out

    def take_calls(self) -> list[tuple[list, dict]]:
        """[(bands, results)] of each incremental measure() since the last call: what a live
        refresh asked and got (serve/livememo.py asks it again to replay the refresh)."""
        out, self._calls, self._kept = self._calls, [], []
        return out

    def keep_steps(self) -> None:
        """The measure() calls made since take_calls() are answered again, in order, to the next
        calls with the same bands, without a step: a replay that found a band's result changed
        gives way to the full refresh, and the bands are stepped once a refresh all the same."""
        self._kept, self._calls = self._calls, []

    @property
    def incremental(self) -> bool:
        return self.budget is not None

    @property
    def complete(self) -> bool:
        """Whether every band asked for has had a whole pass (always, for whole scans)."""
        return self.budget is None or all(p.result is not None for p in self._partial.values())

    def plan(self, after: int = 0) -> list[tuple[int, int]]:
        """[(addr, length)] the next incremental measure() will read if the bands stay the
        same: what the live poller fetches ahead, in one request with the refresh's other reads.
        after N: the measure() after the next N ones, each reading what plan() says (the poller
        sends the next refresh's request while it works on this one: BatchedReader.ahead)."""
        if self.budget is None or not self._order:
            return []
        cursors = {id(p): p.cursor for p in self._order}
        for turn in range(self._turn, self._turn + after + 1):
            out = []
            for part, n in self._steps(cursors, turn):
                out.append((part.low + cursors[id(part)], n))
                cursors[id(part)] = (cursors[id(part)] + n) % max(len(part.data), 1)
        return out

    def _steps(self, cursors: dict[int, int], turn: int) -> list[tuple["_Partial", int]]:
        """[(band, bytes)] a measure() at `turn` reads with the bands' cursors at `cursors` (their
        own, or further on: plan): round robin, each call starting one band further, `budget`
        bytes in all."""
        out, budget = [], self.budget
        for k in range(len(self._order)):
            if budget <= 0:
                break
            part = self._order[(turn + k) % len(self._order)]
            n = part.next_len(budget, cursors[id(part)])
            if n > 0:
                out.append((part, n))
                budget -= n
        return out

    def measure(self, reader: MemoryReader,
                bands: Iterable[tuple[str, int, int, int]]) -> dict[str, Result | None]:
        """{name: Result or None (no whole pass yet)} for bands [(name, low, high, pattern)].
        TargetError for a band too large to read through a probe (a corrupt descriptor or
        stack-range); MemoryReadError from the reader."""
        bands = [b for b in bands if b[2] > b[1]]
        if self._kept and self._kept[0][0] == bands:  # stepped already this refresh (keep_steps)
            self._calls.append(self._kept.pop(0))
            return self._calls[-1][1]
        self._kept = []
        for name, low, high, _ in bands:
            if high - low > MAX_STACK_BYTES:
                raise TargetError(f"the {name} {low:#x}-{high:#x} is {high - low} B; scanning more than "
                                  f"{MAX_STACK_BYTES >> 20} MiB through a probe takes too long: check the descriptor "
                                  f"or {Remedy('stack-range'):q}")
        if self.budget is None:
            memo = {} if self.memo is None else self.memo
            for _, low, high, p in bands:
                if (low, high, p) not in memo:
                    memo[(low, high, p)] = _result(read_chunked(reader, low, high - low), p)
            return {name: memo[(low, high, p)] for name, low, high, p in bands}
        parts = []
        for name, low, high, pattern in bands:
            part = self._partial.get(name)
            if part is None or part.key != (low, high, pattern):
                part = self._partial[name] = _Partial(low, high, pattern)
            parts.append((name, part))
        self._order = [part for _, part in parts]
        for part, n in self._steps({id(p): p.cursor for p in self._order}, self._turn):
            part.step(reader, n)
        self._turn += 1
        results = {name: part.result for name, part in parts}
        self._calls.append((bands, results))
        return results
