"""`arena fault` on the cores beyond the demo's Cortex-M4, on QEMU, through real firmware built
here with arm-none-eabi-gcc (tests/firmware/fault_cores/main.c) and read by gdb-multiarch
(issue 19). Each case's expected values come from the architecture manuals and from the ELF
(arm-none-eabi-nm and objdump: the faulting instruction's address), not from the plugin:

- ARMv6-M, Cortex-M0 on QEMU's microbit: a word load from 0x20000001. ARMv6-M has no unaligned
  access (ARMv6-M ARM A3.2.1): a HardFault, its only fault; no CFSR/HFSR/MMFAR/BFAR (B1.5.9,
  B3.2.2), so the port records none and the report says why; r0 holds the odd address.
- ARMv7-M, Cortex-M3 on mps2-an385: UDF. UsageFault UNDEFINSTR (CFSR bit 16, ARMv7-M ARM
  B3.2.15), escalated to HardFault with HFSR.FORCED (bit 30, B3.2.16): the configurable fault
  handlers are disabled at reset (SHCSR).
- ARMv7E-M, Cortex-M7 on mps2-an500: a store to 0xF0000000, where QEMU's MPS2 maps nothing: a
  precise BusFault, PRECISERR and BFARVALID (CFSR bits 9, 15), BFAR 0xF0000000, FORCED.
- ARMv8-M Mainline, Cortex-M33 on mps2-an505 (booting Secure): UDF, as on the M3.
- ARMv8.1-M Mainline, Cortex-M55 on mps3-an547 (booting Secure): the store to 0xF0000000, as on
  the M7.
- The stack limit (ARMv8-M Mainline, the M33): arenascope_fault_stack_limit sets MSPLIM to the
  stack's low bound (__StackLimit, from nm), then an endless recursion: UsageFault STKOF (CFSR bit
  20, DDI 0553 D1.2.4), escalated; the stacking stops at the limit (B3.22), so there is no frame,
  and the verdict names the limit and says the arena below was not written.
(The Cortex-M4 is the demo's: tests/integration/test_fault.py.) Every case is taken from main() on
the main stack: EXC_RETURN 0xFFFFFFF9 (thread mode, MSP, basic frame; B1.5.8; on ARMv8-M also ES
and S set: Secure state and stack, DDI 0553 D1.2.26), and the stacked PC is the faulting
instruction.
"""
import re
import shutil
import subprocess

import pytest

from harness import ROOT, cortex_m_elf, gdb_batch, qemu

PLUGIN = ROOT / "gdbplugin" / "arenascope.py"
SRC = ROOT / "tests" / "firmware" / "fault_cores"
pytestmark = pytest.mark.skipif(not shutil.which("arm-none-eabi-gcc") or not shutil.which("qemu-system-arm"),
                                reason="arm-none-eabi-gcc or qemu-system-arm missing (bash tools/setup-deps.sh)")


def build(tmp, cpu, script, scenario):
    return cortex_m_elf(tmp / f"fault_{cpu}.elf", cpu, SRC / script, [SRC / "main.c"], [f"-DFAULT_SCENARIO={scenario}"])

def symbol(elf, name):
    nm = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True).stdout
    return int(next(line.split()[0] for line in nm.splitlines() if line.endswith(" " + name)), 16)


def faulting_instruction(elf, mnemonic, function="fault_here"):
    """The address of the first `mnemonic` instruction in `function`, from nm and objdump."""
    nm = subprocess.run(["arm-none-eabi-nm", "-S", str(elf)], capture_output=True, text=True, check=True).stdout
    start, size = next((int(a, 16) & ~1, int(s, 16)) for a, s, _t, name in
                       (line.split() for line in nm.splitlines() if len(line.split()) == 4) if name == function)
    dis = subprocess.run(["arm-none-eabi-objdump", "-d", f"--start-address={start:#x}",
                          f"--stop-address={start + size:#x}", str(elf)], capture_output=True, text=True).stdout
    return int(re.search(rf"^\s*([0-9a-f]+):\s+[0-9a-f ]+\s+{mnemonic}\b", dis, re.M).group(1), 16)


CASES = {
    "armv6m-m0-unaligned": ("cortex-m0", "microbit", "microbit.ld", 0, "ldr", {"r0": 0x20000001}, [
        "ARMv6S-M has no CFSR, HFSR, MMFAR or BFAR: HardFault is its only fault exception and the core records "
        "no cause", "the faulting instruction is `ldr r0, [r0, #0]`, a 4-byte access at 0x20000001: unaligned, "
        "and this core faults every unaligned access"], None),
    "armv7m-m3-udf": ("cortex-m3", "mps2-an385", "mps2.ld", 1, "udf", {}, [
        "CFSR.UFSR.UNDEFINSTR (bit 16): undefined instruction",
        "HFSR.FORCED (bit 30): a configurable fault", "CFSR 0x00010000  HFSR 0x40000000"], None),
    "armv7em-m7-bus": ("cortex-m7", "mps2-an500", "mps2.ld", 2, "str", {"r0": 0xF0000000}, [
        "CFSR.BFSR.PRECISERR (bit 9)", "CFSR.BFSR.BFARVALID (bit 15)", "CFSR 0x00008200  HFSR 0x40000000"],
        "BFAR  0xf0000000 (valid)"),
    "armv8m-m33-udf": ("cortex-m33", "mps2-an505", "an505.ld", 1, "udf", {}, [
        "CFSR.UFSR.UNDEFINSTR (bit 16): undefined instruction", "CFSR 0x00010000  HFSR 0x40000000"], None),
    "armv81m-m55-bus": ("cortex-m55", "mps3-an547", "an547.ld", 2, "str", {"r0": 0xF0000000}, [
        "CFSR.BFSR.PRECISERR (bit 9)", "CFSR.BFSR.BFARVALID (bit 15)", "CFSR 0x00008200  HFSR 0x40000000"],
        "BFAR  0xf0000000 (valid)"),
    # No instruction to point at: the stacking stopped at the limit (below).
    "armv8m-m33-stack-limit": ("cortex-m33", "mps2-an505", "an505.ld", 3, None, {}, [
        "CFSR.UFSR.STKOF (bit 20): stack overflow (ARMv8-M)", "CFSR 0x00100000  HFSR 0x40000000",
        "the frame was not stacked (STKOF: the stacking stopped at the stack limit)"], None),
}


@pytest.mark.parametrize("case", CASES)
def test_the_fault_is_decoded_for_the_core(case, tmp_path):
    cpu, machine, script, scenario, mnemonic, regs, lines, extra = CASES[case]
    elf = build(tmp_path, cpu, script, scenario)
    pc = faulting_instruction(elf, mnemonic) if mnemonic else None
    with qemu(elf, machine=machine) as (port, _uart):
        _dump, text = gdb_batch(elf, ["set pagination off", "set confirm off", "break arenascope_fault_hook",
                                      "continue", f"source {PLUGIN}", "set arena colour off", "echo =fault=\\n",
                                      "arena fault", "echo =check=\\n", "arena check"], remote_port=port, timeout=120)
    out, check = text.split("=fault=")[1].split("=check=")
    assert "HardFault: from the agent's fault record" in out, out
    if scenario != 3:  # the firmware publishes no arena: the verdict must not claim it checked one
        assert "VERDICT: not the stack: it stayed inside its bounds (no arena is published" in out, out
    for line in lines:
        assert line in out, out
    if scenario == 0:
        assert "CFSR 0x" not in out  # the core has none to show
    if extra:
        assert extra in out, out
    assert "EXC_RETURN 0xfffffff9: returns to thread mode, frame on the main (MSP) stack, basic frame (32 B)" in out
    if pc is None:  # the stack limit: no frame, the verdict names the limit
        limit = symbol(elf, "__StackLimit")
        assert ("VERDICT: the stack ran out, and the stack limit register stopped it: MSPLIM, armed by "
                f"arenascope_fault_stack_limit at the stack's low bound {limit:#x}, so the overflow wrote nothing "
                "below it") in out, out
        assert "stacked frame at" not in out and "  faulting PC:" not in out
        # The handler ran on the guard band below the lifted limit: said so, not blamed on the arena.
        assert re.search(r"WARN\s+guard\s+guard band overwritten at 0x[0-9a-f]+-0x[0-9a-f]+ \(\d+ B\): the fault "
                         r"handler's own frames, after the stack limit register \(MSPLIM\) stopped an overflow",
                         check), check
        return
    frame = dict(re.findall(r"(r0|pc|xpsr) (0x[0-9a-f]+)", out.split("stacked frame at")[1].splitlines()[0]))
    assert int(frame["pc"], 16) == pc
    for name, value in regs.items():
        assert int(frame[name], 16) == value
    assert f"faulting PC: {pc:#x} in fault_here" in out
