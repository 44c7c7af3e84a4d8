"""A RISC-V core's trap, from its machine-mode CSRs at a stop: mcause (the cause), mepc (the
trapping instruction), mtval (the faulting address, or the illegal instruction's bits), mstatus
(the privilege the trap came from) and mtvec (the trap handler), read through Core.register, or
from ESP-IDF's panic frame (RvExcFrame). No GDB import.

Cause codes: The RISC-V Instruction Set Manual, Volume II: Privileged Architecture 1.12, table 3.6
(mcause values after trap; on RV32 the interrupt flag is bit 31). mtval: section 3.1.16 (the
faulting virtual address for misaligned and access faults, the instruction bits, or 0, for an
illegal instruction). mtvec: section 3.1.7 (BASE in bits 31:2, MODE in 1:0; vectored mode puts
exceptions at BASE too). mstatus: section 3.1.6 (MPP in bits 12:11, the privilege before the trap;
MPIE bit 7; MIE bit 3).
"""
from dataclasses import dataclass

EXCEPTIONS = {
    0: "instruction address misaligned", 1: "instruction access fault", 2: "illegal instruction",
    3: "breakpoint", 4: "load address misaligned", 5: "load access fault", 6: "store/AMO address misaligned",
    7: "store/AMO access fault", 8: "environment call from U-mode", 9: "environment call from S-mode",
    11: "environment call from M-mode", 12: "instruction page fault", 13: "load page fault",
    15: "store/AMO page fault",
}
INTERRUPTS = {1: "supervisor software interrupt", 3: "machine software interrupt", 5: "supervisor timer interrupt",
              7: "machine timer interrupt", 9: "supervisor external interrupt", 11: "machine external interrupt"}
ADDRESS_CAUSES = {0, 1, 4, 5, 6, 7, 12, 13, 15}   # mtval holds the faulting address
FAULT_CAUSES = ADDRESS_CAUSES | {2}                 # exceptions that are faults (not ecall, ebreak)
PRIVILEGES = {0: "U-mode", 1: "S-mode", 3: "M-mode"}
SOURCE = "RISC-V Privileged Architecture 1.12, table 3.6"


@dataclass
class Trap:
    """The trap a RISC-V core took last, and whether it is halted in its handler now."""
    mcause: int
    mepc: int | None
    mtval: int | None
    handler: int | None          # mtvec's BASE
    in_handler: bool             # the PC is in the function mtvec points to
    mstatus: int | None = None

    @property
    def interrupt(self) -> bool:
        return bool(self.mcause >> 31 & 1)

    @property
    def code(self) -> int:
        return self.mcause & 0x7FFFFFFF

    @property
    def cause(self) -> str:
        table = INTERRUPTS if self.interrupt else EXCEPTIONS
        return table.get(self.code, f"cause {self.code} (reserved or custom)")

    @property
    def fault_address(self) -> int | None:
        return self.mtval if not self.interrupt and self.code in ADDRESS_CAUSES else None

    @property
    def is_fault(self) -> bool:
        """An exception that is a fault (an access, alignment or illegal instruction), not an
        interrupt, an ecall or an ebreak."""
        return not self.interrupt and self.code in FAULT_CAUSES


def mstatus_text(mstatus: int) -> str:
    """What mstatus says of the trap: the privilege it came from, the interrupt enables."""
    mpp = mstatus >> 11 & 3
    return (f"the trap came from {PRIVILEGES.get(mpp, f'privilege {mpp} (reserved)')} (MPP); machine interrupts "
            f"{'enabled' if mstatus >> 7 & 1 else 'disabled'} before it (MPIE), "
            f"{'enabled' if mstatus >> 3 & 1 else 'disabled'} now (MIE)")


def read(core, name_at) -> Trap | None:
    """The core's trap CSRs (None when mcause cannot be read: not a RISC-V core, or running).
    name_at(addr) -> (function, offset) or None tells whether the PC is in mtvec's handler."""
    mcause = core.register("mcause")
    if mcause is None:
        return None
    mtvec, pc = core.register("mtvec"), core.register("pc")
    handler = mtvec & ~3 if mtvec is not None else None
    in_handler = False
    if handler is not None and pc is not None:
        at, there = name_at(pc), name_at(handler)
        in_handler = pc == handler or (at is not None and there is not None and at[0] == there[0])
    return Trap(mcause=mcause & 0xFFFFFFFF, mepc=core.register("mepc"), mtval=core.register("mtval"),
                handler=handler, in_handler=in_handler, mstatus=core.register("mstatus"))


def lines(trap: Trap, where, memory_of) -> list[str]:
    """What the trap says, one fact a line. where(pc) -> "addr in function at file:line";
    memory_of(addr) -> the memory an address lies in, or None."""
    kind = "interrupt" if trap.interrupt else "exception"
    out = [f"mcause {trap.mcause:#010x}: {kind} {trap.code}, {trap.cause} ({SOURCE})"]
    if trap.mepc is not None:
        out.append(f"mepc {trap.mepc:#x}: the {'interrupted' if trap.interrupt else 'trapping'} instruction, "
                   f"{where(trap.mepc)}")
    if trap.fault_address is not None:
        memory = memory_of(trap.fault_address)
        out.append(f"mtval {trap.fault_address:#x}: the faulting address, "
                   + (f"in {memory}" if memory else "in no memory the firmware describes"))
    elif trap.mtval and not trap.interrupt and trap.code == 2:
        out.append(f"mtval {trap.mtval:#x}: the illegal instruction's bits")
    return out


# Physical memory protection (Privileged Architecture 1.12, 3.7.1): on RV32, pmpcfg0..3 hold 4
# one-byte entry configurations each (R bit 0, W 1, X 2, A bits 4:3: OFF, TOR, NA4, NAPOT; L bit
# 7: locked, binding machine mode too), pmpaddr0..15 the addresses >> 2.
PMP_ENTRIES = 16
PMP_MODES = {1: "TOR", 2: "NA4", 3: "NAPOT"}


@dataclass
class PmpRegion:
    """One active PMP entry: [low, high), its permissions and whether it is locked."""
    index: int
    low: int
    high: int
    cfg: int
    raw: int = 0           # pmpaddrN as read

    @property
    def locked(self) -> bool:
        return bool(self.cfg >> 7 & 1)

    def allows(self, access: str) -> bool:
        """Whether the entry permits `access`: "r", "w" or "x"."""
        return bool(self.cfg >> "rwx".index(access) & 1)

    def describe(self) -> str:
        perms = "".join(a.upper() for a in "rwx" if self.allows(a)) or "no access"
        return (f"PMP entry {self.index} {self.low:#x}-{self.high:#x} ({self.high - self.low} B, "
                f"{PMP_MODES[self.cfg >> 3 & 3]}, {perms}{', locked' if self.locked else ''})")


def pmp_regions(register) -> list[PmpRegion] | None:
    """The active PMP entries from register(name) -> value or None (the core's CSRs), lowest index
    (highest priority) first; None when pmpcfg0 cannot be read."""
    cfgs = [register(f"pmpcfg{i}") for i in range(PMP_ENTRIES // 4)]
    if cfgs[0] is None:
        return None
    out, prev = [], 0
    for i in range(PMP_ENTRIES):
        word = cfgs[i // 4]
        addr = register(f"pmpaddr{i}")
        if word is None or addr is None:
            break
        cfg = word >> 8 * (i % 4) & 0xFF
        mode = cfg >> 3 & 3
        if mode == 1:
            low, high = prev << 2, addr << 2
        elif mode == 2:
            low, high = addr << 2, (addr << 2) + 4
        elif mode == 3:
            ones = (~addr & (addr + 1)).bit_length() - 1  # trailing 1 bits of pmpaddr
            low, high = (addr & ~((1 << ones) - 1)) << 2, ((addr & ~((1 << ones) - 1)) << 2) + (8 << ones)
        if mode:
            out.append(PmpRegion(i, low, high, cfg, addr))
        prev = addr
    return out


ACCESS_OF_CAUSE = {1: "x", 5: "r", 7: "w"}  # instruction, load, store/AMO access faults


def pmp_denial(regions: list[PmpRegion], cause: int, address: int) -> PmpRegion | None:
    """The locked PMP entry that denied an access fault at `address` (the lowest-numbered entry
    matching it decides, 3.7.1), or None."""
    access = ACCESS_OF_CAUSE.get(cause)
    if access is None:
        return None
    hit = next((r for r in regions if r.low <= address < r.high), None)
    return hit if hit is not None and hit.locked and not hit.allows(access) else None
