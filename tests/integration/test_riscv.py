"""A RISC-V core on real qemu-system-riscv32 (`-M virt`, RV32 machine mode) under real
gdb-multiarch with the plugin (issue 36, started). The firmware (tests/firmware/rv32_trap/main.c,
NOT TFLM) is built here with Debian's riscv64-unknown-elf-gcc and picolibc, as
../shared/TOOLCHAIN-NOTES.md ("RISC-V (rv32) on QEMU") links it: it paints its stack, recurses,
then stores to an address no memory answers and loops in its trap handler.

Checked: `arena fault` says the firmware is for a core whose traps arenascope does not decode yet
(it said "no fault: the core is not in a fault handler", having read nothing), while GDB's own
`info registers` shows the store access fault (mcause 7, mtval the address); `arena stack` finds
picolibc's stack (`__stack` - `__stack_size`, the ELF's symbols read here with pyelftools) and
its peak, at least the 21 frames' 64 B of locals each."""
import re
import shutil
import subprocess

import pytest

from harness import ROOT, elf_symbols, gdb_batch, qemu

SOURCE = ROOT / "tests" / "firmware" / "rv32_trap" / "main.c"
CC = "riscv64-unknown-elf-gcc"
FLAGS = ["-march=rv32imac", "-mabi=ilp32", "-mcmodel=medany", "--specs=picolibc.specs", "--oslib=semihost",
         "--crt0=semihost", "-Wl,--defsym=__flash=0x80000000", "-Wl,--defsym=__flash_size=0x400000",
         "-Wl,--defsym=__ram=0x80400000", "-Wl,--defsym=__ram_size=0x400000", "-Wl,--defsym=__stack_size=0x2000",
         "-g", "-O1"]

pytestmark = pytest.mark.skipif(not shutil.which(CC) or not shutil.which("qemu-system-riscv32"),
                                reason="no RISC-V toolchain or QEMU (tools/setup-deps.sh installs "
                                       "gcc-riscv64-unknown-elf, picolibc-riscv64-unknown-elf, qemu-system-misc)")


@pytest.fixture(scope="module")
def elf(tmp_path_factory):
    out = tmp_path_factory.mktemp("rv32") / "rv32_trap.elf"
    r = subprocess.run([CC, *FLAGS, str(SOURCE), "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return out


def test_a_trap_on_a_risc_v_core_is_said_to_be_undecoded_and_its_stack_is_found(elf):
    syms = elf_symbols(elf)
    top, size = syms["__stack"], syms["__stack_size"]
    virt = {"machine": "virt", "system": "qemu-system-riscv32", "extra": ("-bios", "none")}
    with qemu(elf, semihosting=True, **virt) as (port, _):
        _, text = gdb_batch(elf, ["set pagination off", "break trap_handler", "continue",
                                  "info registers mcause mtval", f"source {ROOT / 'gdbplugin' / 'arenascope.py'}",
                                  "set arena colour off", "arena fault", "arena stack"], remote_port=port, timeout=120)
    assert re.search(r"^mcause\s+0x7\s", text, re.M) and re.search(r"^mtval\s+0x90000000\s", text, re.M), text
    assert ("arena fault: the firmware is for a RISC-V core (riscv32-ilp32), not a Cortex-M: arenascope does not "
            "decode its traps yet") in text, text
    assert "no fault: the core is not in a fault handler" not in text and "Traceback" not in text, text
    assert "stack bounds from the linker symbols __stack - __stack_size" in text, text
    assert f"stack:                    {top - size:#x}-{top:#x}, size {size} B" in text, text
    peak = int(re.search(r"^peak depth:\s+(\d+) B", text, re.M).group(1))
    assert 21 * 64 <= peak < size, text
