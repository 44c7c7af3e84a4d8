"""Verdicts for firmware where TFLM itself is broken (pure Python, no GDB), each with its evidence:

  stack-into-arena     the stack ran past its limit into the arena's persistent tail
  allocation-failed    AllocateTensors did not finish: the arena is too small (returned an
                       error, or TFLM crashed or hangs reacting to it)
  failure-ignored      AllocateTensors failed and the app went on: its fault comes from the
                       unallocated interpreter
  none                 none of these (the fault decode stands alone)

Inputs: the interpreter's tflmstate.State, the stack's figures.StackFigures, the fault
(ports.Fault or None), where the core is (a Halt), the planner's JSON for the model (schema
planner.SCHEMA, with its `replay` at this arena's size when the tool gives it), and the ELF's
tflmstate.Facts. Every figure is read or predicted elsewhere; this module only ties them together.
"""
from collections.abc import Callable
from dataclasses import dataclass, field

from arenascope_plugin.acquire import planner
from arenascope_plugin.acquire.reader import MemoryReader, MemoryReadError
from arenascope_plugin.acquire.symbols import short_name
from arenascope_plugin.analyse import figures, verdicts
from arenascope_plugin.decode import tflmstate
from arenascope_plugin.ports import Fault

ALLOCATE = "AllocateTensors"
ABORT_FUNCTIONS = ("AbortImpl", "abort", "_exit", "__assert_func", "__stack_chk_fail", "tflite::AbortImpl")


@dataclass
class Halt:
    """Where the core is stopped, as GDB's unwinder shows it."""
    pc: int | None = None
    function: str = ""                               # the function at the PC ("" unknown)
    frames: list[str] = field(default_factory=list)  # functions newest first, through exception frames
    in_handler: str | None = None                    # the exception being handled (IPSR), e.g. "HardFault"
    spinning: bool = False                           # the instruction at the PC branches to itself
    complete: bool = True                            # frames reach the outermost caller (Core.frames_complete)

    @property
    def in_allocate_tensors(self) -> bool:
        return any(ALLOCATE in f for f in self.frames)

    @property
    def aborted(self) -> bool:
        """Whether the PC is in TFLITE_ABORT's function (or the C library's abort)."""
        return any(short_name(self.function).endswith(a) for a in ABORT_FUNCTIONS)

    @property
    def stuck(self) -> bool:
        return self.spinning or self.aborted


@dataclass
class Verdict:
    kind: str                 # one of analyse/verdicts.KINDS
    headline: str             # "VERDICT: ..." in one sentence or three
    evidence: list[str] = field(default_factory=list)
    smashed: list[dict] = field(default_factory=list)   # [{"name", "addr", "size", "why"}] top down
    reach: int | None = None  # stack-into-arena: the deepest address the stack wrote (not in the JSON)

    def lines(self) -> list[str]:
        """The headline, then the evidence and the overwritten objects, a line each."""
        return [self.headline] + self.evidence + [f"overwritten: {o['name']} at {o['addr']:#x} ({o['size']} B): "
                                                  f"{o['why']}" for o in self.smashed]

    def json(self) -> dict:
        return {"kind": self.kind, "headline": self.headline, "evidence": self.evidence, "smashed": self.smashed}


def stuck_line(halt: Halt) -> str | None:
    """Where and why the core is stuck, or None when it is not."""
    if not halt.stuck:
        return None
    chain = " <- ".join(halt.frames[1:6]) if len(halt.frames) > 1 else "no callers known"
    if halt.aborted:
        why = ("TFLM's TFLITE_ABORT / a failed TFLITE_DCHECK: abort() loops forever on a board (TFLM's "
               "AbortImpl), it never returns")
    elif halt.in_handler:
        why = f"a {halt.in_handler} handler's endless loop (`while (1) {{}}`): the fault came first"
    else:
        why = "a loop that branches to itself: the code waits here forever"
    return (f"the core is stuck at {halt.pc:#x} in {halt.function or '??'}: {why}; called from: {chain}"
            if halt.pc is not None else f"the core is stuck: {why}")


def replay_at(plan: dict | None, size: int | None) -> dict:
    """The planner's replay of TFLM's allocation (`arenascope-plan --arena-size`, the JSON's
    `replay`) when it is for an arena of `size` bytes, else {}."""
    replay = (plan or {}).get("replay") or {}
    return replay if replay.get("arena_bytes") == size else {}


def tail_bytes_at(plan: dict | None, size: int | None) -> int | None:
    """The persistent tail TFLM builds in an arena of `size` bytes: the replay's when AllocateTensors
    fits at that size, else the planner's at its recommended size (equal when both ends are
    16-byte aligned), or None."""
    replay = replay_at(plan, size)
    if replay.get("fits"):
        return replay.get("tail_bytes")
    return (plan or {}).get("tail", {}).get("bytes")


def replay_disagrees(state: tflmstate.State | None, plan: dict | None, allocator: int | None) -> str | None:
    """Why the planner's replay is not this firmware's TFLM (another model, other kernels, another
    TFLM than the planner replays), from what TFLM itself holds where AllocateTensors did not lay
    the arena out; None when nothing contradicts it. Facts the target keeps whole, in the
    MicroInterpreter (outside the arena): the MicroAllocator's address (`allocator`), which the
    replay's constructor steps fix from the arena's end, and the input/output TfLiteTensor*
    arrays' addresses, the tail's last requests, which every request before them moves; and,
    when AllocateTensors failed at this size in the replay too, the allocator's frozen marks
    (head_, temp_, tail_)."""
    if state is None or not plan or state.arena_base is None or not state.arena_size:
        return None
    base, size = state.arena_base, state.arena_size
    predicted = {role: a for a, _n, _w, role in tail_layout(plan, base, size)}
    held = {planner.ROLE_MICRO_ALLOCATOR: ("MicroAllocator", allocator),
            "input-tensor-array": ("input TfLiteTensor* array", state.io_tensors.get("input_tensors_")),
            "output-tensor-array": ("output TfLiteTensor* array", state.io_tensors.get("output_tensors_"))}
    for role, (what, at) in held.items():
        if at and predicted.get(role) is not None and predicted[role] != at:
            return f"the replay puts the {what} at {predicted[role]:#x}, TFLM put it at {at:#x}"
    s, want = state.allocator, replay_at(plan, size).get("state")
    if state.condition == "unfinished" and s and want and (replay_at(plan, size).get("failed")):
        got = {k: s[k + "_"] - s["buffer_head_"] for k in ("head", "temp", "tail")}
        if any(got[k] != want.get(k) for k in got):
            return (f"the target's allocator is frozen at head_ +{got['head']}, temp_ +{got['temp']}, tail_ "
                    f"+{got['tail']}, the replay stops at head_ +{want.get('head')}, temp_ +{want.get('temp')}, "
                    f"tail_ +{want.get('tail')}")
    return None


def tail_layout(plan: dict | None, base: int, size: int) -> list[tuple[int, int, str, str]]:
    """[(address, size, what, role)] of the tail objects TFLM allocates for the plan's model, top down,
    placed in the arena [base, base + size): from the planner's replay at this size when it gives
    one, else from its tail at the recommended size moved to this end (exact when the arena's end
    is 16-byte aligned, as TFLM lays the tail out from the end)."""
    replay = replay_at(plan, size)
    if replay:
        # Fits: the tail at this size; does not: the persistent requests TFLM made before it stopped.
        placed = replay.get("tail_regions") if replay.get("fits") else replay.get("persistent")
        regions = [(base + t["offset"], t["size"], t["what"], t["role"]) for t in placed or []]
    else:
        end = (plan or {}).get("arena", {}).get("recommended_bytes")
        if not end or (base + size) % 16:
            return []
        regions = [(base + size - (end - t["offset"]), t["size"], t["what"], t["role"])
                   for t in (plan or {}).get("tail", {}).get("regions", [])]
    return sorted(regions, key=lambda r: -r[0])


def _smashed_words(reader, facts, addr, size, limit=4):
    """[(address, value, why)] of the first `limit` words in [addr, addr + size) that hold stack
    values."""
    found = ((a, v, tflmstate.stack_value(facts, v, reader))
             for a, v in tflmstate.words(reader, addr, size))
    return [w for w in found if w[2]][:limit]


def _dangling(reader, facts, addr, size, role, state):
    """['X holds V, a pointer into no memory ...'] for a pointer array (planner.POINTER_ARRAY_ROLES:
    every word a pointer TFLM set) whose words point nowhere: such a word is not TFLM's."""
    if role not in planner.POINTER_ARRAY_ROLES or not (facts.flash or facts.ram):
        return []
    arena = (state.arena_base, state.arena_base + state.arena_size) if state.arena_base is not None else None
    return [f"{a:#x} holds {v:#x}, which points into no memory of the ELF, where TFLM keeps a pointer"
            for a, v in tflmstate.words(reader, addr, size) if tflmstate.points(facts, v, arena) == "nowhere"][:2]


def _tie(f, smashed_values, objects, reader=None):
    """The line tying the fault's address or a stacked register to a word the stack left in an
    overwritten object, or None. Strongest first:
    1. a stacked register the faulting access went through holds such a word (its value is at most
       255 B below the faulting address) - the code loaded the stack's word as a pointer;
    2. a stacked register points into an overwritten object, whose word a member offset from it
       is at most 255 B below the faulting address (the nearest member first);
    3. the faulting address inside an object the stack overwrote, or a stack word at most 255 B
       below it (any alignment);
    4. the faulting address is a word read through a pointer the stack left (the code followed
       two pointers), read through `reader`;
    then 3 for the stacked registers."""
    if f is None:
        return None
    far, addr = f.fault_address or ("", None)
    regs = f.argument_registers
    saved = f.port.register_word
    if addr is not None:
        tied = _tie_through_register(f, smashed_values, objects)
        if tied:
            return tied
    candidates = [(f"the faulting address ({far})", addr)] if addr is not None else []
    candidates += [(f"{saved} {n}", v) for n, v in regs]
    # Without the faulting address (a RAM dump without the SCB, an imprecise fault) a register is
    # only a candidate: which one the faulting access went through is not known.
    maybe = "" if addr is not None else (f" (no faulting address is known, {f.port.fault_address_names()}: which "
                                         "register the faulting "
                                         "access used is not, so this is a candidate, not the culprit)")
    for k, (what, value) in enumerate(candidates):
        for o in objects:
            if o["addr"] <= value < o["addr"] + o["size"]:
                return (f"{what} {value:#x} is inside {o['name']} (+{value - o['addr']}), which the stack overwrote"
                        + (maybe if k >= len(candidates) - len(regs) else ""))
        # Any alignment: the stack writes bytes and halfwords too (a char array, a packed struct), and
        # a word read from an unaligned offset of them is as much a stack value as an aligned one.
        near = [(value - word, at, word, obj) for at, word, obj in smashed_values if 0 <= value - word < 256]
        if near:  # the nearest below: a member offset away from the pointer TFLM loaded
            delta, at, word, obj = min(near)
            if addr is None or k > 0:
                return (f"{what} {value:#x} is {word:#x}{' + ' + str(delta) if delta else ''}: the value the stack "
                        f"left at {at:#x} in {obj}, perhaps loaded as one of TFLM's pointers and followed" + maybe)
            return (f"{what} {value:#x} is {word:#x}{' + ' + str(delta) if delta else ''}: the value the stack left "
                    f"at {at:#x} in {obj}, loaded as one of TFLM's pointers and followed")
        if k == 0 and addr is not None and reader is not None:
            two = _through_a_stack_pointer(reader, addr, smashed_values)
            if two:
                return f"{what} {addr:#x} {two}"
    return None


def _tie_through_register(f, smashed_values, objects):
    """_tie's first two ways, for fault f with a faulting address: the line saying a stacked register
    the faulting access went through held a word the stack left, or points into an overwritten
    object whose word the access followed; or None."""
    far, addr = f.fault_address
    regs = f.argument_registers
    saved = f.port.register_word
    for name, v in regs:
        if not 0 <= addr - v < 256:
            continue
        held = [(at, obj) for at, w, obj in smashed_values if w == v]
        if held:
            near = [(at - r, at, obj, rn, r) for at, obj in held for rn, r in regs if 0 <= at - r < 64]
            at, obj = (min(near)[1], min(near)[2]) if near else held[0]
            via = f" ({saved} {min(near)[3]} {min(near)[4]:#x} points at it)" if near else ""
            return (f"the faulting address ({far}) {addr:#x} is {saved} {name} {v:#x}"
                    + (f" + {addr - v}" if addr != v else "") + f": {name} held {v:#x}, the word the stack left "
                    f"at {at:#x} in {obj}{via}: the code loaded it as one of TFLM's pointers and followed it")
    for name, reg in regs:
        o = next((o for o in objects if o["addr"] <= reg < o["addr"] + o["size"]), None)
        if o is None:
            continue
        held = [(at - reg, addr - w, at, w) for at, w, obj in smashed_values
                if obj.split(".")[0] == o["name"] and 0 <= addr - w < 256 and 0 <= at - reg < 64]
        if held:
            _k, delta, at, w = min(held)
            return (f"the faulting address ({far}) {addr:#x} is "
                    + (f"{w:#x} + {delta}" if delta else "that word") + f": {saved} {name} {reg:#x} points into "
                    f"{o['name']}, whose word at {at:#x} now holds {w:#x} (the stack's, not TFLM's); the code "
                    "loaded it as a pointer and " + (f"read {delta} B past it" if delta else "read through it"))
    return None


def _through_a_stack_pointer(reader, addr, smashed_values):
    """How addr is a word read through a pointer the stack left (the code loaded the stack's word
    as a pointer, then a pointer from there), or None: a readable word within 64 B of it at most 255
    B below addr."""
    for at, w, obj in smashed_values:
        if not w:
            continue
        try:
            data = reader.read(w, 64)  # from the pointer itself: a struct's members are at w + 4 k, aligned or not
        except (MemoryReadError, ValueError, OverflowError):
            continue
        found = [(addr - v, w + o, v) for o in range(0, 61, 4)
                 if 0 <= addr - (v := int.from_bytes(data[o:o + 4], "little")) < 256]
        if found:
            delta, p, v = min(found)
            return ((f"is {v:#x} + {delta}: the word at {p:#x}" if delta else f"is the word at {p:#x}")
                    + f", read through {w:#x}, "
                    f"the value the stack left at {at:#x} in {obj}: the code loaded that as one of TFLM's pointers "
                    "and followed it twice")
    return None


# A function's address -> (frame bytes, LR's offset from the CFA, its name), or None: the ELF's call
# frame information (analyse/faults.frame_of, the port's frame_layout: ports/cortex_m/unwind.py).
FrameLayout = Callable[[int], tuple[int, int, str] | None]


def deepest_evidence(reader: MemoryReader, facts: tflmstate.Facts, limit: int, below: list[tuple[int, int]],
                     reach: tuple[int, int, str] | None, pre_sp: int | None,
                     frame_layout: FrameLayout | None = None) -> tuple[int, str] | None:
    """(address, what it is) of the deepest sign of the stack below its limit `limit`, from the
    words `below` it (read once by the caller, ascending): the lowest frame a stacked return
    address implies (the callee the BL before it calls pushed LR at a known slot of a frame of
    known size: the ELF's call frame information through frame_layout), the lowest stack value
    (`reach`: tflmstate.stack_reach over the same words), and the SP at the fault when it was
    below the limit. None when there is none."""
    found = []
    if pre_sp is not None and pre_sp < limit:
        found.append((pre_sp, f"the SP at the fault, {pre_sp:#x}"))
    if reach is not None:
        found.append((reach[0], f"the lowest stack value below the limit, at {reach[0]:#x} ({reach[2]})"))
    if frame_layout is not None:
        for at, value in below:
            if not tflmstate.stack_value(facts, value, reader):
                continue
            try:
                layout = frame_layout(value)
            except MemoryReadError:
                layout = None
            if layout is None:
                continue
            cfa = at - layout[1]               # LR is saved at CFA + layout[1] (a negative offset)
            bottom = cfa - layout[0]
            if bottom <= at and (not found or bottom < min(found)[0]):
                found.append((bottom, f"the frame of {layout[2]} ({layout[0]} B, the ELF's call frame information), "
                              f"which pushed the return address {value:#x} at {at:#x}: its SP was {bottom:#x}"))
            break  # the lowest return address implies the lowest frame
    return min(found) if found else None


def stack_into_arena(reader: MemoryReader, facts: tflmstate.Facts, state: tflmstate.State | None,
                     stack: figures.StackFigures | None, f: Fault | None,
                     plan: dict | None, who: str = "the stack",
                     frame_layout: FrameLayout | None = None) -> Verdict | None:
    """The stack-into-arena Verdict, or None when the stack stayed above its limit. who: the
    stack's name in the headline (an RTOS task's, "task 'infer''s stack"); frame_layout: how big
    a function's frame is (the port's frame_layout: ports/cortex_m/unwind.py), for the reach a
    return address implies."""
    if stack is None or state is None or state.arena_base is None:
        return None
    end = state.arena_base + state.arena_size
    if not state.arena_base < end <= stack.low or stack.low - end > 1024:
        return None   # the arena is not right below the stack
    paint_gone = stack.hwm is not None and stack.painted and stack.hwm <= stack.low
    tail = tail_layout(plan, state.arena_base, state.arena_size)
    tail_bytes = (plan or {}).get("tail", {}).get("bytes") or min(state.arena_size, 4096)
    scan_from = max(state.arena_base, end - tail_bytes)
    below = tflmstate.words(reader, scan_from, stack.low - scan_from)  # read once, for both scans below
    reach = tflmstate.stack_reach(reader, facts, stack.low, scan_from, below)
    pre_sp = f.pre_fault_sp if f is not None else None
    deepest = deepest_evidence(reader, facts, stack.low, below, reach, pre_sp, frame_layout)
    # Paint left at the limit does not clear the stack: a frame keeps it in the locals it never
    # writes, so the words at the limit can be painted while frames below hold return addresses.
    # Only the stack's own values below the limit (or the paint gone to it) say it went past.
    if not paint_gone and deepest is None:
        return None   # no stack value below the limit, and paint left (or none to tell by)
    lowest = deepest[0] if deepest else None
    evidence = [_paint_line(stack, paint_gone) + f" (stack {stack.low:#x}-{stack.high:#x}); the arena "
                f"{state.arena_symbol or ''} ends at {end:#x}, {stack.low - end} B below it"]
    objects, values = _overrun_objects(reader, facts, state, tail, lowest)
    if not reach and not state.smashed and (pre_sp is None or pre_sp >= stack.low):
        return None
    into = ""
    if lowest is not None:
        past = stack.low - lowest
        inside = end - lowest
        at = next((o for o in objects if o["addr"] <= lowest < o["addr"] + o["size"]), None)
        into = (f"{inside} B into the arena" + (f", down into {at['name']} (+{lowest - at['addr']} of it)" if at
                                                  else "")) if inside > 0 else "not into the arena"
        evidence.append(f"the deepest evidence is {deepest[1]}: the stack reached {past} B past its limit, "
                        f"{into} (the arena ends {stack.low - end} B below the limit)")
    if reach and (lowest is None or reach[0] != lowest):
        evidence.append(f"the lowest stack value below the limit is at {reach[0]:#x} ({reach[2]})")
    tie = _tie(f, values, objects, reader)
    if tie:
        evidence.append(tie)
    names = ", ".join(o["name"] for o in objects[:4]) + (f" and {len(objects) - 4} more" if len(objects) > 4 else "")
    headline = (f"VERDICT: {who} ran into the arena: "
                + (f"{stack.low - lowest} B past its limit, {into}, " if lowest is not None else "past its limit ")
                + (f"over TFLM's persistent tail ({names}), " if objects else "")
                + "so TFLM now reads stack words as its own pointers. "
                f"Give the stack at least {figures.rule_text()} x its peak before the arena's end, or move the arena "
                "away from the stack.")
    return Verdict(verdicts.STACK_INTO_ARENA, headline, evidence, objects, reach=lowest)


def _paint_line(stack: figures.StackFigures, paint_gone: bool) -> str:
    """What the stack's paint says of how deep it went (evidence of the stack-into-arena verdict)."""
    if stack.unread:
        return f"the stack could not be read ({stack.unread}), so its paint tells nothing; limit {stack.low:#x}"
    if paint_gone:
        return f"the stack paint is gone down to the stack's limit {stack.low:#x}"
    if stack.hwm is not None and stack.painted:
        return (f"paint is left near the stack's limit {stack.low:#x} (the lowest word that lost it is at "
                f"{stack.hwm:#x}), but a frame keeps paint in the locals it never writes, so it does not show how "
                "deep the stack went")
    return f"no stack paint left anywhere in the stack (all of it used, or never painted), limit {stack.low:#x}"


def _overrun_objects(reader: MemoryReader, facts: tflmstate.Facts, state: tflmstate.State, tail: list,
                     lowest: int | None) -> tuple[list[dict], list[tuple]]:
    """([{name, addr, size, why}] highest first, [(addr, value, what)]) of TFLM's tail objects the
    stack ran over down to `lowest` (the plan's tail layout), and of those TFLM's checks found
    broken but the plan did not place; the values are their words now, for the fault's tie."""
    objects, values = [], []
    for addr, size, what, role in tail:
        if lowest is None or addr + size <= lowest:
            continue
        check = next((c for c in state.smashed if c.addr == addr or (c.role and c.role == role)), None)
        words = _smashed_words(reader, facts, addr, size)
        bad = _dangling(reader, facts, addr, size, role, state)
        why = "; ".join(check.problems) if check is not None else \
            "; ".join([f"{a:#x} holds {w}" for a, _, w in words[:2]] + bad)
        objects.append({"name": what, "addr": addr, "size": size,
                        "why": why or "in the range the stack ran over (its words may be the stack's, or still "
                                      "TFLM's)"})
        start = max(addr, lowest)
        values += [(a, v, what) for a, v in tflmstate.words(reader, start, addr + size - start)]
    for c in state.smashed:  # objects the checks found broken but the plan did not place
        if not any(o["addr"] == c.addr for o in objects):
            objects.append({"name": c.name, "addr": c.addr, "size": c.size, "why": "; ".join(c.problems)})
            values += [(a, v, f"{c.name}.{c.at[a]}" if a in c.at else c.name)
                       for a, v in tflmstate.words(reader, c.addr, c.size)]
    objects.sort(key=lambda o: -o["addr"])
    return objects, values


def damaged(state: tflmstate.State | None, stack: figures.StackFigures | None,
            others: list[Verdict]) -> Verdict | None:
    """The tflm-damaged Verdict: TFLM's objects do not hold TFLM's values and no other verdict
    explains it (the stack kept paint at its limit), or None."""
    if state is None or state.condition not in ("smashed", "unknown") or others or not state.interpreter:
        return None
    bad = state.smashed
    if not bad:
        return None
    first = min(bad, key=lambda o: o.addr)
    # The word to watch: the member the first problem names (an object's vtable pointer is at +0).
    watch = next((a for a, m in sorted(first.at.items()) if first.problems[0].startswith(m + " ")), first.addr)
    stack_ok = stack is not None and stack.hwm is not None and stack.painted and stack.hwm > stack.low
    headline = ("VERDICT: TFLM's objects no longer hold TFLM's values (" + ", ".join(o.name for o in bad) + "), "
                + ("and the stack did not do it (its paint is left at its limit): " if stack_ok else
                   "and nothing shows the stack did it: ")
                + "something else wrote over them (a buffer overrun, a stray pointer, DMA). To catch the writer, "
                f"watch the first overwritten word and run again: `watch -l *(unsigned int *){watch & ~3:#x}` "
                "(a hardware watchpoint).")
    return Verdict(verdicts.TFLM_DAMAGED, headline, list(state.evidence),
                   [{"name": o.name, "addr": o.addr, "size": o.size, "why": "; ".join(o.problems)} for o in bad])


def replay_lines(plan: dict | None, size: int | None) -> tuple[str, list[str], dict | None, int | None]:
    """(headline part, evidence lines, outcome) from the planner's replay at `size`, or from its
    minimum alone."""
    arena = (plan or {}).get("arena") or {}
    minimum, recommended = arena.get("minimum_bytes"), arena.get("recommended_bytes")
    replay = replay_at(plan, size)
    evidence, outcome, failing = [], None, ""
    if replay.get("failed"):
        fl = replay["failed"]
        failing = (f"At {size} B, {fl['what']}, in {fl['phase'].removeprefix('AllocateTensors: ')}, does not fit"
                   + (f": TFLM prints \"{fl['message']}\"" if fl.get("message") else ""))
        outcome = replay.get("outcome") or {}
        evidence.append(f"the planner's replay of TFLM's allocations at {size} B stops at {fl['what']} in "
                        f"{fl['phase']}: {fl['bytes']} B asked, {fl['available']} B available"
                        + (f"; TFLM prints \"{fl['message']}\"" if fl.get("message") else ""))
        st = replay.get("state") or {}
        if st:
            evidence.append(f"predicted frozen state: head_ +{st.get('head')}, temp_ +{st.get('temp')}, "
                            f"tail_ +{st.get('tail')}")
    short = None
    if minimum and minimum > size:
        short = minimum - size
    if short is None:
        return failing, evidence, outcome, minimum
    text = ((failing + ". " if failing else "") +
            f"The arena is {size} B and this model needs {minimum} B with these kernels: {short} B short"
            + (f"; an arena of {minimum} B works ({recommended} B recommended with a "
               f"{arena.get('margin_pct', 10)} % margin)" if recommended else ""))
    if not arena.get("exact", True):
        text += " (the minimum is a floor: some kernels are not modelled)"
    return text, evidence, outcome, minimum


def _cause(how: str) -> str:
    """The replay's outcome cut to its cause, when TFLM did not return: "X cannot give Y, so Z
    returns kTfLiteError and so does AllocateTensors" says how a returned failure goes on, which a
    crash or a hang inside AllocateTensors contradicts."""
    return how.split(", so ")[0]


def _io_tie(reader, f, state):
    """The line tying the fault to what input(i)/output(i) return when their arrays are null (the
    word at address 4*i, taken as a TfLiteTensor*), or None."""
    if f is None or reader is None or any(state.io_tensors.values()):
        return None
    candidates = ([("the faulting address", f.fault_address[1])] if f.fault_address else []) + \
        [(f"{f.port.register_word} {n}", v) for n, v in f.argument_registers]
    for i in range(4):
        try:
            bogus = int.from_bytes(reader.read(4 * i, 4), "little")
            fields = tflmstate.words(reader, bogus, 32)
        except MemoryReadError:
            continue
        for what, value in candidates:
            if value is None:
                continue
            if 0 <= value - bogus < 64:
                return (f"{what} {value:#x} is {bogus:#x}{' + ' + str(value - bogus) if value != bogus else ''}: "
                        f"input({i})/output({i}) returned the word at address {4 * i:#x} ({bogus:#x}) as a "
                        "TfLiteTensor*")
            for at, word in fields:
                if word == value and word:
                    return (f"{what} {value:#x} is the word at {at:#x}, a field of the 'TfLiteTensor' input({i}) / "
                            f"output({i}) returned (the word at address {4 * i:#x}, {bogus:#x}): the app used a tensor "
                            "that does not exist")
    return None


def allocation(state: tflmstate.State | None, f: Fault | None, halt: Halt, plan: dict | None,
               reader: MemoryReader | None = None) -> Verdict | None:
    """The allocation-failed or failure-ignored Verdict, or None when AllocateTensors finished or
    never started. `reader`: target memory, to tie a fault to input(i)/output(i)'s bogus tensor."""
    if state is None or state.condition != "unfinished":
        return None
    size = state.arena_size
    text, evidence, outcome, minimum = replay_lines(plan, size)
    evidence = list(state.evidence) + evidence + _frozen_line(state, replay_at(plan, size).get("state"))
    stuck = stuck_line(halt) if halt else None
    said = text + "." if text else ""
    if state.constructor_failed:
        headline = ("VERDICT: the arena is too small for TFLM's own allocator objects: the MicroInterpreter's "
                    "constructor could not allocate them, and AllocateTensors can only fail after it. " + said)
        return Verdict(verdicts.ALLOCATION_FAILED, headline, evidence + ([stuck] if stuck else []))
    how = (outcome or {}).get("how")
    fails = bool(replay_at(plan, size).get("failed")) or (minimum is not None and size is not None and size < minimum)
    inside = halt is not None and halt.in_allocate_tensors
    if inside and f is None and not halt.stuck and plan and not fails:
        # Stopped inside AllocateTensors (a breakpoint, a step) on an arena the replay says is big
        # enough: it is not finished yet, and nothing says it will not finish.
        return None
    if inside:
        return _inside_allocate_tensors(f, halt, how, said, evidence, stuck)
    unplaced = _unplaced(f, halt, how, said, evidence, stuck)
    if unplaced is not None:
        return unplaced
    ignored = _failure_ignored(state, f, halt, plan, reader, text, evidence)
    if ignored is not None:
        return ignored
    if said:
        why = said
    elif state.replay_mismatch:
        why = ("the planner's replay does not match this firmware's TFLM, so no shortfall is given (the evidence "
               "says what TFLM's own objects hold).")
    else:
        why = "the planner cannot say why (no model figures for this firmware)."
    if stuck:
        evidence.append(stuck)
    return Verdict(verdicts.ALLOCATION_FAILED,
                   "VERDICT: AllocateTensors did not finish: it returned kTfLiteError: " + why, evidence)


def _frozen_line(state: tflmstate.State, want: dict | None) -> list[str]:
    """Whether the target's allocator stopped where the planner's replay stops (head_, temp_,
    tail_ from buffer_head_), as an evidence line; none when either is unknown."""
    s = state.allocator or {}
    if not s or not want:
        return []
    got = {k: s[k + "_"] - s["buffer_head_"] for k in ("head", "temp", "tail")}
    if all(got[k] == want.get(k) for k in got):
        return ["the target's allocator is frozen exactly where the replay stops"]
    return [f"the target's allocator (head_ +{got['head']}, temp_ +{got['temp']}, tail_ +{got['tail']}) "
            "is not where the replay stops: another model, other kernels, or another TFLM"]


def _inside_allocate_tensors(f: Fault | None, halt: Halt, how: str | None, said: str, evidence: list[str],
                             stuck: str | None) -> Verdict:
    """The core crashed, hangs or stopped inside AllocateTensors on a too-small arena."""
    reaction = ("TFLM crashed" if f is not None else "TFLM hangs" if halt.stuck else "the core is")
    headline = (f"VERDICT: AllocateTensors did not finish: {reaction} inside it, reacting to a too-small arena"
                + (f" ({_cause(how) if f is not None or halt.stuck else how})" if how else "")
                + ", not a bug elsewhere. " + said)
    if stuck:
        evidence.append(stuck)
    evidence.append("continuing will not get past it: the core is inside AllocateTensors; give the arena the "
                    "size above, rebuild and run again")
    return Verdict(verdicts.ALLOCATION_FAILED, headline, evidence)


def _unplaced(f: Fault | None, halt: Halt, how: str | None, said: str, evidence: list[str],
              stuck: str | None) -> Verdict | None:
    """The verdict when where the core stopped, relative to AllocateTensors, cannot be told: no
    registers at all (a RAM dump), or no unwinder (the PC's function alone); None otherwise."""
    if halt is not None and halt.pc is None and f is None:
        headline = ("VERDICT: AllocateTensors did not finish, reacting to a too-small arena"
                    + (f" ({_cause(how)})" if how else "") + "; where the core stopped is unknown (no registers): it "
                    "returned kTfLiteError, or TFLM crashed or hangs inside it. " + said)
        return Verdict(verdicts.ALLOCATION_FAILED, headline, evidence + [
            "give the registers GDB's `info registers` printed at the stop (--registers FILE) to tell which"])
    if halt is not None and not halt.complete and (f is not None or halt.stuck):
        headline = ("VERDICT: AllocateTensors did not finish, reacting to a too-small arena"
                    + (f" ({_cause(how)})" if how else "") + "; " + (f"this {f.exception or 'fault'}" if f is not None
                                                                   else "the core is stuck") +
                    " may be inside it or after it: the call chain is unknown here (only the PC's function, "
                    f"{halt.function or '??'}), so it cannot tell. " + said)
        return Verdict(verdicts.ALLOCATION_FAILED, headline, evidence + ([stuck] if stuck else []) + [
            "load the ELF with its -g debug information (.debug_frame), or give the registers r0-r12, sp, lr, pc "
            "at the stop, to unwind the call chain"])
    return None


def _failure_ignored(state: tflmstate.State, f: Fault | None, halt: Halt, plan: dict | None,
                     reader: MemoryReader | None, text: str, evidence: list[str]) -> Verdict | None:
    """The failure-ignored verdict: AllocateTensors failed and the application went on (a fault
    from the unallocated interpreter, Invoke on the stack, or AllocateTensors run again); None
    when nothing says the application went on."""
    invoking = halt is not None and any("MicroInterpreter::Invoke" in fr for fr in halt.frames)
    first = replay_at(plan, state.arena_size).get("failed") or {}
    # initialization_status_ turns kTfLiteError only where StartModelAllocation fails: a first
    # failure later than that means AllocateTensors ran again (micro_interpreter.cc).
    later = ("parsing", "Init", "Prepare", "memory planning", "input/output")
    retried = state.init_status == 1 and bool(first) and any(k in first.get("phase", "") for k in later)
    if f is None and not invoking and not retried:
        return None
    ties = [t for t in (_io_tie(reader, f, state),) if t]
    if retried:  # said once, here, with what it means
        evidence = [e for e in evidence if not e.startswith("initialization_status_ is kTfLiteError")]
        ties.append("AllocateTensors ran again after its first failure (initialization_status_ is kTfLiteError, "
                    "which the first failure in " + first.get("phase", "?") + " does not set): the application "
                    "called Invoke (which retries it) or AllocateTensors on the unallocated interpreter")
    headline = ("VERDICT: AllocateTensors failed and the application went on as if it had succeeded: "
                + (f"this {f.exception or 'fault'} comes from the unallocated interpreter. " if f is not None
                   else "the interpreter is unallocated (every Invoke returns kTfLiteError). ")
                + (text + ". " if text else "") + "Check AllocateTensors' status and stop on kTfLiteError.")
    return Verdict(verdicts.FAILURE_IGNORED, headline, evidence + ties)
