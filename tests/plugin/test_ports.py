"""The architecture ports (gdbplugin/arenascope_plugin/ports/): nothing outside them names an
architecture's register, and the RISC-V and Xtensa decodes on values laid out as the RISC-V
Privileged Architecture 1.12, ESP-IDF's rvruntime-frames.h (RvExcFrame) and xtensa_context.h
(XtExcFrame) document them (Debian's GDB has no Xtensa target: these values are the test)."""
import ast
import pathlib
import struct

from arenascope_plugin import ports
from arenascope_plugin.acquire.reader import ImageReader
from arenascope_plugin.acquire.symbols import FixedCore
from arenascope_plugin.ports import riscv, xtensa

PLUGIN = pathlib.Path(__file__).resolve().parents[2] / "gdbplugin" / "arenascope_plugin"
# The registers the ports own: Cortex-M's special and fault-status registers, RISC-V's trap CSRs,
# Xtensa's exception registers. Named in code (an identifier, an attribute, or a string that is
# exactly the name, as in core.register("xpsr")) only inside ports/.
REGISTERS = {"cfsr", "hfsr", "mmfar", "bfar", "sfsr", "sfar", "icsr", "shcsr", "vtor", "exc_return", "xpsr",
             "ipsr", "msp", "psp", "msplim", "psplim", "mcause", "mepc", "mtval", "mtvec", "mstatus", "mhartid",
             "exccause", "excvaddr", "epc1"}


def register_names(source: str) -> list[tuple[int, str]]:
    """(line, name) of every register REGISTERS holds that the code names (docstrings aside)."""
    tree = ast.parse(source)
    docstrings = {id(n.body[0].value) for n in ast.walk(tree)
                  if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    out = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Name):
            names = [node.id]
        elif isinstance(node, ast.Attribute):
            names = [node.attr]
        elif isinstance(node, ast.arg):
            names = [node.arg]
        elif isinstance(node, ast.keyword) and node.arg:
            names = [node.arg]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            names = [node.value]
        out += [(node.lineno, n) for n in names if n.lower() in REGISTERS]
    return out


def test_nothing_outside_the_ports_names_a_register():
    found = {}
    for path in sorted(PLUGIN.rglob("*.py")):
        if "ports" in path.relative_to(PLUGIN).parts:
            continue
        hits = register_names(path.read_text())
        if hits:
            found[str(path.relative_to(PLUGIN))] = hits
    assert not found, f"registers named outside ports/: {found}"


def test_the_check_finds_a_planted_register():
    """The scan is not vacuous: each way of naming a register is found, a docstring is not."""
    planted = ('def f(core, f2, exc_return=None):\n    """Reads xPSR."""\n    x = core.register("xpsr")\n'
               '    return f2.cfsr, dict(mcause=1)\n')
    assert sorted(register_names(planted)) == [(1, "exc_return"), (3, "xpsr"), (4, "cfsr"), (4, "mcause")]


def test_each_elf_abi_has_its_port_and_the_planner_target():
    assert [(p.name, p.planner_target) for p in ports.all_ports()] == [
        ("cortex-m", "cortex-m"), ("riscv32", "riscv32"), ("xtensa", "xtensa")]
    assert ports.for_abi("arm-eabi").name == "cortex-m"
    assert ports.for_abi("riscv32-ilp32").name == "riscv32"
    assert ports.for_abi("xtensa").name == "xtensa"
    assert ports.for_abi("x86_64-sysv") is None and ports.for_abi(None) is None


def rv_exc_frame(**words) -> bytes:
    """An RvExcFrame: 37 words in rvruntime-frames.h's order, the named ones set."""
    return struct.pack("<37I", *(words.get(n, 0) for n in riscv.RV_EXC_FRAME))


def test_esp_idf_rv_exc_frame_decodes_to_the_trap_and_the_registers():
    data = rv_exc_frame(mepc=0x42000A10, ra=0x42000B23, sp=0x3FC8F0A0, a0=0x3FC8E000, a5=0x3FC8E01C,
                        mstatus=0x1880, mtvec=0x40380001, mcause=7, mtval=0x3FC8E01C)
    f = riscv.exc_frame_fault(riscv.PORT, data, 0x3FC8EF50, "test")
    assert f.exception == "store/AMO access fault"
    assert f.pc == 0x42000A10 and f.return_address == 0x42000B23 and f.pre_fault_sp == 0x3FC8F0A0
    assert f.fault_address == ("mtval", 0x3FC8E01C)
    assert ("a5", 0x3FC8E01C) in f.argument_registers
    regs = {r.name: r for r in f.registers()}
    assert regs["mcause"].value == 7 and regs["mcause"].meaning == "exception 7, store/AMO access fault"
    assert regs["mtvec"].value == 0x40380000  # BASE: MODE (bits 1:0, vectored) dropped
    # mstatus 0x1880: MPP = 3 (bits 12:11), MPIE = 1 (bit 7), MIE = 0 (bit 3).
    assert regs["mstatus"].meaning == ("the trap came from M-mode (MPP); machine interrupts enabled before it "
                                       "(MPIE), disabled now (MIE)")


def test_risc_v_calls_before_a_return_address():
    # jal ra, +0x100 at 0x100: 0x100000ef; jalr ra, 0(a5) at 0x104: 0x000780e7; c.jal at 0x108
    # (RV32C: 0x2001 | imm); c.jalr a5 at 0x10a: 0x9782; addi a0, a0, 1 at 0x10c: 0x00150513.
    code = struct.pack("<IIHHI", 0x100000EF, 0x000780E7, 0x2011, 0x9782, 0x00150513)
    reader = ImageReader([(0x100, code)])
    call = riscv.PORT.call_before
    assert call(reader, 0x104) == "JAL" and call(reader, 0x108) == "JALR x15"
    assert call(reader, 0x10A) == "C.JAL" and call(reader, 0x10C) == "C.JALR x15"
    assert call(reader, 0x110) is None
    # Their targets: jal ra, +0x100 at 0x100 -> 0x200; c.jal +4 at 0x108 -> 0x10c; a JALR has none.
    target = riscv.PORT.call_target
    assert target(reader, 0x104) == 0x200 and target(reader, 0x10A) == 0x10C and target(reader, 0x108) is None
    # jal ra, -8 at 0x120 (imm -8: 0xff9ff0ef) -> 0x118.
    assert target(ImageReader([(0x120, struct.pack("<I", 0xFF9FF0EF))]), 0x124) == 0x118
    assert riscv.PORT.spins(b"\x6f\x00\x00\x00") and riscv.PORT.spins(b"\x01\xa0\x00\x00")
    assert not riscv.PORT.spins(struct.pack("<I", 0x00150513))


def test_a_risc_v_core_in_its_trap_handler_gives_the_fault_with_its_registers():
    """Halted in mtvec's handler after a store access fault: the Fault is the trap, its PC mepc,
    the faulting address mtval; an ecall there is not a fault."""
    regs = {"pc": 0x800001E0, "mtvec": 0x800001E0, "mcause": 7, "mepc": 0x80000A12, "mtval": 0x0, "mstatus": 0x1800,
            "ra": 0x80000B04, "sp": 0x80FFFF00, "a0": 0, **{n: 1 for n in riscv.PORT.frame_names[3:] if n != "a0"}}
    names = {0x800001E0: ("trap_handler", 0), 0x80000A12: ("main", 0x12)}

    class Ctx:
        core = FixedCore(regs)
        symbols = type("S", (), {"name_at": staticmethod(names.get)})()
    f = riscv.PORT.live_fault(Ctx)
    assert f.exception == "store/AMO access fault" and f.halted_in_handler
    assert f.pc == 0x80000A12 and f.fault_address == ("mtval", 0) and f.pre_fault_sp == 0x80FFFF00
    regs["mcause"] = 11  # environment call from M-mode
    Ctx.core = FixedCore(regs)
    assert riscv.PORT.live_fault(Ctx) is None


def xt_exc_frame(**words) -> bytes:
    return struct.pack(f"<{len(xtensa.XT_EXC_FRAME)}I", *(words.get(n, 0) for n in xtensa.XT_EXC_FRAME))


def test_esp_idf_xt_exc_frame_decodes_store_prohibited():
    """ESP32's "Guru Meditation Error: Core 0 panic'ed (StoreProhibited)": EXCCAUSE 29, EXCVADDR the
    address written; PS 0x00060030 = WOE 1, CALLINC 2, EXCM 1, UM 1 (the ISA's PS fields)."""
    data = xt_exc_frame(pc=0x400D2F3A, ps=0x00060030, a0=0x800D2F60, a1=0x3FFB5E70, a2=0x3FFB0010,
                        exccause=29, excvaddr=0x00000010)
    f = xtensa.exc_frame_fault(xtensa.PORT, data, 0x3FFB5E00, "test")
    assert f.exception == "StoreProhibited" and f.pc == 0x400D2F3A and f.pre_fault_sp == 0x3FFB5E70
    assert f.fault_address == ("EXCVADDR", 0x10)
    regs = {r.name: r for r in f.registers()}
    assert regs["PS"].meaning == ("INTLEVEL 0, EXCM 1 (in an exception handler), UM 1, RING 0, OWB 0, CALLINC 2, "
                                  "WOE 1")
    assert regs["EXCCAUSE"].meaning.startswith("StoreProhibited: a store to an address no memory answers")
    # Causes without an address: EXCVADDR is not the faulting address (IllegalInstruction, 0).
    f = xtensa.exc_frame_fault(xtensa.PORT, xt_exc_frame(exccause=0, excvaddr=0x1234), 0, "test")
    assert f.exception == "IllegalInstruction" and f.fault_address is None
    assert [xtensa.cause_name(c) for c in (3, 9, 20, 28, 10, 40)] == [
        "LoadStoreError", "LoadStoreAlignment", "InstrFetchProhibited", "LoadProhibited", "cause 10 (reserved)",
        "cause 40 (reserved)"]


def test_xtensa_calls_before_a_return_address():
    # call8 at 0x400d0000: op0 5, n 2 -> byte 0x25; callx8 a3 at 0x400d0003: 0x0003e0 -> e0 03 00.
    reader = ImageReader([(0x400D0000, bytes([0x25, 0x00, 0x00, 0xE0, 0x03, 0x00, 0x06, 0xFF, 0xFF]))])
    # a0 holds the return address with the window increment in its top 2 bits (call8: 2).
    assert xtensa.PORT.call_before(reader, 0x800D0003) == "CALL8"
    assert xtensa.PORT.call_before(reader, 0x800D0006) == "CALLX8"
    assert xtensa.PORT.call_before(reader, 0x800D0009) is None
    assert xtensa.PORT.spins(bytes([0x06, 0xFF, 0xFF]))


def test_pmp_entries_decode_as_the_privileged_spec_lays_them_out():
    """Privileged Architecture 1.12, 3.7.1: entry 0 NAPOT 32 B at 0x807fe000 locked with no access
    (cfg 0x98, pmpaddr (0x807fe000 >> 2) | 3); entry 1 TOR from entry 0's raw address to 0x80000000,
    R+X (cfg 0x0d; empty, as its top is below its bottom); entry 2 NA4 at 0x1000, W only, locked
    (cfg 0x92). A store into entry 0 is denied by it; a store to entry 2 is allowed, a load from it
    is denied; a cause that is not an access fault is no PMP denial."""
    from arenascope_plugin.ports.riscv import trap
    regs = {"pmpcfg0": 0x98 | 0x0D << 8 | 0x92 << 16, "pmpcfg1": 0, "pmpcfg2": 0, "pmpcfg3": 0,
            "pmpaddr0": (0x807FE000 >> 2) | 3, "pmpaddr1": 0x80000000 >> 2, "pmpaddr2": 0x1000 >> 2,
            **{f"pmpaddr{i}": 0 for i in range(3, 16)}}
    got = trap.pmp_regions(regs.get)
    assert [(r.index, r.low, r.high) for r in got] == [(0, 0x807FE000, 0x807FE020),
                                                       (1, (0x807FE000 >> 2 | 3) << 2, 0x80000000),
                                                       (2, 0x1000, 0x1004)]
    assert got[0].describe() == "PMP entry 0 0x807fe000-0x807fe020 (32 B, NAPOT, no access, locked)"
    assert trap.pmp_denial(got, 7, 0x807FE010) is got[0]           # a store into the guard
    assert trap.pmp_denial(got, 7, 0x1000) is None                  # W allowed there
    assert trap.pmp_denial(got, 5, 0x1002) is got[2]                # a load: R clear, locked
    assert trap.pmp_denial(got, 2, 0x807FE010) is None              # not an access fault
    assert trap.pmp_regions({}.get) is None                         # no PMP CSRs to read


def test_a_core_halted_in_esp_idfs_panic_handler_gives_the_fault_of_its_frame():
    """ESP-IDF halts in panic_handler(frame, ...) with OpenOCD attached: the RISC-V and Xtensa ports
    read the fault from that argument's RvExcFrame / XtExcFrame (ports.panic_frames), unwinding the
    call chain once; a frame that cannot be read is said so on RISC-V, skipped on Xtensa."""
    class PanicCore(FixedCore):
        calls = 0

        def frames(self):
            PanicCore.calls += 1
            return ["esp_cpu_dbgr_break", "panic_handler", "_panic_handler"]

        def frame_args(self, function, names):
            return {"frame": 0x3FC8EF50} if function == "panic_handler" else {}

    class Ctx:
        core = PanicCore({"pc": 0x40380100})
        reader = ImageReader([(0x3FC8EF50, rv_exc_frame(mepc=0x42000A10, sp=0x3FC8F0A0, mcause=5, mtval=0x10))])
        symbols = type("S", (), {"name_at": staticmethod(lambda _a: None)})()
    f = riscv.PORT.live_fault(Ctx)
    assert f.exception == "load access fault" and f.pc == 0x42000A10 and f.fault_address == ("mtval", 0x10)
    assert f.source == "ESP-IDF's panic frame (RvExcFrame) at 0x3fc8ef50, the argument of panic_handler"
    assert PanicCore.calls == 1
    Ctx.reader = ImageReader([(0x3FC8EF50, xt_exc_frame(pc=0x400D2F3A, exccause=29, excvaddr=0x10))])
    f = xtensa.PORT.live_fault(Ctx)
    assert f.exception == "StoreProhibited" and f.fault_address == ("EXCVADDR", 0x10)
    Ctx.reader = ImageReader([])
    f = riscv.PORT.live_fault(Ctx)
    assert f.frame is None and f.frame_note.startswith("the frame is unreadable")
    assert xtensa.PORT.live_fault(Ctx) is None   # no frame, and no exception registers to read
