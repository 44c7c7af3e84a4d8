"""The RAM map before flashing, from the ELF alone: every RAM section, the heap, the tensor arena
and the stack where the linker put them, and the stack rule judged with the stack's worst case
from the code (analyse/stackdepth.py) in place of the measured peak. Units: bytes.

The rule is the `stack` check's (analyse/figures.py): room = the stack's top - the arena's end,
room >= STACK_RULE_FACTOR (1.5) x the stack's worst case. From it:
- largest_arena = stack top - ceil(1.5 x worst) - the arena's start: the largest arena at its
  place that keeps the rule;
- needed_top = the arena's start + the arena the model needs + ceil(1.5 x worst): where the stack's
  top must be for that arena (the model's need comes from the planner: its minimum arena).
The arena is found as: the object the user names; else a RAM section whose name holds "arena"
(.tensor_arena); else the largest RAM object whose name holds "arena". Without one the arena is
on the heap or placed at run time, and its place is judged on the board (`arena stack`)."""
import math
from dataclasses import dataclass, field

from arenascope_plugin.acquire import elfinfo
from arenascope_plugin.analyse import figures

PASS, WARN, FAIL = figures.PASS, figures.WARN, figures.FAIL


@dataclass
class Area:
    lo: int
    hi: int
    what: str            # ".bss", "the tensor arena (tensor_arena)", "the stack (__StackLimit/__StackTop)"
    kind: str            # "section", "arena", "stack", "heap", "guard"


@dataclass
class Budget:
    """The RAM map and the rule's verdict. worst: the main stack's worst case (None: not known);
    floor: the worst case is a floor (recursion, unresolved calls, unknown frames); verdict: PASS,
    WARN or FAIL with reason and advice; problem: why there is no map."""
    areas: list[Area] = field(default_factory=list)
    arena: Area | None = None
    stack: Area | None = None
    worst: int | None = None
    floor: bool = False
    unbounded: str = ""
    room: int | None = None
    required_room: int | None = None
    gap: int | None = None
    largest_arena: int | None = None
    needed_arena: int | None = None
    needed_top: int | None = None
    verdict: str = WARN
    reason: str = ""
    problem: str = ""


def _arena(path: str, ram: list, named: str | None) -> tuple[Area | None, str]:
    objects = [(n, v, z) for n, v, z, _type in elfinfo.data_objects(path)
               if any(lo <= v < hi for lo, hi, _name in ram)]
    if named:
        hit = next(((v, v + z) for n, v, z in objects if n == named), None)
        if hit is None:
            return None, f"the ELF has no RAM object {named!r} (--arena): name the array the arena is"
        return Area(hit[0], hit[1], f"the tensor arena ({named})", "arena"), ""
    for lo, hi, name in ram:
        if "arena" in name.lower():
            inside = [n for n, v, z in objects if lo <= v < hi]
            return Area(lo, hi, f"the tensor arena ({inside[0] if len(inside) == 1 else name})", "arena"), ""
    found = sorted(((z, n, v) for n, v, z in objects if "arena" in n.lower()), reverse=True)
    if found:
        z, n, v = found[0]
        return Area(v, v + z, f"the tensor arena ({n})", "arena"), ""
    return None, ("no arena object in the ELF (no RAM object or section named *arena*): the arena is on the heap "
                  "or placed at run time; name it with --arena SYMBOL, or judge it on the board (`arena stack`)")


def build(path: str, symbols, depth, arena_symbol: str | None = None, needed_arena: int | None = None) -> Budget:
    """The Budget of the ELF at path: `symbols` (acquire/symbols.Symbols of it: stack and heap
    bounds), `depth` (a stackdepth.StackDepth, or None), the arena's object if the user names it,
    and the arena the model needs (the planner's minimum, None when no model was given)."""
    out = Budget()
    ram, why = elfinfo.ram_ranges(path)
    if not ram:
        out.problem = out.reason = f"not judged: {why}"
        return out
    out.areas = [Area(lo, hi, name, "section") for lo, hi, name in ram]
    heap = symbols.heap_span()
    if heap:
        out.areas.append(Area(heap[0], heap[1], f"the heap ({heap[2]})", "heap"))
    stack = symbols.stack_bounds()
    if stack:
        out.stack = Area(stack[0], stack[1], f"the stack ({stack[2]})", "stack")
        out.areas.append(out.stack)
    out.arena, why = _arena(path, ram, arena_symbol)
    if out.arena:
        out.areas.append(out.arena)
    out.areas.sort(key=lambda a: (a.lo, -(a.hi - a.lo)))
    if depth is not None and not depth.problem:
        out.worst, out.floor = depth.main_stack_bytes, not depth.exact
        cycles = [c for e in [depth.thread] + depth.handlers for c in e.cycles]
        more = f" (and {len(cycles) - 1} more)" if len(cycles) > 1 else ""
        out.unbounded = f"recursion {' -> '.join(cycles[0][:-1])} ({cycles[0][-1]}){more}" if cycles else ""
    _judge(out, why, depth)
    need(out, needed_arena)
    return out


STACK_ALIGN = 8  # a stack's top is 8-byte aligned (AAPCS 5.2.1.2, the RISC-V psABI's 16 covers it too)


def need(b: Budget, needed_arena: int | None) -> None:
    """Records the arena the model needs (bytes; None: not known) and, when the arena lies below
    the stack, where the stack's top must then be for the rule to hold (needed_top, aligned up to
    STACK_ALIGN). When that is above the stack's top now, the rule fails for the arena the model
    needs: the verdict is FAIL, whatever the arena in the ELF gave."""
    b.needed_arena = needed_arena
    if needed_arena is None or b.room is None:
        b.needed_top = None
        return
    top = b.arena.lo + needed_arena + b.required_room
    b.needed_top = -(-top // STACK_ALIGN) * STACK_ALIGN
    if b.needed_top > b.stack.hi and not b.unbounded:
        b.verdict = FAIL
        b.reason = (f"the arena the model needs ({needed_arena} B) at {b.arena.lo:#x} leaves "
                    f"{max(0, b.stack.hi - b.arena.lo - needed_arena)} B to the stack's top, < {figures.rule_text()} x "
                    f"the worst case {b.worst} B = {b.required_room} B: move the arena away from the stack, or make "
                    f"room above it ({b.needed_top - b.stack.hi} B short)")


def check(depth, stack) -> figures.Check:
    """The `budget` rule of `arena check --budget`: the stack rule with the worst case from the ELF
    (depth: a stackdepth.StackDepth or None) in place of the measured peak, on the room the
    running firmware's stack figures give (figures.StackFigures: top - the arena's end below)."""
    if depth is None or depth.problem:
        return figures.Check("budget", WARN, "not judged: the stack's worst case from the ELF is not known"
                             + (f" ({depth.problem})" if depth is not None else " (no ELF on disk)"))
    worst, required = depth.main_stack_bytes, math.ceil(figures.STACK_RULE_FACTOR * depth.main_stack_bytes)
    if stack is None or stack.room is None:
        return figures.Check("budget", PASS, f"the stack's worst case {worst} B; no arena below the stack to reach")
    cycles = [c for e in [depth.thread] + depth.handlers for c in e.cycles]
    if cycles:
        return figures.Check("budget", WARN, f"not judged: {' -> '.join(cycles[0][:-1])} recursion has no bound the "
                             "ELF shows (the worst case is at least {worst} B); give its depth: arena budget --bound "
                             "FUNCTION=LEVELS".replace("{worst}", str(worst)))
    floor = "" if depth.exact else " (a floor: see `arena budget`)"
    if stack.room < required:
        return figures.Check("budget", FAIL, f"room from the stack's top to the arena's end {stack.room} B < "
                             f"{figures.rule_text()} x the worst case {worst} B{floor} = {required} B: the stack "
                             "can run into the arena (`arena budget` gives the path)")
    return figures.Check("budget", WARN if floor else PASS,
                         f"room from the stack's top to the arena's end {stack.room} B >= {figures.rule_text()} x the "
                         f"worst case {worst} B{floor} = {required} B")


def _judge(out: Budget, no_arena: str, depth) -> None:
    factor = figures.STACK_RULE_FACTOR
    if out.stack is None:
        out.verdict, out.reason = WARN, ("not judged: the ELF names no stack (no linker symbols such as "
                                         "__StackLimit/__StackTop or _sstack/_estack)")
        return
    if out.worst is None:
        why = depth.problem if depth else "not asked"
        out.verdict, out.reason = WARN, f"not judged: the stack's worst case is not known ({why})"
        return
    out.required_room = math.ceil(factor * out.worst)
    small = out.stack.hi - out.stack.lo < out.worst
    if out.arena is None:
        out.verdict, out.reason = (FAIL if small or out.unbounded else WARN), no_arena
        return
    if out.arena.hi > out.stack.hi or out.arena.lo >= out.stack.lo:
        out.verdict = FAIL if small or out.unbounded else PASS
        out.reason = "the arena is above the stack: the stack cannot grow into it"
        return
    out.room = out.stack.hi - out.arena.hi
    out.gap = out.stack.lo - out.arena.hi
    out.largest_arena = max(0, out.stack.hi - out.required_room - out.arena.lo)
    rule = f"room from the stack's top to the arena's end {out.room} B"
    need = f"{figures.rule_text()} x the worst case {out.worst} B = {out.required_room} B"
    if out.unbounded:
        out.verdict = FAIL
        out.reason = (f"the stack can reach the arena: {out.unbounded} has no bound ({rule}); bound the recursion "
                      "or make it a loop, or give its depth with --bound FUNCTION=LEVELS")
    elif small:
        out.verdict = FAIL
        out.reason = (f"the stack ({out.stack.hi - out.stack.lo} B) is smaller than its worst case {out.worst} B: "
                      f"it runs past its limit into what lies below; give it at least {out.worst} B")
    elif out.room < out.required_room:
        out.verdict = FAIL
        out.reason = (f"{rule} < {need}: the stack can run into the arena; keep the arena at most "
                      f"{out.largest_arena} B, or move it away from the stack")
    elif out.floor:
        out.verdict = WARN
        out.reason = f"{rule} >= {need}, but the worst case is a floor (see what it leaves out)"
    else:
        out.verdict, out.reason = PASS, f"{rule} >= {need}"
