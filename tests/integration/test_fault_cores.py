"""`arena fault` on the cores beyond the demo's Cortex-M4, on QEMU, through real firmware built
here with arm-none-eabi-gcc and read by gdb-multiarch (issue 19; so far ARMv6-M).

ARMv6-M (QEMU microbit, nRF51822, Cortex-M0): tests/firmware/armv6m_fault/main.c loads a word from
0x20000001. ARMv6-M has no unaligned access (ARMv6-M ARM A3.2.1), so the load faults, as a
HardFault, its only fault exception; the core has no CFSR/HFSR/MMFAR/BFAR (B1.5.9, B3.2.2) and the
fault port records none. Expected, independently of the plugin: the stacked PC is the load's
address, m0_fault_here's first instruction (from arm-none-eabi-nm and objdump); r0 the odd
address; EXC_RETURN 0xFFFFFFF9 (thread mode, main stack, basic frame: ARMv6-M B1.5.8, the fault
taken from main()).
"""
import re
import shutil
import subprocess

import pytest

from harness import ROOT, gdb_batch, qemu

PLUGIN = ROOT / "gdbplugin" / "arenascope.py"
AGENT = ROOT / "target_agent"
pytestmark = pytest.mark.skipif(not shutil.which("arm-none-eabi-gcc") or not shutil.which("qemu-system-arm"),
                                reason="arm-none-eabi-gcc or qemu-system-arm missing (bash tools/setup-deps.sh)")


def build(tmp, cpu, folder, script):
    elf = tmp / f"{folder}.elf"
    src = ROOT / "tests" / "firmware" / folder
    subprocess.run(["arm-none-eabi-gcc", f"-mcpu={cpu}", "-mthumb", "-mfloat-abi=soft", "-Os", "-g",
                    "-ffunction-sections", "-fdata-sections", "-nostartfiles", "--specs=nano.specs",
                    "-Wall", "-Wextra", "-Werror", f"-I{AGENT / 'include'}", f"-I{AGENT / 'ports' / 'cortex_m'}",
                    "-T", str(src / script), str(src / "main.c"), str(AGENT / "src" / "arenascope_agent.c"),
                    str(AGENT / "src" / "arenascope_fault.c"),
                    str(AGENT / "ports" / "cortex_m" / "arenascope_fault_port.c"),
                    str(AGENT / "ports" / "cortex_m" / "arenascope_fault_hook.c"),
                    str(AGENT / "ports" / "cortex_m" / "arenascope_stack_paint.S"), "-o", str(elf)],
                   check=True, capture_output=True, timeout=120)
    return elf


def symbol(elf, name):
    nm = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True).stdout
    return int(next(line.split()[0] for line in nm.splitlines() if line.endswith(" " + name)), 16) & ~1


def test_armv6m_hardfault_is_decoded_from_the_frame(tmp_path):
    elf = build(tmp_path, "cortex-m0", "armv6m_fault", "microbit.ld")
    load = symbol(elf, "m0_fault_here")
    dis = subprocess.run(["arm-none-eabi-objdump", "-d", f"--start-address={load:#x}",
                          f"--stop-address={load + 2:#x}", str(elf)], capture_output=True, text=True).stdout
    assert re.search(rf"^\s*{load:x}:\s+6800\s+ldr\s+r0, \[r0, #0\]", dis, re.M), dis  # the faulting load
    with qemu(elf, machine="microbit") as (port, _uart):
        _dump, text = gdb_batch(elf, ["set pagination off", "set confirm off", "break arenascope_fault_hook",
                                      "continue", f"source {PLUGIN}", "set arena colour off", "echo =fault=\\n",
                                      "arena fault"], remote_port=port, timeout=120)
    out = text.split("=fault=")[1]
    assert "HardFault: from the agent's fault record" in out
    assert ("ARMv6S-M has no CFSR, HFSR, MMFAR or BFAR: HardFault is its only fault exception and the core "
            "records no cause") in out
    assert "CFSR 0x" not in out  # no register to show
    assert "EXC_RETURN 0xfffffff9: returns to thread mode, frame on the main (MSP) stack, basic frame (32 B)" in out
    frame = dict(re.findall(r"(r0|pc|xpsr) (0x[0-9a-f]+)", out.split("stacked frame at")[1].splitlines()[0]))
    assert int(frame["pc"], 16) == load and int(frame["r0"], 16) == 0x20000001
    assert f"faulting PC: {load:#x} in m0_fault_here" in out
