"""decode/freertos.py on byte images laid out by hand from FreeRTOS's structures (list.h, tasks.c;
32-bit: List_t 20 B, ListItem_t 20 B, TCB_t with pxTopOfStack at 0, xStateListItem at 4,
xEventListItem at 24, uxPriority at 44, pxStack at 48, pcTaskName[16] at 52): healthy lists, then
smashed ones (a loop, a chain longer than its count, an unreadable TCB, missing debug
information) and random bytes (python3-hypothesis), which must give problems, never an exception
or a hang."""
import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from arenascope_plugin.acquire.reader import ImageReader
from arenascope_plugin.acquire.symbols import TableSymbols
from arenascope_plugin.analyse import tasks
from arenascope_plugin.decode import freertos

RAM = 0x20000000
READY, DELAYED, SUSPENDED, CURRENT = RAM + 0x000, RAM + 0x100, RAM + 0x120, RAM + 0x140
TCBS = RAM + 0x200                                  # TCB k at TCBS + 0x60 k
STACKS = RAM + 0x1000                               # stack k at STACKS + 0x400 k, 1 KiB each
TCB_LAYOUT = {"pxTopOfStack": (0, 4), "xStateListItem": (4, 20), "uxPriority": (44, 4), "pxStack": (48, 4),
              "pcTaskName": (52, 16)}


class FreeRtosSymbols(TableSymbols):
    """The symbols and DWARF answers of a FreeRTOS firmware, for an image (no ELF)."""

    def __init__(self, priorities=4, tcb_layout=None, stacks=None):
        super().__init__({"pxCurrentTCB": CURRENT, "pxReadyTasksLists": READY, "xDelayedTaskList1": DELAYED,
                          "xSuspendedTaskList": SUSPENDED}, [(RAM, RAM + 0x10000, ".bss")])
        self.priorities, self.tcb_layout = priorities, TCB_LAYOUT if tcb_layout is None else tcb_layout
        self.stacks = stacks or {}

    def members(self, type_name, wanted):
        layouts = {"TCB_t": self.tcb_layout,
                   "List_t": {"uxNumberOfItems": (0, 4), "pxIndex": (4, 4), "xListEnd": (8, 12)},
                   "ListItem_t": {"pxNext": (4, 4), "pvOwner": (12, 4), "pxContainer": (16, 4)},
                   "MiniListItem_t": {"pxNext": (4, 4)}}
        have = layouts.get(type_name)
        return None if have is None else {m: have[m] for m in wanted if m in have}

    def type_size(self, name):
        return {"TCB_t": 96, "List_t": 20}.get(name)

    def object_size(self, name):
        return 20 * self.priorities if name == "pxReadyTasksLists" else 20

    def object_at(self, addr):
        return self.stacks.get(addr)


class Image:
    def __init__(self):
        self.mem = bytearray(0x10000)

    def word(self, addr, value):
        struct.pack_into("<I", self.mem, addr - RAM, value)

    def empty_list(self, addr):
        end = addr + 8
        self.word(addr, 0)
        self.word(addr + 4, end)
        self.word(end, 0xFFFFFFFF)
        self.word(end + 4, end)
        self.word(end + 8, end)

    def list_of(self, addr, tcbs):
        """A List_t at addr linking the xStateListItems of these TCBs, in order."""
        end = addr + 8
        items = [t + 4 for t in tcbs]
        chain = [end] + items + [end]
        self.word(addr, len(items))
        self.word(addr + 4, end)
        for prev, item, nxt in zip(chain, chain[1:], chain[2:], strict=False):
            self.word(item + 4, nxt)
            self.word(item + 8, prev)
            self.word(item + 12, item - 4)   # pvOwner: the TCB
            self.word(item + 16, addr)
        self.word(end + 4, chain[1])
        self.word(end + 8, chain[-2])

    def tcb(self, k, name, priority, used):
        addr, stack = TCBS + 0x60 * k, STACKS + 0x400 * k
        self.mem[stack - RAM:stack - RAM + 0x400] = b"\xa5" * (0x400 - used) + b"\x11" * used
        self.word(addr, stack + 0x400 - used)
        self.word(addr + 44, priority)
        self.word(addr + 48, stack)
        self.mem[addr + 52 - RAM:addr + 52 - RAM + len(name)] = name.encode()
        return addr

    def reader(self):
        return ImageReader([(RAM, self.mem)])


def healthy():
    img = Image()
    for p in range(4):
        img.empty_list(READY + 20 * p)
    img.empty_list(DELAYED)
    img.empty_list(SUSPENDED)
    a, b, c = img.tcb(0, "infer", 2, 0x100), img.tcb(1, "comms", 1, 0x80), img.tcb(2, "logger", 1, 0x40)
    img.list_of(READY + 40, [a])
    img.list_of(READY + 20, [b])
    img.list_of(SUSPENDED, [c])
    img.word(CURRENT, a)
    stacks = {STACKS + 0x400 * k: (f"stack{k}", STACKS + 0x400 * k, 0x400) for k in range(3)}
    return img, FreeRtosSymbols(stacks=stacks), (a, b, c)


def test_every_task_is_found_with_its_state_priority_and_stack():
    img, syms, (a, b, c) = healthy()
    k = freertos.walk(img.reader(), syms)
    assert k.problems == [] and k.current == a
    got = {t.name: t for t in k.tasks}
    assert [t.name for t in k.tasks] == ["infer", "comms", "logger"]
    assert (got["infer"].state, got["comms"].state, got["logger"].state) == ("running", "ready", "suspended")
    assert (got["infer"].priority, got["comms"].priority) == (2, 1)
    assert got["comms"].tcb == b and got["comms"].stack_low == STACKS + 0x400
    assert got["comms"].stack_high == STACKS + 0x800 and got["comms"].high_source.startswith("the ELF object stack1")
    assert got["logger"].saved_sp == STACKS + 0x800 + 0x400 - 0x40


def test_no_freertos_is_none_and_missing_dwarf_is_said():
    assert freertos.walk(ImageReader([]), TableSymbols({})) is None
    img, _, _ = healthy()
    k = freertos.walk(img.reader(), FreeRtosSymbols(tcb_layout={"pxTopOfStack": (0, 4)}))
    assert k.tasks == [] and "TCB_t.xStateListItem, TCB_t.pxStack, TCB_t.pcTaskName" in k.problems[0]


def test_a_looping_list_stops_and_says_so():
    img, syms, (a, b, _c) = healthy()
    img.list_of(READY + 20, [b, a])
    img.word(a + 4 + 4, b + 4)          # a's pxNext back to b: a loop that never reaches xListEnd
    k = freertos.walk(img.reader(), syms)
    assert any("pxReadyTasksLists[1]" in p and "loops" in p for p in k.problems), k.problems
    assert {t.name for t in k.tasks} == {"infer", "comms", "logger"}


def test_a_chain_longer_than_its_count_stops_at_the_count():
    img, syms, (a, b, c) = healthy()
    img.list_of(SUSPENDED, [c, b, a])
    img.word(SUSPENDED, 1)              # says one item, links three
    k = freertos.walk(img.reader(), syms)
    assert any("xSuspendedTaskList" in p and "says 1 items" in p for p in k.problems), k.problems


def test_an_unreadable_tcb_and_a_smashed_pxstack_are_problems_not_exceptions():
    img, syms, (a, b, c) = healthy()
    img.word(c + 4 + 12, 0xF0000000)     # logger's pvOwner: nowhere
    img.word(b + 48, 0x5A5A5A5A)         # comms' pxStack: stack words
    k = freertos.walk(img.reader(), syms)
    got = {t.tcb: t for t in k.tasks}
    assert "unreadable" in got[0xF0000000].problems[0]
    assert "is not a stack address" in got[b].problems[0] or "outside its stack" in got[b].problems[0]


def test_a_current_tcb_on_no_list_is_said():
    img, syms, (a, _b, _c) = healthy()
    img.empty_list(READY + 40)
    k = freertos.walk(img.reader(), syms)
    assert any(f"pxCurrentTCB {a:#x} is on no state list" in p for p in k.problems)
    assert k.running is not None and k.running.name == "infer"


@settings(max_examples=200, deadline=None)
@given(st.binary(min_size=0x200, max_size=0x200), st.integers(0, 0xFFFFFFFF))
def test_random_list_bytes_never_raise(junk, current):
    img, syms, _ = healthy()
    img.mem[0:0x200] = junk                # every list and pxCurrentTCB's neighbourhood
    img.word(CURRENT, current)
    k = freertos.walk(img.reader(), syms)
    assert len(k.tasks) <= freertos.MAX_TASKS + 1


def test_the_overflow_hook_names_the_running_task():

    img, syms, (a, _b, _c) = healthy()
    k = freertos.walk(img.reader(), syms)
    note = tasks.overflow_hook_note(["vApplicationStackOverflowHook", "vTaskSwitchContext", "xPortPendSVHandler"], k)
    assert note.startswith("the core is in FreeRTOS's vApplicationStackOverflowHook: at a context switch the kernel "
                           f"found that the stack of task 'infer' (TCB {a:#x}, pxStack {STACKS:#x}) overflowed")
    assert tasks.overflow_hook_note(["main"], k) is None and tasks.overflow_hook_note(["x"], None) is None


def test_a_list_into_unreadable_memory_keeps_what_it_read():
    img, syms, (a, b, c) = healthy()
    img.list_of(READY + 20, [b, c])
    img.word(b + 4 + 4, 0xF0000000)      # comms' pxNext: nowhere
    k = freertos.walk(img.reader(), syms)
    assert any("pxReadyTasksLists[1]" in p and "links item 2 at 0xf0000000, which is unreadable" in p
               for p in k.problems), k.problems
    assert "comms" in {t.name for t in k.tasks}


def test_zeroed_lists_are_a_kernel_not_started_and_a_cross_link_is_caught():
    img = Image()  # .bss before vTaskStartScheduler: every list all zero
    k = freertos.walk(img.reader(), FreeRtosSymbols())
    assert k.tasks == [] and k.problems == ["no task is on any list: the scheduler has not started "
                                            "(vTaskStartScheduler) or no task was created yet"]
    img, syms, (a, b, c) = healthy()
    img.word(SUSPENDED + 8 + 4, b + 4)   # the suspended list's first item: comms, which the ready list holds
    k = freertos.walk(img.reader(), syms)
    assert any("xSuspendedTaskList" in p and "cross-linked" in p for p in k.problems), k.problems
    assert {t.name for t in k.tasks} == {"infer", "comms"}


def test_a_current_tcb_outside_ram_is_no_task():
    img, syms, _ = healthy()
    img.word(CURRENT, 0x12345678)
    k = freertos.walk(img.reader(), syms)
    assert k.current is None and k.running is None and len(k.tasks) == 3
    assert any("pxCurrentTCB 0x12345678 points outside RAM" in p for p in k.problems)
