"""RTOS task stacks: each task's figures (high-water mark, peak, room to an arena right below it),
its `arena check` rule, and which task a fault was taken on (pure Python, no GDB).

Inputs: decode/freertos.py's Kernel (what the TCBs say), the bands scanner's result for each
task's stack (its 0xA5 fill, freertos.FILL), the descriptor (arenas, guard band), the ELF's data
objects, and the core's PSP. Definitions, as for the main stack (figures.py): high-water mark =
the lowest word that lost the fill; never used = high-water mark - pxStack (FreeRTOS's
uxTaskGetStackHighWaterMark, in bytes); peak = stack high - high-water mark; an arena is "right
below" a task's stack when it ends at pxStack, or at the guard band's low end when the guard
band ends at pxStack, or at most NEAR bytes below; then room = stack high - the arena's end and
the stack rule (room >= 1.5 x peak) applies.

A fault's task (ARMv7-M ARM B1.5.8, ARMv8-M D1.2.26): EXC_RETURN bit 2 (SPSEL) set means the
frame was pushed on the process stack (PSP); under FreeRTOS that is the running task's,
pxCurrentTCB (the scheduler switches PSP to it).
"""
from dataclasses import dataclass

from arenascope_plugin.analyse import figures
from arenascope_plugin.decode import abi, freertos
from arenascope_plugin.decode.descriptor import MAX_STACK_BYTES, Descriptor

NEAR = 1024    # bytes between an arena's end and a task stack for the arena to count as right below it


@dataclass
class TaskStack:
    """One task's stack figures. stack: figures.StackFigures when the stack's high end is known
    (peak, room and the rule then as for the main stack), else None; hwm/painted from a whole
    scan of [pxStack, high end) (or up to its SP when the high end is unknown); None before one."""
    task: freertos.Task
    sp: int | None            # the live SP: the core's PSP for the running task, else pxTopOfStack
    sp_live: bool
    hwm: int | None
    painted: bool
    below: str                # what lies right below pxStack, for messages
    arena_index: int | None   # the arena right below it, or None
    stack: figures.StackFigures | None = None
    limit_stopped: str = ""       # what stopped its overflow (the port's words: "PSPLIM ... (UsageFault STKOF)"), or ""

    @property
    def label(self) -> str:
        return f"task '{self.task.name}'"

    @property
    def stack_name(self) -> str:
        return f"the stack of task '{self.task.name}'"

    @property
    def never_used(self) -> int | None:
        return None if self.hwm is None or not self.painted else self.hwm - self.task.stack_low

    @property
    def overflowed(self) -> bool:
        """Its fill is gone down to pxStack (it used it all, and maybe more), or its SP is below it."""
        t = self.task
        return bool((self.painted and self.hwm is not None and self.hwm <= t.stack_low) or
                    (self.sp is not None and self.sp < t.stack_low))

    @property
    def sound_overflow(self) -> bool:
        """overflowed, with a TCB that makes sense (a smashed pxStack or saved SP is no overflow)."""
        return self.overflowed and not self.task.problems

    def scan_range(self) -> tuple[int, int] | None:
        """[low, high) to scan for the fill: the whole stack, or up to the SP when its top is unknown."""
        t = self.task
        top = t.stack_high if t.stack_high is not None else self.sp
        ok = t.stack_low and top is not None and 0 < top - t.stack_low <= MAX_STACK_BYTES
        return (t.stack_low, top) if ok else None  # a smashed TCB's range is not read through a probe


def _below(desc: Descriptor | None, symbols, low: int) -> tuple[str, int | None, int | None]:
    """(what lies right below `low`, the arena right below or None, that arena's end)."""
    if desc is not None:
        g = desc.guard
        edge = g.low_addr if g.filled and g.high_addr == low else low
        for a in desc.arenas:
            if a.end_addr <= low and edge - a.end_addr <= NEAR and a.end_addr > edge - NEAR:
                name = f"arena {a.index}" if len(desc.arenas) > 1 else "the arena"
                via = f", through the guard band {g.low_addr:#x}-{g.high_addr:#x}" if edge != low else ""
                return f"{name} at {a.base_addr:#x}-{a.end_addr:#x}{via}", a.index, a.end_addr
        if g.filled and g.high_addr == low:
            return f"the guard band {g.low_addr:#x}-{g.high_addr:#x}", None, None
    obj = symbols.object_at(low - 4) if low >= 4 else None
    if obj is not None:
        return f"{obj[0]} at {obj[1]:#x}-{obj[1] + obj[2]:#x}", None, None
    return "no known object", None, None


def stacks(kernel: freertos.Kernel, desc: Descriptor | None, symbols, thread_sp: int | None) -> list[TaskStack]:
    """A TaskStack per task, not yet measured (measure() fills hwm and painted)."""
    out = []
    for t in kernel.tasks:
        live = t.tcb == kernel.current and thread_sp is not None
        below, index, _end = _below(desc, symbols, t.stack_low)
        out.append(TaskStack(task=t, sp=thread_sp if live else t.saved_sp, sp_live=live, hwm=None, painted=False,
                             below=below, arena_index=index))
    return out


def measure(task_stacks: list[TaskStack], results: dict, desc: Descriptor | None) -> None:
    """Fills hwm, painted and the StackFigures from the scanner's results ({"task@TCB": (lo, hi,
    painted) or None}, named by scan_key)."""
    for ts in task_stacks:
        rng = ts.scan_range()
        got = results.get(scan_key(ts)) if rng else None
        if got is not None:
            ts.hwm = rng[1] if got[0] == abi.NONE else rng[0] + got[0]
            ts.painted = got[2]
        t = ts.task
        if t.stack_high is None:
            continue
        arena_end = None
        if desc is not None and ts.arena_index is not None:
            arena_end = next(a.end_addr for a in desc.arenas if a.index == ts.arena_index)
        guard_low = figures.through_guard(desc.guard, t.stack_low, ts.hwm) if desc is not None else None
        ts.stack = figures.StackFigures(low=t.stack_low, high=t.stack_high, sp=ts.sp, hwm=ts.hwm,
                                        source="scan" if ts.hwm is not None else "none", painted=ts.painted,
                                        arena_end=arena_end, guard_low=guard_low)


def scan_key(ts: TaskStack) -> str:
    return f"task@{ts.task.tcb:#x}"


def check(ts: TaskStack) -> figures.Check:
    """The `task-stack` rule for one task: FAIL when its TCB is smashed, when it overflowed (saying
    whether PSPLIM stopped it: ts.limit_stopped) or breaks the stack rule above an arena, WARN when
    it cannot be measured, else PASS with its figures."""
    t, s = ts.task, ts.stack
    where = f"{ts.label} (stack {t.stack_low:#x}-" + (f"{t.stack_high:#x}" if t.stack_high else "?") + ")"
    if t.problems:
        return figures.Check("task-stack", figures.FAIL, f"{where}: " + "; ".join(t.problems))
    if ts.overflowed:
        return figures.Check("task-stack", figures.FAIL, f"{where} overflowed: {overflow_text(ts)}")
    if ts.hwm is None:
        return figures.Check("task-stack", figures.WARN, f"{where}: high-water mark unknown (not scanned)")
    if not ts.painted:
        return figures.Check("task-stack", figures.WARN, f"{where}: no 0xA5 fill anywhere: FreeRTOS fills new "
                             "stacks only with configCHECK_FOR_STACK_OVERFLOW 2, configUSE_TRACE_FACILITY or "
                             "INCLUDE_uxTaskGetStackHighWaterMark; nothing to measure")
    if s is None:
        return figures.Check("task-stack", figures.PASS, f"{where}: {ts.never_used} B at the bottom never used "
                             "(its high end is unknown, so no peak)")
    if s.room is not None and s.room < s.required_room:
        return figures.Check("task-stack", figures.FAIL, f"{where}: room to the end of {ts.below} {s.room} B < "
                             f"{figures.rule_text()} x peak {s.peak} B = {s.required_room} B: give the task more "
                             "stack or move the arena away from it")
    return figures.Check("task-stack", figures.PASS, f"{where}: peak {s.peak} B of {s.size} B, "
                         f"{ts.never_used} B never used")


def overflow_text(ts: TaskStack) -> str:
    """How an overflowed task's stack overflowed, what lies below it and what to do."""
    t = ts.task
    how = (f"its SP {ts.sp:#x} is {t.stack_low - ts.sp} B below pxStack" if ts.sp is not None and
           ts.sp < t.stack_low else "its 0xA5 fill is gone down to pxStack")
    went = (f"{ts.limit_stopped}, so nothing below was written" if ts.limit_stopped else
            "it used all of its stack, and went on into what lies below unless a stack limit stopped it")
    return f"{how}: {went} (below it: {ts.below}); give the task a bigger stack (its stack depth at creation)"


def fault_task(task_stacks: list[TaskStack], kernel: freertos.Kernel | None, f) -> TaskStack | None:
    """The task whose stack the fault's frame was pushed on: with EXC_RETURN on PSP, the running
    task (pxCurrentTCB); else the task whose stack holds the frame's address; None when the
    frame was on the main stack or no task's stack holds it."""
    if f is None or kernel is None:
        return None
    on_thread = f.on_thread_stack
    if on_thread:
        ts = next((ts for ts in task_stacks if ts.task.tcb == kernel.current), None)
        if ts is not None:
            return ts
    addr = f.frame_addr if f.frame_addr is not None else f.pre_fault_sp
    if addr is None or on_thread is False:
        return None
    return next((ts for ts in task_stacks if ts.task.stack_high and ts.task.stack_low <= addr < ts.task.stack_high),
                None)


def adjacent(task_stacks: list[TaskStack], prefer: TaskStack | None = None) -> TaskStack | None:
    """The task whose stack sits right above an arena (prefer's, when it does), or None."""
    near = [ts for ts in task_stacks if ts.arena_index is not None]
    return prefer if prefer in near else (near[0] if near else None)


def sp_line(ts: TaskStack, f, kernel: freertos.Kernel) -> str:
    """Where the fault's SP was, said of the task it was taken on."""
    t, sp = ts.task, f.pre_fault_sp
    on = (f"{f.port.thread_stack_line(f)}, which {kernel.name} gives the running task (pxCurrentTCB "
          f"{kernel.current:#x})" if f.on_thread_stack else "the frame's address is on its stack")
    if sp is None:
        return f"the fault was taken on {ts.stack_name} ({on}); SP at the fault is unknown (no stacked frame)"
    if sp < t.stack_low:
        return (f"SP at the fault {sp:#x} is {t.stack_low - sp} B below the stack limit of {ts.label} (pxStack "
                f"{t.stack_low:#x}), in {ts.below}: the task overflowed ({on})")
    top = f"-{t.stack_high:#x}, {t.stack_high - sp} B in use" if t.stack_high is not None else "-?"
    return f"SP at the fault {sp:#x} was on {ts.stack_name} {t.stack_low:#x}{top} ({on})"


def guard_task(task_stacks: list[TaskStack], desc: Descriptor) -> TaskStack | None:
    """The task whose stack sits right above the guard band and overflowed (it touched the band),
    or None."""
    return next((ts for ts in task_stacks if ts.task.stack_low == desc.guard.high_addr and ts.overflowed), None)


OVERFLOW_HOOK = "vApplicationStackOverflowHook"


def overflow_hook_note(frames: list[str], kernel: freertos.Kernel | None) -> str | None:
    """What to say when the core is in FreeRTOS's stack overflow hook (configCHECK_FOR_STACK_OVERFLOW:
    tasks.c's taskCHECK_FOR_STACK_OVERFLOW runs in vTaskSwitchContext before the next task is
    chosen, so pxCurrentTCB is the task that overflowed), or None."""
    if kernel is None or not any(fr.split("(")[0].strip().endswith(OVERFLOW_HOOK) for fr in frames):
        return None
    t = kernel.running
    who = f"the stack of task '{t.name}' (TCB {t.tcb:#x}, pxStack {t.stack_low:#x})" if t else "a task's stack"
    return (f"the core is in FreeRTOS's {OVERFLOW_HOOK}: at a context switch the kernel found that {who} "
            "overflowed (configCHECK_FOR_STACK_OVERFLOW: its last bytes of 0xA5 fill at pxStack are gone); "
            "the hook never returns here: give that task a bigger stack")
