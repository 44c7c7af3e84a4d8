"""One request a live refresh: a reader that fetches ahead, in one round trip, the pieces a
refresh is expected to read, and serves them from there (when the inner reader batches).

Over a probe the cost of a refresh is mostly its round trips (each Tcl command, each RSP packet
waits for the probe), so the live poller (serve/livepoll.py) tells this reader, before each
refresh, what the refresh will read: what the last refresh read outside the band scans (the
descriptor, the fault record, ICSR: what the last two refreshes both read), and the band
scanner's next slices (analyse/bands.py, BandScanner.plan). They are read with the inner
reader's read_many (OpenOCD's Tcl: one command; RSP: the packets back to back), in that order.

A piece inside memory the firmware never writes (`constants`: the ELF's code and read-only
data, Symbols.constant_ranges; e.g. the vector table entry and the code word at the PC a fault's
analysis reads at every refresh) is read once and then served from the copy: a constant word costs
one read for the poller's life, not one a refresh.

Each fetched piece is served once: a second read of it in the same refresh (the seqlock's retry
after a torn read) goes to the target again, never to the copy. A read the plan did not foresee
goes to the target as it would without this reader. Pieces are fetched as asked and in order;
the inner reader joins only a piece that starts where the one before it ends
(reader.merge_adjacent), so a block the seqlock needs in one ascending read stays one read.

Ahead: when the poller runs flat out (each refresh due as the last ends), it sends the next
refresh's request (ahead()) as soon as this refresh's reply is in, and works on this refresh while
the probe answers; the next begin() reads that reply. A refresh then costs about the longer of
the link's round trip and the host's work, not their sum. This needs an inner reader that sends
now and reads later (openocd.TclReader.read_many_later, on TclLink.call_many_later); the link
keeps the replies in order, so a read the plan did not foresee, made meanwhile, reads the reply in
flight first and keeps it for its refresh. No thread: the host's work and the reply's parsing do
not contend (a thread cost 0.4 ms of CPU a refresh, and in the rig's busy case the CPU is what the
emulated link itself runs on)."""
import collections
import statistics
import time
from collections.abc import Callable

from arenascope_plugin.acquire.reader import MemoryReader, MemoryReadError

MAX_PIECE = 1024        # a piece longer than this is not fetched ahead (a region table, a long scan)
MAX_PLAN = 4096         # nor more than this in all, a refresh
MAX_KEPT = 256          # constant pieces kept (each a word or a few: a vector, the code at a PC)
WAITED_S = 0.0005       # a reply collected after waiting this long had not come yet: its round trip is known

class BatchedReader(MemoryReader):
    """Wraps a reader with read_many (openocd.TclReader, rsp.RspReader). Counters (calls, bytes,
    link_failures, last_link_error) and `name`, `link` are the inner reader's."""

    def __init__(self, inner: MemoryReader, constants: list[tuple[int, int]] | tuple = ()) -> None:
        self.inner, self.name = inner, getattr(inner, "name", "memory")
        # (pieces, the function reading their reply, when it was sent) of the request ahead() sent
        self._ahead: tuple[list[tuple[int, int]], Callable[[], tuple], float] | None = None
        self._trips: collections.deque[float] = collections.deque(maxlen=8)
        self._constants = sorted(constants)
        self._kept: dict[tuple[int, int], bytes] = {}   # constant pieces, read once
        self._fetched: dict[tuple[int, int], bytes] = {}
        self._seen: list[tuple[tuple[int, int], bytes]] = []  # this refresh's reads and their bytes
        self.hits = self.misses = 0
        if hasattr(inner, "read_many"):  # callers test for it: offered only when the inner reader batches
            self.read_many = self._read_many

    def __getattr__(self, name):  # calls, bytes, link_failures, last_link_error, name, link, cancel
        return getattr(self.inner, name)

    def begin(self, plan: list[tuple[int, int]], also: str | None = None):
        """Starts a refresh: fetches `plan` [(addr, length)] in one request, or reads the reply to
        the request ahead() sent for it (then `plan` and `also` are not sent: pieces of `plan` it
        lacks are read alone). A failed fetch is dropped quietly: each piece is then read alone,
        and its error said alone. also: a command for the same request when the inner reader
        takes one (openocd.TclReader: the core's state); returns its (ok, text), or None when it
        was not sent."""
        self._fetched, self._seen = {}, []
        ahead = self.take_ahead()
        if ahead is not None:
            self._fetched = dict(zip(ahead[0], ahead[1], strict=True))
            return ahead[2]
        many = getattr(self.inner, "read_many", None)
        if many is None:
            return None  # nothing to gain: the pieces would be read one by one anyway
        kept = self.fetch_plan(plan)
        riding = also is not None and hasattr(self.inner, "also_result")
        if not kept and not riding:
            return None
        try:
            t0 = time.monotonic()
            got = many(kept, also) if riding else many(kept)
            self._trips.append(time.monotonic() - t0)
        except MemoryReadError:
            return None
        self._fetched = dict(zip(kept, got, strict=True))
        return getattr(self.inner, "also_result", None) if riding else None  # riding: the inner reader has it

    def ahead(self, plan: list[tuple[int, int]], also: str | None = None) -> None:
        """Sends the next refresh's fetch of `plan` (and `also`) now; the next begin() reads its
        reply. Nothing is sent while one is pending, nor when the inner reader cannot send now
        and read later."""
        later = getattr(self.inner, "read_many_later", None)
        if self._ahead is not None or later is None:
            return
        kept = self.fetch_plan(plan)
        if kept or also is not None:
            self._ahead = (kept, later(kept, also), time.monotonic())

    @property
    def round_trip(self) -> float | None:
        """The link's round trip for a refresh's request, in seconds: the median of the last 8
        measured (a request read at once, or one sent ahead whose reply was waited for), None
        before one was."""
        return statistics.median(self._trips) if self._trips else None

    @property
    def pending(self) -> bool:
        """Whether a request ahead() sent waits for its refresh."""
        return self._ahead is not None

    def take_ahead(self):
        """(pieces, [bytes], also's (ok, text) or None) of the request ahead() sent, its reply
        read now; None when none was sent or it failed (its failure counted by the inner reader).
        begin() takes it; the poller drops it when it waits before the next refresh (the data
        would be old by then) and when it stops (before its link is closed)."""
        pending, self._ahead = self._ahead, None
        if pending is None:
            return None
        try:
            t0 = time.monotonic()
            got, result = pending[1]()
        except MemoryReadError:
            return None
        if time.monotonic() - t0 > WAITED_S:  # it came while waited for: sent to here is its round trip
            self._trips.append(time.monotonic() - pending[2])
        return pending[0], got, result

    def fetch_plan(self, plan: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """What begin(plan) fetches: each piece once, in order, none longer than MAX_PIECE, none
        already kept as constant, up to MAX_PLAN bytes in all (tools/bench_live.py times it)."""
        total, kept = 0, []
        for p in dict.fromkeys(plan):
            if not 0 < p[1] <= MAX_PIECE or p in self._kept:
                continue
            if total + p[1] > MAX_PLAN:
                break
            kept.append(p)
            total += p[1]
        return kept

    def got(self) -> list[tuple[tuple[int, int], bytes]]:
        """[(piece, its bytes)] this refresh read, in order: what the next one is expected to read,
        and what serve/livememo.py compares."""
        return list(self._seen)

    def peek(self, piece: tuple[int, int]) -> bytes | None:
        """The bytes this refresh's request fetched for `piece`, not yet served (None: not
        fetched, or served already); peeking serves nothing."""
        return self._fetched.get(piece)

    def constant(self, addr: int, length: int) -> bool:
        """Whether [addr, addr + length) lies inside one constant range."""
        return any(lo <= addr and addr + length <= hi for lo, hi in self._constants)

    def _keep(self, piece: tuple[int, int], data: bytes) -> bytes:
        if self.constant(*piece) and len(self._kept) < MAX_KEPT:
            self._kept[piece] = data
        return data

    def read(self, addr: int, length: int) -> bytes:
        piece = (addr, length)
        data = self._kept.get(piece)
        if data is None:
            data = self._fetched.pop(piece, None)
        if data is not None:
            self.hits += 1
        else:
            self.misses += 1
            data = self.inner.read(addr, length)
        self._seen.append((piece, data))
        return self._keep(piece, data)

    def _read_many(self, pieces):
        if all(p in self._fetched or p in self._kept for p in pieces):
            self.hits += len(pieces)
            got = [self._kept[p] if p in self._kept else self._fetched.pop(p) for p in pieces]
        else:
            self.misses += len(pieces)
            many = getattr(self.inner, "read_many", None)
            assert many is not None  # offered (__init__) only when the inner reader has it
            got = many(pieces)
        self._seen += zip(pieces, got, strict=True)
        return [self._keep(p, d) for p, d in zip(pieces, got, strict=True)]
