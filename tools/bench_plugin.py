#!/usr/bin/env python3
"""Benchmark of the GDB plugin's refresh cost and its growth with regions: prints figures.

1. A 200-region arena (a byte image served by the plugin's ImageReader, so the figures are the
   plugin's own work and bytes, without a probe): bytes read and wall time per `arena info`
   refresh (decode + figures + text), first read and steady state, against a naive refresh that
   reads the whole arena, the region table and the stack every time.
2. The demo firmware on QEMU through gdb-multiarch (the DS-CNN layout, GDB's remote protocol): the same
   two figures for real `arena info` commands, counted by the plugin's GdbReader.
3. Scale: arenas of 1,000, 4,000 and 16,384 regions (the most one arena's table may hold before
   the plugin calls it corrupt, decode/descriptor.py MAX_REGIONS; the same in-process image; four regions
   share each offset at different times, as a greedy plan reuses the head), each command's work
   (the median of three) as `arena info`, `arena regions`, `arena map` and `arena snapshot FILE` do it in GDB (gather,
   then the text or the JSON written): the wall time and the ratio to the size before, beside
   the ratio of regions (equal ratios: linear), and each command's time against `arena info`'s
   at that size; then a second `arena map` at the same stop (the band scans kept: bytes read).
Targets: at most 1 KiB read per refresh in steady state (issue #3); every command linear in
regions (issue 39). Prints the date and the figures; exit status 1 when a command
grows more than 2x faster than the regions do. --short (the test command): 1,000 and 4,000,
the growth printed and not judged (a loaded machine's timings cannot judge it).

Usage: tools/bench_plugin.py [--refreshes N] [--short]
"""
import argparse
import datetime
import os
import pathlib
import socket
import struct
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "gdbplugin"))

from arenascope_plugin import pipeline  # noqa: E402
from arenascope_plugin.acquire.reader import CountingReader, ImageReader  # noqa: E402
from arenascope_plugin.acquire.symbols import FixedCore, TableSymbols  # noqa: E402
from arenascope_plugin.analyse import diagnosis, figures  # noqa: E402
from arenascope_plugin.decode import abi  # noqa: E402
from arenascope_plugin.decode.session import DescriptorSession  # noqa: E402
from arenascope_plugin.present import render, snapshot  # noqa: E402

DESC, TABLE, ARENA, ARENA_BYTES, STACK_BYTES = 0x20000000, 0x20000100, 0x20010000, 64 * 1024, 8 * 1024


def _put(buf, type_name, values, offset=0):
    lay = abi.layout(type_name, 4)
    for name, ftype in abi.TYPES[type_name]:
        if name not in values:
            continue
        at = offset + lay[name]
        if ftype == "band":
            _put(buf, "band", values[name], at)
        elif ftype == "char[8]":
            buf[at:at + 8] = values[name]
        else:
            struct.pack_into("<" + abi.scalar_format(ftype, 4), buf, at, values[name])


def image(regions=200, table_at=TABLE):
    """A descriptor with one 64 KiB arena of `regions` planned 64-byte tensors (four offsets, each
    shared at different times); the region table at `table_at`."""
    size = abi.header_size(4) + abi.layout("arena", 4)["_size"]
    desc = bytearray(size)
    stack_low = ARENA + ARENA_BYTES + 256
    _put(desc, "descriptor", {"magic": abi.MAGIC, "abi_major": 1, "descriptor_size": size, "addr_size": 4,
                              "arena_capacity": 1, "arena_count": 1,
                              "arena_entry_size": abi.layout("arena", 4)["_size"],
                              "region_entry_size": 16, "flags": abi.FLAG_MEASURED, "seq": 2, "layout_generation": 1,
                              "canary_pattern": 0xAAAAAAAA, "stack_paint_pattern": 0xCCCCCCCC,
                              "stack": {"low_addr": stack_low, "high_addr": stack_low + STACK_BYTES,
                                        "touched_lo": 7000, "touched_hi": STACK_BYTES},
                              "guard": {"low_addr": ARENA + ARENA_BYTES, "high_addr": stack_low,
                                        "touched_lo": abi.NONE, "touched_hi": abi.NONE}})
    head = min(regions * 64 // 4, ARENA_BYTES // 2)
    _put(desc, "arena", {"base_addr": ARENA, "regions_addr": table_at, "size_bytes": ARENA_BYTES, "head_bytes": head,
                         "temp_bytes": head, "tail_offset": ARENA_BYTES - 4096, "alignment_bytes": 16,
                         "region_count": regions, "region_capacity": regions,
                         "canary": {"low_addr": ARENA + head, "high_addr": ARENA + ARENA_BYTES - 4096,
                                    "touched_lo": abi.NONE, "touched_hi": abi.NONE}}, abi.header_size(4))
    table = b"".join(struct.pack("<IIHBBhh", (i % 4) * 64 + (i // 4) * 0, 64, i, 1, 0, i // 4, i // 4)
                     for i in range(regions))
    memory = bytes([0xAA]) * ARENA_BYTES
    stack = bytes([0xCC]) * STACK_BYTES
    guard = bytes([0xAA]) * (stack_low - ARENA - ARENA_BYTES)
    return [(DESC, bytes(desc)), (table_at, table), (ARENA, memory + guard), (stack_low, stack)]


def refresh(session):
    desc = session.read()
    figs = {a.index: figures.arena_figures(a) for a in desc.arenas}
    return render.info_lines(desc, figs, figures.stack_figures(desc), "bench")


def naive_refresh(reader, desc_size, regions):
    reader.read(DESC, desc_size)
    reader.read(TABLE, regions * 16)
    figures.changed_range(reader.read(ARENA, ARENA_BYTES), 0xAAAAAAAA)
    figures.changed_range(reader.read(ARENA + ARENA_BYTES + 256, STACK_BYTES), 0xCCCCCCCC)


def bench_image(n):
    counting = CountingReader(ImageReader(image(200)))
    session = DescriptorSession(counting, DESC)
    refresh(session)
    first = counting.bytes
    counting.bytes = counting.calls = 0
    t = time.perf_counter()
    for _ in range(n):
        refresh(session)
    per = (time.perf_counter() - t) / n
    steady, calls = counting.bytes / n, counting.calls / n
    counting.bytes = 0
    t = time.perf_counter()
    for _ in range(n):
        naive_refresh(counting, abi.header_size(4) + abi.layout("arena", 4)["_size"], 200)
    naive_per, naive_bytes = (time.perf_counter() - t) / n, counting.bytes / n
    print("1. 200-region arena, 64 KiB, in-process reader (plugin work only, no probe)")
    print(f"   arena info, first read:     {first:8.0f} B")
    print(f"   arena info, steady state:   {steady:8.0f} B in {calls:.0f} reads, {per * 1e3:7.3f} ms per refresh"
          f"   (target <= 1024 B: {'met' if steady <= 1024 else 'NOT met'})")
    print(f"   naive full-arena refresh:   {naive_bytes:8.0f} B, {naive_per * 1e3:7.3f} ms per refresh")


GDB_SCRIPT = """
import time, gdb
from arenascope_plugin.acquire.gdbtarget import GdbReader
gdb.execute("arena info", to_string=True)
GdbReader.calls = GdbReader.bytes = 0
t = time.perf_counter()
for _ in range({n}):
    gdb.execute("arena info", to_string=True)
per = (time.perf_counter() - t) / {n}
b, c = GdbReader.bytes / {n}, GdbReader.calls / {n}
inf = gdb.selected_inferior()
base = int(gdb.parse_and_eval("arenascope_descriptor.arena[0].base_addr"))
size = int(gdb.parse_and_eval("arenascope_descriptor.arena[0].size_bytes"))
lo = int(gdb.parse_and_eval("arenascope_descriptor.stack.low_addr"))
hi = int(gdb.parse_and_eval("arenascope_descriptor.stack.high_addr"))
d = int(gdb.parse_and_eval("&arenascope_descriptor"))
t = time.perf_counter()
for _ in range({n}):
    inf.read_memory(d, 128); inf.read_memory(base, size); inf.read_memory(lo, hi - lo)
naive = (time.perf_counter() - t) / {n}
print("BENCH", b, c, per, size + (hi - lo) + 128, naive)
"""


def bench_qemu(n):
    elf = ROOT / "build" / "firmware" / "demo_fw.elf"
    if not elf.exists():
        print("2. QEMU: skipped, build/firmware/demo_fw.elf not built (bash tools/build.sh)")
        return
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    qemu = subprocess.Popen(["qemu-system-arm", "-M", "mps2-an386", "-kernel", str(elf), "-nographic", "-monitor",
                             "none", "-S", "-gdb", f"tcp:127.0.0.1:{port}"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    script = ROOT / "build" / "bench_gdb.py"
    script.write_text(GDB_SCRIPT.format(n=n))
    try:
        out = subprocess.run(["gdb-multiarch", "-q", "-nx", "-batch", str(elf), "-ex", "set tcp auto-retry on",
                              "-ex", f"target remote 127.0.0.1:{port}", "-ex", f"source {ROOT}/gdbplugin/arenascope.py",
                              "-ex", "break demo_invoke_done if invokes == 2", "-ex", "continue",
                              "-ex", f"source {script}", "-ex", "kill"], capture_output=True, text=True, timeout=300)
    finally:
        qemu.kill()
        qemu.wait()
    line = next((ln for ln in out.stdout.splitlines() if ln.startswith("BENCH")), None)
    if not line:
        print("2. QEMU: failed:\n" + out.stdout + out.stderr)
        return
    b, c, per, naive_b, naive_t = (float(x) for x in line.split()[1:])
    print("2. demo firmware (DS-CNN layout), QEMU mps2-an386 gdbstub through gdb-multiarch")
    print(f"   arena info, steady state:   {b:8.0f} B in {c:.0f} reads, {per * 1e3:7.3f} ms per refresh"
          f"   (target <= 1024 B: {'met' if b <= 1024 else 'NOT met'})")
    print(f"   naive full-arena refresh:   {naive_b:8.0f} B, {naive_t * 1e3:7.3f} ms per refresh")


SCALE_TABLE = 0x30000000  # a table of 100,000 regions (1.6 MB) does not fit below the arena


def commands_at_scale(n, tmp):
    """{command: seconds} for the commands' work on an n-region arena, and the bytes a second
    `arena map` at the same stop reads."""
    counting = CountingReader(ImageReader(image(n, SCALE_TABLE)))
    target = pipeline.Target(counting, TableSymbols(ram=[(0x20000000, 0x20100000, "RAM"), (SCALE_TABLE,
                                                         SCALE_TABLE + 16 * n, "table")]), FixedCore(cortex_m=False))
    settings = pipeline.Settings(descriptor_address=DESC)
    cache = {pipeline.STOP_SCANS: {}}  # as GDB's front end keeps it for one stop
    out = {}

    def timed(name, work):
        runs = []
        for _ in range(3):
            t = time.perf_counter()
            work()
            runs.append(time.perf_counter() - t)
        out[name] = sorted(runs)[1]  # the median of three

    def info():
        ctx = pipeline.gather(target, settings, cache)
        render.info_lines(ctx.desc, ctx.figs, ctx.stack, "bench")

    def regions():
        ctx = pipeline.gather(target, settings, cache)
        render.region_table(ctx.desc, "address", diagnosis.diagnose(ctx).overwritten_regions(ctx.desc))

    def arena_map():
        ctx = pipeline.gather(target, settings, cache, verify=True)
        render.map_lines(ctx.desc, ctx.figs, 64, diagnosis.diagnose(ctx).overwritten_regions(ctx.desc))

    def snap():
        ctx = pipeline.gather(target, settings, cache, verify=True)
        snapshot.save(pipeline.snapshot(ctx), os.path.join(tmp, f"s{n}.json"))
    info()  # the descriptor session opened and the region table read once, as at a stop
    for name, work in (("info", info), ("regions", regions), ("map", arena_map), ("snapshot", snap)):
        timed(name, work)
    before = counting.bytes
    arena_map()
    return out, counting.bytes - before


def bench_scale(sizes):
    import tempfile
    today = datetime.datetime.now(datetime.UTC)
    print(f"3. scale: the commands' work on one arena (in-process image, {today:%Y-%m-%d} UTC)")
    last, ok = None, True
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            got, again = commands_at_scale(n, tmp)
            cells = []
            for name, sec in got.items():
                grow = f" x{sec / last[0][name]:5.1f}" if last else ""
                cells.append(f"{name} {sec * 1e3:8.1f} ms{grow}")
                if last and sec / last[0][name] > 2 * n / last[1]:
                    ok = False
            ratio = f" (regions x{n / last[1]:g})" if last else ""
            print(f"   {n:>7} regions{ratio}: " + ", ".join(cells))
            print("            against `arena info`: " + ", ".join(f"{k} {v / got['info']:.1f}x" for k, v in got.items()
                                                                  if k != "info") + f"; a second `arena map` at this "
                  f"stop reads {again} B")
            last = (got, n)
    print(f"   linear (no command grows more than 2x faster than its regions): {'PASS' if ok else 'FAIL'}")
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refreshes", type=int, default=200)
    parser.add_argument("--short", action="store_true", help="scale runs on 1,000 and 4,000 regions only")
    args = parser.parse_args()
    bench_image(args.refreshes)
    bench_qemu(max(10, args.refreshes // 10))
    ok = bench_scale([1000, 4000] if args.short else [1000, 4000, 16384])
    if args.short:
        print("   (--short: the growth is printed, not judged; run without --short on an idle machine)")
        return 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
