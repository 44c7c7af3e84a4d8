"""FreeRTOS's tasks, agentless, from the firmware's DWARF: every task's TCB, name, state,
priority and stack bounds, by walking the kernel's task lists as a kernel-aware debugger does.

Facts (FreeRTOS-Kernel tasks.c and include/list.h, checked against 4269c69a1, 2026):
- tasks.c keeps every task on exactly one state list through TCB_t.xStateListItem:
  pxReadyTasksLists[configMAX_PRIORITIES] (ready; pxCurrentTCB is the one running),
  xDelayedTaskList1/2 (blocked with a timeout), xSuspendedTaskList (suspended, or blocked with no
  timeout), xTasksWaitingTermination (deleted, memory not yet freed); xPendingReadyList holds
  tasks readied while the scheduler was suspended, through xEventListItem. Those lists are
  file-static ("PRIVILEGED_DATA STATIC"): the ELF's symbol table still names them.
- List_t {uxNumberOfItems, pxIndex, xListEnd}; xListEnd is a MiniListItem_t {xItemValue, pxNext,
  pxPrevious}; each ListItem_t {xItemValue, pxNext, pxPrevious, pvOwner, pxContainer}; pvOwner
  is the TCB. The walk follows pxNext from xListEnd back to it, bounded by uxNumberOfItems.
- TCB_t (struct tskTaskControlBlock): pxTopOfStack (the SP saved at the last switch-out: the
  first member), xStateListItem, uxPriority, pxStack (the stack's lowest address; Cortex-M stacks
  grow down, portSTACK_GROWTH -1), pcTaskName[configMAX_TASK_NAME_LEN], pxEndOfStack only with
  configRECORD_STACK_HIGH_ADDRESS 1 (the highest valid word: the initial top, aligned down).
- A new task's stack is filled with tskSTACK_FILL_BYTE 0xA5 (when configCHECK_FOR_STACK_OVERFLOW
  > 1, configUSE_TRACE_FACILITY or uxTaskGetStackHighWaterMark is enabled);
  uxTaskGetStackHighWaterMark counts the fill bytes left from pxStack up.

The stack's high end, first found of: pxEndOfStack + 4; the ELF data object that starts at
pxStack (a static stack, xTaskCreateStatic); heap_4/heap_5's block header in front of pxStack
(BlockLink_t {pxNextFreeBlock, xBlockSize}, the allocated bit the top one: an upper bound, the
block can be a few bytes larger than asked); else unknown.

Every offset and size comes from the DWARF (Symbols.members, type_size); nothing is assumed but
the member names above. Smashed lists are walked as far as they hold and said so. No GDB import.
"""
from dataclasses import dataclass, field

from arenascope_plugin.acquire.reader import MemoryReader, MemoryReadError
from arenascope_plugin.acquire.symbols import Symbols

FILL = 0xA5A5A5A5          # tskSTACK_FILL_BYTE in every byte of a word
MAX_TASKS = 256             # a walk stops here: a smashed list must not loop forever
CHECKED_AGAINST = "FreeRTOS-Kernel 4269c69a1 (tasks.c, list.h)"

TCB = "TCB_t"
TCB_MEMBERS = ["pxTopOfStack", "xStateListItem", "uxPriority", "pxStack", "pcTaskName", "pxEndOfStack"]
LIST_MEMBERS = ["uxNumberOfItems", "pxIndex", "xListEnd"]
ITEM_MEMBERS = ["pxNext", "pvOwner", "pxContainer"]
# (symbol, state) of the state lists, in the order a task is looked for.
LISTS = [("pxReadyTasksLists", "ready"), ("xPendingReadyList", "ready"), ("xDelayedTaskList1", "blocked"),
         ("xDelayedTaskList2", "blocked"), ("xSuspendedTaskList", "suspended"),
         ("xTasksWaitingTermination", "deleted")]
STATES = {"running": "running", "ready": "ready", "blocked": "blocked (delayed, or waiting with a timeout)",
          "suspended": "suspended (or waiting with no timeout)", "deleted": "deleted (its memory not freed yet)"}


@dataclass
class Task:
    """One task as its TCB holds it. Addresses are ints; stack_high one past the stack's top."""
    tcb: int
    name: str
    state: str                      # a key of STATES
    priority: int | None
    stack_low: int                  # pxStack
    stack_high: int | None          # None: unknown (high_source says why)
    high_source: str
    saved_sp: int                   # pxTopOfStack: the SP at its last switch-out
    problems: list[str] = field(default_factory=list)


@dataclass
class Kernel:
    """What the walk found: the tasks, the running one's TCB and what stopped the walk."""
    name: str
    tasks: list[Task]
    current: int | None             # pxCurrentTCB
    problems: list[str] = field(default_factory=list)

    @property
    def running(self) -> Task | None:
        return next((t for t in self.tasks if t.tcb == self.current), None)


class _Layout:
    def __init__(self, symbols: Symbols):
        self.tcb = symbols.members(TCB, TCB_MEMBERS) or {}
        self.tcb_size = symbols.type_size(TCB)
        self.list = symbols.members("List_t", LIST_MEMBERS) or {}
        self.list_size = symbols.type_size("List_t")
        self.item = symbols.members("ListItem_t", ITEM_MEMBERS) or {}
        self.mini = symbols.members("MiniListItem_t", ["pxNext"]) or {}
        self.block = symbols.members("BlockLink_t", ["xBlockSize"]) or {}
        self.block_size = symbols.type_size("BlockLink_t")
        self.ptr = symbols.pointer_size()

    def missing(self) -> list[str]:
        want = [(TCB, self.tcb, ["pxTopOfStack", "xStateListItem", "pxStack", "pcTaskName"]),
                ("List_t", self.list, LIST_MEMBERS), ("ListItem_t", self.item, ["pxNext", "pvOwner"]),
                ("MiniListItem_t", self.mini, ["pxNext"])]
        return [f"{t}.{m}" for t, have, names in want for m in names if m not in have] + \
            ([f"sizeof({TCB})"] if not self.tcb_size else []) + (["sizeof(List_t)"] if not self.list_size else [])


def present(symbols: Symbols) -> bool:
    """Whether the ELF links FreeRTOS's scheduler (its pxCurrentTCB and ready lists)."""
    return symbols.address("pxCurrentTCB") is not None and symbols.address("pxReadyTasksLists") is not None


def _word(reader, addr, ptr):
    return int.from_bytes(reader.read(addr, ptr), "little")


def _name(raw: bytes) -> str:
    text = raw.split(b"\0", 1)[0].decode("ascii", errors="replace")
    return "".join(c if c.isprintable() else "?" for c in text)


def _list_owners(reader, lay, addr, label, problems):
    """The pvOwner of each item of the List_t at addr, following pxNext from xListEnd."""
    count = _word(reader, addr + lay.list["uxNumberOfItems"][0], lay.ptr)
    end = addr + lay.list["xListEnd"][0]
    item = _word(reader, end + lay.mini["pxNext"][0], lay.ptr)
    owners: list[int] = []
    seen = set()
    if item == 0 and count == 0:
        return owners  # all zero (.bss): vListInitialise has not run yet, the kernel is not started
    while item != end:
        if len(owners) >= min(count, MAX_TASKS) or item in seen:
            problems.append(f"{label} at {addr:#x} is inconsistent: it says {count} items, but its pxNext chain "
                            f"{'loops' if item in seen else 'goes on'} after {len(owners)} (smashed memory?); "
                            f"the tasks after that are not shown")
            return owners
        seen.add(item)
        try:
            owner = _word(reader, item + lay.item["pvOwner"][0], lay.ptr)
            nxt = _word(reader, item + lay.item["pxNext"][0], lay.ptr)
            container = (_word(reader, item + lay.item["pxContainer"][0], lay.ptr) if "pxContainer" in lay.item
                         else addr)
        except MemoryReadError as exc:
            problems.append(f"{label} at {addr:#x} links item {len(owners) + 1} at {item:#x}, which is unreadable "
                            f"({exc.why}): the list is smashed; the tasks from there on are not shown")
            return owners
        if container != addr:
            problems.append(f"{label} at {addr:#x} links item {len(owners) + 1} at {item:#x}, whose pxContainer "
                            f"{container:#x} is another list: the lists are cross-linked (smashed memory?); the "
                            "tasks from there on are not shown")
            return owners
        owners.append(owner)
        item = nxt
    if len(owners) != count:
        problems.append(f"{label} at {addr:#x} says {count} items but links {len(owners)} (smashed, or caught "
                        "mid-update: halted inside the scheduler?)")
    return owners


def _high_end(reader, symbols, lay, tcb_bytes, low, saved_sp):
    """(stack high end or None, where it came from)."""
    if "pxEndOfStack" in lay.tcb:
        end = int.from_bytes(tcb_bytes[lay.tcb["pxEndOfStack"][0]:][:lay.ptr], "little")
        if end > low:
            return end + 4, "pxEndOfStack + 4 (configRECORD_STACK_HIGH_ADDRESS)"
    obj = symbols.object_at(low)
    if obj is not None and obj[1] == low and obj[2] > 0 and "heap" not in obj[0].lower():
        return low + obj[2], f"the ELF object {obj[0]} ({obj[2]} B, a static stack)"
    if lay.block and lay.block_size:
        header = (lay.block_size + 7) & ~7  # xHeapStructSize: sizeof(BlockLink_t) rounded to portBYTE_ALIGNMENT 8
        try:
            size = _word(reader, low - header + lay.block["xBlockSize"][0], lay.ptr)
        except MemoryReadError:
            size = 0
        top_bit = 1 << (8 * lay.ptr - 1)
        usable = (size & ~top_bit) - header
        if size & top_bit and low < saved_sp <= low + usable <= low + (1 << 24):
            return low + usable, ("heap_4's block header (xBlockSize): an upper bound, the block can be a few bytes "
                                  "larger than the stack asked")
    return None, ("unknown: not a static object, no heap block header, no pxEndOfStack (set "
                  "configRECORD_STACK_HIGH_ADDRESS 1)")


def walk(reader: MemoryReader, symbols: Symbols) -> Kernel | None:
    """The FreeRTOS tasks of the firmware (Kernel), or None when the ELF has no FreeRTOS. A
    layout the DWARF lacks, or unreadable lists, give a Kernel with no tasks and problems saying
    what is missing; a smashed list gives the tasks up to where it breaks."""
    if not present(symbols):
        return None
    lay = _Layout(symbols)
    missing = lay.missing()
    if missing:
        return Kernel("FreeRTOS", [], None, [f"FreeRTOS's task lists cannot be walked: the debug information lacks "
                                             f"{', '.join(missing)} (build tasks.c with -g)"])
    assert lay.list_size  # missing() names sizeof(List_t) when it is unknown
    problems: list[str] = []
    try:
        current = _word(reader, symbols.address("pxCurrentTCB"), lay.ptr) or None
    except MemoryReadError as exc:
        return Kernel("FreeRTOS", [], None, [f"pxCurrentTCB is unreadable ({exc.why})"])
    found = _listed_tasks(reader, symbols, lay, problems)
    running = _scheduler_running(reader, symbols)
    ram = [(lo, hi) for lo, hi, _ in symbols.ram_ranges()[0]]
    if current and ram and not any(lo <= current < hi for lo, hi in ram):
        problems.append(f"pxCurrentTCB {current:#x} points outside RAM: smashed; the running task is unknown")
        current = None
    elif current and current not in found:
        found[current] = "running"
        problems.append(f"pxCurrentTCB {current:#x} is on no state list (halted mid-switch, or deleting itself)")
    if not current and running:
        problems.append("pxCurrentTCB is NULL while xSchedulerRunning says the scheduler runs: smashed?")
    if running is False:
        current_running = None  # pxCurrentTCB names the task that will run first, none runs yet
    else:
        current_running = current
    tasks = []
    for tcb, state in found.items():
        tasks.append(_task(reader, symbols, lay, tcb, "running" if tcb == current_running else state))
        if len(tasks) >= MAX_TASKS:
            break
    tasks.sort(key=lambda t: (t.state != "running", -(t.priority or 0), t.name))
    if not tasks and not problems:
        problems.append("no task is on any list: the scheduler has not started (vTaskStartScheduler) or no task "
                        "was created yet")
    elif running is False:
        problems.append("the scheduler has not started yet (xSchedulerRunning is pdFALSE): no task runs, the core "
                        "is on the main stack")
    return Kernel("FreeRTOS", tasks, current_running, problems)


def _listed_tasks(reader, symbols, lay, problems: list[str]) -> dict[int, str]:
    """{TCB address: state} of the tasks on the kernel's state lists (LISTS: the first list that
    holds a TCB gives its state); what cannot be read is added to `problems`."""
    found: dict[int, str] = {}
    for name, state in LISTS:
        base = symbols.address(name)
        if base is None:
            continue
        total = symbols.object_size(name) or lay.list_size
        for i in range(max(1, total // lay.list_size)):
            label = f"{name}[{i}]" if name == "pxReadyTasksLists" else name
            try:
                owners = _list_owners(reader, lay, base + i * lay.list_size, label, problems)
            except MemoryReadError as exc:
                problems.append(f"{label} is unreadable ({exc.why})")
                continue
            for o in owners:
                found.setdefault(o, state)
    return found


def _scheduler_running(reader, symbols) -> bool | None:
    """xSchedulerRunning (tasks.c), or None when the ELF or memory does not give it."""
    addr = symbols.address("xSchedulerRunning")
    if addr is None:
        return None
    try:
        return bool(_word(reader, addr, 4))
    except MemoryReadError:
        return None


def _task(reader, symbols, lay, tcb, state):
    try:
        raw = reader.read(tcb, lay.tcb_size)
    except MemoryReadError as exc:
        return Task(tcb, "?", state, None, 0, None, "", 0, [f"its TCB at {tcb:#x} is unreadable ({exc.why})"])

    def member(m):
        off, size = lay.tcb[m]
        return int.from_bytes(raw[off:off + (size or lay.ptr)], "little")
    off, size = lay.tcb["pcTaskName"]
    name = _name(raw[off:off + (size or 16)])
    low, saved = member("pxStack"), member("pxTopOfStack")
    prio = member("uxPriority") if "uxPriority" in lay.tcb else None
    high, source = _high_end(reader, symbols, lay, raw, low, saved)
    problems = []
    if not low or low % 4:
        problems.append(f"pxStack {low:#x} is not a stack address (the TCB at {tcb:#x} is smashed?)")
    elif high is not None and not low <= saved <= high:
        problems.append(f"its saved SP (pxTopOfStack) {saved:#x} is outside its stack {low:#x}-{high:#x}: it "
                        "overflowed before its last switch-out, or its TCB is smashed")
    elif saved < low:
        problems.append(f"its saved SP (pxTopOfStack) {saved:#x} is below pxStack {low:#x}: it overflowed")
    return Task(tcb, name or "(no name)", state, prio, low, high, source, saved, problems)

# The functions that create a task (FreeRTOS tasks.c; ESP-IDF's pinned variants): a function
# whose address their callers load is a task's entry (analyse/stackdepth.py).
TASK_CREATORS = ("xTaskCreate", "xTaskCreateStatic", "xTaskCreatePinnedToCore", "xTaskCreateStaticPinnedToCore",
                 "xTaskCreateRestricted", "xTaskCreateRestrictedStatic", "xTaskCreateAffinitySet")
