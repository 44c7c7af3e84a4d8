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
       tools/footprint.py --cores [OUT_DIR]        (default: build/agent-cores)
--cores builds the agent's libraries (tests/agent/cores, warnings as errors) for every core the
agent supports, cortex-m0, m0plus, m3, m4, m7, m23, m33 and m55 (cmake/arm-none-eabi.cmake
ARENASCOPE_CPU) and rv32imac (cmake/riscv32-picolibc.cmake, the RISC-V port), and prints each one's
footprint against its architecture's budget (BUDGETS: every core family has one).
Exit status: 0 within budget, 1 over budget (or a core that does not build, with --cores), 2 when
the library is missing.
"""
import pathlib
import re
import subprocess
import sys

FLASH_BUDGET, RAM_BUDGET, REGION_BYTES = 576, 132, 16
CORES = ("cortex-m0", "cortex-m0plus", "cortex-m3", "cortex-m4", "cortex-m7", "cortex-m23", "cortex-m33", "cortex-m55",
         "rv32imac")
# The architecture of each core, as the fault port tells them apart (ports/cortex_m/arenascope_fault_port.c).
ARCH = {"cortex-m0": "ARMv6-M", "cortex-m0plus": "ARMv6-M", "cortex-m3": "ARMv7-M", "cortex-m4": "ARMv7E-M",
        "cortex-m7": "ARMv7E-M", "cortex-m23": "ARMv8-M Baseline", "cortex-m33": "ARMv8-M Mainline",
        "cortex-m55": "ARMv8.1-M Mainline", "rv32imac": "RISC-V RV32IMAC"}
# The budget of each architecture (issue 39): ((agent flash, agent RAM), (fault capture flash, its
# RAM)) in bytes, for --cores. Flash: the size measured on 2026-12-06 (docs/agent.md) with headroom,
# the Cortex-M4's and ARMv7-M's kept at the 576 B issues 2 and 17 set. RAM: the agent's is the
# ABI 1.1 descriptor with one arena, 132 B on every core (a larger one is an ABI change); the
# fault capture's is its record and flag (104 B), on RISC-V also the trap entry's own stack.
BUDGETS = {
    "ARMv6-M": ((672, 132), (736, 112)),
    "ARMv7-M": ((576, 132), (768, 112)),
    "ARMv7E-M": ((576, 132), (768, 112)),
    "ARMv8-M Baseline": ((672, 132), (736, 112)),
    "ARMv8-M Mainline": ((608, 132), (800, 112)),
    "ARMv8.1-M Mainline": ((672, 132), (800, 112)),
    "RISC-V RV32IMAC": ((1024, 132), (1216, 400)),
}
# The toolchain file and size tool of each core that is not a Cortex-M (target_agent/ports/riscv).
TOOLCHAINS = {"rv32imac": ("riscv32-picolibc.cmake", "riscv64-unknown-elf-size")}


def sizes(lib, tool="arm-none-eabi-size"):
    """[(object, text, data, bss)] of a static library, from `tool -B` (arm-none-eabi-size)."""
    out = subprocess.run([tool, "-B", str(lib)], capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines()[1:]:
        text, data, bss, _dec, _hex, name = line.split(None, 5)
        rows.append((re.sub(r" \(ex .*\)$", "", name), int(text), int(data), int(bss)))
    return rows


def cores(root, out_dir):
    """Builds the agent for every core in CORES and prints a row each; 1 if one fails to build."""
    print("arenascope agent per core (tests/agent/cores, MinSizeRel: -Os; flash = text + data, RAM = data + bss; "
          "each against its architecture's budget)")
    print(f"  {'core':14} {'architecture':19} {'agent flash':>15} {'agent RAM':>11} {'fault flash':>15} "
          f"{'fault RAM':>11}")
    failed, over = [], []
    for core in CORES:
        build = out_dir / core
        toolchain, size_tool = TOOLCHAINS.get(core, ("arm-none-eabi.cmake", "arm-none-eabi-size"))
        steps = [["cmake", "-S", str(root / "tests" / "agent" / "cores"), "-B", str(build),
                  f"-DCMAKE_TOOLCHAIN_FILE={root / 'cmake' / toolchain}", f"-DARENASCOPE_CPU={core}",
                  "-DCMAKE_BUILD_TYPE=MinSizeRel"], ["cmake", "--build", str(build)]]
        for cmd in steps:
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                failed.append(core)
                print(f"  {core:14} does not build: {(r.stdout + r.stderr).strip().splitlines()[-1]}")
                break
        else:
            agent = sizes(build / "target_agent" / "libarenascope_agent.a", size_tool)
            fault = sizes(build / "target_agent" / "libarenascope_fault.a", size_tool)
            got = (sum(t + d for _, t, d, _ in agent), sum(d + b for _, _, d, b in agent),
                   sum(t + d for _, t, d, _ in fault), sum(d + b for _, _, d, b in fault))
            limits = [x for pair in BUDGETS[ARCH[core]] for x in pair]
            cells = [f"{g}/{lim}{'' if g <= lim else ' OVER'}" for g, lim in zip(got, limits, strict=True)]
            if any(g > lim for g, lim in zip(got, limits, strict=True)):
                over.append(core)
            print(f"  {core:14} {ARCH[core]:19} {cells[0]:>15} {cells[1]:>11} {cells[2]:>15} {cells[3]:>11}")
    print("  (measured/budget, bytes; the budgets: tools/footprint.py BUDGETS, docs/agent.md)")
    if over:
        print(f"footprint: over budget on {', '.join(over)}: make the code smaller, or raise the budget in "
              "tools/footprint.py and docs/agent.md with the reason")
    return 1 if failed or over else 0


def main():
    root = pathlib.Path(__file__).resolve().parents[1]
    if len(sys.argv) > 1 and sys.argv[1] == "--cores":
        return cores(root, pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else root / "build" / "agent-cores")
    build = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else root / "build" / "firmware"
    lib = build / "target_agent" / "libarenascope_agent.a"
    if not lib.exists():
        print(f"footprint: {lib} not found: build first (bash tools/build.sh), then pass the firmware build "
              "directory (default build/firmware)", file=sys.stderr)
        return 2
    try:
        rows = sizes(lib)
    except subprocess.CalledProcessError as e:
        print(f"footprint: {lib} is not a Cortex-M build of the agent ({e.stderr.strip().splitlines()[-1]}); "
              "pass the firmware build directory, e.g. build/firmware", file=sys.stderr)
        return 2
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
        frows = sizes(fault_lib)
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
