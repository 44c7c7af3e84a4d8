"""The fault and its verdict, from the arena's point of view (no GDB: ctx carries the reader,
Symbols and Core of acquire/). Sources: the agent's fault record (decode/faultrecord.py), else
the core's registers and SCB when it is halted in a fault handler (ARMv7-M ARM B1.5.6 for the
stacked frame, B3.2 for the SCB registers); the post-mortem of TFLM's objects in agentless mode
(analyse/postmortem.py)."""
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from arenascope_plugin.acquire import unwind
from arenascope_plugin.acquire.reader import MemoryReader, MemoryReadError
from arenascope_plugin.acquire.symbols import Symbols, short_name
from arenascope_plugin.analyse import agentless, figures, postmortem, tasks, verdicts
from arenascope_plugin.decode import abi, faultrecord, kernels, tflm
from arenascope_plugin.decode.descriptor import Descriptor, Region
from arenascope_plugin.errors import TargetError

# Globals a fault handler commonly saves the stacked frame's address in (MSP or PSP at entry).
FAULT_SP_SYMBOLS = ("g_fault_sp", "fault_sp", "g_hardfault_sp", "hardfault_sp", "HardFault_SP", "g_stacked_sp",
                    "stacked_sp")
# pipeline.Context, what one gather found: the stage above this one, so not imported here.
PipelineContext = Any


def where(symbols: Symbols, pc: int | None, return_address: bool = False) -> str:
    """'address in function at file:line' for a code address: the name from the ELF's symbol
    table (what the linker put there; DWARF ranges of discarded code can claim low addresses),
    the line from the line table. PC 0 is said to be a null pointer."""
    if pc is None:
        return "unknown"
    pc &= ~1
    if pc == 0:
        return "0x0: a null pointer, no code there"
    # A return address is the instruction after the call: look up the call itself (one byte back).
    look = pc - 1 if return_address else pc
    named = symbols.name_at(look)
    name = (named[0] if not named[1] else f"{named[0]} + {named[1]}") if named else None
    line = symbols.line_at(look)
    if line:
        loc = f"{line[0]}:{line[1]}"
    elif symbols.has_debug_info():  # the application's code has lines, this object's does not
        loc = "no line information (the ELF's debug information does not cover this code: its object, such as a " \
              "prebuilt library, was built without -g)"
    else:
        loc = f"no line information (load the unstripped ELF with `file`, or run arm-none-eabi-addr2line -e fw.elf " \
              f"{look:#x})"
    return f"{pc:#x} (return address: the call is at {loc}, in {name or '??'})" if return_address else \
        f"{pc:#x} in {name or '??'} at {loc}"


SCB = {"icsr": 0xE000ED04, "shcsr": 0xE000ED24, "cfsr": 0xE000ED28, "hfsr": 0xE000ED2C, "mmfar": 0xE000ED34,
       "bfar": 0xE000ED38}


def u32(reader: MemoryReader, addr: int) -> int:
    """The little-endian 32-bit word at addr."""
    return int.from_bytes(reader.read(addr, 4), "little")


def live_fault(ctx: PipelineContext, read: Callable[[int, int], bytes] | None = None) -> faultrecord.Fault | None:
    """The fault the core is handling now (halted in a fault handler), from its registers, or None.
    EXC_RETURN is in LR only until the handler saves it: after that it is reported unknown.
    Registers: ctx.core (None while the core runs: then the exception number is ICSR's)."""
    reader, core = ctx.reader, ctx.core
    register = core.register
    xpsr = register("xpsr")
    if not core.is_cortex_m():
        return None  # not a Cortex-M (a host build): no SCB to read
    read = read or reader.read
    if xpsr is None:  # running (or no registers): ICSR's VECTACTIVE says whether a handler runs
        try:
            icsr = int.from_bytes(read(SCB["icsr"], 4), "little")
        except MemoryReadError:
            icsr = ctx.core.register("icsr")  # a RAM dump's registers file may give it
        active = icsr & 0x1FF if icsr is not None else None
    else:
        active = xpsr & 0x1FF
    if active not in faultrecord.EXCEPTIONS:
        return None  # not in a fault handler: nothing more is read (the live poller's every refresh)
    regs, unknown = _scb_words(ctx, read)
    lr = register("lr")
    pc = register("pc")
    # The stacked frame is at SP only at the handler's first instruction: after that the handler
    # may have pushed onto the same stack (LR can still hold EXC_RETURN). Entry = the vector
    # table's entry for this exception, or the agent's naked entry it branches to; with no VTOR to
    # read (a RAM dump), the first instruction of the function the PC is in.
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
    at_entry = pc is not None and (pc & ~1) in entries
    exc = lr if lr is not None and faultrecord.ExcReturn(lr).valid and at_entry else None
    frame_addr, note = None, ""
    if exc is None:
        frame_addr, note = saved_fault_sp(ctx)
        if frame_addr is not None:
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
        else:
            exc, frame_addr, how = _unwound_exception(ctx)
            note = how if frame_addr is not None else \
                ("the frame's address is unknown here: the handler has started (it may have pushed onto the stack, "
                 "and LR may no longer hold EXC_RETURN); " + note + "; " + how + "; or stop at its first instruction "
                 "(`break HardFault_Handler`, `break BusFault_Handler`, ...) and reproduce, or let the agent record "
                 "it (`arena fault` at arenascope_fault_hook)")
    else:
        er = faultrecord.ExcReturn(exc)
        frame_addr = register("psp") if er.psp else register("msp")
        if frame_addr is None and not er.psp:
            frame_addr = register("sp")  # at handler entry SP is MSP and nothing is pushed yet
        if frame_addr is None:
            note = "the frame is on PSP, which this GDB server does not expose (OpenOCD does)"
        elif er.callee_stacked:
            frame_addr, note = frame_addr + faultrecord.CALLEE_CONTEXT_BYTES, faultrecord.CALLEE_NOTE
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
    return faultrecord.Fault(source=source, halted_in_handler=xpsr is not None,
                             exception=faultrecord.EXCEPTIONS[active], cfsr=cfsr, hfsr=hfsr,
                             mmfar=regs["mmfar"] if cfsr >> 7 & 1 else None,
                             bfar=regs["bfar"] if cfsr >> 15 & 1 else None,
                             exc_return=exc, frame_addr=frame_addr, frame=frame, frame_note=note,
                             status_unknown=unknown)


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
    handler's own frames with the ELF's call frame information (acquire/unwind.py): where the
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
        return None, ("no saved stack pointer to use: `set arena fault-sp EXPR` names where the handler saves it "
                      f"(none of {', '.join(FAULT_SP_SYMBOLS)} is in the ELF)")
    return None, "; ".join(tried)


def saved_return_address(ctx: PipelineContext, f: faultrecord.Fault) -> int | None:
    """The return address the faulting function saved on the stack before the fault, where the
    ELF's call frame information says it is at the stacked PC (CFA = the SP before the exception +
    the row's CFA offset), or None: no frame information, a leaf that saved none (then LR is its
    return address), or the SP before the exception is unknown."""
    sp = f.pre_fault_sp
    row = unwind.cfi_of(ctx.symbols).row(f.pc & ~1) if f.pc is not None and sp is not None else None
    rule = row.get(unwind.LR) if row is not None else None
    if row is None or rule is None or rule.type != "OFFSET" or row["cfa"].reg != unwind.SP or row["cfa"].expr:
        return None
    try:
        return u32(ctx.reader, sp + row["cfa"].offset + rule.arg)
    except MemoryReadError:
        return None


def lr_lines(ctx: PipelineContext, f: faultrecord.Fault) -> list[str]:
    """What the stacked LR says, without a label: the call site when the instruction before it is
    a call (BL/BLX) and it is the faulting function's return address; else why it names no caller
    (stale: the function saved its own return address on the stack and LR is what a later call of
    its own left; or LR used as a scratch register), with the caller the saved return address or
    an unwinder gives (GDB's, or the ELF's call frame information over a dump's stack)."""
    lr = f.frame[5]
    saved = saved_return_address(ctx, f)
    if faultrecord.call_before(ctx.reader, lr):
        if saved is None or saved & ~1 == lr & ~1:
            return [where(ctx.symbols, lr, return_address=True)]
        own = ctx.symbols.name_at(f.pc & ~1)
        return [f"{lr:#010x} is stale: a return address from a call the faulting function"
                + (f" ({short_name(own[0])})" if own else "") + " made before the fault, not its caller",
                f"caller: {where(ctx.symbols, saved, return_address=True)}, the return address that function "
                "saved on the stack (the ELF's call frame information)"]
    out = [f"{lr:#010x} is not a return address (the instruction before it is not a call): the function used LR "
           "as a scratch register after saving it, so LR says nothing about the caller"]
    if saved is not None and faultrecord.call_before(ctx.reader, saved):
        return out + [f"caller: {where(ctx.symbols, saved, return_address=True)}, the return address the faulting "
                      "function saved on the stack (the ELF's call frame information)"]
    if f.halted_in_handler:
        frames = halt_of(ctx).frames
        if unwind.EXCEPTION_MARK in frames:
            frames = frames[frames.index(unwind.EXCEPTION_MARK) + 1:]
        if frames[1:]:
            out.append("call chain (the unwinder, from the stacked frame): " + " <- ".join(frames[1:9]))
    return out


def damaged_regions(ctx: PipelineContext, desc: Descriptor | None, rec: faultrecord.Record | None) -> list[Region]:
    """Labels of the immutable regions whose bytes no longer match the checksum the agent took
    after allocation (region checksums: target_agent/include/arenascope/faultrecord.h)."""
    if rec is None or not rec.checksums_addr or not desc or not desc.arenas:
        return []
    reader = ctx.reader
    arena = desc.arenas[0]
    n = min(rec.checksum_count, len(arena.regions))
    # While polling (live), the verdict is cached per boot, fault and region-table generation: the
    # agent takes the checksums once after allocation, and a fault handler that spins changes
    # nothing more; re-hashing every immutable region at each refresh cost ~1.8 KB of reads.
    key = (rec.boot_count, rec.fault_count, rec.fault_boot, rec.checksums_addr, n, desc.layout_generation)
    cached = ctx.cache.get("damaged_regions") if ctx.cache.get("pin") else None
    if cached is not None and cached[0] == key:
        ctx.intact_regions = list(cached[2])
        return list(cached[1])
    try:
        table = reader.read(rec.checksums_addr, 4 * n)
    except MemoryReadError as exc:
        ctx.warn("checksum-table", f"cannot read the region checksum table at {rec.checksums_addr:#x} "
                 f"({exc.why}): no overwritten regions can be named")
        return []
    out, ctx.intact_regions = [], []
    for i in range(n):
        want = int.from_bytes(table[4 * i:4 * i + 4], "little")
        r = arena.regions[i]
        if want and r.size:
            (out if faultrecord.fnv1a(reader.read(arena.base_addr + r.offset, r.size)) != want
             else ctx.intact_regions).append(r)
    if ctx.cache.get("pin"):
        ctx.cache["damaged_regions"] = (key, tuple(out), tuple(ctx.intact_regions))
    return out


def stack_reach(damaged: list[Region], intact: list[Region]) -> tuple[list[Region], list[Region]]:
    """(reached, beyond): a stack grown down into the arena overwrites its tail from the top down, so
    the damaged regions above the topmost checksummed region still intact are ones it reached;
    those below that intact region were, most likely, written by something else (a frame can leave
    a local array unwritten, hence "most likely")."""
    checked = sorted(damaged + intact, key=lambda r: r.end, reverse=True)
    first_intact = next((i for i, r in enumerate(checked) if r in intact), len(checked))
    reached = checked[:first_intact]
    return reached, [r for r in damaged if r not in reached]


def halt_state(ctx: PipelineContext) -> postmortem.Halt:
    """Where the core is stopped (postmortem.Halt): the PC, the unwound call chain (ctx.core's:
    GDB's through exception frames; without GDB only the PC's function), the exception being
    handled and whether the instruction at the PC branches to itself (`b .`: Thumb T2 0xE7FE, or
    B.W . 0xF7FF 0xBFFE; ARMv7-M ARM A7.7.12)."""
    core = ctx.core
    halt = postmortem.Halt(pc=core.register("pc"))
    halt.frames = core.frames()
    halt.function = halt.frames[0] if halt.frames else ""
    halt.complete = core.frames_complete()
    xpsr = core.register("xpsr")
    if xpsr is not None and halt.pc is not None:
        halt.in_handler = faultrecord.EXCEPTIONS.get(xpsr & 0x1FF)
        try:
            code = ctx.reader.read(halt.pc & ~1, 4)
            halt.spinning = code[:2] == b"\xfe\xe7" or code == b"\xff\xf7\xfe\xbf"
        except MemoryReadError:
            pass
    return halt


def constructor_note(ctx: PipelineContext) -> str | None:
    """What to say when the core is inside TFLM's MicroInterpreter constructor (the interpreter
    is not built, so no scan finds it), with the arena size the constructor was given (its
    tensor_arena_size argument, when the debug information gives it), or None."""
    halt = halt_of(ctx)
    if not any("MicroInterpreter::MicroInterpreter" in f for f in halt.frames):
        return None
    args = ctx.core.frame_args("MicroInterpreter::MicroInterpreter", ("tensor_arena_size", "model"))
    size, model_addr = args.get("tensor_arena_size"), args.get("model")
    stuck = postmortem.stuck_line(halt)
    if not stuck:
        return "the core is inside the tflite::MicroInterpreter constructor, so there is no interpreter to read yet"
    text = ""
    if size is not None and model_addr:
        try:  # the model the constructor was given, planned at the size it was given
            doc = agentless.plan_for(ctx.reader, ctx.symbols, tflm.layout(ctx.symbols), model_addr,
                                     ctx.settings.planner, "", arena_size=size, plans=ctx.cache.setdefault("plans", {}),
                                     build=agentless.kernel_build(ctx.symbols, None, ctx.settings.kernels,
                                                                  ctx.settings.cpu))
            text = " " + postmortem.replay_lines(doc, size)[0] + "."
        except (TargetError, MemoryReadError):
            pass
    return (f"VERDICT: the arena is too small for TFLM's own allocator objects: the core is stuck inside the "
            f"tflite::MicroInterpreter constructor (MicroAllocator::Create), which was given {size} B."
            + (text or " `arena plan --model FILE.tflite` gives the arena this model needs.")
            + f" {stuck[0].upper()}{stuck[1:]}")


def halt_of(ctx: PipelineContext) -> postmortem.Halt:
    """halt_state(), unwound once a command (the report, the verdicts and the snapshot share it)."""
    if ctx.halt is None:
        ctx.halt = halt_state(ctx)
    return ctx.halt


def tflm_verdicts(ctx: PipelineContext, f: faultrecord.Fault | None) -> list[postmortem.Verdict]:
    """The post-mortem's Verdicts for an agentless TFLM firmware (postmortem.py), computed once
    for a command's fault (its text and its snapshot both use them)."""
    if ctx.tflm is None or not ctx.tflm.interpreter:
        return []
    if ctx.verdicts is not None and ctx.verdicts[0] is f:
        return ctx.verdicts[1]
    above = tasks.adjacent(ctx.tasks, tasks.fault_task(ctx.tasks, ctx.kernel, f))
    stack = above.stack if above is not None and above.stack is not None else ctx.stack
    found = [postmortem.stack_into_arena(ctx.reader, ctx.facts, ctx.tflm, stack, f, ctx.plan,
                                         who=above.stack_name if stack is not ctx.stack else "the stack",
                                         frame_layout=lambda at: frame_of(ctx.symbols, at)),
             postmortem.allocation(ctx.tflm, f, halt_of(ctx), ctx.plan, ctx.reader)]
    found = [v for v in found if v is not None]
    found += [v for v in (postmortem.damaged(ctx.tflm, ctx.stack, found),) if v is not None]
    # The stack's deepest evidence below its limit is a figure of that stack: its peak, its room
    # and the stack rule count it (paint left at the limit does not show it).
    reach = min((v.reach for v in found if v.kind == verdicts.STACK_INTO_ARENA and v.reach is not None), default=None)
    if stack is not None and reach is not None and reach < stack.low:
        stack.reach_low = reach
    ctx.verdicts = (f, found)
    return found


def frame_of(symbols: Symbols, function: int) -> tuple[int, int, str] | None:
    """(frame bytes, LR's offset from the CFA, name) of the function at `function` from the ELF's
    call frame information (acquire/unwind.frame_layout), or None."""
    layout = unwind.frame_layout(symbols, function)
    if layout is None:
        return None
    named = symbols.name_at(function & ~1)
    return layout[0], layout[1], short_name(named[0]) if named else f"{function:#x}"


@dataclass
class Findings:
    """What arena_verdict found: the verdicts (postmortem.Verdict: kind, headline, evidence),
    then the notes that are facts rather than verdicts (where SP and the faulting address are,
    where the core is stuck), in the order the report prints them."""
    verdicts: list[postmortem.Verdict] = field(default_factory=list)
    sp_note: str | None = None
    stuck_note: str | None = None
    address_note: str | None = None

    @property
    def notes(self) -> list[str]:
        return [n for n in (self.sp_note, self.stuck_note, self.address_note) if n]

    def details(self) -> list[str]:
        """Every line that is not a headline: the SP, each verdict's evidence, the rest."""
        out = [self.sp_note] if self.sp_note else []
        for v in self.verdicts:
            out += v.lines()[1:]
        return out + [n for n in (self.stuck_note, self.address_note) if n]


# The kinds of verdict: analyse/verdicts.py (the registry).
OVERRUN, NOT_ARENA = verdicts.OVERRUN, verdicts.NOT_ARENA
NONE_OF_THESE, UNKNOWN = verdicts.NONE_OF_THESE, verdicts.UNKNOWN
TAIL_OVERWRITTEN, STACK_LIMIT, TASK_OVERFLOW = verdicts.TAIL_OVERWRITTEN, verdicts.STACK_LIMIT, verdicts.TASK_OVERFLOW


INTO_TAIL = ("A stack grown down into the arena overwrites the persistent tail first (TFLM's eval tensors, node "
             "array, op data): the fault comes later, when that data is used.")


def _task_into_arena(ts, damaged: list[Region], on_it: bool) -> postmortem.Verdict:
    """The stack-into-arena Verdict for an RTOS task whose stack sits right above an arena."""
    t = ts.task
    names = ", ".join(f"{figures.region_label(r)} (+{r.offset}..+{r.end})" for r in damaged)
    through = ts.stack is not None and ts.stack.peak_is_lower_bound
    return postmortem.Verdict(
        kind=verdicts.STACK_INTO_ARENA,
        headline=f"VERDICT: {ts.stack_name} ran into the arena. Its 0xA5 fill is gone down to its pxStack "
        f"{t.stack_low:#x}" + (" and the guard band below it is overwritten" if through else "") +
        ("; the fault was taken on that task's stack" if on_it else "") + ". " +
        (f"Persistent tail regions overwritten since allocation: {names}. " if damaged else "") +
        f"{INTO_TAIL} Give the task's stack (its stack depth at "
        f"creation) at least {figures.STACK_RULE_FACTOR:g} x its peak before the arena's end, or move the arena "
        "away from it.")


def _beyond_the_stack(desc, beyond: list[Region], intact: list[Region]) -> postmortem.Verdict:
    """The verdict on damaged tail regions below one the stack left intact (stack_reach's beyond)."""
    low = max(r.end for r in beyond)
    above = min((r for r in intact if r.offset >= low), key=lambda r: r.offset, default=None)
    first = min(beyond, key=lambda r: r.offset)
    return postmortem.Verdict(
        kind=TAIL_OVERWRITTEN,
        headline="VERDICT: tail regions were overwritten below one the stack left intact"
        + (f" ({figures.region_label(above)}, +{above.offset}..+{above.end})" if above else "")
        + ", so most likely not by the stack: "
        + ", ".join(f"{figures.region_label(r)} (+{r.offset}..+{r.end})" for r in beyond)
        + ". A wild write did it (a pointer gone wrong, an overrun of a kernel's op data, DMA): "
        f"`watch -l *(unsigned int *){desc.arenas[0].base_addr + first.offset:#x}` (the lowest changed region's "
        "start) and run again to catch the writer.")


def address_note(ctx: PipelineContext, f: faultrecord.Fault | None) -> str | None:
    """Where the fault's faulting address (BFAR, else MMFAR) lies in the arena, the guard band and
    the stack, or None."""
    addr = f.bfar if f and f.bfar is not None else f.mmfar if f and f.mmfar is not None else None
    if addr is None or not ctx.desc:
        return None
    return "the faulting address: " + "; ".join(figures.whereis(ctx.desc, addr, ctx.stack,
                                                                ctx.symbols.memory_spans()))


def arena_verdict(ctx: PipelineContext, f: faultrecord.Fault | None, damaged: list[Region]) -> Findings:
    """The verdicts from the arena's point of view, for fault f (or None: what the memory says
    without one), with damaged the immutable regions overwritten since allocation."""
    out = Findings()
    desc, s = ctx.desc, ctx.stack
    sp = f.pre_fault_sp if f else None
    if s is not None and sp is not None and s.low <= sp <= s.high:
        out.sp_note = f"SP at the fault {sp:#x} was inside the stack ({s.high - sp} B in use)"
    elif s is not None and sp is not None:
        out.sp_note = ("SP at the fault: " + "; ".join(figures.whereis(desc, sp, s, ctx.symbols.memory_spans()))
                       if desc else
                       f"SP at the fault {sp:#x} is outside the stack {s.low:#x}-{s.high:#x}")
    fault_task = tasks.fault_task(ctx.tasks, ctx.kernel, f)
    if fault_task is not None:
        out.sp_note = tasks.sp_line(fault_task, f, ctx.kernel)
    if ctx.kernel is not None:
        out.stuck_note = tasks.overflow_hook_note(halt_of(ctx).frames, ctx.kernel)
    if ctx.tflm is not None and ctx.tflm.interpreter:
        out.verdicts = list(tflm_verdicts(ctx, f))
        if out.verdicts:
            tied = any(line.startswith("the faulting address") for v in out.verdicts for line in v.evidence)
            out.address_note = None if tied else address_note(ctx, f)
            return out
        out.stuck_note = out.stuck_note or postmortem.stuck_line(halt_of(ctx))
    if f is not None and f.cfsr >> 20 & 1:  # STKOF: the limit stopped the stack before it went further
        armed = desc is not None and not desc.agentless and desc.flags & abi.FLAG_STACK_LIMIT
        on_psp = f.exc_return is not None and f.exc_return >> 2 & 1
        if fault_task is not None:
            t = fault_task.task
            size = f" than its {t.stack_high - t.stack_low} B" if t.stack_high is not None else ""
            headline = (f"VERDICT: {fault_task.stack_name} ran out, and the stack limit register stopped it: "
                        f"PSPLIM, which the scheduler sets to the running task's pxStack {t.stack_low:#x}, so the "
                        f"overflow wrote nothing below it (there: {fault_task.below}). Give the task more "
                        f"stack{size} (its stack depth at creation), or find the deep call: there is no stacked "
                        "frame (the stacking stopped at the limit)")
        else:
            which = (f"MSPLIM, armed by arenascope_fault_stack_limit at the stack's low bound "
                     f"{desc.stack.low_addr:#x}, "
                     "so the overflow wrote nothing below it and the arena is as it was (the fault handler itself ran "
                     "on the guard band below the limit)" if armed and not on_psp else
                     "PSPLIM (the process stack's limit)" if on_psp else "MSPLIM or PSPLIM (not armed by the agent)")
            more = f" than its {s.high - s.low} B" if s is not None and not on_psp else ""
            headline = (f"VERDICT: the stack ran out, and the stack limit register stopped it: {which}. Give the stack "
                        f"more room{more}, or find the deep call: there is no stacked frame (the stacking stopped at "
                        "the limit)")
        out.verdicts.append(postmortem.Verdict(kind=STACK_LIMIT, headline=headline))
        out.address_note = address_note(ctx, f)
        return out
    stack_in_arena = s is not None and s.peak_is_lower_bound
    # A task's stack right above an arena that overflowed: that task did it (the faulting one first).
    task_in = tasks.adjacent([ts for ts in ctx.tasks if ts.sound_overflow], fault_task)
    # The stack cannot have done it when paint is left above its limit and the guard band below
    # it is whole: then the tail was overwritten by something else.
    stack_clear = (s is not None and s.painted and s.hwm is not None and s.hwm > s.low and desc is not None and
                   desc.guard.filled and not desc.guard.touched and task_in is None)
    if damaged and not stack_in_arena and stack_clear:
        names = ", ".join(f"{figures.region_label(r)} (+{r.offset}..+{r.end})" for r in damaged)
        first = min(damaged, key=lambda r: r.offset)
        addr = desc.arenas[0].base_addr + first.offset
        out.verdicts.append(postmortem.Verdict(
            kind=TAIL_OVERWRITTEN,
            headline=f"VERDICT: the persistent tail was overwritten, not by the stack: {names} changed since "
            f"allocation, while the stack's paint is left above its limit {s.low:#x} and the guard band below it "
            "is intact. A wild write did it (a pointer gone wrong, an overrun of a kernel's op data, DMA): "
            f"`watch -l *(unsigned int *){addr:#x}` (the first changed region's start; watch the word that differs) "
            "and run again to catch the writer."))
    elif task_in is not None:
        out.verdicts.append(_task_into_arena(task_in, damaged, task_in is fault_task))
    elif stack_in_arena or damaged:
        reached, beyond = stack_reach(damaged, ctx.intact_regions)
        names = ", ".join(f"{figures.region_label(r)} (+{r.offset}..+{r.end})" for r in reached)
        if stack_in_arena or reached:
            out.verdicts.append(postmortem.Verdict(
                kind=verdicts.STACK_INTO_ARENA,
                headline="VERDICT: the stack ran into the arena. " +
                (f"Its paint is gone to the limit {s.low:#x} and the guard band below it is overwritten. " if
                 stack_in_arena else "") +
                (f"Persistent tail regions overwritten since allocation: {names}. " if reached else "") +
                f"{INTO_TAIL} Give the stack at least {figures.STACK_RULE_FACTOR:g} x its peak before the arena's "
                "end, or move the arena away from the stack."))
        if beyond:
            out.verdicts.append(_beyond_the_stack(desc, beyond, ctx.intact_regions))
    for ts in ctx.tasks:
        if ts.sound_overflow and ts is not task_in:
            out.verdicts.append(postmortem.Verdict(
                kind=TASK_OVERFLOW, headline=f"VERDICT: {ts.stack_name} overflowed"
                + (" (the fault was taken on it)" if ts is fault_task else "") + f": {tasks.overflow_text(ts)}; "
                "what it overwrote there may be what failed"))
    free_damage = [c for c in figures.checks(desc, s, ctx.figs) if c.rule == "canary" and c.verdict == "FAIL"] \
        if desc else []
    for c in free_damage:
        out.verdicts.append(postmortem.Verdict(
            kind=OVERRUN, headline="VERDICT: something wrote past its buffer in the arena: " +
            c.reason.removesuffix(": something wrote past its buffer")))
    out.address_note = address_note(ctx, f)
    if not stack_in_arena and not damaged and not free_damage and f is not None and \
            not any(ts.sound_overflow for ts in ctx.tasks):
        where_ = ("the code that called through the pointer: see LR" if f.pc == 0 else
                  "the code at the stacked PC" if f.frame else
                  "the code that faulted (no stacked frame here to say where)")
        if desc is not None and desc.agentless and ctx.tflm is not None and ctx.tflm.condition == "allocated" and \
                s is not None and s.painted and not s.overflowed:
            out.verdicts.append(postmortem.Verdict(
                kind=NONE_OF_THESE, headline="VERDICT: none of these: the stack stayed above its limit, TFLM's "
                "allocator objects hold TFLM's values and AllocateTensors finished (no agent: no canary bands to "
                f"check for overruns inside the arena); look at {where_}"))
        elif desc is not None and desc.agentless:
            out.verdicts.append(postmortem.Verdict(
                kind=UNKNOWN, headline="VERDICT: unknown whether the arena or the stack did it: with no arenascope "
                "agent there are no canary or guard bands and no region checksums to tell"
                + ("" if s is not None and s.high > s.low and s.painted else ", and the stack's bounds or paint "
                   "are unknown") + f"; look at {where_}"))
        elif desc is None:  # nothing of the arena was read: no claim about it either way
            why = ctx.note or (ctx.tflm.evidence[0] if ctx.tflm is not None and ctx.tflm.evidence else
                               "its bounds are unknown")
            out.verdicts.append(postmortem.Verdict(
                kind=UNKNOWN, headline=f"VERDICT: unknown whether the arena or the stack did it: the arena could not "
                f"be read ({why}); look at {where_}"))
        elif desc is not None and not desc.arenas:
            out.verdicts.append(postmortem.Verdict(
                kind=NOT_ARENA, headline="VERDICT: not the stack: it stayed inside its bounds (no arena is "
                f"published, so only the stack and the guard band were checked); the cause is {where_}"))
        else:
            out.verdicts.append(postmortem.Verdict(
                kind=NOT_ARENA, headline="VERDICT: not the arena and not the stack: the arena's bands and checksums "
                f"are intact and the stack stayed inside its bounds; the cause is {where_}"))
    return out


def _prefetch(reader, pieces):
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


def find_fault(ctx: PipelineContext) -> tuple[faultrecord.Fault | None, list[Region], str]:
    """(Fault or None, damaged immutable regions, why there is no fault): from the agent's record
    when it holds a fault of this boot (or of an earlier one when the core is not in a handler),
    else from the core's registers when it is halted in a fault handler."""
    reader = ctx.reader
    rec, rec_note = None, ""
    rec_addr = ctx.symbols.address("arenascope_fault_record")
    if rec_addr is None and ctx.desc is not None and ctx.desc.fault_record_addr:
        rec_addr = ctx.desc.fault_record_addr
    # While polling, only the record's head is read at each refresh: the agent rewrites the rest only
    # with a new boot or fault, which change the head; the whole record is read (and checked) then.
    pin = bool(ctx.cache.get("pin"))
    first = (faultrecord.HEAD_SIZE if pin else faultrecord.RECORD_MIN_SIZE)
    read = _prefetch(reader, [(rec_addr, first)] if rec_addr is not None else [])
    if rec_addr is not None:
        try:
            head = read(rec_addr, first)[:faultrecord.HEAD_SIZE] if pin else None
            cached = ctx.cache.get("fault_record")
            if pin and cached is not None and cached[0] == (rec_addr, head):
                rec = cached[1]
            else:
                rec = faultrecord.read_record(read if not pin else reader.read, rec_addr)
                if pin:
                    ctx.cache["fault_record"] = ((rec_addr, head), rec)
        except (faultrecord.RecordError, MemoryReadError) as exc:
            rec_note = str(exc)
            ctx.cache.pop("fault_record", None)
    live_f = live_fault(ctx, read)
    # The region checksums are re-computed over every immutable region: at a stop always (an
    # overwritten tail is the stack's trace even before a fault), while polling only for a fault.
    want_damage = not ctx.cache.get("pin") or live_f is not None or (rec is not None and rec.fault_count)
    damaged = damaged_regions(ctx, ctx.desc, rec) if ctx.desc is not None and want_damage else []
    f = None
    if rec is not None and rec.fault_count and (live_f is None or rec.fault_boot == rec.boot_count):
        f = faultrecord.from_record(rec)
        this_boot = rec.fault_boot == rec.boot_count
        if this_boot and live_f is None and _status_clear(reader):
            # The fault status registers are clear: the core has reset since, and the agent has not
            # counted the new boot yet (halted before arenascope_fault_boot).
            f.stale = True
            f.source = (f"the agent's fault record at {rec_addr:#x}, from before a reset (the fault status "
                        "registers are clear now: the target has reset since; the agent has not counted this "
                        "boot yet)")
        else:
            f.stale = not this_boot
            if this_boot and f.frame is None and f.frame_note == faultrecord.CALLEE_NOTE:
                try:  # the basic frame above the callee-saved context, still on the stack this boot
                    f.frame = [u32(reader, f.frame_addr + 4 * i) for i in range(8)]
                except MemoryReadError as exc:
                    f.frame_note += f", but it is unreadable ({exc.why})"
            f.source = (f"the agent's fault record at {rec_addr:#x} (this boot, fault {rec.fault_count})" if this_boot
                        else f"the agent's fault record at {rec_addr:#x}, from boot {rec.fault_boot} "
                             f"(this is boot {rec.boot_count}: the target has reset since)")
    elif live_f is not None:
        f = live_f
        if rec is not None and rec.fault_count and rec.fault_boot != rec.boot_count:
            f.source += f"; the agent's record holds an older fault from boot {rec.fault_boot}"
        if rec_note:
            f.source += f"; the agent's record was not used: {rec_note}"
    if f is not None and not f.stale:
        _secure_status(ctx, f)
    note = rec_note or ("the agent's record has no fault this boot" if rec else
                        "there is no agent fault record (arenascope_fault_record)")
    return f, damaged, note


def _status_clear(reader: MemoryReader) -> bool:
    """True when CFSR and HFSR read 0 (the core has reset since the fault); False when a bit is
    set or the SCB cannot be read (a RAM dump holds no SCB: the record's boot count decides)."""
    try:
        return not (u32(reader, SCB["cfsr"]) or u32(reader, SCB["hfsr"]))
    except MemoryReadError:
        return False


def _secure_status(ctx: PipelineContext, f: faultrecord.Fault) -> None:
    """SFSR and SFAR into f on an ARMv8-M Mainline core (sticky until software clears them; read as
    zero from the Non-secure state, so nothing then)."""
    if not (arch_of(ctx.symbols) or "").startswith("v8"):  # v8-M Baseline and Mainline, v8.1-M
        return
    try:
        sfsr = u32(ctx.reader, faultrecord.SFSR)
        if sfsr & 0xFF:
            f.sfsr = sfsr
            f.sfar = u32(ctx.reader, faultrecord.SFAR) if sfsr >> 6 & 1 else None
    except MemoryReadError:
        pass


def baseline_access(ctx: PipelineContext, f: faultrecord.Fault) -> str | None:
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
