"""The parts that keep the live view at the link's limit and the commands linear (issue 39), each
held to figures worked out here by hand: the pacing schedule, constant words read once, adjacent
pieces merged into one OpenOCD read, band scans and region tables read once a stop, and the JSON
text of large documents. (The rates themselves are tools/bench_live.py's and bench_plugin.py's.)"""
import json
import random
import re
import threading

import pytest

from arenascope_plugin import pipeline
from arenascope_plugin.acquire import batch as batch_module
from arenascope_plugin.acquire import openocd
from arenascope_plugin.acquire.batch import BatchedReader
from arenascope_plugin.acquire.reader import CountingReader, ImageReader
from arenascope_plugin.acquire.symbols import FixedCore, TableSymbols
from arenascope_plugin.analyse.bands import BandScanner
from arenascope_plugin.present import jsontext
from arenascope_plugin.serve import livepoll
from conftest import DESC_ADDR, NONE, TABLE_ADDR, demo_like
from test_live_exit import fake_openocd


def simulate(hz, durations):
    """Refresh start times when each refresh takes durations[k] s and the loop waits as
    livepoll.run does (Pacer.wait after each), on a clock of its own."""
    pacer, now, starts = livepoll.Pacer(hz, 0.0), 0.0, []
    for d in durations:
        starts.append(now)
        now += d
        now += pacer.wait(now)
    return starts


def test_the_pacing_holds_the_rate_through_slow_refreshes():
    # 20 Hz (50 ms a period); refreshes of 5-30 ms, and one in ten a stall of 120 ms (more than two
    # periods): the old loop, which made up at most one period, fell behind at every stall.
    rng = random.Random(7)
    durations = [0.12 if k % 10 == 9 else rng.uniform(0.005, 0.03) for k in range(2000)]
    starts = simulate(20.0, durations)
    rate = (len(starts) - 1) / (starts[-1] - starts[0])
    assert abs(rate / 20.0 - 1) < 0.002, rate
    # no refresh starts before it is due: the k-th at k periods at the earliest
    assert all(s >= k * 0.05 - 1e-9 for k, s in enumerate(starts))


def test_a_slow_first_refresh_is_not_made_up_by_a_burst():
    # the first refresh reads the region tables: 0.4 s; then 5 ms ones at 10 Hz are 0.1 s apart
    starts = simulate(10.0, [0.4] + [0.005] * 10)
    gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    assert abs(gaps[0] - 0.5) < 1e-9 and all(abs(g - 0.1) < 1e-9 for g in gaps[1:]), gaps


def test_a_link_slower_than_the_rate_is_polled_flat_out_without_a_burst_after():
    # 100 refreshes of 80 ms at 20 Hz (the link gives 12.5/s): back to back; then fast ones of 1
    # ms: at most CATCH_UP_S (0.25 s: 5 periods) are made up, not the whole 3 s of lag.
    starts = simulate(20.0, [0.08] * 100 + [0.001] * 40)
    gaps = [b - a for a, b in zip(starts, starts[1:], strict=False)]
    assert abs(gaps[0] - 0.13) < 1e-9  # the schedule starts as the first refresh ends: one period after
    assert all(abs(g - 0.08) < 1e-9 for g in gaps[1:99])
    burst = sum(1 for g in gaps[100:] if g < 0.01)
    assert burst == 5, gaps[100:]


class ManyReader(CountingReader):
    """An image reader with read_many, counting the pieces asked."""

    def __init__(self, image):
        super().__init__(image)
        self.asked = []

    def read_many(self, pieces):
        self.asked += pieces
        return [self.read(a, n) for a, n in pieces]


def test_constant_words_are_read_once_for_the_pollers_life():
    image = ImageReader([(0x0, bytes(range(256))), (0x20000000, bytes(64))])
    inner = ManyReader(image)
    batched = BatchedReader(inner, [(0x0, 0x100)])   # the code: 0x0-0x100
    for _ in range(5):
        batched.begin([(0x10, 4), (0x20000000, 8)])
        assert batched.read(0x10, 4) == bytes([16, 17, 18, 19])
        assert batched.read(0x20000000, 8) == bytes(8)
    assert inner.asked.count((0x10, 4)) == 1           # once, at the first refresh
    assert inner.asked.count((0x20000000, 8)) == 5     # RAM: every refresh
    assert batched.fetch_plan([(0x10, 4), (0x20000000, 8), (0x30, 2000)]) == [(0x20000000, 8)]


class FakeTclLink:
    """Stands in for OpenOCD's Tcl link (the real one: tests/integration/test_openocd_live.py):
    runs `list [read_memory A 32 N] ...` against a memory image, and keeps every script."""
    endpoint = "fake:6666"

    def __init__(self, image):
        self.image, self.scripts = image, []

    def call(self, script):
        self.exchanges = getattr(self, "exchanges", 0) + 1
        return self._run(script)

    def call_many(self, lines):
        self.exchanges = getattr(self, "exchanges", 0) + 1
        return [self._run(line) for line in lines]

    def call_many_later(self, lines):
        got = self.call_many(lines)
        return lambda: got

    def _run(self, script):
        self.scripts.append(script)
        if "curstate" in script:
            return True, "running 1 {target running}"
        out = []
        for a, n in openocd.re.findall(r"read_memory (0x[0-9a-f]+) 32 (\d+)", script):
            data = self.image.read(int(a, 16), 4 * int(n))
            out.append("{" + " ".join(f"{int.from_bytes(data[i:i + 4], 'little'):#x}" for i in range(0, len(data), 4))
                       + "}")
        return True, " ".join(out)


def test_adjacent_pieces_are_one_read_memory_in_openocd():
    # A fault's SCB words: CFSR 0xE000ED28, HFSR 0xE000ED2C, then MMFAR/BFAR 0xE000ED34/38 (DFSR
    # 0xE000ED30 between them is not read), and ICSR 0xE000ED04 alone.
    scb = bytes(range(0x40))
    link = FakeTclLink(ImageReader([(0xE000ED00, scb)]))
    reader = openocd.TclReader(link)
    got = reader.read_many([(0xE000ED04, 4), (0xE000ED28, 4), (0xE000ED2C, 4), (0xE000ED34, 4), (0xE000ED38, 4)])
    assert got == [scb[4:8], scb[0x28:0x2C], scb[0x2C:0x30], scb[0x34:0x38], scb[0x38:0x3C]]
    assert link.scripts == ["list [read_memory 0xe000ed04 32 1] [read_memory 0xe000ed28 32 2] "
                            "[read_memory 0xe000ed34 32 2]"]


def gathered(cache, verify):
    desc, table = demo_like()
    image = bytearray(0x3000)
    image[0:len(desc)] = desc
    image[TABLE_ADDR - DESC_ADDR:TABLE_ADDR - DESC_ADDR + len(table)] = table
    reader = CountingReader(ImageReader([(DESC_ADDR, image)]))
    target = pipeline.Target(reader, TableSymbols({"arenascope_descriptor": DESC_ADDR}), FixedCore(cortex_m=False))
    pipeline.gather(target, pipeline.Settings(), cache, verify=verify)
    return reader


def test_band_scans_and_region_tables_are_read_once_a_stop():
    # demo_like: a 132 B descriptor (read, then its table, then read again: the seqlock) after a
    # 16 B header probe the first time; 5 regions (80 B of table); the guard band 64 B, the free
    # band 288..3072 (2784 B), the stack 1024 B: a verifying gather reads them all.
    desc = len(demo_like()[0])
    assert desc == 132
    stop = {pipeline.STOP_SCANS: {}}
    assert gathered(stop, True).bytes == 16 + 132 + 80 + 132 + 64 + 2784 + 1024
    again = gathered(stop, True)                  # `arena snapshot` after `arena map`, same stop
    assert again.bytes == 132                      # the descriptor only
    stop[pipeline.STOP_SCANS] = {}                 # the target ran (gdb/framework.forget_scans)
    assert gathered(stop, True).bytes == 132 + 80 + 132 + 64 + 2784 + 1024
    assert gathered({}, True).bytes == 16 + 132 + 80 + 132 + 64 + 2784 + 1024  # no stop memo: the tool, a dump


def test_the_band_memo_is_for_whole_scans_only():
    memo = {}
    assert BandScanner(memo=memo).memo is memo
    assert BandScanner(256, memo=memo).memo is None  # the live poller's slices: never kept


def test_large_documents_are_compact_and_small_ones_indented():
    def doc(n):
        return {"arenas": [{"regions": [{"index": i, "offset": 16 * i} for i in range(n)]}]}
    small, large = jsontext.dumps(doc(jsontext.INDENT_UP_TO)), jsontext.dumps(doc(jsontext.INDENT_UP_TO + 1))
    assert small.count("\n") > jsontext.INDENT_UP_TO and "\n" not in large and ", " not in large
    assert json.loads(large) == doc(jsontext.INDENT_UP_TO + 1)
    assert jsontext.regions_in({"arenas": "hostile"}) == 0 and jsontext.regions_in([]) == 0


def test_a_live_refresh_through_openocd_is_one_exchange_with_the_core_state_riding_in_it():
    desc, table = demo_like()
    image = bytearray(0x3000)
    image[0:len(desc)] = desc
    image[TABLE_ADDR - DESC_ADDR:TABLE_ADDR - DESC_ADDR + len(table)] = table
    link = FakeTclLink(ImageReader([(DESC_ADDR, image), (0xE000ED00, bytes(0x40))]))  # the SCB: ICSR 0
    symbols = TableSymbols({"arenascope_descriptor": DESC_ADDR})
    core = openocd.CoreOverTcl(link, symbols)
    poller = livepoll.LivePoller(pipeline.Target(openocd.TclReader(link), symbols, core), pipeline.Settings())
    for _ in range(3):  # the first refreshes read the tables and learn the steady reads
        poller.refresh()
    for _ in range(5):
        before, scripts = link.exchanges, len(link.scripts)
        core._asked = None  # the state is due at every refresh here: it must still cost no round trip
        poller.refresh()
        assert link.exchanges - before == 1, link.scripts[scripts:]
        assert "read_memory" in link.scripts[scripts] and "curstate" in link.scripts[scripts + 1]
        assert core.state == "running"


def test_the_band_scanner_plans_the_refresh_after_the_next():
    # What the poller sends ahead: plan(after=1) is what plan() says once the next measure() has
    # read what plan() said; over bands of odd sizes and budgets, through many whole passes.
    rng = random.Random(11)
    for _ in range(40):
        budget = rng.choice([4, 12, 64, 256, 1000])
        bands, at = [], 0x20000000
        for name in ("guard", "free", "stack")[:rng.randint(1, 3)]:
            size = rng.choice([2, 4, 6, 40, 300, 1026])
            bands.append((name, at, at + size, 0xAAAAAAAA))
            at += size + 16
        reader = ImageReader([(0x20000000, bytes([0xAA]) * (at - 0x20000000))])
        scanner = BandScanner(budget)
        scanner.measure(reader, bands)
        scanner.take_reads()
        for _ in range(30):
            ahead, now = scanner.plan(after=1), scanner.plan()
            scanner.measure(reader, bands)
            assert sorted(scanner.take_reads()) == sorted(now)  # plan() is what measure() reads
            assert scanner.plan() == ahead, (budget, bands)


class LaterReader(ManyReader):
    """ManyReader that also sends now and reads later (as openocd.TclReader.read_many_later)."""

    def __init__(self, image):
        super().__init__(image)
        self.sent, self.collected = [], 0

    def read_many_later(self, pieces, also=None):
        self.sent.append(list(pieces))

        def collect():
            self.collected += 1
            return [self.read(a, n) for a, n in pieces], (True, "running") if also else None
        return collect


def test_a_request_sent_ahead_serves_the_next_refresh():
    inner = LaterReader(ImageReader([(0x20000000, bytes(range(64)))]))
    batched = BatchedReader(inner)
    batched.ahead([(0x20000000, 8), (0x20000010, 4)], also="state")
    assert batched.pending and inner.sent == [[(0x20000000, 8), (0x20000010, 4)]] and inner.collected == 0
    assert batched.begin([(0x20000000, 8), (0x20000020, 4)], also="ignored") == (True, "running")
    assert not batched.pending and inner.collected == 1 and inner.asked == []  # no read_many of its own
    assert batched.read(0x20000000, 8) == bytes(range(8))                       # from the reply ahead
    assert batched.read(0x20000020, 4) == bytes(range(32, 36))                  # not foreseen: read alone
    assert (batched.hits, batched.misses) == (1, 1)
    batched.ahead([(0x20000000, 8)])
    assert batched.take_ahead() is not None and not batched.pending  # dropped: the poller waits
    assert batched.begin([(0x20000000, 8)]) is None and inner.asked == [(0x20000000, 8)]  # sent afresh


def test_a_poller_sends_ahead_only_when_it_runs_flat_out():
    def run(hz):
        desc, table = demo_like()
        image = bytearray(0x3000)
        image[0:len(desc)] = desc
        image[TABLE_ADDR - DESC_ADDR:TABLE_ADDR - DESC_ADDR + len(table)] = table
        inner = LaterReader(ImageReader([(DESC_ADDR, image), (0xE000ED00, bytes(0x40))]))  # the SCB: ICSR 0
        poller = livepoll.LivePoller(pipeline.Target(inner, TableSymbols({"arenascope_descriptor": DESC_ADDR}),
                                                     FixedCore(cortex_m=False)), pipeline.Settings())
        stop, published = threading.Event(), []

        def publish(snap):
            published.append(snap)
            if len(published) == 12:
                stop.set()
        livepoll.run(poller, publish, hz, stop, lambda _m: None)
        return inner, poller
    inner, poller = run(1e6)   # faster than any refresh: back to back
    assert len(inner.sent) >= 10 and inner.collected == len(inner.sent) and not poller.reader.pending
    assert len(inner.asked) <= 8  # the first refreshes only (the tables, the steady reads learnt): then ahead
    inner, poller = run(20.0)  # 50 ms apart: each refresh reads afresh when it is due
    assert len(inner.sent) <= 2 and len(inner.asked) >= 12  # (a refresh of over 50 ms on a loaded machine)


def test_a_tcl_request_sent_ahead_is_read_later_and_the_replies_stay_in_order():
    go, answered = threading.Event(), []

    def answer(cmd):
        inner = re.search(r"catch \{(.*)\} __as_r\]", cmd.decode())
        if inner is None:
            return b"\x1a"  # `list`, as the link connects
        if inner.group(1) == "slow":
            go.wait(30)  # OpenOCD still reading the probe
        answered.append(inner.group(1))
        return f"0 {{{inner.group(1)}}}\x1a".encode()
    srv = fake_openocd(answer)
    link = openocd.TclLink("127.0.0.1", srv.getsockname()[1], quiet=False)
    later = link.call_many_later(["slow", "b"])
    assert answered == []                        # sent: nothing waited for
    go.set()
    assert link.call("c") == (True, "c")         # a command meanwhile reads the replies before it first
    assert later() == [(True, "slow"), (True, "b")] and answered == ["slow", "b", "c"]
    assert link.call_many_later(["d"])() == [(True, "d")]
    pending = link.call_many_later(["e"])
    link.close()  # the poller stopping: a reply never read is an error, not a read from a closed socket
    with pytest.raises(openocd.TclError, match="closed before its reply was read"):
        pending()
    assert link.call("f") == (True, "f")  # the link reconnects
    srv.close()
    link.close()


def test_the_link_s_round_trip_is_measured_on_replies_waited_for(monkeypatch):
    # On a clock of the test's own: a request read at once takes what its read takes; one sent
    # ahead counts from its sending only when its reply was still to come (else the reply sat
    # there for an unknown time, and says nothing).
    clock = [10.0]
    monkeypatch.setattr(batch_module.time, "monotonic", lambda: clock[0])

    class Slow(LaterReader):
        def read_many(self, pieces):
            clock[0] += 0.020
            return super().read_many(pieces)

        def read_many_later(self, pieces, also=None):
            collect = super().read_many_later(pieces, also)

            def later():
                clock[0] += self.wait
                return collect()
            return later
    inner = Slow(ImageReader([(0x20000000, bytes(64))]))
    batched = BatchedReader(inner)
    assert batched.round_trip is None
    batched.begin([(0x20000000, 8)])
    assert batched.round_trip == pytest.approx(0.020)
    inner.wait = 0.0                      # the reply was in before it was asked for: no sample
    batched.ahead([(0x20000000, 8)])
    clock[0] += 0.050
    batched.begin([(0x20000000, 8)])
    assert batched.round_trip == pytest.approx(0.020)
    inner.wait = 0.004                    # waited for: 6 ms of work, then 4 ms of waiting
    batched.ahead([(0x20000000, 8)])
    clock[0] += 0.006
    batched.begin([(0x20000000, 8)])
    assert batched.round_trip == pytest.approx(0.015)  # the median of 20 and 10 ms


def test_a_wait_shorter_than_the_round_trip_keeps_the_request_sent_ahead():
    desc, table = demo_like()
    image = bytearray(0x3000)
    image[0:len(desc)] = desc
    image[TABLE_ADDR - DESC_ADDR:TABLE_ADDR - DESC_ADDR + len(table)] = table
    inner = LaterReader(ImageReader([(DESC_ADDR, image), (0xE000ED00, bytes(0x40))]))
    poller = livepoll.LivePoller(pipeline.Target(inner, TableSymbols({"arenascope_descriptor": DESC_ADDR}),
                                                 FixedCore(cortex_m=False)), pipeline.Settings())
    stop = threading.Event()
    stop.set()  # the waits return at once
    for _ in range(3):  # the tables read, the steady reads learnt
        poller.refresh()
    poller.ahead = True
    for keep in (True, False):
        poller.refresh()
        assert poller.reader.pending
        livepoll._pause(poller, stop, 0.001, keep=keep)
        assert poller.reader.pending is keep and poller.ahead is keep


def test_a_write_into_a_band_shows_at_the_slice_that_reads_it():
    # A 1 KiB canary band read 64 B a call: after the first whole pass, a word overwritten at +520
    # shows at the call that reads +512..+576, not at the end of the pass (8 calls later), and a
    # write behind the cursor shows when the next pass reaches it.
    band = bytearray(b"\xaa" * 1024)
    reader = ImageReader([])
    reader.read = lambda addr, n: bytes(band[addr - 0x20000000:addr - 0x20000000 + n])
    scanner = BandScanner(64)
    bands = [("free", 0x20000000, 0x20000400, 0xAAAAAAAA)]
    first = [scanner.measure(reader, bands)["free"] for _ in range(16)]
    assert first == [None] * 15 + [(NONE, NONE, True)]  # nothing before the first whole pass
    band[520:524] = b"\x00\x00\x00\x00"
    got = [scanner.measure(reader, bands)["free"] for _ in range(16)]
    assert got[:8] == [(NONE, NONE, True)] * 8 and got[8:] == [(520, 524, True)] * 8
    band[100:104] = b"\x01\x00\x00\x00"   # the cursor is at 0 again: read at the next call's slice
    assert scanner.measure(reader, bands)["free"] == (520, 524, True)   # +0..+64
    assert scanner.measure(reader, bands)["free"] == (100, 524, True)   # +64..+128
