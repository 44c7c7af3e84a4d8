"""RISC-V trap decode (ports/riscv/trap.py) against the RISC-V Privileged Architecture 1.12:
table 3.6's cause codes (RV32: the interrupt flag is bit 31), mtval's meaning per cause
(section 3.1.16) and mtvec's BASE (section 3.1.7). Values written here from the spec."""
from arenascope_plugin.acquire.symbols import FixedCore
from arenascope_plugin.ports.riscv import trap as riscv_trap


def trap(mcause, mtval=None, mepc=0x80000100):
    return riscv_trap.Trap(mcause=mcause, mepc=mepc, mtval=mtval, handler=0x800001E0, in_handler=True)


def test_cause_codes_are_the_specs():
    assert [trap(c).cause for c in (0, 1, 2, 3, 5, 7, 11, 13, 15)] == [
        "instruction address misaligned", "instruction access fault", "illegal instruction", "breakpoint",
        "load access fault", "store/AMO access fault", "environment call from M-mode", "load page fault",
        "store/AMO page fault"]
    timer = trap(0x80000007)
    assert timer.interrupt and timer.code == 7 and timer.cause == "machine timer interrupt"
    assert trap(10).cause == "cause 10 (reserved or custom)"


def test_mtval_is_an_address_only_for_address_faults():
    assert trap(7, 0x90000000).fault_address == 0x90000000   # store/AMO access fault
    assert trap(4, 0x80400001).fault_address == 0x80400001   # load address misaligned
    assert trap(2, 0x0000FFFF).fault_address is None          # illegal instruction: its bits
    assert trap(0x80000007, 0x1234).fault_address is None     # an interrupt: no address
    lines = riscv_trap.lines(trap(2, 0x0000FFFF), lambda pc: f"{pc:#x} in main", lambda a: None)
    assert lines[-1] == "mtval 0xffff: the illegal instruction's bits"
    lines = riscv_trap.lines(trap(7, 0x90000000), lambda pc: f"{pc:#x} in main", lambda a: None)
    assert lines == ["mcause 0x00000007: exception 7, store/AMO access fault (RISC-V Privileged Architecture 1.12, "
                     "table 3.6)", "mepc 0x80000100: the trapping instruction, 0x80000100 in main",
                     "mtval 0x90000000: the faulting address, in no memory the firmware describes"]


def test_in_the_handler_means_the_pc_in_mtvecs_function():
    names = {0x800001E0: ("trap_handler", 0), 0x800001E4: ("trap_handler", 4), 0x80000200: ("main", 0)}
    vectored = 0x800001E0 | 1   # MODE 1 (vectored): BASE is bits 31:2
    core = FixedCore({"mcause": 7, "mtvec": vectored, "pc": 0x800001E4, "mepc": 0x8000028C, "mtval": 0x90000000},
                     cortex_m=False)
    t = riscv_trap.read(core, names.get)
    assert (t.handler, t.in_handler, t.mepc) == (0x800001E0, True, 0x8000028C)
    core.regs["pc"] = 0x80000200
    assert not riscv_trap.read(core, names.get).in_handler
    assert riscv_trap.read(FixedCore({"pc": 0x80000200}), names.get) is None   # no mcause: not RISC-V, or running
