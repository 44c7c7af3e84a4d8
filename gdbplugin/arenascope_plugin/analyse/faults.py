"""The fault's verdicts, from the arena's point of view (no GDB: ctx carries the reader, Symbols
and Core of acquire/, and the architecture port, ctx.port). What they judge is read elsewhere: the
agent's fault record, the core's registers when it is halted in a fault or trap handler, the
region checksums and where the core is stopped by ports/faultread.py (decoded by the port:
ports/); the post-mortem of TFLM's objects in agentless mode by analyse/postmortem.py. Nothing
here names a register: a Fault's neutral fields say it all."""
from dataclasses import dataclass, field
from typing import Any

from arenascope_plugin.acquire.reader import MemoryReadError
from arenascope_plugin.acquire.symbols import Symbols, short_name
from arenascope_plugin.analyse import figures, modelplan, postmortem, tasks, verdicts
from arenascope_plugin.decode import abi, tflm
from arenascope_plugin.decode.descriptor import Region
from arenascope_plugin.errors import TargetError
from arenascope_plugin.ports import Fault, faultread

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
    code = symbols.memory_map()["code"] if named is None and not line else None
    if code and not any(lo <= look < hi for lo, hi in code):
        # No function and no code section there: not code the ELF holds (a wild jump).
        return f"{pc:#x}: not code: the ELF has no code there (a jump through a corrupted pointer or return address)"
    if line:
        loc = f"{line[0]}:{line[1]}"
    elif symbols.has_debug_info():  # the application's code has lines, this object's does not
        loc = "no line information (the ELF's debug information does not cover this code: its object, such as a " \
              "prebuilt library, was built without -g)"
    else:
        loc = f"no line information (load the unstripped ELF with `file`, or run your toolchain's addr2line -e " \
              f"fw.elf {look:#x})"
    return f"{pc:#x} (return address: the call is at {loc}, in {name or '??'})" if return_address else \
        f"{pc:#x} in {name or '??'} at {loc}"


def lr_lines(ctx: PipelineContext, f: Fault) -> list[str]:
    """What the return address register at the fault says, without a label: the call site when
    the instruction before it is a call (the port decodes it) and it is the faulting function's
    return address; else why it names no caller (stale: the function saved its own return address
    on the stack and the register holds what a later call of its own left; or it was used as a
    scratch register), with the caller the saved return address or an unwinder gives (GDB's, or
    the ELF's call frame information over a dump's stack)."""
    port, lr, name = f.port, f.return_address, f.port.return_register.upper()
    saved = port.saved_return_address(ctx, f)
    if port.call_before(ctx.reader, lr):
        if saved is None or port.code_address(saved) == port.code_address(lr):
            return [where(ctx.symbols, lr, return_address=True)]
        own = ctx.symbols.name_at(port.code_address(f.pc))
        return [f"{lr:#010x} is stale: a return address from a call the faulting function"
                + (f" ({short_name(own[0])})" if own else "") + " made before the fault, not its caller",
                f"caller: {where(ctx.symbols, saved, return_address=True)}, the return address that function "
                "saved on the stack (the ELF's call frame information)"]
    out = [f"{lr:#010x} is not a return address (the instruction before it is not a call): the function used "
           f"{name} as a scratch register after saving it, so {name} says nothing about the caller"]
    if saved is not None and port.call_before(ctx.reader, saved):
        return out + [f"caller: {where(ctx.symbols, saved, return_address=True)}, the return address the faulting "
                      "function saved on the stack (the ELF's call frame information)"]
    if f.halted_in_handler:
        frames = halt_of(ctx).frames
        if port.exception_mark in frames:
            frames = frames[frames.index(port.exception_mark) + 1:]
        if frames[1:]:
            out.append(f"call chain (the unwinder, from {port.frame_phrase}): " + " <- ".join(frames[1:9]))
    return out


# A frame can leave bytes between its locals and its saved registers unwritten: up to its ABI's stack
# alignment less a word (12 B under the RISC-V psABI's 16: 64 B of locals and ra make an 80-byte frame).
# A checksummed region smaller than that alignment can lie wholly in such a gap, so its being intact
# does not show where the stack stopped.
STACK_GAP_BYTES = 16


def _stops_the_stack(r: Region, intact: list[Region]) -> bool:
    return r in intact and r.size >= STACK_GAP_BYTES


def stack_reach(damaged: list[Region], intact: list[Region]) -> tuple[list[Region], list[Region]]:
    """(reached, beyond): a stack grown down into the arena overwrites its tail from the top down, so
    the damaged regions above the topmost checksummed region still intact (of STACK_GAP_BYTES or
    more: a smaller one may sit in a frame's padding) are ones it reached; those below that intact
    region were, most likely, written by something else (a frame can leave a local array unwritten,
    hence "most likely")."""
    checked = sorted(damaged + intact, key=lambda r: r.end, reverse=True)
    first_intact = next((i for i, r in enumerate(checked) if _stops_the_stack(r, intact)), len(checked))
    reached = [r for r in checked[:first_intact] if r not in intact]
    return reached, [r for r in damaged if r not in reached]


def halt_state(ctx: PipelineContext) -> postmortem.Halt:
    """Where the core is stopped (postmortem.Halt), as the port reads it (ports/faultread.read_halt):
    the PC, the unwound call chain, the exception or trap being handled and whether the
    instruction at the PC branches to itself."""
    return faultread.read_halt(ctx, postmortem.Halt())


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
            doc = modelplan.plan_for(ctx.reader, ctx.symbols, tflm.layout(ctx.symbols), model_addr,
                                     ctx.settings.planner, "", arena_size=size, plans=ctx.cache.setdefault("plans", {}),
                                     build=modelplan.kernel_build(ctx.symbols, None, ctx.settings.kernels,
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


def tflm_verdicts(ctx: PipelineContext, f: Fault | None) -> list[postmortem.Verdict]:
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
                                         frame_layout=lambda at: frame_of(ctx, at)),
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


def frame_of(ctx: PipelineContext, return_address: int) -> tuple[int, int, str] | None:
    """(frame bytes, the return address's offset from the CFA, name) of the function the call
    before `return_address` calls (the port decodes the call), from the ELF's call frame
    information (the port's frame_layout), or None (no such call, or no frame information)."""
    symbols, port = ctx.symbols, ctx.port
    function = port.call_target(ctx.reader, return_address)
    layout = port.frame_layout(symbols, function) if function is not None else None
    if layout is None:
        return None
    named = symbols.name_at(ctx.port.code_address(function))
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
    corrupt_note: str | None = None   # the descriptor fields not believed, so what was not judged

    @property
    def notes(self) -> list[str]:
        return [n for n in (self.sp_note, self.stuck_note, self.address_note, self.corrupt_note) if n]

    def details(self) -> list[str]:
        """Every line that is not a headline: the SP, each verdict's evidence, the rest."""
        out = [self.sp_note] if self.sp_note else []
        for v in self.verdicts:
            out += v.lines()[1:]
        return out + [n for n in (self.stuck_note, self.address_note, self.corrupt_note) if n]


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
    above = min((r for r in intact if r.offset >= low and _stops_the_stack(r, intact)), key=lambda r: r.offset,
                default=None)
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


def address_note(ctx: PipelineContext, f: Fault | None) -> str | None:
    """Where the fault's faulting address (the port's: BFAR or MMFAR, mtval, EXCVADDR) lies in the
    arena, the guard band and the stack, or None."""
    got = f.fault_address if f is not None else None
    if got is None or not ctx.desc:
        return None
    addr = got[1]
    return "the faulting address: " + "; ".join(figures.whereis(ctx.desc, addr, ctx.stack,
                                                                ctx.symbols.memory_spans()))


def arena_verdict(ctx: PipelineContext, f: Fault | None, damaged: list[Region]) -> Findings:
    """The verdicts from the arena's point of view, for fault f (or None: what the memory says
    without one), with damaged the immutable regions overwritten since allocation."""
    out = Findings()
    fault_task = _notes(ctx, f, out)
    if ctx.tflm is not None and ctx.tflm.interpreter:
        out.verdicts = list(tflm_verdicts(ctx, f))
        if out.verdicts:
            tied = any(line.startswith("the faulting address") for v in out.verdicts for line in v.evidence)
            out.address_note = None if tied else address_note(ctx, f)
            return out
        out.stuck_note = out.stuck_note or postmortem.stuck_line(halt_of(ctx))
    if f is not None and f.stack_limit_stopped:  # the limit stopped the stack before it went further
        out.verdicts.append(_stack_limit_verdict(ctx, f, fault_task))
        out.address_note = address_note(ctx, f)
        return out
    desc, s = ctx.desc, ctx.stack
    stack_in_arena = s is not None and s.peak_is_lower_bound
    # A task's stack right above an arena that overflowed: that task did it (the faulting one first).
    task_in = tasks.adjacent([ts for ts in ctx.tasks if ts.sound_overflow], fault_task)
    out.verdicts.extend(_damage_verdicts(ctx, damaged, stack_in_arena, task_in, fault_task))
    for ts in ctx.tasks:
        if ts.sound_overflow and ts is not task_in:
            out.verdicts.append(postmortem.Verdict(
                kind=TASK_OVERFLOW, headline=f"VERDICT: {ts.stack_name} overflowed"
                + (" (the fault was taken on it)" if ts is fault_task else "") + f": {tasks.overflow_text(ts)}; "
                "what it overwrote there may be what failed"))
    free_damage = figures.canary_damage(desc, ctx.figs) if desc else []
    for c in free_damage:
        out.verdicts.append(postmortem.Verdict(
            kind=OVERRUN, headline="VERDICT: something wrote past its buffer in the arena: " +
            c.reason.removesuffix(": something wrote past its buffer")))
    out.address_note = address_note(ctx, f)
    if not stack_in_arena and not damaged and not free_damage and f is not None and \
            not any(ts.sound_overflow for ts in ctx.tasks):
        out.verdicts.append(_nothing_found_verdict(ctx, f))
    return out


def _notes(ctx: PipelineContext, f: Fault | None, out: Findings):
    """Sets out's notes on the descriptor's corruption, SP at the fault and a stuck overflow hook;
    returns the RTOS task the fault was taken in (tasks.fault_task), or None."""
    desc, s = ctx.desc, ctx.stack
    if desc is not None and desc.corrupt:
        out.corrupt_note = ("the arenascope descriptor is corrupt (" + ", ".join(c.field for c in desc.corrupt) +
                            "): " + "; ".join(_not_judged_here(c) for c in desc.corrupt) +
                            " (`arena check` names the values and the watchpoint that catches the writer)")
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
    return fault_task


def _stack_limit_verdict(ctx: PipelineContext, f: Fault, fault_task) -> postmortem.Verdict:
    """The verdict when the core's stack limit stopped the stack (f.stack_limit_stopped): of the
    faulting task's stack, else of the main or thread stack."""
    desc, s = ctx.desc, ctx.stack
    armed = desc is not None and not desc.agentless and desc.flags & abi.FLAG_STACK_LIMIT
    on_psp = bool(f.on_thread_stack)
    limit, port = f.port.stack_limit_register, f.port
    if fault_task is not None:
        t = fault_task.task
        size = f" than its {t.stack_high - t.stack_low} B" if t.stack_high is not None else ""
        headline = (f"VERDICT: {fault_task.stack_name} ran out, and {port.limit_name} stopped it: "
                    f"{limit(True)}, which the scheduler sets to the running task's pxStack {t.stack_low:#x}, so "
                    "the "
                    f"overflow wrote nothing below it (there: {fault_task.below}). Give the task more "
                    f"stack{size} (its stack depth at creation), or find the deep call: {port.limit_frame_note}")
    else:
        which = (f"{limit(False)}, armed by arenascope_fault_stack_limit at the stack's low bound "
                 f"{desc.stack.low_addr:#x}, "
                 f"so the overflow wrote nothing below it and the arena is as it was {port.limit_handler_note}"
                 if armed and not on_psp else
                 f"{limit(True)} (the thread stack's limit)" if on_psp else
                 f"{limit(None)} (not armed by the agent)")
        more = f" than its {s.high - s.low} B" if s is not None and not on_psp else ""
        headline = (f"VERDICT: the stack ran out, and {port.limit_name} stopped it: {which}. Give the stack "
                    f"more room{more}, or find the deep call: {port.limit_frame_note}")
    return postmortem.Verdict(kind=STACK_LIMIT, headline=headline)


def _damage_verdicts(ctx: PipelineContext, damaged: list[Region], stack_in_arena: bool, task_in,
                     fault_task) -> list[postmortem.Verdict]:
    """The verdicts on the overwritten tail regions (damaged) and a stack in the arena: a wild
    write, a task's stack run into the arena (task_in), or the stack run into it."""
    desc, s = ctx.desc, ctx.stack
    # The stack cannot have done it when paint is left above its limit and the guard band below
    # it is whole: then the tail was overwritten by something else.
    stack_clear = (s is not None and s.painted and s.hwm is not None and s.hwm > s.low and desc is not None and
                   desc.guard.filled and not desc.guard.touched and task_in is None)
    out: list[postmortem.Verdict] = []
    if damaged and not stack_in_arena and stack_clear:
        names = ", ".join(f"{figures.region_label(r)} (+{r.offset}..+{r.end})" for r in damaged)
        first = min(damaged, key=lambda r: r.offset)
        addr = desc.arenas[0].base_addr + first.offset
        out.append(postmortem.Verdict(
            kind=TAIL_OVERWRITTEN,
            headline=f"VERDICT: the persistent tail was overwritten, not by the stack: {names} changed since "
            f"allocation, while the stack's paint is left above its limit {s.low:#x} and the guard band below it "
            "is intact. A wild write did it (a pointer gone wrong, an overrun of a kernel's op data, DMA): "
            f"`watch -l *(unsigned int *){addr:#x}` (the first changed region's start; watch the word that differs) "
            "and run again to catch the writer."))
    elif task_in is not None:
        out.append(_task_into_arena(task_in, damaged, task_in is fault_task))
    elif stack_in_arena or damaged:
        reached, beyond = stack_reach(damaged, ctx.intact_regions)
        names = ", ".join(f"{figures.region_label(r)} (+{r.offset}..+{r.end})" for r in reached)
        if stack_in_arena or reached:
            out.append(postmortem.Verdict(
                kind=verdicts.STACK_INTO_ARENA,
                headline="VERDICT: the stack ran into the arena. " +
                (f"Its paint is gone to the limit {s.low:#x} and the guard band below it is overwritten. " if
                 stack_in_arena else "") +
                (f"Persistent tail regions overwritten since allocation: {names}. " if reached else "") +
                f"{INTO_TAIL} Give the stack at least {figures.STACK_RULE_FACTOR:g} x its peak before the arena's "
                "end, or move the arena away from the stack."))
        if beyond:
            out.append(_beyond_the_stack(desc, beyond, ctx.intact_regions))
    return out


def _nothing_found_verdict(ctx: PipelineContext, f: Fault) -> postmortem.Verdict:
    """The verdict for fault f when neither the arena nor the stack shows damage: none of these,
    unknown (no agent, no arena read, a corrupt descriptor) or not the arena."""
    desc, s = ctx.desc, ctx.stack
    where_ = (f"the code that called through the pointer: see {f.port.return_register.upper()}" if f.pc == 0 else
              f"the code at {f.port.pc_phrase}" if f.frame else
              "the code that faulted (no stacked frame here to say where)")
    if desc is not None and desc.agentless and ctx.tflm is not None and ctx.tflm.condition == "allocated" and \
            s is not None and s.painted and not s.overflowed:
        return postmortem.Verdict(
            kind=NONE_OF_THESE, headline="VERDICT: none of these: the stack stayed above its limit, TFLM's "
            "allocator objects hold TFLM's values and AllocateTensors finished (no agent: no canary bands to "
            f"check for overruns inside the arena); look at {where_}")
    if desc is not None and desc.agentless:
        return postmortem.Verdict(
            kind=UNKNOWN, headline="VERDICT: unknown whether the arena or the stack did it: with no arenascope "
            "agent there are no canary or guard bands and no region checksums to tell"
            + ("" if s is not None and s.high > s.low and s.painted else ", and the stack's bounds or paint "
               "are unknown") + f"; look at {where_}")
    if desc is None:  # nothing of the arena was read: no claim about it either way
        why = ctx.note or (ctx.tflm.evidence[0] if ctx.tflm is not None and ctx.tflm.evidence else
                           "its bounds are unknown")
        return postmortem.Verdict(
            kind=UNKNOWN, headline=f"VERDICT: unknown whether the arena or the stack did it: the arena could not "
            f"be read ({why}); look at {where_}")
    if any(c.rules for c in desc.corrupt):  # the bands' own words are not believed
        fields = " and ".join(c.field for c in desc.corrupt if c.rules)
        overflowed = (" The stack did overflow: its paint is gone down to its limit "
                      f"{s.low:#x}, so what lies below it may be what failed." if s is not None and s.overflowed
                      else "")
        return postmortem.Verdict(
            kind=UNKNOWN, headline=f"VERDICT: unknown whether the arena or the stack did it: the descriptor's "
            f"{fields} is corrupt, so the checks resting on it could not tell.{overflowed} Look at {where_}")
    if not desc.arenas:
        return postmortem.Verdict(
            kind=NOT_ARENA, headline="VERDICT: not the stack: it stayed inside its bounds (no arena is "
            f"published, so only the stack and the guard band were checked); the cause is {where_}")
    return postmortem.Verdict(
        kind=NOT_ARENA, headline="VERDICT: not the arena and not the stack: the arena's bands and checksums "
        f"are intact and the stack stayed inside its bounds; the cause is {where_}")


def _not_judged_here(c) -> str:
    """What a corrupt descriptor field keeps `arena fault` from telling (Corruption.rules)."""
    if "plan" in c.rules:
        return "no region is known, so overwritten tail regions and the objects pointers lead into cannot be named"
    if "stack" in c.rules:
        return "the stack's high-water mark is not known"
    if "guard" in c.rules:
        return "whether the guard band and the free band were overwritten is not known"
    return "its bits are not believed"
