"""The Cortex-M port's reads at a stop: whether the core is in a fault handler and the fault it
took, from its registers and the System Control Block (ARMv7-M ARM B1.5.6 for the stacked frame,
B3.2 for the SCB registers, ARMv8-M ARM D1.2 for SFSR/SFAR), the frame found where a handler saved
its SP or by unwinding with the ELF's call frame information, and what the code at the PC says.
ctx is the pipeline's Context (reader, symbols, core, settings, cache). No GDB import."""
from collections.abc import Callable
from typing import Any

from arenascope_plugin.acquire import cfi as dwarf_cfi
from arenascope_plugin.acquire.reader import MemoryReader, MemoryReadError
from arenascope_plugin.acquire.symbols import Symbols
from arenascope_plugin.decode import kernels
from arenascope_plugin.ports import Fault
from arenascope_plugin.ports.cortex_m import faultrecord, unwind
from arenascope_plugin.remedy import Remedy

PipelineContext = Any  # pipeline.Context: the stage above, so not imported here

# Globals a fault handler commonly saves the stacked frame's address in (MSP or PSP at entry).
FAULT_SP_SYMBOLS = ("g_fault_sp", "fault_sp", "g_hardfault_sp", "hardfault_sp", "HardFault_SP", "g_stacked_sp",
                    "stacked_sp")


# ctx.cache's key for why ICSR could not be read by live_fault (a lost link, a server that answers
# nothing): the port then says the core's state is unknown, not "no fault".
ICSR_UNREAD = "cortex-m icsr unread"

SCB = {"icsr": 0xE000ED04, "shcsr": 0xE000ED24, "cfsr": 0xE000ED28, "hfsr": 0xE000ED2C, "mmfar": 0xE000ED34,
       "bfar": 0xE000ED38}


def u32(reader: MemoryReader, addr: int) -> int:
    """The little-endian 32-bit word at addr."""
    return int.from_bytes(reader.read(addr, 4), "little")


def live_fault(ctx: PipelineContext, port, read: Callable[[int, int], bytes] | None = None) -> Fault | None:
    """The fault the core is handling now (halted in a fault handler), from its registers, or None.
    EXC_RETURN is in LR only until the handler saves it: after that it is reported unknown.
    Registers: ctx.core (None while the core runs: then the exception number is ICSR's)."""
    reader, core = ctx.reader, ctx.core
    register = core.register
    xpsr = register("xpsr")
    if not core.is_cortex_m():
        return None  # not a Cortex-M (a host build): no SCB to read
    read = read or reader.read
    ctx.cache.pop(ICSR_UNREAD, None)
    active = _active_exception(ctx, read, xpsr)
    if active not in faultrecord.EXCEPTIONS:
        return None  # not in a fault handler: nothing more is read (the live poller's every refresh)
    regs, unknown = _scb_words(ctx, read)
    lr = register("lr")
    pc = register("pc")
    at_entry = pc is not None and (pc & ~1) in _handler_entries(ctx, active, pc)
    exc = lr if lr is not None and faultrecord.ExcReturn(lr).valid and at_entry else None
    if exc is None:
        exc, frame_addr, note = _frame_past_entry(ctx, lr)
    else:
        frame_addr, note = _frame_at_entry(ctx, exc)
    frame = None
    if frame_addr is not None and not (regs["cfsr"] or 0) & (1 << 4 | 1 << 12):
        try:
            frame = [int.from_bytes(reader.read(frame_addr + 4 * i, 4), "little") for i in range(8)]
        except MemoryReadError as exc_:
            note = f"the stacked frame is unreadable ({exc_})"
    source = ("the registers file (xPSR's exception number: halted in the handler)" if reader.origin else
              "core registers (halted in the handler)") if xpsr is not None else \
        "the SCB's registers (the core is running inside the handler: ICSR's VECTACTIVE; halt it for its registers)"
    cfsr, hfsr = regs["cfsr"] or 0, regs["hfsr"] or 0
    status = faultrecord.Status(cfsr=cfsr, hfsr=hfsr, mmfar=regs["mmfar"] if cfsr >> 7 & 1 else None,
                                bfar=regs["bfar"] if cfsr >> 15 & 1 else None, exc_return=exc,
                                arch=arch_of(ctx.symbols))
    return Fault(port=port, source=source, halted_in_handler=xpsr is not None,
                 exception=faultrecord.EXCEPTIONS[active], status=status, frame_addr=frame_addr, frame=frame,
                 frame_note=note, status_unknown=unknown)


def _active_exception(ctx: PipelineContext, read: Callable[[int, int], bytes], xpsr: int | None) -> int | None:
    """The exception number the core is in: xPSR's, or while it runs ICSR's VECTACTIVE (None when
    ICSR cannot be read either: why is kept in ctx.cache[ICSR_UNREAD])."""
    if xpsr is not None:
        return xpsr & 0x1FF
    try:
        icsr = int.from_bytes(read(SCB["icsr"], 4), "little")
    except MemoryReadError as exc:
        icsr = ctx.core.register("icsr")  # a RAM dump's registers file may give it
        if icsr is None:
            ctx.cache[ICSR_UNREAD] = exc.why  # then whether a handler runs is unknown (state_unknown)
    return icsr & 0x1FF if icsr is not None else None


def _handler_entries(ctx: PipelineContext, active: int, pc: int | None) -> set[int]:
    """The addresses of the handler's first instruction for exception active.
    The stacked frame is at SP only at the handler's first instruction: after that the handler
    may have pushed onto the same stack (LR can still hold EXC_RETURN). Entry = the vector
    table's entry for this exception, or the agent's naked entry it branches to; with no VTOR to
    read (a RAM dump), the first instruction of the function the PC is in."""
    reader = ctx.reader
    entries = set()
    try:
        vtor = u32(reader, 0xE000ED08)
        entries.add(u32(reader, vtor + 4 * active) & ~1)
    except MemoryReadError:
        named = ctx.symbols.name_at(pc & ~1) if pc is not None else None
        if named is not None and named[1] == 0:
            entries.add(pc & ~1)
    agent_entry = ctx.symbols.address("arenascope_fault_handler")
    if agent_entry is not None:
        entries.add(agent_entry & ~1)
    return entries


def _frame_past_entry(ctx: PipelineContext, lr: int | None) -> tuple[int | None, int | None, str]:
    """(EXC_RETURN or None, the stacked frame's address or None, a note on how it was found) once
    the handler has started: from the SP the handler saved, else by unwinding with the ELF's CFI."""
    frame_addr, note = saved_fault_sp(ctx)
    if frame_addr is None:
        exc, frame_addr, how = _unwound_exception(ctx)
        note = how if frame_addr is not None else \
            ("the frame's address is unknown here: the handler has started (it may have pushed onto the stack, "
             "and LR may no longer hold EXC_RETURN); " + note + "; " + how + "; or stop at its first instruction "
             "(`break HardFault_Handler`, `break BusFault_Handler`, ...) and reproduce, or let the agent record "
             "it (`arena fault` at arenascope_fault_hook)")
        return exc, frame_addr, note
    # The handler saved SP; EXC_RETURN may still be in LR (nothing but an exception entry
    # writes such a value there), else where the ELF's CFI says the handler saved it.
    held = lr if lr is not None and faultrecord.ExcReturn(lr).valid else None
    found, at, _ = (None, None, "") if held is not None else _unwound_exception(ctx)
    exc = held if held is not None else found if at == frame_addr else None
    if exc is not None:
        note = note.replace("(EXC_RETURN is gone from LR: the frame is taken as a basic 32 B one)",
                            f"(EXC_RETURN {exc:#x} is still in LR)" if held is not None else
                            f"(EXC_RETURN {exc:#x} is where the handler saved it, by the ELF's call frame "
                            "information)")
        if faultrecord.ExcReturn(exc).callee_stacked:
            frame_addr, note = frame_addr + faultrecord.CALLEE_CONTEXT_BYTES, note + "; " + \
                faultrecord.CALLEE_NOTE
    return exc, frame_addr, note


def _frame_at_entry(ctx: PipelineContext, exc: int) -> tuple[int | None, str]:
    """(the stacked frame's address or None, a note) at the handler's first instruction, with
    EXC_RETURN exc in LR: MSP or PSP as it says."""
    register = ctx.core.register
    note = ""
    er = faultrecord.ExcReturn(exc)
    frame_addr = register("psp") if er.psp else register("msp")
    if frame_addr is None and not er.psp:
        frame_addr = register("sp")  # at handler entry SP is MSP and nothing is pushed yet
    if frame_addr is None:
        note = "the frame is on PSP, which this GDB server does not expose (OpenOCD does)"
    elif er.callee_stacked:
        frame_addr, note = frame_addr + faultrecord.CALLEE_CONTEXT_BYTES, faultrecord.CALLEE_NOTE
    return frame_addr, note


def _scb_words(ctx: PipelineContext, read: Callable[[int, int], bytes]) -> tuple[dict[str, int | None], str]:
    """({SCB word: value or None}, why some are unknown or ""): read from target memory, else (a
    RAM dump holds no System Control Block) from the core's registers when its source gives them
    (a dump's registers file may: acquire/dumpcore.SCB_WORDS)."""
    out, missing = {}, []
    for name, addr in SCB.items():
        try:
            out[name] = int.from_bytes(read(addr, 4) if name == "icsr" else ctx.reader.read(addr, 4), "little")
        except MemoryReadError:
            out[name] = ctx.core.register(name)
            if out[name] is None:
                missing.append(name.upper())
    unknown = [n for n in missing if n in ("CFSR", "HFSR")]
    where = "a RAM dump holds no System Control Block" if ctx.reader.origin else \
        "the System Control Block cannot be read here"
    why = "" if not unknown else (
        f"{' and '.join(unknown)} unknown: {where}"
        " (read them at the crash, `x/2wx 0xE000ED28`, and add lines `cfsr 0x...` and `hfsr 0x...` to the "
        "registers file)")
    return out, why


def _unwound_exception(ctx: PipelineContext) -> tuple[int | None, int | None, str]:
    """(EXC_RETURN, the basic frame's address, how it was found or why not) by unwinding the
    handler's own frames with the ELF's call frame information (ports/cortex_m/unwind.py): where the
    handler saved LR (EXC_RETURN) and the SP it was entered with."""
    names = [f"r{i}" for i in range(13)] + ["sp", "lr", "pc", "psp"]
    regs = {n: v for n in names if (v := ctx.core.register(n)) is not None}
    got = unwind.unwind(ctx.symbols, ctx.reader.read, regs, limit=4)
    if got.exc_return is None:
        return None, None, ("unwinding the handler with the ELF's call frame information found no EXC_RETURN "
                            f"({got.why})")
    return got.exc_return, got.exc_frame, (f"EXC_RETURN {got.exc_return:#x} and the frame's address {got.exc_frame:#x} "
                                           "are where the handler saved them, found by unwinding its frames with the "
                                           "ELF's call frame information")


def saved_fault_sp(ctx: PipelineContext) -> tuple[int | None, str]:
    """(frame address, note) from where a fault handler saved the SP at entry: `set arena
    fault-sp EXPR`, else the first of FAULT_SP_SYMBOLS the ELF has. The address is taken only when
    the frame there looks stacked: xPSR's Thumb bit (bit 24) set (ARMv7-M ARM B1.5.6). (None, why)
    otherwise."""
    reader = ctx.reader
    tried = []
    if ctx.settings.fault_sp is not None:  # (the expression, its value or why it has none), from the front end
        exprs = [ctx.settings.fault_sp]
    else:
        exprs = []
        for name in (n for n in FAULT_SP_SYMBOLS if ctx.symbols.address(n) is not None):
            try:
                exprs.append((name, u32(reader, ctx.symbols.address(name))))
            except MemoryReadError as e:
                exprs.append((name, f"{name} is not readable ({e.why})"))
    for expr, value in exprs:
        if isinstance(value, str):
            tried.append(value)
            continue
        try:
            xpsr = u32(reader, value + 28)
        except MemoryReadError as e:
            tried.append(f"{expr} = {value:#x} is not readable ({e.why})")
            continue
        if not xpsr >> 24 & 1:
            tried.append(f"{expr} = {value:#x} holds no stacked frame (its xPSR word {xpsr:#x} lacks the Thumb bit)")
            continue
        return value, (f"the frame's address is {expr} ({value:#x}), saved by the handler (EXC_RETURN is gone from "
                       "LR: the frame is taken as a basic 32 B one)")
    if not exprs:
        return None, (f"no saved stack pointer to use: {Remedy('fault-sp', 'EXPR'):q} names where the handler saves it "
                      f"(none of {', '.join(FAULT_SP_SYMBOLS)} is in the ELF)")
    return None, "; ".join(tried)



def saved_return_address(ctx: PipelineContext, f: Fault) -> int | None:
    """The return address the faulting function saved on the stack before the fault, where the
    ELF's call frame information says it is at the stacked PC (CFA = the SP before the exception +
    the row's CFA offset), or None: no frame information, a leaf that saved none (then LR is its
    return address), or the SP before the exception is unknown."""
    pc = f.pc & ~1 if f.pc is not None else None
    return dwarf_cfi.saved_return_address(ctx.symbols, lambda a: u32(ctx.reader, a), pc, f.pre_fault_sp,
                                          unwind.SP, unwind.LR)



def prefetch(reader, pieces):
    """A read(addr, length) that serves ICSR and `pieces` from one batched read when the reader
    batches (OpenOCD's Tcl: one round trip instead of two while polling), else reads as asked."""
    pieces = [(SCB["icsr"], 4)] + list(pieces)
    got = {}
    if hasattr(reader, "read_many"):
        try:
            got = dict(zip(pieces, reader.read_many(pieces), strict=False))
        except MemoryReadError:
            got = {}  # one piece unreadable: each is read alone below, and says so alone

    def read(addr, length):
        return got[(addr, length)] if (addr, length) in got else reader.read(addr, length)
    return read



def status_clear(reader: MemoryReader) -> bool:
    """True when CFSR and HFSR read 0 (the core has reset since the fault); False when a bit is
    set or the SCB cannot be read (a RAM dump holds no SCB: the record's boot count decides)."""
    try:
        return not (u32(reader, SCB["cfsr"]) or u32(reader, SCB["hfsr"]))
    except MemoryReadError:
        return False


def secure_status(ctx: PipelineContext, f: Fault) -> None:
    """SFSR and SFAR into f on an ARMv8-M Mainline core (sticky until software clears them; read as
    zero from the Non-secure state, so nothing then)."""
    if not (arch_of(ctx.symbols) or "").startswith("v8"):  # v8-M Baseline and Mainline, v8.1-M
        return
    try:
        sfsr = u32(ctx.reader, faultrecord.SFSR)
        if sfsr & 0xFF:
            f.status.sfsr = sfsr
            f.status.sfar = u32(ctx.reader, faultrecord.SFAR) if sfsr >> 6 & 1 else None
    except MemoryReadError:
        pass


def baseline_access(ctx: PipelineContext, f: Fault) -> str | None:
    """On a core with no CFSR (ARMv6-M, ARMv8-M Baseline): what the faulting instruction, read from
    target memory at the stacked PC, says (faultrecord.baseline_access_line), or None."""
    if not f.frame or arch_of(ctx.symbols) not in faultrecord.BASELINE_ARCHS:
        return None
    try:
        halfword = int.from_bytes(ctx.reader.read(f.pc & ~1, 2), "little")
    except MemoryReadError:
        return None
    return faultrecord.baseline_access_line(halfword, f.frame)


def arch_of(symbols: Symbols) -> str | None:
    """The firmware's M-profile architecture from its ELF's build attributes (Tag_CPU_arch: "v6-M",
    "v7E-M", "v8-M.mainline", ...), read once per ELF; None without them."""
    if "cpu-arch" not in symbols.memo:
        attrs, _why = symbols.build_attributes()
        symbols.memo["cpu-arch"] = kernels.arch_from_attributes(attrs) if attrs else None
    return symbols.memo["cpu-arch"]
