"""The live view's poller: snapshots of a running target, read through any MemoryReader (in
practice openocd.TclReader), with no GDB. Used by `arena live` (on a thread of its own) and by
the standalone `arenascope live`; the decoding is the plugin's own (session, analysis, snapshot).

One refresh reads only what can change:
- the descriptor (128 B on Cortex-M) and its seq, through DescriptorSession: a torn read (seq
  odd, or changed under the read) is retried, and never published; the region tables are
  re-read only when layout_generation changes;
- a slice of the bands (the guard band, each arena's free band with its 0xAA canary, the painted
  stack), `scan_budget` bytes per refresh in turn: each band is re-read whole every few
  refreshes, and its figures are the host's from its first whole pass on (the agent's before).
The snapshot carries a "live" object (docs/snapshot-schema.md): reader, time, refresh rate,
bytes read, link state and a history of used bytes, stack peak and the arena-stack gap.
"""
import collections
import time

from arenascope_plugin.decode import abi, tflm
from arenascope_plugin.analyse import figures
from arenascope_plugin.present import snapshot
from arenascope_plugin.decode.descriptor import MAX_STACK_BYTES, DecodeError
from arenascope_plugin.acquire.reader import MemoryReadError
from arenascope_plugin.decode.session import DescriptorSession, TornReadError

HISTORY_POINTS = 600
DEFAULT_SCAN_BUDGET = 512   # bytes of band scan per refresh
MAX_BAND_BYTES = MAX_STACK_BYTES  # larger bands are not scanned through a probe


class TornError(Exception):
    """This refresh saw the descriptor mid-update: nothing is published for it."""


class IncrementalBand:
    """A band re-read `budget` bytes at a time; `result` is (touched_lo, touched_hi, painted)
    from the last whole pass, or None before the first."""

    def __init__(self, low, high, pattern):
        self.low, self.high, self.pattern = low, high, pattern
        self.data = bytearray(max(0, high - low))
        self.cursor = 0
        self.result = None
        self.passes = 0

    def key(self):
        return self.low, self.high, self.pattern

    def step(self, reader, budget):
        """Reads up to budget bytes at the cursor; returns the bytes read."""
        n = min(budget, len(self.data) - self.cursor) // 4 * 4 or min(4, len(self.data) - self.cursor)
        if n <= 0:
            return 0
        self.data[self.cursor:self.cursor + n] = reader.read(self.low + self.cursor, n)
        self.cursor += n
        if self.cursor >= len(self.data):
            lo, hi = figures.changed_range(self.data, self.pattern)
            painted = self.pattern.to_bytes(4, "little") in self.data[: len(self.data) // 4 * 4]
            self.result, self.cursor = (lo, hi, painted), 0
            self.passes += 1
        return n


class LivePoller:
    """Refreshes of the descriptor at `address`. source: the snapshot's "source" object (elf,
    located_by); stack_range: (low, high) overriding the descriptor's stack bounds;
    read_descriptor: for agentless mode, a callable returning the Descriptor walked from TFLM's
    objects through the same reader (then `address` is unused)."""

    def __init__(self, reader, address, source, ram_ranges=None, scan_budget=DEFAULT_SCAN_BUDGET,
                 canary_pattern=None, stack_pattern=None, stack_range=None, read_descriptor=None):
        self.reader, self.source = reader, dict(source)
        self.session = DescriptorSession(reader, address, ram_ranges=ram_ranges)
        self.ram_ranges = ram_ranges  # the ELF's RAM, for the bounds rule, as at a stop
        # Agentless mode: a callable that walks TFLM's objects through the reader into a Descriptor.
        self.read_descriptor = read_descriptor
        self.scan_budget = scan_budget
        self.canary_pattern, self.stack_pattern, self.stack_range = canary_pattern, stack_pattern, stack_range
        self.bands = {}             # name -> IncrementalBand
        self._turn = 0
        self.refreshes = 0
        self.torn = 0               # refreshes discarded: the descriptor was mid-update
        self.history = collections.deque(maxlen=HISTORY_POINTS)
        self._times = collections.deque(maxlen=64)
        self.last = None            # the last snapshot published

    def _band(self, name, low, high, pattern):
        b = self.bands.get(name)
        if b is None or b.key() != (low, high, pattern):
            b = self.bands[name] = IncrementalBand(low, high, pattern)
        return b

    def _scan(self, desc):
        canary = self.canary_pattern if self.canary_pattern is not None else desc.canary_pattern
        paint = self.stack_pattern if self.stack_pattern is not None else desc.stack_paint_pattern
        lo, hi = self.stack_range or (desc.stack.low_addr, desc.stack.high_addr)
        wanted = [("guard", desc.guard, canary)] + [(f"arena {a.index}", a.canary, canary) for a in desc.arenas]
        wanted = [(n, target, target.low_addr, target.high_addr, p) for n, target, p in wanted]
        wanted.append(("stack", None, lo, hi, paint))
        wanted = [w for w in wanted if w[3] > w[2]]
        too_big = [w for w in wanted if w[3] - w[2] > MAX_BAND_BYTES]
        if too_big:
            raise DecodeError(f"the {too_big[0][0]} band {too_big[0][2]:#x}-{too_big[0][3]:#x} is more than "
                              f"{MAX_BAND_BYTES >> 20} MiB: not scanned through a probe (check the descriptor, or "
                              "`set arena stack-range`)")
        for name in set(self.bands) - {w[0] for w in wanted}:
            del self.bands[name]
        bands = [(self._band(n, l, h, p), target) for n, target, l, h, p in wanted]
        budget = self.scan_budget
        for k in range(len(bands)):  # round robin: each refresh starts one band further
            if budget <= 0:
                break
            budget -= bands[(self._turn + k) % len(bands)][0].step(self.reader, budget)
        self._turn += 1
        complete = all(b.result is not None for b, _ in bands)
        scanned = painted = None
        for b, target in bands:
            if b.result is None:
                continue
            if target is not None:
                target.touched_lo, target.touched_hi = b.result[0], b.result[1]
            else:
                scanned = b.high if b.result[0] == abi.NONE else b.low + b.result[0]
                painted = b.result[2]
        if complete and bands:
            desc.flags |= abi.FLAG_MEASURED
            desc.measured_by = "host scan through the live reader (incremental: each band re-read every few refreshes)"
        return scanned, painted

    def refresh(self):
        """One refresh: the snapshot (also kept as .last). Raises TornError (nothing published),
        MemoryReadError (the link or the target), DecodeError (a corrupt descriptor)."""
        before = getattr(self.reader, "bytes", 0)
        try:
            desc = self.read_descriptor() if self.read_descriptor else self.session.read()
        except TornReadError as exc:
            self.torn += 1
            raise TornError(str(exc)) from None
        if desc.halted_in_update:
            self.torn += 1
            raise TornError(f"the descriptor's seq stays odd ({desc.seq}): the target is inside an arenascope "
                            "update (stopped there by a debugger, or stuck)")
        scanned, painted = self._scan(desc)
        figs = {a.index: figures.arena_figures(a) for a in desc.arenas}
        stack = figures.stack_figures(desc, sp=None, scanned_hwm=scanned, bounds=self.stack_range, painted=painted)
        snap = snapshot.build(desc, figs, stack, figures.checks(desc, stack, figs, ram_ranges=self.ram_ranges),
                              self.source)
        snap["fault"] = None
        now = time.time()
        self.refreshes += 1
        self._times.append(time.monotonic())
        gap = (stack.hwm - stack.arena_end) if stack.hwm is not None and stack.arena_end is not None else None
        self.history.append({"t_unix_s": round(now, 3), "used_bytes": figs[0].used if 0 in figs else 0,
                             "stack_peak_bytes": stack.peak if stack.hwm is not None else None, "gap_bytes": gap})
        snap["live"] = {"reader": getattr(self.reader, "name", "memory"), "captured_at_unix_s": round(now, 3),
                        "refresh_index": self.refreshes, "refresh_hz": round(self.rate(), 2),
                        "bytes_last_refresh": getattr(self.reader, "bytes", 0) - before, "link": "ok",
                        "link_error": None, "history": list(self.history)}
        self.last = snap
        return snap

    def rate(self):
        """Refreshes per second over the last (up to 64) refreshes within the last 2 s."""
        now = time.monotonic()
        recent = [t for t in self._times if now - t <= 2.0]
        if len(recent) < 2:
            return 0.0
        return (len(recent) - 1) / max(recent[-1] - recent[0], 1e-6)

    def lost(self, why, link="lost"):
        """The last good snapshot, marked (the viewer says so), or None when there is none.
        link "lost": the reader lost the target; "untrusted": the target answers but its
        descriptor is corrupt: then a failing `descriptor` check and verdict FAIL too."""
        if self.last is None:
            return None
        snap = dict(self.last, live=dict(self.last["live"], link=link, link_error=why, refresh_hz=0.0))
        if link == "untrusted":
            snap["checks"] = [{"rule": "descriptor", "verdict": "FAIL", "reason": f"the descriptor read now is corrupt: "
                               f"{why}; the figures are the last good ones"}] + list(self.last["checks"])
            snap["verdict"] = "FAIL"
        return snap


def agentless_reader(reader, layout, interpreter, plan, stack=None):
    """A LivePoller read_descriptor for agentless mode: TFLM's objects walked through `reader`
    (tflm.walk) into a Descriptor; `stack` a Band (linker symbols) or None. TFLM lays the arena out
    once: each refresh reads the allocator's state (tflm.allocator_state, a few words) and walks
    the objects again only when it moved (another AllocateTensors, a reset), as the agent's
    layout_generation tells the agent mode. A walk that meets half-built objects is a torn read."""
    kept = {"state": None, "walk": None}

    def read():
        try:
            state = tflm.allocator_state(reader, layout, interpreter)
            if state != kept["state"]:  # a failed walk keeps the last good pair
                kept["walk"] = tflm.walk(reader, layout, interpreter, plan)
                kept["state"] = state
            return tflm.descriptor(kept["walk"], layout.pointer, stack=stack)
        except tflm.AgentlessError as exc:
            raise TornError(f"TFLM's objects are not consistent now ({exc})") from None
    return read


def run(poller, publish, hz, stop, report, interval_errors=1.0):
    """Polls until `stop` (a threading.Event) is set: publish(snapshot) at up to `hz` refreshes a
    second; report(text) says what went wrong and when it recovered (once each, not every try).
    Errors never end the loop: the link is retried every `interval_errors` seconds."""
    period = 1.0 / hz
    trouble = None
    while not stop.is_set():
        t0 = time.monotonic()
        try:
            snap = poller.refresh()
        except TornError as exc:
            if trouble != "torn":
                report(f"torn read discarded: {exc}" + ("" if poller.last else " (no good data yet)"))
                trouble = "torn"
            stop.wait(period)
            continue
        except (MemoryReadError, DecodeError) as exc:
            if stop.is_set():
                break
            why = str(exc)
            if trouble != why:
                corrupt = isinstance(exc, DecodeError)
                report(f"{'the descriptor read is corrupt' if corrupt else 'live read failed'}: {why}; retrying every "
                       f"{interval_errors:g} s")
                lost = poller.lost(why, "untrusted" if corrupt else "lost")
                if lost is not None:
                    publish(lost)
                trouble = why
            stop.wait(interval_errors)
            continue
        if trouble is not None:
            report(f"live reads work again (refresh {poller.refreshes})")
            trouble = None
        publish(snap)
        stop.wait(max(0.0, period - (time.monotonic() - t0)))
