"""The live view's poller: snapshots of a running target, read through any MemoryReader (in
practice openocd.TclReader), with no GDB. Used by `arena live` (on a thread of its own) and by
the standalone `arenascope live`. Each refresh is the pipeline's gather and snapshot
(pipeline.py), the same figures, checks and fault as at a stop.

One refresh reads only what can change, in one request in steady state (acquire/batch.py: what
the last two refreshes both read, and the band scanner's next slices, fetched together). Run flat
out (the link slower than the rate asked), each refresh sends the next one's request before it
works on its own reads (BatchedReader.ahead, over OpenOCD's Tcl port), so the host's work hides in
the probe's round trip; paced, each refresh reads when it is due, unless the wait for it is
shorter than the link's round trip (a rate near the link's limit): then its request goes ahead
too. What a refresh reads:
- the descriptor (132 B on Cortex-M, ABI 1.1: one self-checking read), through
  DescriptorSession: a torn read (seq odd, or changed under the read) is retried, and never
  published; the region tables are re-read only when layout_generation changes;
- the fault record's head and ICSR (ports/faultread.py; the whole record when its head moves);
- a slice of the bands (the guard band, each arena's free band with its 0xAA canary, the painted
  stack), `scan_budget` bytes per refresh in turn: each band is re-read whole every few
  refreshes, and its figures are the host's from its first whole pass on (the agent's before).
A refresh whose request brings the last full refresh's bytes again (the descriptor's counters
aside) publishes that refresh's snapshot with the counters read now (livememo.py).
The snapshot carries a "live" object (docs/snapshot-schema.md): reader, time, refresh rate,
bytes read, link state and a history of used bytes, stack peak and the arena-stack gap.
"""
import collections
import re
import threading
import time
from collections.abc import Callable

from arenascope_plugin import pipeline
from arenascope_plugin.acquire.batch import BatchedReader
from arenascope_plugin.analyse.bands import BandScanner
from arenascope_plugin.decode.descriptor import DecodeError
from arenascope_plugin.decode.locate import NotFoundError
from arenascope_plugin.decode.session import TornReadError
from arenascope_plugin.errors import ArenascopeError, TargetError
from arenascope_plugin.serve.livememo import Memo

HISTORY_POINTS = 600
DEFAULT_SCAN_BUDGET = 256   # bytes of band scan per refresh
CATCH_UP_S = 0.25           # run(): how far behind its schedule the pacing still makes up


class TornError(ArenascopeError):
    """This refresh saw the descriptor mid-update: nothing is published for it."""


class LinkError(ArenascopeError):
    """A read of this refresh failed because the link to the probe did: nothing is published."""


class LivePoller:
    """Refreshes of a running target through pipeline.gather and pipeline.snapshot, with the band
    scans `scan_budget` bytes a refresh (analyse/bands.py). target: a pipeline.Target of GDB-free
    parts (a TclReader, ElfSymbols, CoreOverTcl); settings: the pipeline's Settings."""

    def __init__(self, target: pipeline.Target, settings: pipeline.Settings,
                 scan_budget: int | None = DEFAULT_SCAN_BUDGET) -> None:
        self.settings = settings
        # One request a refresh in steady state: what the last one read, and the scans' next slices.
        constants = getattr(target.symbols, "constant_ranges", list)()  # code and constants: read once
        self.reader = BatchedReader(target.reader, constants)
        self.target = pipeline.Target(self.reader, target.symbols, target.core)
        self._expected: list[tuple[int, int]] = []
        self._last_seen: set[tuple[int, int]] = set()
        self.scanner = BandScanner(scan_budget)
        self.memo = Memo()          # the last full refresh, replayed while the target's bytes stay the same
        self.scan_budget = scan_budget
        # Found once, then pinned: no RAM scan through the probe at every refresh.
        self.cache = {"pin": True}
        self.refreshes = 0
        self.torn = 0               # refreshes discarded: the descriptor was mid-update
        self.history = collections.deque(maxlen=HISTORY_POINTS)
        self._times = collections.deque(maxlen=64)
        self.last = None            # the last snapshot published
        self.trouble = None         # what is wrong now (run()), None while refreshes work
        self.trouble_link = "lost"  # and how the viewer is told: "lost" or "untrusted"
        # Whether each refresh sends the next one's request while it works (BatchedReader.ahead):
        # run() sets it while refreshes run back to back, and clears it when it paces them.
        self.ahead = False

    def refresh(self) -> dict:
        """One refresh: the snapshot (also kept as .last). Raises TornError (nothing published),
        LinkError (the link), MemoryReadError (the target), DecodeError (a corrupt descriptor),
        TargetError."""
        before = getattr(self.reader, "bytes", 0)
        failures = getattr(self.reader, "link_failures", 0)
        rearm = getattr(getattr(self.reader, "link", None), "rearm", None)
        if rearm is not None:
            rearm()  # a link whose deadline passed in the last refresh is tried again (once: acquire/via.py)
        core = self.target.core
        sent = self.reader.pending  # this refresh's request went while the last one worked
        state = self.reader.begin(self._expected + self.scanner.plan(), also=self._ride())
        if state is not None:
            core.take(*state)
        elif not sent and getattr(core, "refresh", None) is not None:
            core.refresh()  # (a request sent ahead carries the state when it is due: the next one will)
        if self.ahead:
            # The next refresh's request, on the link while this one is worked on: in steady state
            # it reads what this one does, and the band scans' slices after this refresh's.
            self.reader.ahead(self._expected + self.scanner.plan(after=1), also=self._ride())
        try:
            snap, point, ctx = self._snapshot(core)
        except TornReadError as exc:
            self.torn += 1
            raise TornError(str(exc)) from None
        except TornError:
            raise
        except ArenascopeError as exc:
            self._link_check(failures)  # unreadable because the link failed: not the target's fault
            if isinstance(exc, NotFoundError):
                raise DecodeError(str(exc)) from None
            raise
        self._link_check(failures)
        scanned = set(self.scanner.take_reads())
        scans = self.scanner.take_calls()
        got = [(p, d) for p, d in self.reader.got() if p not in scanned]
        seen = [p for p, _ in got]
        # steady state: what this refresh and the last both read (not a walk after a layout change)
        self._expected, self._last_seen = [p for p in seen if p in self._last_seen], set(seen)
        if ctx is not None:  # worked out, not replayed
            self.memo.record(got, scans, ctx.desc, core, self.settings, snap, point)
        now = time.time()
        self.refreshes += 1
        self._times.append(time.monotonic())
        self.history.append({"t_unix_s": round(now, 3), "used_bytes": point[0], "stack_peak_bytes": point[1],
                             "gap_bytes": point[2]})
        snap["live"] = {"reader": getattr(self.reader, "name", "memory"), "captured_at_unix_s": round(now, 3),
                        "refresh_index": self.refreshes, "refresh_hz": round(self.rate(), 2),
                        "bytes_last_refresh": getattr(self.reader, "bytes", 0) - before, "link": "ok",
                        "link_error": None, "history": list(self.history)}
        self.last = snap
        return snap

    def _snapshot(self, core) -> tuple[dict, tuple, pipeline.Context | None]:
        """(snapshot, history point, the Context it was worked out from): the last full refresh's,
        with None, when this request brought its bytes again (livememo.py), else the pipeline's.
        Nothing is replayed after a refresh that failed."""
        try:
            replayed = self.memo.replay(self.reader, self.scanner, core, self.settings)
            return (*replayed, None) if replayed is not None else self._work()
        except Exception:
            self.memo.forget()
            raise

    def _work(self) -> tuple[dict, tuple, pipeline.Context]:
        """The pipeline's gather and snapshot for this refresh, its history point (used bytes,
        stack peak, arena-stack gap) and its Context (the memo keeps its descriptor)."""
        ctx = pipeline.gather(self.target, self.settings, self.cache, self.scanner, verify=True)
        if ctx.desc is not None and ctx.desc.halted_in_update:
            self.torn += 1
            raise TornError(f"the descriptor's seq stays odd ({ctx.desc.seq}): the target is inside an arenascope "
                            "update (stopped there by a debugger, or stuck)")
        snap = pipeline.snapshot(ctx)
        figs, stack = ctx.figs, ctx.stack
        gap = (stack.hwm - stack.arena_end) if stack.hwm is not None and stack.arena_end is not None else None
        return snap, (figs[0].used if 0 in figs else 0, stack.peak if stack.hwm is not None else None, gap), ctx

    def _ride(self) -> str | None:
        """The core's state command when it is due, to ride in the reads' request when the link
        takes it (OpenOCD's Tcl): a state asked alone cost a round trip every 100 ms, a quarter of
        the refreshes at 40 a second."""
        core = self.target.core
        return core.script() if getattr(core, "script", None) is not None and core.due() else None

    def settle(self) -> None:
        """Drops the request sent ahead, if any, once its reply is in: the next refresh will not
        start at once (its data would be old), or the poller stops (its link may close)."""
        self.reader.take_ahead()

    def _link_check(self, failures: int) -> None:
        """LinkError when a read of this refresh failed because the link did: the stages took it
        for unreadable memory (a TFLM object "not readable"); nothing of it is published."""
        if getattr(self.reader, "link_failures", 0) != failures:
            raise LinkError(f"the link failed during this refresh: {self.reader.last_link_error}")

    def since_last_refresh(self) -> float | None:
        """Seconds since the last good refresh (None: there was none)."""
        return time.monotonic() - self._times[-1] if self._times else None

    def rate(self) -> float:
        """Refreshes per second over the last (up to 64) refreshes within the last 2 s."""
        now = time.monotonic()
        recent = [t for t in self._times if now - t <= 2.0]
        if len(recent) < 2:
            return 0.0
        return (len(recent) - 1) / max(recent[-1] - recent[0], 1e-6)

    def lost(self, why: str, link: str = "lost") -> dict | None:
        """The last good snapshot, marked (the viewer says so), or None when there is none.
        link "lost": the reader lost the target; "untrusted": the target answers but its
        descriptor is corrupt: then a failing `descriptor` check and verdict FAIL too."""
        if self.last is None:
            return None
        snap = dict(self.last, live=dict(self.last["live"], link=link, link_error=why, refresh_hz=0.0))
        if link == "untrusted":
            reason = f"the descriptor read now is corrupt: {why}; the figures are the last good ones"
            snap["checks"] = [{"rule": "descriptor", "verdict": "FAIL", "reason": reason}, *self.last["checks"]]
            snap["verdict"] = "FAIL"
        return snap


def fault_seen(snap: dict) -> tuple[tuple, str, str] | None:
    """(key, verdict, the line to say) for a fault of this boot in a live snapshot, or None: the
    key (exception, the faulting PC, the fault's registers, source) tells one fault from the next,
    so each is said once, and again only when its verdict changes (the band scans that came in
    after the fault tell more: a guard band read before the stack reached it)."""
    f = snap.get("fault")
    if not f or f.get("stale"):
        return None
    pc = (f.get("frame") or {}).get("pc")
    first = f["verdicts"][0]["headline"] if f.get("verdicts") else "no arena verdict"
    where = f" at {f['pc_where']}" if f.get("pc_where") else ""
    regs = tuple(r.get("value") for r in f.get("registers") or [] if isinstance(r, dict))
    return ((f.get("exception"), pc, regs, f.get("source")), first,
            f"{f.get('exception') or 'an exception'}{where}; {first} (halt and run `arena fault` for the evidence)")


def _gist(why: str) -> str:
    """A message without its numbers: a link that floods or stalls at every refresh, with other
    counts each time, is said once."""
    return re.sub(r"\d+(\.\d+)?", "#", why)


class Pacer:
    """The schedule of refreshes at `hz` a second from monotonic time `start`: each refresh is due
    one period after the last one was, so a slow refresh is made up by the next ones and the rate
    holds `hz` on average (tools/bench_live.py --hz N measures it), for up to CATCH_UP_S (or a
    period) behind; a link slower than `hz` is polled as fast as it goes, with no burst when it
    speeds up again."""

    def __init__(self, hz: float, start: float) -> None:
        self.period = 1.0 / hz
        self.due = start  # when the refresh that runs now was due
        self.started = False

    def wait(self, now: float) -> float:
        """Seconds from `now` (a refresh just ended) until the next refresh is due (0: at once).
        The schedule starts when the first refresh ends: the first reads the region tables and
        finds what to read, and is not made up by a burst."""
        if not self.started:
            self.started, self.due = True, now
        self.due = max(self.due + self.period, now - max(CATCH_UP_S, self.period))
        return max(0.0, self.due - now)


def run(poller: LivePoller, publish: Callable[[dict], object], hz: float, stop: threading.Event,
        report: Callable[[str], object], interval_errors: float = 1.0) -> None:
    """Polls until `stop` (a threading.Event) is set: publish(snapshot) at up to `hz` refreshes a
    second; report(text) says what went wrong and when it recovered (once each, not every try).
    Errors never end the loop: the link is retried every `interval_errors` seconds."""
    period = 1.0 / hz
    pacer = Pacer(hz, time.monotonic())
    trouble = None
    announced = None  # the last fault said (fault_seen's key and verdict)
    try:
        while not stop.is_set():
            try:
                snap = poller.refresh()
            except TornError as exc:
                if trouble != "torn":
                    report(f"torn read discarded: {exc}" + ("" if poller.last else " (no good data yet)"))
                    trouble = poller.trouble = "torn"
                _pause(poller, stop, period)
                pacer = Pacer(hz, time.monotonic())  # the pause was meant: no burst to make it up
                continue
            except ArenascopeError as exc:
                if stop.is_set():
                    break
                why = str(exc)
                if trouble is None or _gist(trouble) != _gist(why):  # said once, not again for other counts
                    corrupt = isinstance(exc, (DecodeError, TargetError))
                    report(f"{'the descriptor read is corrupt' if corrupt else 'live read failed'}: {why}; retrying "
                           f"every {interval_errors:g} s")
                    poller.trouble_link = "untrusted" if corrupt else "lost"
                    lost = poller.lost(why, poller.trouble_link)
                    if lost is not None:
                        publish(lost)
                    trouble = poller.trouble = why
                _pause(poller, stop, interval_errors)
                pacer = Pacer(hz, time.monotonic())
                continue
            if trouble is not None:
                report(f"live reads work again (refresh {poller.refreshes})")
                trouble = poller.trouble = None
            seen = fault_seen(snap)
            if seen is not None and seen[:2] != announced:  # once a fault and verdict: where the user looks
                again = announced is not None and seen[0] == announced[0]
                lead = "the fault verdict changed" if again else "fault seen"
                report(f"{lead} while polling: {seen[2]}")
                announced = seen[:2]
            publish(snap)
            wait = pacer.wait(time.monotonic())
            # The next refresh's request goes while this one works when they run back to back, or
            # when the wait is shorter than the link's round trip: its reply would not come before
            # the refresh is due anyway, and a rate near the link's limit holds (--hz N).
            poller.ahead = wait == 0 or wait < (poller.reader.round_trip or 0.0)
            _pause(poller, stop, wait, keep=poller.ahead)
    finally:
        poller.settle()


def _pause(poller: LivePoller, stop: threading.Event, seconds: float, keep: bool = False) -> None:
    """Waits `seconds` (until `stop`) before the next refresh; a request sent ahead for it is
    dropped first when there is a wait (its data would be old), unless `keep`: its reply is due
    no earlier than the refresh."""
    if seconds > 0:
        if not keep:
            poller.ahead = False
            poller.settle()
        stop.wait(seconds)
