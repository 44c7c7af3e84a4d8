"""The stack's worst case and the RAM map before flashing, in words and as JSON (`arena budget`,
`arenascope budget`): the verdict first, then the RAM map, then each entry point's deepest path,
function by function with its frame, and what the figures leave out. Contract of the JSON:
docs/stack-budget.md ("format": "arenascope-stack-budget/1")."""
from arenascope_plugin.analyse import figures, stackdepth

FORMAT = "arenascope-stack-budget/1"
# Exit statuses of `arenascope budget` (and the gate's, docs/arena-budget.md): as arenascope-plan's
# (planner/include/arenascope/planner/gate.h) for the arena, plus one for the stack rule.
EXIT_FITS, EXIT_ERROR, EXIT_DOES_NOT_FIT, EXIT_CRASH_OR_HANG, EXIT_STACK_REACHES_ARENA = 0, 1, 4, 5, 6


MOST = 5  # of each kind of note an entry's text lists (the JSON has all)


def _addr(a: int) -> str:
    return f"{a:#010x}"


def verdict_lines(b) -> list[str]:
    """The verdict, the worst case and the figures the rule gives, first."""
    lines = [f"stack rule before flashing: {b.verdict}: {b.reason}"]
    if b.worst is not None:
        lines.append(f"  the main stack's worst case: {'at least ' if b.floor else ''}{b.worst} B")
    if b.stack is not None:
        lines.append(f"  the stack: {_addr(b.stack.lo)}-{_addr(b.stack.hi)} ({b.stack.hi - b.stack.lo} B)")
    if b.arena is not None:
        lines.append(f"  {b.arena.what}: {_addr(b.arena.lo)}-{_addr(b.arena.hi)} ({b.arena.hi - b.arena.lo} B)")
    if b.gap is not None:
        lines.append(f"  gap from the arena's end to the stack's limit: {b.gap} B; room to the stack's top {b.room} B")
    if b.largest_arena is not None and not b.unbounded:
        lines.append(f"  the largest arena at {_addr(b.arena.lo)} that keeps the rule with the stack's top at "
                     f"{_addr(b.stack.hi)}: {b.largest_arena} B (it may reach into today's stack reservation, "
                     f"which then keeps {b.required_room} B)")
    if b.needed_top is not None:
        spare = b.stack.hi - b.needed_top
        lines.append(f"  the model needs a {b.needed_arena} B arena: with it at {_addr(b.arena.lo)}, the stack's top "
                     f"must be at {_addr(b.needed_top)} or above; it is at {_addr(b.stack.hi)}, "
                     + (f"{spare} B above" if spare >= 0 else f"{-spare} B short")
                     + (" (on a floor of the worst case)" if b.floor else ""))
    return lines


def _path_text(e: stackdepth.Entry, most: int = 6) -> str:
    names = [s.name for s in e.path]
    if len(names) > most:
        names = names[:most // 2] + [f"... {len(names) - most} more"] + names[-(most // 2):]
    return " -> ".join(names)


def _floor_reason(d) -> str:
    """What makes the worst case a floor, the first thing named (`arena budget` lists them all)."""
    for e in [d.thread] + d.handlers:
        if e.cycles:
            return f"{' -> '.join(e.cycles[0][:-1])} recursion has no bound (`arena budget --bound F=N` gives one)"
        if e.dynamic_frames:
            return f"{e.dynamic_frames[0]} moves SP by a register (alloca)"
        if e.unknown_frames:
            return f"{e.unknown_frames[0]}'s frame is not known"
        if e.unresolved:
            return f"an indirect call with no known target: {e.unresolved[0]}"
    return "see `arena budget`"


def measured_lines(d, peak: int | None) -> list[str]:
    """The measured peak (bytes; None: not known) against the worst case predicted from the ELF,
    for `arena stack`: how close it came, and the predicted deepest path."""
    if d is None:
        return []
    if d.problem:
        return [f"predicted worst case:     not known ({d.problem})"]
    at_least = "at least " if not d.exact else ""
    handlers = d.main_stack_bytes - d.thread.bytes
    out = [f"predicted worst case:     {at_least}{d.main_stack_bytes} B from the ELF's code (`arena budget`): "
           f"{d.thread.bytes} B via {_path_text(d.thread)}" + (f", + {handlers} B for handlers" if handlers else "")]
    if at_least:
        out.append(f"  a floor, because:        {_floor_reason(d)}")
    if peak is None:
        return out
    if peak <= d.main_stack_bytes:
        out.append(f"measured against it:      the peak {peak} B is {100 * peak / max(d.main_stack_bytes, 1):.0f} % of "
                   f"the {'floor' if at_least else 'worst case'}, {d.main_stack_bytes - peak} B below it")
    elif at_least:
        why = "; ".join(c[0] + " recursion" for c in d.thread.cycles) or "what the floor leaves out"
        out.append(f"measured against it:      the peak {peak} B is above the floor {d.main_stack_bytes} B: {why} "
                   "ran deeper than the floor counts")
    else:
        out.append(f"measured against it:      the peak {peak} B is ABOVE the predicted worst case "
                   f"{d.main_stack_bytes} B: code the ELF does not show ran on this stack (another image, a "
                   "frame it cannot see); please report it with `arena budget`'s output")
    return out


def map_lines(b) -> list[str]:
    out = ["RAM map (from the ELF):"]
    names: dict[tuple[int, int], list[str]] = {}
    for a in b.areas:  # a section that is the arena or the stack: one line, both names
        names.setdefault((a.lo, a.hi), []).append(a.what)
    for (lo, hi), what in names.items():
        out.append(f"  {_addr(lo)}-{_addr(hi)} {hi - lo:>9} B  {': '.join(what)}")
    return out


def _step_line(s: stackdepth.Step, total: int) -> str:
    via = ""
    if s.via:
        via = f"  <- {'tail call ' if s.tail else ''}{s.via} at {s.at:#x}" + (f" ({s.rule})" if s.rule else "")
    frame = "?" if s.frame is None else f"{s.frame}"
    return f"    {frame:>6} B {total:>7} B  {s.name}  [{s.source}]{via}"


def entry_lines(e: stackdepth.Entry) -> list[str]:
    head = f"  {e.what}: {'at least ' if e.floor else ''}{e.bytes} B"
    if e.entry_bytes:
        head += f" ({e.entry_bytes} B stacked by the core on entry)"
    out = [head, "     frame  running  function"]
    frames: list[int] = []
    for s in e.path:
        if s.tail and frames:
            frames.pop()  # a tail call: the caller's frame is gone
        frames.append(s.frame or 0)
        out.append(_step_line(s, e.entry_bytes + sum(frames)))
        if s.extra:
            frames[-1] += s.extra
            out.append(f"    {s.extra:>6} B {e.entry_bytes + sum(frames):>7} B  ({s.extra_note})")
    for c in e.cycles[:MOST]:
        out.append(f"    recursion: {' -> '.join(c[:-1])} ({c[-1]}): no bound")
    if len(e.cycles) > MOST:
        out.append(f"    and {len(e.cycles) - MOST} more recursions (--json lists them all)")
    for c in e.bounded:
        out.append(f"    recursion: {' -> '.join(c[:-2])} ({c[-2]}): {c[-1]}, counted so")
    for c in e.pointer_cycles:
        out.append(f"    possible recursion through a pointer call: {' -> '.join(c[:-1])} ({c[-1]}); counted once "
                   "around, a bound unless those pointers really recurse")
    for u in e.unresolved:
        out.append(f"    indirect call with no known target: {u}")
    if e.unknown_frames:
        out.append(f"    frames not known (counted as 0 B): {', '.join(e.unknown_frames[:8])}"
                   + (f" and {len(e.unknown_frames) - 8} more" if len(e.unknown_frames) > 8 else ""))
    if e.dynamic_frames:
        out.append(f"    dynamic frames (alloca, VLAs): {', '.join(e.dynamic_frames)}")
    return out


def depth_lines(d) -> list[str]:
    if d.problem:
        return [f"stack worst case: not known: {d.problem}"]
    sources = ", ".join(f"{v} from {k}" if k != stackdepth.UNKNOWN else f"{v} not known"
                        for k, v in sorted(d.frames_from.items()))
    out = [f"stack worst case from the code: {d.arch}, {d.functions} functions, frames: {sources}",
           f"  main stack: {'at least ' if not d.exact else ''}{d.main_stack_bytes} B = the thread's + the handlers': "
           f"{d.nesting}; {d.exception_entry_note}"]
    if d.pointer_cuts:
        out.append(f"  assuming calls through pointers do not recurse: {len(d.pointer_cuts)} such call(s) that would "
                   "close a cycle are left out (the ELF cannot tell where a pointer goes; --calls CALLER=CALLEE "
                   "says it), e.g. " + "; ".join(d.pointer_cuts[:3]))
    for e in [d.thread] + d.handlers:
        out += entry_lines(e)
    if d.tasks:
        out.append("RTOS tasks (each on its own stack):")
        for e in d.tasks:
            out += entry_lines(e)
    return out


def report_lines(b, d) -> list[str]:
    return verdict_lines(b) + [""] + map_lines(b) + [""] + depth_lines(d)


def _step_json(s: stackdepth.Step) -> dict:
    return {"function": s.name, "address": s.address, "frame_bytes": s.frame, "frame_source": s.source,
            "via": s.via or None, "call_site": s.at, "tail_call": s.tail, "resolved_by": s.rule or None,
            "extra_bytes": s.extra, "extra_note": s.extra_note or None}


def _entry_json(e: stackdepth.Entry) -> dict:
    return {"entry": e.what, "address": e.address, "worst_bytes": e.bytes, "entry_bytes": e.entry_bytes,
            "floor": e.floor, "path": [_step_json(s) for s in e.path], "recursion": e.cycles,
            "possible_recursion": e.pointer_cycles, "bounded_recursion": e.bounded,
            "unresolved_calls": e.unresolved, "unknown_frames": e.unknown_frames, "dynamic_frames": e.dynamic_frames}


def json_doc(b, d, exit_status: int) -> dict:
    """The whole answer as one JSON document (docs/stack-budget.md)."""
    def area(a):
        return None if a is None else {"low": a.lo, "high": a.hi, "bytes": a.hi - a.lo, "what": a.what}
    return {
        "format": FORMAT,
        "exit_status": exit_status,
        "verdict": b.verdict, "reason": b.reason,
        "rule_factor": figures.STACK_RULE_FACTOR,
        "worst_bytes": b.worst, "worst_is_floor": b.floor,
        "stack": area(b.stack), "arena": area(b.arena),
        "gap_bytes": b.gap, "room_bytes": b.room, "required_room_bytes": b.required_room,
        "largest_arena_bytes": b.largest_arena, "needed_arena_bytes": b.needed_arena,
        "needed_stack_top": b.needed_top,
        "ram": [{"low": a.lo, "high": a.hi, "bytes": a.hi - a.lo, "what": a.what, "kind": a.kind} for a in b.areas],
        "depth": None if d.problem else {
            "arch": d.arch, "functions": d.functions, "frames_from": d.frames_from, "exact": d.exact,
            "main_stack_bytes": d.main_stack_bytes, "nesting": d.nesting,
            "thread": _entry_json(d.thread), "handlers": [_entry_json(e) for e in d.handlers],
            "tasks": [_entry_json(e) for e in d.tasks], "pointer_calls_left_out": d.pointer_cuts},
        "problem": d.problem or b.problem or None,
    }


def exit_status(b) -> int:
    """EXIT_STACK_REACHES_ARENA when the rule fails, EXIT_FITS otherwise (a WARN passes the gate:
    the report says what it could not judge)."""
    return EXIT_STACK_REACHES_ARENA if b.verdict == "FAIL" else EXIT_FITS
