#!/usr/bin/env python3
"""Prints the arenascope agent's flash and RAM footprint on Cortex-M4 and checks the budget.

The figures are arm-none-eabi-size's, on the agent library as the firmware build compiled it
(arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb -Os, build/firmware/target_agent). Flash is
text + data, RAM is data + bss, per object and in total. The caller's region table is extra
RAM: 16 bytes a region (the demo's is printed as an example).
Budget: at most 576 bytes of flash and 132 bytes of RAM plus the region table (issue #2 set 512
and 128; issue 17 added 64 and 4 for ABI 1.1: seq_check, written first by every update, and
arenascope_measure scanning outside the seqlock so that its window is a few stores long).

Usage: tools/footprint.py [FIRMWARE_BUILD_DIR]   (default: build/firmware)
Exit status: 0 within budget, 1 over budget, 2 when the library is missing.
"""
import pathlib
import re
import subprocess
import sys

FLASH_BUDGET, RAM_BUDGET, REGION_BYTES = 576, 132, 16


def main():
    root = pathlib.Path(__file__).resolve().parents[1]
    build = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else root / "build" / "firmware"
    lib = build / "target_agent" / "libarenascope_agent.a"
    if not lib.exists():
        print(f"footprint: {lib} not found: build first (bash tools/build.sh), then pass the firmware build "
              "directory (default build/firmware)", file=sys.stderr)
        return 2
    proc = subprocess.run(["arm-none-eabi-size", "-B", str(lib)], capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"footprint: {lib} is not a Cortex-M build of the agent ({proc.stderr.strip().splitlines()[-1]}); "
              "pass the firmware build directory, e.g. build/firmware", file=sys.stderr)
        return 2
    out = proc.stdout
    rows = []
    for line in out.splitlines()[1:]:
        text, data, bss, _dec, _hex, name = line.split(None, 5)
        rows.append((re.sub(r" \(ex .*\)$", "", name), int(text), int(data), int(bss)))
    flags = ""
    cache = build / "CMakeCache.txt"
    if cache.exists():
        m = re.search(r"^CMAKE_C_FLAGS_MINSIZEREL:\w+=(.*)$", cache.read_text(), re.M)
        flags = m.group(1) if m else ""
    print(f"arenascope agent footprint, Cortex-M4 (arm-none-eabi-size on {lib.relative_to(build.parent)}; "
          f"CMAKE_C_FLAGS_MINSIZEREL: {flags})")
    print(f"  {'object':34} {'text':>6} {'data':>6} {'bss':>6}")
    for name, text, data, bss in rows:
        print(f"  {name:34} {text:6d} {data:6d} {bss:6d}")
    flash = sum(t + d for _, t, d, _ in rows)
    ram = sum(d + b for _, _, d, b in rows)
    ok_flash, ok_ram = flash <= FLASH_BUDGET, ram <= RAM_BUDGET
    print(f"  flash (text+data): {flash:4d} bytes   budget {FLASH_BUDGET} bytes   {'ok' if ok_flash else 'OVER'}")
    print(f"  RAM   (data+bss):  {ram:4d} bytes   budget {RAM_BUDGET} bytes   {'ok' if ok_ram else 'OVER'}"
          f"   plus {REGION_BYTES} bytes a region in the caller's table")
    fault_lib = build / "target_agent" / "libarenascope_fault.a"
    if fault_lib.exists():
        out = subprocess.run(["arm-none-eabi-size", "-B", str(fault_lib)], capture_output=True, text=True).stdout
        frows = []
        for line in out.splitlines()[1:]:
            text, data, bss, _dec, _hex, name = line.split(None, 5)
            frows.append((re.sub(r" \(ex .*\)$", "", name), int(text), int(data), int(bss)))
        fflash = sum(t + d for _, t, d, _ in frows)
        record = 100  # arenascope_fault_record_t, in .noinit (arm-none-eabi-size counts it as data/bss by section)
        fram = sum(d + b for _, _, d, b in frows)
        print("fault capture (HardFault post-mortem, optional; not in the budget above):")
        for name, text, data, bss in frows:
            print(f"  {name:34} {text:6d} {data:6d} {bss:6d}")
        print(f"  flash: {fflash} bytes; RAM: {fram} bytes (the {record}-byte record in .noinit and the "
              "recording flag), plus 4 bytes a region in the checksum table")
    demo = build / "demo_fw.elf"
    if demo.exists():
        nm = subprocess.run(["arm-none-eabi-nm", "-S", str(demo)], capture_output=True, text=True).stdout
        m = re.search(r"^[0-9a-f]+ ([0-9a-f]+) [bBdD] region_table$", nm, re.M)
        if m:
            size = int(m.group(1), 16)
            print(f"  the demo's region table: {size // REGION_BYTES} regions, {size} bytes")
    return 0 if ok_flash and ok_ram else 1


if __name__ == "__main__":
    sys.exit(main())
