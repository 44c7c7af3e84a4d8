#!/usr/bin/env python3
"""Benchmark of the GDB plugin's refresh cost: prints figures, asserts nothing.

1. A 200-region arena (a byte image served by the plugin's ImageReader, so the figures are the
   plugin's own work and bytes, without a probe): bytes read and wall time per `arena info`
   refresh (decode + figures + text), first read and steady state, against a naive refresh that
   reads the whole arena, the region table and the stack every time.
2. The demo firmware on QEMU through gdb-multiarch (the DS-CNN layout, GDB's remote protocol): the same
   two figures for real `arena info` commands, counted by the plugin's GdbReader.
Target (issue #3): at most 1 KiB read per refresh in steady state.

Usage: tools/bench_plugin.py [--refreshes N]
"""
import argparse
import pathlib
import socket
import struct
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "gdbplugin"))

from arenascope_plugin.acquire.reader import CountingReader, ImageReader  # noqa: E402
from arenascope_plugin.analyse import figures  # noqa: E402
from arenascope_plugin.decode import abi  # noqa: E402
from arenascope_plugin.decode.session import DescriptorSession  # noqa: E402
from arenascope_plugin.present import render  # noqa: E402

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


def image(regions=200):
    """A descriptor with one 64 KiB arena of `regions` planned 64-byte tensors."""
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
    head = regions * 64 // 4
    _put(desc, "arena", {"base_addr": ARENA, "regions_addr": TABLE, "size_bytes": ARENA_BYTES, "head_bytes": head,
                         "temp_bytes": head, "tail_offset": ARENA_BYTES - 4096, "alignment_bytes": 16,
                         "region_count": regions, "region_capacity": regions,
                         "canary": {"low_addr": ARENA + head, "high_addr": ARENA + ARENA_BYTES - 4096,
                                    "touched_lo": abi.NONE, "touched_hi": abi.NONE}}, abi.header_size(4))
    table = b"".join(struct.pack("<IIHBBhh", (i % 4) * 64 + (i // 4) * 0, 64, i, 1, 0, i // 4, i // 4)
                     for i in range(regions))
    memory = bytes([0xAA]) * ARENA_BYTES
    stack = bytes([0xCC]) * STACK_BYTES
    return [(DESC, bytes(desc)), (TABLE, table), (ARENA, memory), (stack_low, stack)]


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--refreshes", type=int, default=200)
    args = parser.parse_args()
    bench_image(args.refreshes)
    bench_qemu(max(10, args.refreshes // 10))
    return 0


if __name__ == "__main__":
    sys.exit(main())
