"""A RISC-V core on real qemu-system-riscv32 (`-M virt`, RV32 machine mode) under real
gdb-multiarch with the plugin (issue 36, started). The firmware (tests/firmware/rv32_trap/main.c,
NOT TFLM) is built here with Debian's riscv64-unknown-elf-gcc and picolibc, as
../shared/TOOLCHAIN-NOTES.md ("RISC-V (rv32) on QEMU") links it: it paints its stack, recurses,
then stores to an address no memory answers and loops in its trap handler.

Checked: `arena fault` decodes the trap from the core's CSRs (the RISC-V port, ports/riscv/: it said "no
fault: the core is not in a fault handler", having read nothing), against GDB's own `info
registers` (mcause 7, mepc, mtval the address), and says "no fault" before it; `arena stack` finds
picolibc's stack (`__stack` - `__stack_size`, the ELF's symbols read here with pyelftools) and
its peak, at least the 21 frames' 64 B of locals each."""
import json
import re
import shutil
import subprocess
import sys

import pytest

from harness import ROOT, RV32_SETUP, RV32_VIRT, elf_symbols, gdb_batch, qemu

SOURCE = ROOT / "tests" / "firmware" / "rv32_trap" / "main.c"
CC = "riscv64-unknown-elf-gcc"
FLAGS = ["-march=rv32imac", "-mabi=ilp32", "-mcmodel=medany", "--specs=picolibc.specs", "--oslib=semihost",
         "--crt0=semihost", "-Wl,--defsym=__flash=0x80000000", "-Wl,--defsym=__flash_size=0x400000",
         "-Wl,--defsym=__ram=0x80400000", "-Wl,--defsym=__ram_size=0x400000", "-Wl,--defsym=__stack_size=0x2000",
         "-g", "-O1"]

pytestmark = pytest.mark.skipif(not shutil.which(CC) or not shutil.which("qemu-system-riscv32"),
                                reason=f"no RISC-V toolchain or QEMU ({RV32_SETUP})")


@pytest.fixture(scope="module")
def elf(tmp_path_factory):
    out = tmp_path_factory.mktemp("rv32") / "rv32_trap.elf"
    r = subprocess.run([CC, *FLAGS, str(SOURCE), "-o", str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return out


def test_a_risc_v_frame_is_read_from_the_call_frame_information(elf):
    """The RISC-V port's frame_layout (the ELF's .debug_frame, DWARF sp x2 and ra x1) against the
    prologue objdump shows: `addi sp,sp,-N` and `sw ra,K(sp)` give (N, K - N); and the call in
    main's `jal` to rv32_use_stack is decoded to its address."""
    sys.path.insert(0, str(ROOT / "gdbplugin"))
    from arenascope_plugin.acquire.elfsymbols import ElfSymbols  # pylint: disable=import-outside-toplevel
    from arenascope_plugin.acquire.reader import ImageReader  # pylint: disable=import-outside-toplevel
    from arenascope_plugin.ports import riscv  # pylint: disable=import-outside-toplevel
    dis = subprocess.run(["riscv64-unknown-elf-objdump", "-d", "--no-show-raw-insn", str(elf)], capture_output=True,
                         text=True, check=True).stdout
    body = dis[dis.index("<rv32_use_stack>:"):].split("\n\n")[0]
    n = int(re.search(r"addi?\s+sp,sp,-(\d+)", body).group(1))  # binutils 2.40 prints `add` for it
    k = int(re.search(r"sw\s+ra,(\d+)\(sp\)", body).group(1))
    syms = elf_symbols(elf)
    symbols = ElfSymbols(str(elf))
    assert riscv.PORT.frame_layout(symbols, syms["rv32_use_stack"]) == (n, k - n)
    raw = subprocess.run(["riscv64-unknown-elf-objdump", "-d", str(elf)], capture_output=True, text=True,
                         check=True).stdout
    call = re.search(r"^\s*([0-9a-f]+):\s+([0-9a-f]+)\s+jal\s+(?:ra,)?[0-9a-f]+ <rv32_use_stack>",
                     raw[raw.index("<main>:"):], re.M)
    at, size = int(call.group(1), 16), len(call.group(2)) // 2  # a 2-byte C.JAL or a 4-byte JAL
    from elftools.elf.elffile import ELFFile  # pylint: disable=import-outside-toplevel
    with open(elf, "rb") as f:
        text = ELFFile(f).get_section_by_name(".text")
        reader = ImageReader([(text["sh_addr"], text.data())])
    assert riscv.PORT.call_target(reader, at + size) == syms["rv32_use_stack"], (hex(at), size)
    # A PC no function and no code section covers is said to be no code (a wild jump), not code
    # the debug information misses.
    from arenascope_plugin.analyse.faults import where  # pylint: disable=import-outside-toplevel
    assert where(symbols, 0xFFFFFFFE) == ("0xfffffffe: not code: the ELF has no code there (a jump through a "
                                          "corrupted pointer or return address)")
    assert where(symbols, syms["rv32_use_stack"]).startswith(f"{syms['rv32_use_stack']:#x} in rv32_use_stack at ")


def test_a_risc_v_trap_is_decoded_and_its_stack_is_found(elf):
    """Halted first in rv32_use_stack (after mtvec is set, before the trap): no fault. Then in the
    trap handler: mcause, mepc and mtval decoded (their values are GDB's own `info registers`;
    the trapping line is the source's store to 0x90000000)."""
    syms = elf_symbols(elf)
    top, size = syms["__stack"], syms["__stack_size"]
    store_line = next(n for n, line in enumerate(SOURCE.read_text().splitlines(), 1) if "0x90000000u = " in line)
    with qemu(elf, semihosting=True, **RV32_VIRT) as (port, _):
        _, text = gdb_batch(elf, ["set pagination off", f"source {ROOT / 'gdbplugin' / 'arenascope.py'}",
                                  "set arena colour off", "break rv32_use_stack", "continue", "arena fault",
                                  "delete", "break trap_handler", "continue", "info registers mcause mepc mtval",
                                  "arena fault", "arena stack"], remote_port=port, timeout=120)
    before, after = text.split("Breakpoint 2,", 1)
    assert "arena fault: no fault: the core is not in a fault handler" in before, before
    assert re.search(r"^mcause\s+0x7\s", after, re.M) and re.search(r"^mtval\s+0x90000000\s", after, re.M), after
    mepc = int(re.search(r"^mepc\s+(0x[0-9a-f]+)", after, re.M).group(1), 16)
    assert "store/AMO access fault: from core registers (halted in the trap handler, mtvec)" in after, after
    assert "  mcause 0x00000007: exception 7, store/AMO access fault\n" in after, after
    assert f"  mepc {mepc:#010x}: the trapping instruction\n" in after, after
    assert "  mtval 0x90000000: the faulting address\n" in after, after
    assert re.search(rf"faulting PC: {mepc:#x} in main \+ \d+ at \S+main\.c:{store_line}$", after, re.M), after
    assert "the core is stuck in trap_handler's endless loop" in after, after
    assert "Traceback" not in text, text
    assert "stack bounds from the linker symbols __stack - __stack_size" in after, after
    assert f"stack:                    {top - size:#x}-{top:#x}, size {size} B" in after, after
    peak = int(re.search(r"^peak depth:\s+(\d+) B", after, re.M).group(1))
    assert 21 * 64 <= peak < size, after


AGENT = ROOT / "target_agent"
AGENT_SOURCES = [AGENT / "src" / "arenascope_agent.c", AGENT / "src" / "arenascope_fault.c",
                 AGENT / "ports" / "riscv" / "arenascope_stack_paint.S",
                 AGENT / "ports" / "riscv" / "arenascope_fault_port.c",
                 AGENT / "ports" / "riscv" / "arenascope_fault_hook.c",
                 AGENT / "ports" / "host" / "arenascope_stack_paint_host.c"]


@pytest.fixture(scope="module")
def agent_elf(tmp_path_factory):
    """tests/firmware/rv32_agent with the agent and its RISC-V port; picolibc keeps data across a
    reset in .preserve.*, where the record goes (ARENASCOPE_FAULT_SECTION)."""
    out = tmp_path_factory.mktemp("rv32agent") / "rv32_agent.elf"
    cmd = [CC, *FLAGS, "-std=gnu99", "-Wall", "-Wextra", "-Werror", f"-I{AGENT / 'include'}",
           f"-I{AGENT / 'ports' / 'riscv'}",
           "-DARENASCOPE_FAULT_SECTION=__attribute__((section(\".preserve.arenascope_fault\")))",
           str(ROOT / "tests" / "firmware" / "rv32_agent" / "main.c"), *map(str, AGENT_SOURCES), "-o", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return out


def test_the_agents_risc_v_port_records_the_trap(agent_elf):
    """The port's trap entry records mcause, mepc, mtval, mstatus, mtvec and ra, sp, a0-a4 in the
    agent's record (arch 1) and calls the hook: `arena fault` at the hook reads the fault from the
    record, with the values GDB's own `info registers` shows there (the CSRs still hold the trap),
    and GDB's `p` of the record's raw fields."""
    with qemu(agent_elf, semihosting=True, **RV32_VIRT) as (port, _):
        _, text = gdb_batch(agent_elf, ["set pagination off", f"source {ROOT / 'gdbplugin' / 'arenascope.py'}",
                                        "set arena colour off", "break arenascope_fault_hook", "continue",
                                        "info registers mcause mepc mtval",
                                        "p/x arenascope_fault_record.arch", "p/x arenascope_fault_record.sp",
                                        "p/x arenascope_fault_record.frame", "arena fault", "p/x $sp", "arena stack"],
                            remote_port=port, timeout=120)
    assert "Traceback" not in text, text
    mepc = int(re.search(r"^mepc\s+(0x[0-9a-f]+)", text, re.M).group(1), 16)
    # At the hook the core runs on the port's own trap stack, which `arena stack` names.
    hook_sp = int(re.search(r"^\$4 = (0x[0-9a-f]+)$", text, re.M).group(1), 16)
    trap_stack = elf_symbols(agent_elf)["arenascope_trap_stack"]
    assert f"{hook_sp:#x} is in arenascope_trap_stack (+{hook_sp - trap_stack}), a data object of the ELF" in text
    assert re.search(r"^mcause\s+0x7\s", text, re.M) and re.search(r"^mtval\s+0x90000000\s", text, re.M), text
    assert re.search(r"^\$1 = 0x1$", text, re.M), text  # ARENASCOPE_FAULT_ARCH_RISCV
    sp = int(re.search(r"^\$2 = (0x[0-9a-f]+)$", text, re.M).group(1), 16)
    frame = [int(v, 16) for v in re.search(r"^\$3 = \{(.*)\}$", text, re.M).group(1).split(", ")]
    assert frame[0] == mepc and frame[2] == sp, (frame, mepc, sp)
    syms = elf_symbols(agent_elf)
    assert syms["__stack"] - syms["__stack_size"] < sp < syms["__stack"]
    record = syms["arenascope_fault_record"]
    assert f"store/AMO access fault: from the agent's fault record at {record:#x} (this boot, fault 1)" in text, text
    assert "  mcause 0x00000007: exception 7, store/AMO access fault\n" in text, text
    assert f"  mepc {mepc:#010x}: the trapping instruction\n" in text, text
    assert "  mtval 0x90000000: the faulting address\n" in text, text
    assert f"registers at the fault: pc {mepc:#010x}  ra {frame[1]:#010x}  sp {sp:#010x}" in text, text
    assert re.search(rf"faulting PC: {mepc:#x} in main \+ \d+ at \S+main\.c:\d+$", text, re.M), text


def test_the_pmp_stack_guard_stops_an_overflow_and_is_named(agent_elf):
    """Scenario 1: arenascope_fault_stack_limit locks PMP entry 0 (NAPOT, no access) over the
    stack's lowest 32 B; the recursion's store into it traps (mcause 7, mtval in the guard, GDB's
    own `info registers`), and `arena fault` says the guard stopped the stack (verdict stack-limit)."""
    syms = elf_symbols(agent_elf)
    low = syms["__stack"] - syms["__stack_size"]
    with qemu(agent_elf, semihosting=True, **RV32_VIRT) as (port, _):
        _, text = gdb_batch(agent_elf, ["set pagination off", f"source {ROOT / 'gdbplugin' / 'arenascope.py'}",
                                        "set arena colour off", "break main", "continue", "set var rv32_scenario = 1",
                                        "break arenascope_fault_hook", "continue", "p rv32_guarded",
                                        "info registers mcause mtval pmpcfg0 pmpaddr0", "arena fault --json",
                                        "arena fault"], remote_port=port, timeout=120)
    assert "Traceback" not in text, text
    assert re.search(r"^\$1 = 1$", text, re.M), text
    assert re.search(r"^mcause\s+0x7\s", text, re.M), text
    mtval = int(re.search(r"^mtval\s+(0x[0-9a-f]+)", text, re.M).group(1), 16)
    assert low <= mtval < low + 32, (hex(mtval), hex(low))
    # pmpcfg0 byte 0: L | NAPOT = 0x98; pmpaddr0 = (low >> 2) | (32 / 8 - 1) (Privileged 3.7.1).
    assert re.search(r"^pmpcfg0\s+0x98\s", text, re.M), text
    assert re.search(rf"^pmpaddr0\s+{(low >> 2) | 3:#x}\s", text, re.M), text
    assert ("VERDICT: the stack ran out, and the PMP stack guard stopped it: a locked PMP region over the stack's "
            f"lowest bytes, armed by arenascope_fault_stack_limit at the stack's low bound {low:#x}") in text, text
    assert f"PMP entry 0 {low:#x}-{low + 32:#x} (32 B, NAPOT, no access, locked)" in text, text
    doc, _ = json.JSONDecoder().raw_decode(text[text.index('{\n "schema"'):])  # indent=1
    assert [v["kind"] for v in doc["verdicts"]] == ["stack-limit"], doc["verdicts"]
