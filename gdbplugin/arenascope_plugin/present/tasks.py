"""The RTOS tasks' stacks as `arena stack` prints them (pure Python): one row a task, then what
needs saying about each (an overflow, what lies below it, the stack rule above an arena)."""
from arenascope_plugin.analyse import figures, tasks
from arenascope_plugin.decode import freertos
from arenascope_plugin.present import style

HEADER = ("task", "state", "prio", "stack", "size", "peak", "never used", "SP")


def _row(ts):
    t, s = ts.task, ts.stack
    rng = f"{t.stack_low:#x}-" + (f"{t.stack_high:#x}" if t.stack_high is not None else "?")
    size = f"{t.stack_high - t.stack_low} B" if t.stack_high is not None else "?"
    peak = ("?" if s is None or s.peak is None or not ts.painted else
            f">= {s.peak} B" if ts.overflowed else f"{s.peak} B")
    unused = "?" if ts.never_used is None else f"{ts.never_used} B"
    sp = "?" if ts.sp is None else f"{ts.sp:#x}" + (" (PSP)" if ts.sp_live else " (saved)")
    return (t.name, t.state, "?" if t.priority is None else str(t.priority), rng, size, peak, unused, sp)


def lines(kernel: freertos.Kernel | None, task_stacks: list) -> list[str]:
    """The tasks' table and notes; [] without an RTOS."""
    if kernel is None:
        return []
    running = kernel.running
    head = (f"{kernel.name}: {len(kernel.tasks)} task{'s' if len(kernel.tasks) != 1 else ''}"
            + (f", running: '{running.name}' (pxCurrentTCB {running.tcb:#x})" if running else
               ", none running" if not kernel.current else "")
            + "; stacks scanned for FreeRTOS's 0xA5 fill")
    out = [head] + [f"  {p}" for p in kernel.problems]
    if not task_stacks:
        return out
    rows = [HEADER] + [_row(ts) for ts in task_stacks]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
    out += ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    for ts in task_stacks:
        c = _note(ts)
        if c:
            out.append(f"  {ts.label}: {c}")
    return out


def _note(ts):
    """One line for a task that needs one: its check when it is not a plain PASS, the stack rule
    when an arena lies right below it, the high end's source when it is not the TCB's."""
    t, s = ts.task, ts.stack
    c = _check_text(ts)
    if c:
        return c
    if s is not None and s.room is not None and ts.painted:
        ok = s.room >= s.required_room
        return (f"right above {ts.below}: room to its end {s.room} B {'>=' if ok else '<'} {figures.rule_text()} "
                f"x peak = {s.required_room} B: " + style.paint("PASS" if ok else "FAIL", "PASS" if ok else "FAIL"))
    if t.stack_high is None:
        return f"high end {t.high_source}"
    return None


def _check_text(ts):
    c = tasks.check(ts)
    if c.verdict == figures.PASS:
        return None
    return style.paint(c.verdict, c.verdict) + " " + c.reason.split(": ", 1)[1]
