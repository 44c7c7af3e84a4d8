"""Fault decoding (pure Python, no gdb): the fault status registers bit by bit, EXC_RETURN, the
stacked frame, and the verdict from the arena's point of view.

Sources: ARMv7-M Architecture Reference Manual B3.2.15 (CFSR = MMFSR | BFSR << 8 | UFSR << 16),
B3.2.16 (HFSR), B3.2.17/18 (MMFAR/BFAR), B1.5.6-B1.5.8 (exception entry, the stacked frame,
EXC_RETURN); Cortex-M4 TRM (FP extended frame, lazy stacking); ARMv8-M ARM (DDI 0553) D1.2.4
(UFSR.STKOF), D1.2.26 and B3.19 (EXC_RETURN's ES, SPSEL, Mode, FType, DCRS, S); ARMv6-M ARM
(DDI 0419) B1.5.9 (HardFault the only fault, no CFSR). The agent's fault record is
target_agent/include/arenascope/fault.h.
"""
import struct
from collections.abc import Callable
from dataclasses import dataclass

from arenascope_plugin.acquire.reader import MemoryReader
from arenascope_plugin.decode.abi import fnv1a
from arenascope_plugin.errors import ArenascopeError
from arenascope_plugin.ports import Fault

# (bit, name, one line of meaning)
CFSR_BITS = [
    (0, "IACCVIOL", "instruction fetch from an address the MPU or the memory map does not allow to execute"),
    (1, "DACCVIOL", "data access to an address the MPU does not allow (MMFAR has it when MMARVALID)"),
    (3, "MUNSTKERR", "MemManage fault while unstacking an exception return"),
    (4, "MSTKERR", "MemManage fault while stacking the exception frame: the stack pointer itself was bad"),
    (5, "MLSPERR", "MemManage fault during lazy floating-point state preservation"),
    (7, "MMARVALID", "MMFAR holds the faulting address"),
    (8, "IBUSERR", "bus error on an instruction fetch"),
    (9, "PRECISERR", "precise data bus error: BFAR holds the address, the stacked PC is the faulting instruction"),
    (10, "IMPRECISERR", "imprecise data bus error (a buffered write failed later): the stacked PC is after the "
                        "faulting instruction and BFAR is not valid"),
    (11, "UNSTKERR", "bus fault while unstacking an exception return"),
    (12, "STKERR", "bus fault while stacking the exception frame: the stack pointer pointed at no memory"),
    (13, "LSPERR", "bus fault during lazy floating-point state preservation"),
    (15, "BFARVALID", "BFAR holds the faulting address"),
    (16, "UNDEFINSTR", "undefined instruction"),
    (17, "INVSTATE", "invalid state: a branch to an address with bit 0 clear (ARM state), e.g. through a null "
                     "or corrupted function pointer"),
    (18, "INVPC", "invalid EXC_RETURN on exception return"),
    (19, "NOCP", "coprocessor (FPU) access while it is disabled (CPACR)"),
    (20, "STKOF", "stack overflow (ARMv8-M): a push went below the stack limit register (MSPLIM or PSPLIM), "
                  "stopped before it wrote past the limit"),
    (24, "UNALIGNED", "unaligned access with CCR.UNALIGN_TRP set"),
    (25, "DIVBYZERO", "integer divide by zero with CCR.DIV_0_TRP set"),
]
HFSR_BITS = [
    (1, "VECTTBL", "bus fault reading the vector table"),
    (30, "FORCED", "a configurable fault (MemManage, BusFault, UsageFault) escalated to HardFault: its handler "
                   "is disabled, or the fault happened at a priority that could not take it"),
    (31, "DEBUGEVT", "debug event while halting debug is off"),
]
# ARMv8-M's Secure Fault Status Register (DDI 0553 D1.2.209, SFSR at 0xE000EDE4; SFAR, the address,
# at 0xE000EDE8, valid with SFARVALID): readable only from the Secure state (RAZ otherwise).
SFSR, SFAR = 0xE000EDE4, 0xE000EDE8
SFSR_BITS = [
    (0, "INVEP", "invalid entry point: Non-secure code branched into Secure memory that is not a valid entry "
                 "(no SG instruction in NSC memory)"),
    (1, "INVIS", "invalid integrity signature in the exception frame on return to Secure state"),
    (2, "INVER", "invalid exception return: EXC_RETURN.DCRS or ES wrong for the state returned from"),
    (3, "AUVIOL", "attribution unit violation: Non-secure code accessed memory the SAU/IDAU marks Secure"),
    (4, "INVTRAN", "invalid transition: a branch to Non-secure state not made with BXNS/BLXNS"),
    (5, "LSPERR", "lazy state preservation error: the lazy FP stacking hit an SAU/IDAU violation"),
    (6, "SFARVALID", "SFAR holds the faulting address"),
    (7, "LSERR", "lazy state error: lazy FP stacking or restoring went wrong between the security states"),
]
GROUP = {range(0, 8): "MMFSR", range(8, 16): "BFSR", range(16, 32): "UFSR"}
EXCEPTIONS = {3: "HardFault", 4: "MemManage", 5: "BusFault", 6: "UsageFault", 7: "SecureFault"}
FRAME_NAMES = ["r0", "r1", "r2", "r3", "r12", "lr", "pc", "xpsr"]
RECORD_MAGIC = 0x544C4641
RECORD_VERSION = 2  # ARENASCOPE_FAULT_VERSION (target_agent/include/arenascope/fault.h)
FLAG_FRAME_COPIED, FLAG_PSP, FLAG_EXTENDED, FLAG_LAZY_FP, FLAG_NESTED = 1, 2, 4, 8, 16
# The record's fields in declaration order (fault.h); "addr" is the target's address size.
# RECORD_LAYOUTS (offsets by C's natural alignment, no padding in either) is checked against the
# golden fixture target_agent/abi/agent_abi_v1.json ("fault_record") by tests/plugin.
RECORD_FIELDS = [("magic", "u32"), ("version", "u16"), ("size", "u16"), ("boot_count", "u32"),
                 ("fault_count", "u32"), ("fault_boot", "u32"), ("flags", "u32"), ("exc_return", "u32"),
                 ("sp", "u32"), ("cfsr", "u32"), ("hfsr", "u32"), ("mmfar", "u32"), ("bfar", "u32"),
                 ("shcsr", "u32"), ("icsr", "u32"), ("frame", "u32[8]"), ("checksums_addr", "addr"),
                 ("checksum_count", "u16"), ("arch", "u16"), ("checksum", "u32")]
# The record's arch field (fault.h ARENASCOPE_FAULT_ARCH_*): whose registers its fields hold.
ARCH_CORTEX_M, ARCH_RISCV = 0, 1


def _record_layout(addr_size):
    sizes = {"u16": (2, 2), "u32": (4, 4), "u32[8]": (32, 4), "addr": (addr_size, addr_size)}
    out, offset = {}, 0
    for name, ftype in RECORD_FIELDS:
        size, align = sizes[ftype]
        offset = -(-offset // align) * align
        out[name] = offset
        offset += size
    out["_size"] = -(-offset // addr_size) * addr_size
    return out


RECORD_LAYOUTS = {4: _record_layout(4), 8: _record_layout(8)}
# The record's size field says its layout: 100 bytes with 4-byte addresses, 104 with 8. Version 1
# (agents of 0.1.0) is version 2's 4-byte layout; on a 64-bit host build it truncated the address.
RECORD_ADDR_SIZES = {lay["_size"]: a for a, lay in RECORD_LAYOUTS.items()}
RECORD_MAX_SIZE = max(RECORD_ADDR_SIZES)
RECORD_MIN_SIZE = min(RECORD_ADDR_SIZES)


def group_of(bit: int) -> str:
    return next(g for r, g in GROUP.items() if bit in r)


def cfsr_lines(cfsr: int) -> list[str]:
    return [f"CFSR.{group_of(b)}.{name} (bit {b}): {meaning}" for b, name, meaning in CFSR_BITS if cfsr >> b & 1]


def sfsr_lines(sfsr: int) -> list[str]:
    """Each set SFSR bit (ARMv8-M with the Security Extension) with its meaning."""
    return [f"SFSR.{name} (bit {b}): {meaning}" for b, name, meaning in SFSR_BITS if sfsr >> b & 1]


def hfsr_lines(hfsr: int) -> list[str]:
    return [f"HFSR.{name} (bit {b}): {meaning}" for b, name, meaning in HFSR_BITS if hfsr >> b & 1]


# Thumb 16-bit loads and stores (ARMv6-M ARM A6.7, the T1 encodings): (mask, value, name, size, form)
# with form "imm5" (Rt 2:0, Rn 5:3, imm5 10:6, scaled by the size) or "reg" (Rt 2:0, Rn 5:3, Rm 8:6).
_THUMB_ACCESSES = [
    (0xF800, 0x6000, "str", 4, "imm5"), (0xF800, 0x6800, "ldr", 4, "imm5"),
    (0xF800, 0x7000, "strb", 1, "imm5"), (0xF800, 0x7800, "ldrb", 1, "imm5"),
    (0xF800, 0x8000, "strh", 2, "imm5"), (0xF800, 0x8800, "ldrh", 2, "imm5"),
    (0xFE00, 0x5000, "str", 4, "reg"), (0xFE00, 0x5200, "strh", 2, "reg"), (0xFE00, 0x5400, "strb", 1, "reg"),
    (0xFE00, 0x5600, "ldrsb", 1, "reg"), (0xFE00, 0x5800, "ldr", 4, "reg"), (0xFE00, 0x5A00, "ldrh", 2, "reg"),
    (0xFE00, 0x5C00, "ldrb", 1, "reg"), (0xFE00, 0x5E00, "ldrsh", 2, "reg"),
]


def thumb_access(halfword: int, frame: list[int]) -> tuple[str, int | None, int] | None:
    """The 16-bit Thumb load or store `halfword` as (its text, the address it accessed, its size in
    bytes), the address from the stacked r0-r3 (None when it uses r4-r7, which are not stacked);
    None for any other instruction."""
    for mask, value, name, size, form in _THUMB_ACCESSES:
        if halfword & mask != value:
            continue
        rt, rn = halfword & 7, halfword >> 3 & 7
        base = frame[rn] if rn < 4 else None
        if form == "imm5":
            off = (halfword >> 6 & 0x1F) * size
            text = f"{name} r{rt}, [r{rn}, #{off}]"
            return text, (base + off) & 0xFFFFFFFF if base is not None else None, size
        rm = halfword >> 6 & 7
        index = frame[rm] if rm < 4 else None
        text = f"{name} r{rt}, [r{rn}, r{rm}]"
        return text, (base + index) & 0xFFFFFFFF if base is not None and index is not None else None, size
    return None


def baseline_access_line(halfword: int, frame: list[int]) -> str | None:
    """For a HardFault on a core with no CFSR (BASELINE_ARCHS): what the faulting instruction says,
    when it is a load or store. ARMv6-M faults every unaligned access (ARMv6-M ARM A3.2.1); an
    aligned one faulted on the bus (nothing answers there) or through the MPU."""
    access = thumb_access(halfword, frame)
    if access is None:
        return None
    text, address, size = access
    if address is None:
        return f"the faulting instruction is `{text}`: its base register is not stacked, so its address is unknown"
    if address % size:
        return (f"the faulting instruction is `{text}`, a {size}-byte access at {address:#x}: unaligned, and this "
                "core faults every unaligned access (ARMv6-M has none): the cause")
    return (f"the faulting instruction is `{text}`, a {size}-byte access at {address:#x}: aligned, so a bus error "
            "(nothing answers at that address) or an MPU region forbade it")


# Architectures without the configurable fault status registers (decode/kernels.py arch names).
BASELINE_ARCHS = ("v6-M", "v6S-M", "v8-M.baseline")


def status_lines(cfsr: int, hfsr: int, arch: str | None = None) -> list[str]:
    """The fault status registers in words: CFSR's and HFSR's set bits; on an architecture that has
    neither (arch in BASELINE_ARCHS: the firmware's Tag_CPU_arch), why the cause is not recorded."""
    if arch in BASELINE_ARCHS:
        return [f"ARM{arch} has no CFSR, HFSR, MMFAR or BFAR: HardFault is its only fault exception and the "
                "core records no cause; the stacked PC (the faulting instruction, for most faults) and the "
                "registers below tell it"]
    return cfsr_lines(cfsr) + hfsr_lines(hfsr)


@dataclass
class ExcReturn:
    """EXC_RETURN, the value LR holds in a handler. ARMv7-M has bits 4 (FType), 3 (Mode) and 2 (SPSEL)
    and 1s elsewhere; ARMv8-M adds bit 0 (ES: the exception went to Secure state), 5 (DCRS: 0 when
    the callee-saved registers were stacked too, 40 bytes below the basic frame) and 6 (S: the frame
    is on a Secure stack), which are 1 on ARMv7-M, so one decode covers both."""
    value: int

    @property
    def valid(self) -> bool:
        return self.value >> 7 == 0x1FFFFFF and not self.value & 0x2

    @property
    def psp(self) -> bool:
        return bool(self.value & 0x4)

    @property
    def thread_mode(self) -> bool:
        return bool(self.value & 0x8)

    @property
    def extended(self) -> bool:
        return not self.value & 0x10

    @property
    def secure_exception(self) -> bool:  # ES, bit 0
        return bool(self.value & 0x1)

    @property
    def callee_stacked(self) -> bool:  # DCRS = 0, bit 5
        return not self.value & 0x20

    @property
    def secure_stack(self) -> bool:  # S, bit 6
        return bool(self.value & 0x40)

    def describe(self) -> str:
        if not self.valid:
            return f"{self.value:#010x} is not an EXC_RETURN value"
        text = (f"{self.value:#010x}: returns to {'thread' if self.thread_mode else 'handler'} mode, frame on the "
                f"{'process (PSP)' if self.psp else 'main (MSP)'} stack, "
                f"{'extended frame with FP registers (104 B)' if self.extended else 'basic frame (32 B)'}")
        if self.secure_exception and self.secure_stack and not self.callee_stacked:
            return text  # ARMv7-M's values, and ARMv8-M's without a security state change
        return text + (f"; ARMv8-M: the exception went to {'Secure' if self.secure_exception else 'Non-secure'} "
                       f"state, the frame is on the {'Secure' if self.secure_stack else 'Non-secure'} stack"
                       + ("; the callee-saved registers r4-r11 and the integrity signature were stacked too (40 B "
                          "below the basic frame)" if self.callee_stacked else ""))


@dataclass
class Record:
    """The agent's fault record (fault.h), decoded."""
    boot_count: int
    fault_count: int
    fault_boot: int
    flags: int
    exc_return: int
    sp: int
    cfsr: int
    hfsr: int
    mmfar: int
    bfar: int
    shcsr: int
    icsr: int
    frame: list[int]
    checksums_addr: int
    checksum_count: int
    arch: int = ARCH_CORTEX_M


class RecordError(ArenascopeError):
    pass


def decode_record(data: bytes, address: int) -> Record:
    """The record in data (its first `size` bytes; more are ignored), read at address."""
    if len(data) < 8:
        raise RecordError(f"fault record at {address:#x}: only {len(data)} bytes read")
    magic, version, size = struct.unpack_from("<IHH", data, 0)
    if magic != RECORD_MAGIC:
        raise RecordError(f"no fault record at {address:#x} (magic {magic:#010x}): the agent has not recorded one, "
                          "or arenascope_fault_boot has not run")
    addr_size = RECORD_ADDR_SIZES.get(size) if version == RECORD_VERSION else None
    if (version, size) == (1, 100):
        addr_size = 4
    if addr_size is None:
        raise RecordError(f"fault record at {address:#x}: version {version}, size {size} (this plugin reads "
                          f"{RECORD_VERSION}, {' or '.join(str(n) for n in sorted(RECORD_ADDR_SIZES))})")
    if len(data) < size:
        raise RecordError(f"fault record at {address:#x}: only {len(data)} bytes read of its {size}")
    lay = RECORD_LAYOUTS[addr_size]
    if struct.unpack_from("<I", data, lay["checksum"])[0] != fnv1a(data[4:lay["checksum"]]):
        raise RecordError(f"fault record at {address:#x}: checksum mismatch (half-written, or overwritten)")
    f = struct.unpack_from("<IIIIIIIIIIII", data, 8)
    if f[2] > f[0] or f[1] and not f[2]:
        raise RecordError(f"fault record at {address:#x}: fault from boot {f[2]} but only {f[0]} boot(s) counted "
                          "(corrupt record)")
    frame = list(struct.unpack_from("<8I", data, lay["frame"]))
    checksums_addr = int.from_bytes(data[lay["checksums_addr"]:lay["checksums_addr"] + addr_size], "little")
    checksum_count, arch = struct.unpack_from("<HH", data, lay["checksum_count"])
    return Record(*f, frame=frame, checksums_addr=checksums_addr, checksum_count=checksum_count, arch=arch)


HEAD_SIZE = 24  # magic, version, size, boot_count, fault_count, fault_boot: what a new boot or fault changes


def read_record(read: Callable[[int, int], bytes], address: int) -> Record:
    """Reads and decodes the record at address with read(address, length) -> bytes: the shorter
    layout's bytes first, then the rest when its size field says it is the longer one."""
    first = read(address, RECORD_MIN_SIZE)  # one read for a 32-bit target's record, the common case
    size = struct.unpack_from("<H", first, 6)[0] if len(first) >= 8 else 0
    if RECORD_MIN_SIZE < size <= RECORD_MAX_SIZE:
        first += read(address + RECORD_MIN_SIZE, size - RECORD_MIN_SIZE)
    return decode_record(first, address)


@dataclass
class Status:
    """The Cortex-M fault status of one fault (the port's Fault.status): the SCB's fault registers
    and EXC_RETURN, from the agent's record or from the core."""
    cfsr: int
    hfsr: int
    mmfar: int | None                 # only when MMARVALID
    bfar: int | None                  # only when BFARVALID
    exc_return: int | None
    sfsr: int | None = None           # ARMv8-M Secure state only: SFSR when nonzero, SFAR when SFARVALID
    sfar: int | None = None
    nested: bool = False
    lazy_fp: bool = False
    arch: str | None = None           # the M-profile architecture (build attributes), for the decode


def pre_fault_sp(status: Status, frame_addr: int | None, frame: list[int] | None) -> int | None:
    """SP before the exception: frame address + frame size (+4 when xPSR bit 9 says the core
    aligned the frame to 8 bytes)."""
    if frame_addr is None or status.exc_return is None or status.cfsr >> 20 & 1:
        return None  # (STKOF: SP was set to the limit, not decremented by a frame: ARMv8-M B3.22)
    size = 104 if ExcReturn(status.exc_return).extended else 32
    pad = 4 if frame and frame[7] >> 9 & 1 else 0
    return (frame_addr + size + pad) & 0xFFFFFFFF  # Cortex-M addresses are 32 bits


CALLEE_CONTEXT_BYTES = 40  # DCRS 0: integrity signature, reserved, r4-r11 below the basic frame
CALLEE_NOTE = ("the callee-saved registers were stacked below the frame (EXC_RETURN DCRS 0): the basic frame is "
               f"{CALLEE_CONTEXT_BYTES} B above the stacked SP, read from there")


def from_record(rec: Record, port) -> Fault:
    """The neutral Fault (ports.Fault) the record holds; source is the caller's to set."""
    exc = EXCEPTIONS.get(rec.icsr & 0x1FF)
    note = ""
    copied = bool(rec.flags & FLAG_FRAME_COPIED)
    if rec.cfsr >> 20 & 1:
        # ARMv8-M: a stacking that would cross the limit stops there, SP at the limit (DDI 0553
        # B3.22): what the agent copied from SP is the stack's bottom, not a frame.
        copied = False
        note = "the frame was not stacked (STKOF: the stacking stopped at the stack limit): no stacked registers"
    elif not copied:
        note = ("the frame was not stacked (MSTKERR/STKERR): no stacked registers" if rec.cfsr & (1 << 4 | 1 << 12)
                else "the agent did not copy the stacked frame")
    elif rec.flags & FLAG_LAZY_FP:
        note = "extended frame: FP space reserved, FP registers not written (lazy stacking pending)"
    frame_addr = rec.sp
    er = ExcReturn(rec.exc_return)
    if copied and er.valid and er.callee_stacked:
        # DCRS 0 (DDI 0553 B3.19): the integrity signature, a reserved word and r4-r11 sit at SP, the
        # basic frame 40 B above: the 8 words the agent copied from SP are not the frame.
        frame_addr, copied = rec.sp + CALLEE_CONTEXT_BYTES, False
        note = CALLEE_NOTE
    status = Status(cfsr=rec.cfsr, hfsr=rec.hfsr, mmfar=rec.mmfar if rec.cfsr >> 7 & 1 else None,
                    bfar=rec.bfar if rec.cfsr >> 15 & 1 else None, exc_return=rec.exc_return,
                    nested=bool(rec.flags & FLAG_NESTED), lazy_fp=bool(rec.flags & FLAG_LAZY_FP))
    return Fault(port=port, source="", exception=exc, status=status, frame_addr=frame_addr,
                 frame=rec.frame if copied else None, frame_note=note)


def cause_lines(f: Fault) -> list[str]:
    """The plain-words cause from the bits and the frame."""
    out, st = [], f.status
    known = {b for b, _, _ in CFSR_BITS}
    for b in range(32):
        if st.cfsr >> b & 1 and b not in known:
            out.append(f"CFSR bit {b} is set but reserved in ARMv7-M: a corrupt value, or a newer core")
    if st.cfsr >> 17 & 1 or (f.pc is not None and f.pc == 0):
        if f.pc is None:  # INVSTATE with no stacked frame (not copied, or a corrupt record)
            out.append("a branch to an address with bit 0 clear (INVSTATE): a call through a null or corrupted "
                       "function pointer, or a return to a corrupted address; the frame was not stacked, so the "
                       "target address is unknown")
        elif f.pc == 0 or (f.frame and f.frame[6] in (0, 1)):
            out.append("a call through a null function pointer (PC 0)")
        else:
            out.append(f"a branch to {f.pc:#x} with bit 0 clear: a call through a null or corrupted function "
                       "pointer, or a return to a corrupted address")
    if st.cfsr >> 10 & 1:
        out.append("an imprecise bus error: a buffered write failed after the instruction retired, so the stacked "
                   "PC is a few instructions late and BFAR is not valid; to find the store, set "
                   "ACTLR.DISDEFWBUF (disables the write buffer) and reproduce")
    if st.cfsr & (1 << 4 | 1 << 12):
        out.append("the exception frame could not be stacked: the stack pointer pointed outside the stack's memory "
                   "(a stack overflow past usable RAM, or a corrupted SP)")
    if st.cfsr >> 20 & 1:
        out.append("the stack ran out: a push would have gone below the stack limit register, which stopped it "
                   "(nothing below the limit was written); the exception frame was not stacked, so there is no "
                   "faulting PC: break on the deepest function, or give the stack more room")
    if st.hfsr >> 30 & 1:
        out.append("note: reported as HardFault (FORCED) because the configurable handler was off or could not "
                   "run: this is how the fault was reported, not its cause; enabling the BusFault/MemManage/"
                   "UsageFault handlers (SHCSR) reports it as what it is")
    if st.nested:
        out.append("another fault happened while this one was being recorded; the registers are the first fault's")
    return out


def call_target(reader: MemoryReader, return_address: int) -> int | None:
    """The address a BL right before `return_address` calls (ARMv7-M ARM A7.7.18, encoding T1:
    I1 = NOT(J1 XOR S), I2 = NOT(J2 XOR S), imm32 = SignExtend(S:I1:I2:imm10:imm11:'0'), target =
    the BL's address + 4 + imm32), or None when the call is a BLX through a register or there is no
    call."""
    if call_before(reader, return_address) != "BL":
        return None
    at = (return_address & ~1) - 4
    hw1, hw2 = struct.unpack("<HH", reader.read(at, 4))
    s = hw1 >> 10 & 1
    i1 = 1 ^ (hw2 >> 13 & 1) ^ s
    i2 = 1 ^ (hw2 >> 11 & 1) ^ s
    imm = s << 24 | i1 << 23 | i2 << 22 | (hw1 & 0x3FF) << 12 | (hw2 & 0x7FF) << 1
    if s:
        imm -= 1 << 25
    return (at + 4 + imm) & 0xFFFFFFFF


def call_before(reader: MemoryReader, return_address: int) -> str | None:
    """The call instruction that ends right before `return_address` (Thumb: bit 0 set), or None
    when there is none: then the value is no return address, whatever register or stack slot
    holds it (a function may use LR as a scratch register once it has saved it). ARMv7-M ARM
    A7.7.18 (BL, encoding T1: 11110 S imm10, 11 J1 1 J2 imm11) and A7.7.19 (BLX Rm, encoding T1:
    0100 0111 1 Rm 000); ARMv6-M has the same two. Reads 4 bytes of code through `reader`."""
    if not return_address & 1:
        return None
    at = (return_address & ~1) - 4
    if at < 0:
        return None
    try:
        code = reader.read(at, 4)
    except Exception:  # pylint: disable=broad-except  (any reader's error: unreadable is "no call")
        return None
    hw1, hw2 = struct.unpack("<HH", code)
    if hw1 & 0xF800 == 0xF000 and hw2 & 0xD000 == 0xD000:
        return "BL"
    if hw2 & 0xFF87 == 0x4780:
        return f"BLX r{hw2 >> 3 & 0xF}"
    return None


def make_fault(source: str, exception: str | None, cfsr: int, hfsr: int, mmfar: int | None, bfar: int | None,
               exc_return: int | None, frame_addr: int | None, frame: list[int] | None, **neutral) -> Fault:
    """A Cortex-M Fault from its status registers (as the record or the core gives them) and the
    neutral fields (frame_note, status_unknown, halted_in_handler, ...)."""
    from arenascope_plugin.ports.cortex_m import PORT  # pylint: disable=import-outside-toplevel
    status = Status(cfsr=cfsr, hfsr=hfsr, mmfar=mmfar, bfar=bfar, exc_return=exc_return)
    return Fault(port=PORT, source=source, exception=exception, status=status, frame_addr=frame_addr, frame=frame,
                 **neutral)
