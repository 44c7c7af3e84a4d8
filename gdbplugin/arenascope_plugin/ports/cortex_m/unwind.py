"""A call chain from the ELF's call frame information, for a core that has no GDB unwinder: a RAM
dump's (acquire/dumpcore.py) and the standalone tool's. It also finds the exception frame a fault
handler was entered with when the handler has already pushed onto the stack and LR no longer
holds EXC_RETURN (ports/faultread.py), at a live stop too.

Sources: DWARF 5 section 6.4 (call frame information: the CFA rule and the register rules of the
row covering the PC; GCC writes them to .debug_frame with -g); DWARF register numbers r0..r15 =
0..15 (ARM's "DWARF for the Arm Architecture", 4.1); the exception frame an EXC_RETURN value
(0xFxxxxxxx in the PC slot) stands for: r0-r3, r12, LR, PC, xPSR at the SP it names (MSP or
PSP: EXC_RETURN bit 2), 18 more words when bit 4 is clear (FP context), 40 B of callee context
below it when DCRS (bit 5) is clear on ARMv8-M, and 4 B of padding when the stacked xPSR's bit 9
is set (ARMv7-M ARM B1.5.6-B1.5.8, ARMv8-M ARM B3.19).

Cortex-M only: the exception frames are the M profile's. Nothing here writes target memory.
"""
from collections.abc import Callable
from dataclasses import dataclass, field

from arenascope_plugin.acquire import cfi as dwarf_cfi
from arenascope_plugin.acquire.symbols import Symbols, short_name

SP, LR, PC = 13, 14, 15
MAX_FRAMES = 32
FRAME_WORDS = 8                  # r0, r1, r2, r3, r12, lr, pc, xpsr
FP_EXTRA_BYTES = 72              # s0-s15, FPSCR, reserved (EXC_RETURN bit 4 clear)
CALLEE_CONTEXT_BYTES = 40        # ARMv8-M DCRS 0: integrity signature, reserved, r4-r11
EXCEPTION_MARK = "<exception frame>"   # as GdbCore.frames() names one (gdb.SIGTRAMP_FRAME)


def is_exc_return(value: int | None) -> bool:
    """Whether a value in the PC's place is an EXC_RETURN (0xF0000000 and up: ARMv7-M ARM B1.5.8;
    ARMv8-M's 0xFF prefix included)."""
    return value is not None and value >= 0xF0000000


@dataclass
class Unwound:
    """What unwind() found. frames: function names newest first ("0x..." when no symbol), with
    EXCEPTION_MARK between the handler and the code it interrupted; complete: the walk ended at the
    outermost frame (no caller: a return address of 0, or code with no call frame information
    after at least one caller was found) rather than at a read error or a rule it cannot follow;
    why: why it stopped. exc_return, exc_frame: the first EXC_RETURN met and the address of the
    basic frame it stands for (None when the walk met none)."""
    frames: list[str] = field(default_factory=list)
    complete: bool = False
    why: str = ""
    exc_return: int | None = None
    exc_frame: int | None = None


def frame_layout(symbols: Symbols, function: int) -> tuple[int, int] | None:
    """(the largest CFA offset from SP, where LR is saved relative to the CFA) of the function at
    `function` (its Thumb bit dropped): acquire/cfi.py frame_layout with ARM's DWARF numbers."""
    return dwarf_cfi.frame_layout(symbols, function & ~1, SP, LR)


def cfi_of(symbols: Symbols) -> dwarf_cfi.Cfi:
    return dwarf_cfi.cfi_of(symbols)


def _name(symbols: Symbols, pc: int) -> str:
    named = symbols.name_at(pc & ~1)
    return short_name(named[0]) if named else f"{pc & ~1:#x}"


def _caller(cfi: dwarf_cfi.Cfi, regs: dict[int, int | None], word: Callable[[int], int], interrupted: bool) -> tuple:
    """(the caller's registers, None) one frame up from regs by the CFI row covering its PC, or
    (None, why not). interrupted: the PC is where the code was stopped (the newest frame, or one an
    exception interrupted), not a return address."""
    pc = regs[PC] & ~1
    row = cfi.row(pc if interrupted else pc - 1)  # a return address: look up the call before it
    if row is None:
        return None, f"no call frame information covers {pc:#x}"
    rule = row["cfa"]
    if rule.expr is not None or regs.get(rule.reg) is None:
        return None, f"the frame at {pc:#x} has a CFA rule this unwinder cannot follow"
    cfa = (regs[rule.reg] + rule.offset) & 0xFFFFFFFF
    out = {r: (v if r in (4, 5, 6, 7, 8, 9, 10, 11) else None) for r, v in regs.items()}  # callee-saved kept
    for reg, r in row.items():
        if not isinstance(reg, int):
            continue
        if r.type == "OFFSET":
            out[reg] = word(cfa + r.arg)
        elif r.type == "REGISTER":
            out[reg] = regs.get(r.arg)
        elif r.type == "UNDEFINED":
            out[reg] = None
        elif r.type == "SAME_VALUE":
            out[reg] = regs.get(reg)
    out[SP] = cfa
    out[PC] = out[LR] if LR in row else regs.get(LR)  # no rule for LR: still in LR (a leaf)
    out[LR] = out[LR] if LR in row else None
    return out, ""


def _exception_frame(regs: dict[int, int | None], exc: int, psp: int | None, word) -> tuple:
    """(the interrupted code's registers, basic frame address) for an EXC_RETURN met as a return
    address, or (None, why not)."""
    at = regs[SP] if not exc >> 2 & 1 else psp
    if at is None:
        return None, "the frame is on PSP, whose value is unknown here"
    if exc >> 24 == 0xFF and not exc >> 5 & 1:  # ARMv8-M DCRS 0: callee context below the frame
        at += CALLEE_CONTEXT_BYTES
    frame = [word(at + 4 * i) for i in range(FRAME_WORDS)]
    out = dict.fromkeys(range(16))
    out.update({0: frame[0], 1: frame[1], 2: frame[2], 3: frame[3], 12: frame[4], LR: frame[5], PC: frame[6]})
    out.update({r: regs.get(r) for r in range(4, 12)})  # r4-r11: not stacked, the handler's as restored
    out[SP] = at + 4 * FRAME_WORDS + (0 if exc >> 4 & 1 else FP_EXTRA_BYTES) + (4 if frame[7] >> 9 & 1 else 0)
    return out, at


def unwind(symbols: Symbols, read: Callable[[int, int], bytes], registers: dict[str, int],
           limit: int = MAX_FRAMES) -> Unwound:
    """The call chain from `registers` ({"r0".."r12", "sp", "lr", "pc", "psp"}: what is known;
    at least pc and sp), reading stacked words with read(addr, length) (MemoryReadError or any
    OSError/ValueError stops the walk, said in why)."""
    out = Unwound()
    regs = {i: registers.get(f"r{i}") for i in range(13)}
    regs.update({SP: registers.get("sp"), LR: registers.get("lr"), PC: registers.get("pc")})
    psp = registers.get("psp")
    if regs[PC] is None or regs[SP] is None:
        out.why = "the PC or SP is unknown"
        return out
    cfi = cfi_of(symbols)  # read once per ELF, and only when there is something to unwind
    if cfi.problem:
        out.frames, out.why = [_name(symbols, regs[PC])], cfi.problem
        return out

    def word(addr: int) -> int:
        return int.from_bytes(read(addr, 4), "little")

    interrupted = True
    while len(out.frames) < limit:
        out.frames.append(_name(symbols, regs[PC]))
        try:
            caller, why = _caller(cfi, regs, word, interrupted)
        except Exception as exc:  # pylint: disable=broad-except  # a reader's error: the walk stops here
            out.why = f"the stack is unreadable ({exc})"
            return out
        if caller is None:
            out.complete, out.why = len(out.frames) > 1 and not interrupted, why
            return out
        interrupted = False
        if is_exc_return(caller[PC]):
            exc = caller[PC]
            try:
                below, at = _exception_frame(caller, exc, psp, word)
            except Exception as exc_:  # pylint: disable=broad-except
                out.why = f"the exception frame is unreadable ({exc_})"
                return out
            if below is None:
                out.why = at
                return out
            if out.exc_return is None:
                out.exc_return, out.exc_frame = exc, at
            out.frames.append(EXCEPTION_MARK)
            caller, interrupted, psp = below, True, None  # a nested exception's PSP is not known
        elif caller[SP] is not None and caller[SP] < regs[SP]:
            out.why = "the stack pointer went down while unwinding: the stack is not what the ELF describes"
            return out
        if caller[PC] is not None and caller[PC] & ~1 == regs[PC] & ~1 and caller[SP] == regs[SP]:
            out.complete, out.why = True, "the frame is its own caller: the outermost frame (code that never returns)"
            return out
        if not caller[PC] or caller[SP] is None:
            out.complete = not caller[PC]
            out.why = "the return address is 0: the outermost frame" if not caller[PC] else "the SP is unknown"
            return out
        regs = caller
    out.why = f"stopped after {limit} frames"
    return out
