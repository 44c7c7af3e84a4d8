"""TFLM linked as a library built without -g, on REAL TFLM 90b983c2 firmware for RV32 (rv32imac,
picolibc) on `qemu-system-riscv32 -M virt` (optional).

Built by hand outside the project (docs/integrating-tflm.md, "TFLM without debug information"):
the library with the flags of the -g RV32 one minus -g, the application (the same sources as
test_tflm_rv32_real.py's firmware, whose code is byte-identical) with -g. The application's DWARF
then describes the MicroInterpreter but only declares MicroAllocator, SingleArenaBufferAllocator,
the graph and the planner, so agentless mode reads them by the riscv32-ilp32 layout arenascope
measured (decode/tflm_layouts.py). Named by:

  ARENASCOPE_TFLM_RV32_NOG_HEALTHY_ELF     keyword_scrambled_8bit, a 16384 B static arena; done
  ARENASCOPE_TFLM_RV32_NOG_UNDERSIZED_ELF  the same model in a 4096 B arena; allocation_failed
  ARENASCOPE_TFLM_RV32_NOG_STACK_ELF       hello_world's 1600 B arena ending at __stack_limit, a
                                           recursion 112 B into it, then Invoke; trap_handler
  ARENASCOPE_TFLM_RV32_HEALTHY_KWS_ELF     (the parity check) the healthy application linked to
                                           the -g library

Each test skips cleanly without its variable (and the stop symbol from ..._STOP when it is set).
The expected figures are what the real firmware printed (arena_used_bytes 8140 = head 672 + tail
7468; "Failed to allocate temp memory. Requested: 1632, available 1580, missing: 52") and GDB's own
reads, never the plugin's output: tensor_arena 0x80800970 (16384 B), the MicroAllocator at
0x808048fc (`interpreter.allocator_`) whose words hold the SingleArenaBufferAllocator 0x8080494c
and the GreedyMemoryPlanner 0x80804920; at the trap mcause 5 and mtval 0xa5000000, the deepest
SP of the recursion 0x80ffdf90 = __stack_limit (0x80ffe000, the arena's end) - 112 B, in the
MicroAllocator at 0x80ffdf8c."""
import os

from harness import RV32_VIRT, plugin_at_stops, real_elf

MEASURED = ("layout: arenascope's layout of TFLM 2026-08 measured on 90b983c2, riscv64-unknown-elf-gcc 12.2.0, "
            "-march=rv32imac -mabi=ilp32 (riscv32-ilp32)")
UNDESCRIBED = "does not describe MicroInterpreterGraph, MicroAllocator, SingleArenaBufferAllocator"


def elf_and_stop(name, stop):
    elf = real_elf(f"ARENASCOPE_TFLM_RV32_NOG_{name}_ELF", "RV32 TFLM-without-debug-information firmware")
    return elf, os.environ.get(f"ARENASCOPE_TFLM_RV32_NOG_{name}_STOP", stop)


def test_a_healthy_rv32_firmware_gets_tflms_own_figures_by_the_measured_layout():
    elf, stop = elf_and_stop("HEALTHY", "done")
    text = plugin_at_stops(elf, [stop], ["arena info", "arena regions", "arena check", "arena fault"], **RV32_VIRT)
    assert MEASURED in text and UNDESCRIBED in text, text
    assert "bounds:                 0x80800970-0x80804970, size 16384 B" in text, text
    assert "head (planned):         672 B" in text and "tail (persistent):      7468 B" in text, text
    assert "used:                   8140 B" in text, text
    for addr, what in ((0x808048FC, "MicroAllocator"), (0x8080494C, "SingleArenaBufferAllocator"),
                       (0x80804920, "GreedyMemoryPlanner")):
        assert f"{addr:#x}" in text and what in text, (what, text)
    assert "(0 fail," in text and "overwritten" not in text and "no fault" in text, text


def test_the_rv32_map_is_the_one_the_g_build_gives():
    elf, stop = elf_and_stop("HEALTHY", "done")
    with_g = real_elf("ARENASCOPE_TFLM_RV32_HEALTHY_KWS_ELF", "real TFLM firmware for RV32 (with -g)")
    text = plugin_at_stops(elf, [stop], ["arena regions"], **RV32_VIRT)
    reference = plugin_at_stops(with_g, ["done"], ["arena regions"], **RV32_VIRT)
    regions = [line for line in text.splitlines() if line.lstrip()[:1].isdigit() and " B " in line]
    assert len(regions) == 90 and all(line in reference for line in regions), (text, reference)


def test_an_undersized_rv32_arena_gets_the_failure_and_its_rv32_shortfall():
    elf, stop = elf_and_stop("UNDERSIZED", "allocation_failed")
    text = plugin_at_stops(elf, [stop], ["arena info", "arena fault"], **RV32_VIRT)
    assert MEASURED in text, text
    assert "VERDICT: AllocateTensors did not finish: it returned kTfLiteError" in text, text
    assert "Requested: 1632, available 1580, missing: 52" in text, text
    assert "10468 B" in text and "10400 B" not in text, text  # rv32's minimum arena, not Arm's


def test_the_stack_run_into_the_rv32_arena_without_tflms_debug_information():
    elf, stop = elf_and_stop("STACK", "trap_handler")
    text = plugin_at_stops(elf, [stop], ["arena info", "arena fault"], **RV32_VIRT)
    assert MEASURED in text, text
    assert "load access fault: from core registers" in text and "mtval 0xa5000000: the faulting address" in text
    assert "VERDICT: the stack ran into the arena: 112 B past its limit, 112 B into the arena, down into " \
        "MicroAllocator" in text, text
    assert "a0 held 0xa5000000, the word the stack left at 0x80ffdf90 in MicroAllocator" in text, text
    assert "overwritten: MicroAllocator at 0x80ffdf8c (36 B)" in text, text
    assert "its object, such as a prebuilt library, was built without -g" in text, text
