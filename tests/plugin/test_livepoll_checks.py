"""The live poller applies the same rules as a stop: the bounds rule gets the ELF's RAM too
(issue 15: `arena live` checked an arena only against the stack and the guard band)."""
from arenascope_plugin import pipeline
from arenascope_plugin.acquire.reader import ImageReader
from arenascope_plugin.acquire.symbols import FixedCore, TableSymbols
from arenascope_plugin.serve import livepoll
from conftest import ARENA_ADDR, DESC_ADDR, TABLE_ADDR, demo_like


def poll(ram_ranges):
    desc, table = demo_like()
    image = bytearray(0x3000)
    image[0:len(desc)] = desc
    image[TABLE_ADDR - DESC_ADDR:TABLE_ADDR - DESC_ADDR + len(table)] = table
    reader = ImageReader([(DESC_ADDR, image)])
    symbols = TableSymbols({"arenascope_descriptor": DESC_ADDR}, [(lo, hi, "ram") for lo, hi in ram_ranges])
    poller = livepoll.LivePoller(pipeline.Target(reader, symbols, FixedCore(cortex_m=False)), pipeline.Settings())
    return {c["rule"]: c for c in poller.refresh()["checks"]}


def test_an_arena_outside_the_elfs_ram_fails_live_as_at_a_stop():
    ram = [(DESC_ADDR, ARENA_ADDR)]                 # the ELF's RAM ends where the arena starts
    bounds = poll(ram)["bounds"]
    assert bounds["verdict"] == "FAIL", bounds
    assert f"{ARENA_ADDR:#x}-{ARENA_ADDR + 4096:#x} (4096 B) lies outside every RAM the firmware has" in \
        bounds["reason"], bounds


def test_an_arena_inside_the_elfs_ram_passes_live():
    bounds = poll([(DESC_ADDR, DESC_ADDR + 0x3000)])["bounds"]
    assert bounds["verdict"] == "PASS", bounds
