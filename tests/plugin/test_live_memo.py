"""The live poller's replay of its last full refresh (serve/livememo.py): a refresh whose request
brings the bytes of the last full one takes its snapshot again. The snapshots must be the ones
the pipeline works out, whatever the target does meanwhile: two pollers read one image in
lockstep, one replaying and one never, and their snapshots are compared at every step."""
import dataclasses
import random
import struct

import pytest

from arenascope_plugin import pipeline
from arenascope_plugin.acquire.reader import MemoryReader, MemoryReadError
from arenascope_plugin.acquire.symbols import FixedCore, TableSymbols
from arenascope_plugin.decode import abi
from arenascope_plugin.serve import livememo, livepoll
from conftest import ARENA_ADDR, DESC_ADDR, TABLE_ADDR, demo_like

LAY = abi.layout("descriptor", 4)
SEQ, PHASE = DESC_ADDR + LAY["seq"], DESC_ADDR + LAY["invoke_phase"]
CHECK = DESC_ADDR + abi.end_offset(4, 1, abi.layout("arena", 4)["_size"])
HEAD = DESC_ADDR + abi.header_size(4) + abi.layout("arena", 4)["head_bytes"]
FREE = (ARENA_ADDR + 288, ARENA_ADDR + 3072)          # the arena's free band (demo_like)
GUARD = (ARENA_ADDR + 4096, ARENA_ADDR + 4096 + 64)
STACK = (ARENA_ADDR + 4096 + 64, ARENA_ADDR + 4096 + 64 + 1024)
ICSR = 0xE000ED04


class Image(MemoryReader):
    """Target memory the test changes between refreshes; read_many as a probe's batch."""

    def __init__(self, minor=1):
        desc, table = demo_like(minor=minor)
        self.ram = bytearray(STACK[1] - DESC_ADDR)
        self.ram[0:len(desc)] = desc
        self.ram[TABLE_ADDR - DESC_ADDR:TABLE_ADDR - DESC_ADDR + len(table)] = table
        for (lo, hi), pattern in ((FREE, 0xAA), (GUARD, 0xAA), (STACK, 0xCC)):
            self.ram[lo - DESC_ADDR:hi - DESC_ADDR] = bytes([pattern]) * (hi - lo)
        self.ram[STACK[0] + 824 - DESC_ADDR:STACK[1] - DESC_ADDR] = b"\x11" * 200  # the stack's used top
        self.scb = bytearray(0x40)

    def read(self, addr, length):
        for base, mem in ((DESC_ADDR, self.ram), (0xE000ED00, self.scb)):
            if base <= addr and addr + length <= base + len(mem):
                return bytes(mem[addr - base:addr - base + length])
        raise MemoryReadError(addr, length, "outside the image")

    def read_many(self, pieces):
        return [self.read(a, n) for a, n in pieces]

    def put(self, addr, fmt, value):
        struct.pack_into(fmt, self.ram, addr - DESC_ADDR, value)

    def word(self, addr, fmt):
        return struct.unpack_from(fmt, self.ram, addr - DESC_ADDR)[0]

    def bump(self, phases=1):
        """The agent's update: seq odd, the change, seq even again and seq_check with it."""
        seq = (self.word(SEQ, "<H") + 2) & 0xFFFF
        self.put(SEQ, "<H", seq)
        self.put(CHECK, "<H", seq)
        self.put(PHASE, "<I", self.word(PHASE, "<I") + phases)


def poller(image, core=None, replay=True, warm=0):
    """A live poller on `image`, `warm` refreshes done (the tables read, the steady reads learnt)."""
    p = livepoll.LivePoller(pipeline.Target(image, TableSymbols({"arenascope_descriptor": DESC_ADDR}),
                                            core or FixedCore()), pipeline.Settings(), scan_budget=64)
    if not replay:
        p.memo.replay = lambda *_a: None
    for _ in range(warm):
        p.refresh()
    return p


def outcome(p):
    """The refresh's snapshot without what differs by the clock, or the error's type."""
    try:
        snap = p.refresh()
    except livepoll.TornError as exc:
        return type(exc).__name__
    return dict(snap, live=None, source=dict(snap["source"], time=None))


def change(image, rng):
    """One thing a running target does between two refreshes."""
    what = rng.choice(["counters", "counters", "counters", "canary", "stack", "head", "icsr", "nothing"])
    if what == "counters":
        image.bump(rng.randint(1, 3))
    elif what == "canary":  # a write past a buffer into the free band, or the band restored
        at = rng.randrange(FREE[0], FREE[1], 4)
        image.put(at, "<I", rng.choice([0xAAAAAAAA, 0xDEADBEEF]))
    elif what == "stack":   # the stack runs deeper
        image.put(rng.randrange(STACK[0] + 600, STACK[0] + 824, 4), "<I", 0x12345678)
    elif what == "head":
        image.put(HEAD, "<I", rng.choice([256, 272, 288]))
        image.bump()
    elif what == "icsr":    # an exception active, or none
        struct.pack_into("<I", image.scb, 4, rng.choice([0, 0, 3, 5]))


def test_replayed_snapshots_are_the_pipelines_at_every_step(monkeypatch):
    monkeypatch.setattr(livememo, "FULL_AFTER_S", 1e9)  # the clock's bound is its own test
    rng, image = random.Random(5), Image()
    replaying, working = poller(image), poller(image, replay=False)
    for step in range(400):
        if step % 2:
            change(image, rng)
        assert outcome(replaying) == outcome(working), step
    # most refreshes of a target that mostly moves its counters were replayed (a test that cannot fail otherwise)
    assert replaying.memo.hits > 100 and working.memo.hits == 0


def test_a_replay_carries_the_counters_read_now(monkeypatch):
    monkeypatch.setattr(livememo, "FULL_AFTER_S", 1e9)
    image = Image()
    p = poller(image, warm=3)
    image.bump(phases=3)  # seq 10 -> 12, invoke_phase 6 -> 9: 4 inferences done, one running
    hits = p.memo.hits
    snap = p.refresh()
    assert p.memo.hits == hits + 1
    assert (snap["state"]["seq"], snap["state"]["invokes"], snap["state"]["in_invoke"]) == (12, 4, True)


def test_an_update_under_way_is_not_replayed(monkeypatch):
    monkeypatch.setattr(livememo, "FULL_AFTER_S", 1e9)
    image = Image()
    p = poller(image, warm=3)
    image.put(CHECK, "<H", 12)  # seq_check written, seq not yet: the agent is inside an update
    hits = p.memo.hits
    with pytest.raises(livepoll.TornError):
        p.refresh()
    assert p.memo.hits == hits and p.memo.entry is None


@pytest.mark.parametrize("why", ["halted", "settings", "clock", "abi 1.0"])
def test_no_replay_where_the_pipeline_might_answer_otherwise(monkeypatch, why):
    clock = [100.0]
    monkeypatch.setattr(livememo.time, "monotonic", lambda: clock[0])
    image = Image(minor=0 if why == "abi 1.0" else 1)
    core = FixedCore({"pc": 0x1000, "sp": STACK[1] - 64}) if why == "halted" else None
    p = poller(image, core, warm=3)
    if why == "settings":
        p.settings = dataclasses.replace(p.settings, stack_paint_pattern=0xCDCDCDCD)
    if why == "clock":
        clock[0] += livememo.FULL_AFTER_S + 0.01
    hits = p.memo.hits
    p.refresh()
    assert p.memo.hits == hits
