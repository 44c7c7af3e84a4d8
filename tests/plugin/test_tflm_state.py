"""The post-mortem of broken TFLM states (tflmstate.py, postmortem.py) on byte images of TFLM's
objects, laid out by test_tflm_agentless (TFLM 90b983c2's Cortex-M4 member offsets), then broken
here the way real firmware breaks: the stack's frames written over the tail's top, AllocateTensors
stopped part-way, an unreadable allocator. Every expected address and size is placed here."""
import copy
import struct

import pytest

from arenascope_plugin.acquire.reader import ImageReader
from arenascope_plugin.analyse import figures, postmortem
from arenascope_plugin.decode import tflmstate
from arenascope_plugin.ports import cortex_m
from arenascope_plugin.ports.cortex_m import faultrecord
from test_tflm_agentless import ALLOC, ARENA, END, INTERP, LAYOUT, PLAN, PLANNER, SABA, SIZE, TAIL, image

MA, SA, GP = tflmstate.MA, tflmstate.SA, tflmstate.GP
CODE = 0x1000                 # a BL at CODE (F000 F800): its return address is CODE + 4, odd: 0x1005
RETURN = CODE + 4 | 1
VT_MA, VT_SA, VT_GP = 0x9000, 0x9100, 0x9200
STACK_LO, STACK_HI = END, END + 0x400   # the stack right above the arena, painted 0xCC
FACTS = tflmstate.Facts(arena=("tensor_arena", ARENA, SIZE), code=[(0, 0x4000)], flash=[(0, 0x10000)],
                        ram=[(0x20000000, 0x20003000)], vtables={MA: (VT_MA, 16), SA: (VT_SA, 40), GP: (VT_GP, 40)},
                        stack=(STACK_LO, STACK_HI), call_before=cortex_m.PORT.call_before)


def layout():
    lay = copy.deepcopy(LAYOUT)
    lay.optional = {MA: {"model_is_allocating_": (20, 1)}, GP: {"max_buffer_count_": (4, 4), "buffer_count_": (8, 4)},
                    SA: {"temp_buffer_count_": (32, 4)}}
    return lay


class Image:
    """RAM from test_tflm_agentless.image with the vtable pointers set, a painted stack above the
    arena, and code with one BL instruction."""

    def __init__(self, allocated=True):
        self.base = 0x20000000
        self.mem = bytearray(image(allocated=allocated).segments[0][1])
        self.code = bytearray(0x4000)
        struct.pack_into("<HH", self.code, CODE, 0xF000, 0xF800)
        for addr, value in ((ALLOC, VT_MA + 8), (SABA, VT_SA + 8), (PLANNER, VT_GP + 8)):
            self.put(addr, value)
        self.put(PLANNER + 4, 40)      # max_buffer_count_
        self.put(PLANNER + 8, 3)       # buffer_count_
        for a in range(STACK_LO, STACK_HI, 4):
            self.put(a, 0xCCCCCCCC)

    def put(self, addr, value, size=4):
        struct.pack_into("<I" if size == 4 else "<B", self.mem, addr - self.base, value)

    def reader(self):
        return ImageReader([(self.base, self.mem), (0, self.code)])


def stack_figures(hwm):
    return figures.StackFigures(low=STACK_LO, high=STACK_HI, sp=STACK_HI - 64, hwm=hwm, source="scan", painted=True,
                                 arena_end=END)


def test_a_healthy_interpreter_is_allocated_with_every_object_sound():
    st = tflmstate.assess(Image().reader(), layout(), INTERP, FACTS)
    assert st.condition == "allocated" and not st.smashed
    assert [o.name for o in st.objects] == ["MicroInterpreter", "MicroAllocator", "SingleArenaBufferAllocator",
                                            "GreedyMemoryPlanner"]
    assert st.allocator == {"buffer_head_": ARENA, "buffer_tail_": END, "head_": ARENA + 96, "temp_": ARENA + 96,
                            "tail_": TAIL}
    assert (st.arena_base, st.arena_size, st.planner_counts) == (ARENA, SIZE, (3, 40))


def test_call_before_knows_bl_and_blx_and_nothing_else():
    code = bytearray(16)
    struct.pack_into("<HH", code, 0, 0xF7FF, 0xFFF0)   # BL (backwards)
    struct.pack_into("<HH", code, 4, 0xBF00, 0x4798)   # NOP; BLX r3
    struct.pack_into("<HH", code, 8, 0x4770, 0xBF00)   # BX LR; NOP: no call
    r = ImageReader([(0x100, code)])
    assert faultrecord.call_before(r, 0x105) == "BL"
    assert faultrecord.call_before(r, 0x109) == "BLX r3"
    assert faultrecord.call_before(r, 0x10D) is None
    assert faultrecord.call_before(r, 0x108) is None          # even: not a Thumb return address
    assert faultrecord.call_before(r, 0x2001) is None         # unreadable code


def smashed_image(depth=64):
    """The top `depth` bytes of the arena (SingleArenaBufferAllocator's 36 B and the planner's
    last 28) overwritten by stack frames: return addresses and pointers into the stack."""
    img = Image()
    for i, addr in enumerate(range(END - depth, END, 4)):
        img.put(addr, RETURN if i % 4 == 0 else STACK_LO + 0x100 + 4 * i if i % 4 == 1 else 0x11111110)
    return img


def test_the_stack_over_the_tail_smashes_the_allocator_and_is_said_object_by_object():
    img = smashed_image()
    st = tflmstate.assess(img.reader(), layout(), INTERP, FACTS)
    assert st.condition == "smashed" and st.tensors_allocated
    bad = {o.name: o.problems for o in st.smashed}
    # The planner's vtable pointer and counts, below the 64 B, still hold TFLM's values: its
    # overwritten last 28 B are the verdict's to find (next test), not the object check's.
    assert list(bad) == ["SingleArenaBufferAllocator"]
    assert "vtable pointer is" in bad["SingleArenaBufferAllocator"][0]
    assert st.allocator is None and (st.arena_base, st.arena_size) == (ARENA, SIZE)  # from the ELF's object
    # How far: the lowest return address below the stack's limit is the first word written.
    assert tflmstate.stack_reach(img.reader(), FACTS, STACK_LO, ARENA) == (
        END - 64, RETURN, f"{RETURN:#x}, a return address (the instruction before it is a call)")


def test_the_stack_into_arena_verdict_names_the_objects_and_ties_the_fault_to_one():
    img = smashed_image()
    reader = img.reader()
    st = tflmstate.assess(reader, layout(), INTERP, FACTS)
    pointer = STACK_LO + 0x100 + 4 * 1            # the word at END - 60 (in the planner), a stack pointer
    f = faultrecord.make_fault(source="core", exception="BusFault", cfsr=0x8200, hfsr=0, mmfar=None, bfar=pointer + 8,
                    exc_return=0xFFFFFFF9, frame_addr=STACK_HI - 96, frame=[0] * 8)
    plan = dict(PLAN, arena={"recommended_bytes": SIZE}, tail={"bytes": END - TAIL, "regions": [
        {"offset": SABA - ARENA, "size": 36, "what": "SingleArenaBufferAllocator", "role": "arena-allocator"},
        {"offset": PLANNER - ARENA, "size": 44, "what": "GreedyMemoryPlanner", "role": "memory-planner"},
        {"offset": ALLOC - ARENA, "size": 36, "what": "MicroAllocator", "role": "micro-allocator"}]})
    v = postmortem.stack_into_arena(reader, FACTS, st, stack_figures(STACK_LO), f, plan)
    assert v.kind == "stack-into-arena"
    # The lowest return address at END - 64, the arena right below the limit: 64 B into the arena,
    # 16 B into the GreedyMemoryPlanner (at SABA - 44 = END - 80).
    assert v.headline.startswith("VERDICT: the stack ran into the arena: 64 B past its limit, 64 B into the arena, "
                                 f"down into GreedyMemoryPlanner (+{END - 64 - PLANNER} of it), over TFLM's "
                                 "persistent tail (SingleArenaBufferAllocator, GreedyMemoryPlanner)"), v.headline
    assert END - 64 - PLANNER == 16
    assert [(o["name"], o["addr"]) for o in v.smashed] == [("SingleArenaBufferAllocator", SABA),
                                                           ("GreedyMemoryPlanner", PLANNER)]
    assert (f"{pointer + 8:#x} is {pointer:#x} + 8: the value the stack left at {END - 60:#x} in "
            "GreedyMemoryPlanner") in " ".join(v.evidence)
    # The MicroAllocator below the reach is not named.
    assert all(o["name"] != "MicroAllocator" for o in v.smashed)


def test_no_stack_verdict_while_paint_is_left_at_the_limit():
    img = Image()
    st = tflmstate.assess(img.reader(), layout(), INTERP, FACTS)
    assert postmortem.stack_into_arena(img.reader(), FACTS, st, stack_figures(STACK_LO + 256), None, PLAN) is None


def unfinished_image(tail_below_temp=False, planner_full=False):
    img = Image(allocated=False)
    img.put(ALLOC + 20, 1, 1)                      # model_is_allocating_
    img.put(INTERP + 156, 0)                       # input_tensors_ / output_tensors_ null
    img.put(INTERP + 160, 0)
    if tail_below_temp:
        img.put(SABA + 24, TAIL + 32)              # temp_ above tail_
    if planner_full:
        img.put(PLANNER + 8, 40)
    return img


REPLAY_PLAN = dict(PLAN, arena={"minimum_bytes": SIZE + 300, "recommended_bytes": SIZE + 336, "margin_pct": 10,
                                "exact": True},
                   replay={"arena_bytes": SIZE, "failed": {
                       "what": "GreedyMemoryPlanner arrays", "phase": "AllocateTensors: memory planning",
                       "bytes": 160, "available": 120, "message": "Too many buffers (max is 3)"},
                       "state": {"head": 96, "temp": 96, "tail": TAIL - ARENA}, "outcome": {"kind": "error"}})


def test_allocate_tensors_unfinished_is_told_from_its_frozen_state():
    st = tflmstate.assess(unfinished_image(planner_full=True).reader(), layout(), INTERP, FACTS)
    assert st.condition == "unfinished" and not st.tensors_allocated
    text = "\n".join(st.evidence)
    assert "model_is_allocating_ is still true" in text
    assert "the memory planner holds 40 buffers, its maximum for the free space (40)" in text
    assert "input_tensors_ is null" in text


def test_not_started_is_not_a_failure():
    img = Image(allocated=False)
    img.put(ALLOC + 12, 0)                          # no builtin data allocator yet
    img.put(SABA + 20, END - 116)                   # tail_: the constructor's three objects only
    st = tflmstate.assess(img.reader(), layout(), INTERP, FACTS, constructor_tail=116)
    assert st.condition == "not-started"
    # said as not yet run, not as a failure to finish (a new user's stop at main)
    assert st.unmeasured == "not measured yet: AllocateTensors has not run (stop after it to see the arena laid out)"
    assert tflmstate.assess(unfinished_image().reader(), layout(), INTERP, FACTS).unmeasured == \
        tflmstate.HEADROOM_NOT_MEASURED


def test_a_persistent_allocation_below_temp_is_named():
    st = tflmstate.assess(unfinished_image(tail_below_temp=True).reader(), layout(), INTERP, FACTS)
    assert st.condition == "unfinished"
    assert any("is below temp_" in e and "wraps around" in e for e in st.evidence)


def test_allocation_verdicts_returned_crashed_and_ignored():
    st = tflmstate.assess(unfinished_image().reader(), layout(), INTERP, FACTS)
    returned = postmortem.allocation(st, None, postmortem.Halt(pc=0x1200, function="allocation_failed",
                                                               frames=["allocation_failed", "main"]), REPLAY_PLAN)
    assert returned.kind == "allocation-failed"
    assert "it returned kTfLiteError: At 2048 B, GreedyMemoryPlanner arrays, in memory planning, does not fit: " \
        "TFLM prints \"Too many buffers (max is 3)\". The arena is" in returned.headline
    assert f"The arena is {SIZE} B and this model needs {SIZE + 300} B with these kernels: 300 B short" in \
        returned.headline
    assert any("exactly where the replay stops" in e for e in returned.evidence)
    assert any('TFLM prints "Too many buffers (max is 3)"' in e for e in returned.evidence)
    hang = postmortem.Halt(pc=0x1300, function="AbortImpl", frames=[
        "AbortImpl", "tflite::MicroInterpreterGraph::PrepareSubgraphs", "tflite::MicroInterpreter::AllocateTensors",
        "main"])
    hung = postmortem.allocation(st, None, hang, REPLAY_PLAN)
    # A stop at a breakpoint inside AllocateTensors (not stuck, no fault) is a failure only when the
    # replay says the arena is too small: on a big enough one it is just not finished yet.
    paused = postmortem.Halt(pc=0x1300, function="tflite::GreedyMemoryPlanner::CalculateOffsetsIfNeeded", frames=[
        "tflite::GreedyMemoryPlanner::CalculateOffsetsIfNeeded", "tflite::MicroInterpreter::AllocateTensors", "main"])
    assert postmortem.allocation(st, None, paused, REPLAY_PLAN).kind == "allocation-failed"  # 300 B short
    fits = dict(REPLAY_PLAN, arena=dict(REPLAY_PLAN["arena"], minimum_bytes=SIZE), replay=None)
    assert postmortem.allocation(st, None, paused, fits) is None
    assert hung.kind == "allocation-failed" and "TFLM hangs inside it, reacting to a too-small arena" in hung.headline
    assert any(e.startswith("the core is stuck at 0x1300 in AbortImpl") for e in hung.evidence)
    f = faultrecord.make_fault(source="core", exception="HardFault", cfsr=0, hfsr=1 << 30, mmfar=None, bfar=None,
                    exc_return=0xFFFFFFF9, frame_addr=STACK_HI - 96, frame=[0] * 8)
    ignored = postmortem.allocation(st, f, postmortem.Halt(pc=0x1400, function="HardFault_Handler",
                                                            frames=["HardFault_Handler", "<exception frame>", "main"]),
                                    REPLAY_PLAN)
    assert ignored.kind == "failure-ignored"
    assert "this HardFault comes from the unallocated interpreter" in ignored.headline
    assert sum("input_tensors_ is null" in e for e in ignored.evidence) == 1   # said once


def test_an_unreadable_allocator_is_said_and_nothing_raises():
    img = Image()
    img.put(INTERP + 108, ARENA + SIZE - 8)       # allocator_ 8 B below the end: its 36 B run past the image?
    reader = ImageReader([(0x20000000, img.mem[:END - 0x20000000])])
    st = tflmstate.assess(reader, layout(), INTERP, FACTS)
    assert st.condition == "smashed"
    assert st.smashed[0].name == "MicroAllocator" and st.smashed[0].problems[0].startswith("unreadable")


@pytest.mark.parametrize("value,kind", [(0, "null"), (ARENA + 4, "arena"), (0x8000, "flash"),
                                        (0x20000100, "ram"), (0x60000000, "nowhere")])
def test_points(value, kind):
    assert tflmstate.points(FACTS, value, (ARENA, END)) == kind


def test_objects_overwritten_but_not_by_the_stack_say_so_and_where_to_watch():
    img = Image()
    img.put(SABA, 0)                                   # the allocator's vtable pointer zeroed
    img.put(PLANNER + 8, (1 << 32) - 100)              # buffer_count_ -100 (an int)
    st = tflmstate.assess(img.reader(), layout(), INTERP, FACTS)
    assert st.condition == "smashed"
    assert [o.name for o in st.smashed] == ["SingleArenaBufferAllocator", "GreedyMemoryPlanner"]
    assert "buffer_count_ -100 and max_buffer_count_ 40 are not a planner's counts" in st.smashed[1].problems[0]
    stack = stack_figures(STACK_LO + 512)              # paint left at the limit: not the stack
    assert postmortem.stack_into_arena(img.reader(), FACTS, st, stack, None, PLAN) is None
    v = postmortem.damaged(st, stack, [])
    assert v.kind == "tflm-damaged"
    assert "and the stack did not do it (its paint is left at its limit)" in v.headline
    assert f"watch -l *(unsigned int *){PLANNER + 8:#x}" in v.headline   # buffer_count_ of the lowest object
    assert postmortem.damaged(st, stack, [v]) is None                     # another verdict explains it


def test_a_model_pointer_into_no_memory_makes_the_interpreter_unsound():
    img = Image()
    img.put(INTERP, 0x12345678)                        # model_
    st = tflmstate.assess(img.reader(), layout(), INTERP, FACTS)
    assert st.condition == "unknown" and st.objects[0].problems[0].startswith("model_ is 0x12345678")
    assert (st.arena_base, st.arena_size) == (ARENA, SIZE)       # still from the ELF's arena object


def test_a_fault_address_is_tied_to_a_stack_value_at_any_alignment():
    """Issue 33: the fault address 0x5AFE001C, a load from a pointer 0x5AFE0002 that the stack wrote
    into TFLM's tail, was tied to nothing (only word-aligned values were matched). Here the stack
    left 0x5AFE0002 in the GreedyMemoryPlanner's word at END - 56, and the code read 26 B past it."""
    img = smashed_image()
    img.put(END - 56, 0x5AFE0002)
    reader = img.reader()
    st = tflmstate.assess(reader, layout(), INTERP, FACTS)
    f = faultrecord.make_fault(source="core", exception="BusFault", cfsr=0x8200, hfsr=0, mmfar=None, bfar=0x5AFE001C,
                          exc_return=0xFFFFFFF9, frame_addr=STACK_HI - 96, frame=[0] * 8)
    plan = dict(PLAN, arena={"recommended_bytes": SIZE}, tail={"bytes": END - TAIL, "regions": [
        {"offset": SABA - ARENA, "size": 36, "what": "SingleArenaBufferAllocator", "role": "arena-allocator"},
        {"offset": PLANNER - ARENA, "size": 44, "what": "GreedyMemoryPlanner", "role": "memory-planner"}]})
    v = postmortem.stack_into_arena(reader, FACTS, st, stack_figures(STACK_LO), f, plan)
    assert (f"the faulting address (BFAR) 0x5afe001c is 0x5afe0002 + 26: the value the stack left at {END - 56:#x} "
            "in GreedyMemoryPlanner, loaded as one of TFLM's pointers and followed") in v.evidence, v.evidence


def test_the_replay_is_dropped_where_what_tflm_holds_contradicts_it():
    """Issue 34: a planner replaying another TFLM (or model, or kernels) than the firmware's must
    not give its figures in a broken state. What TFLM holds whole says so: the allocator frozen
    elsewhere than the replay stops, the MicroAllocator or the io arrays elsewhere than predicted."""
    st = tflmstate.assess(unfinished_image().reader(), layout(), INTERP, FACTS)
    assert postmortem.replay_disagrees(st, REPLAY_PLAN, ALLOC) is None      # frozen exactly where it stops
    off = dict(REPLAY_PLAN, replay=dict(REPLAY_PLAN["replay"], state={"head": 96, "temp": 96,
                                                                      "tail": TAIL - ARENA - 16}))
    assert postmortem.replay_disagrees(st, off, ALLOC) == (
        f"the target's allocator is frozen at head_ +96, temp_ +96, tail_ +{TAIL - ARENA}, the replay stops at "
        f"head_ +96, temp_ +96, tail_ +{TAIL - ARENA - 16}")
    placed = [{"offset": ALLOC - ARENA, "size": 36, "what": "MicroAllocator", "role": "micro-allocator"}]
    here = dict(REPLAY_PLAN, replay=dict(REPLAY_PLAN["replay"], persistent=placed))
    assert postmortem.replay_disagrees(st, here, ALLOC) is None
    moved = dict(REPLAY_PLAN, replay=dict(REPLAY_PLAN["replay"],
                                          persistent=[dict(placed[0], offset=ALLOC - ARENA - 8)]))
    assert postmortem.replay_disagrees(st, moved, ALLOC) == \
        f"the replay puts the MicroAllocator at {ALLOC - 8:#x}, TFLM put it at {ALLOC:#x}"
    # A smashed tail (no replay at this size): the input array the interpreter holds against the
    # tail at the recommended size moved to this end (16-aligned).
    smashed = tflmstate.State(interpreter=INTERP, condition="smashed", evidence=[], objects=[], arena_base=ARENA,
                              arena_size=SIZE, io_tensors={"input_tensors_": END - 400, "output_tensors_": 0})
    tail = {"arena": {"recommended_bytes": SIZE}, "tail": {"regions": [
        {"offset": SIZE - 400, "size": 4, "what": "input TfLiteTensor*[1]", "role": "input-tensor-array"}]}}
    assert postmortem.replay_disagrees(smashed, tail, None) is None
    tail["tail"]["regions"][0]["offset"] = SIZE - 432
    assert postmortem.replay_disagrees(smashed, tail, None) == \
        f"the replay puts the input TfLiteTensor* array at {END - 432:#x}, TFLM put it at {END - 400:#x}"
    # Dropped, the verdict gives no shortfall and says why.
    st.replay_mismatch = "..."
    v = postmortem.allocation(st, None, postmortem.Halt(pc=0x1200, function="allocation_failed",
                                                        frames=["allocation_failed", "main"]), None)
    assert v.headline == ("VERDICT: AllocateTensors did not finish: it returned kTfLiteError: the planner's replay "
                          "does not match this firmware's TFLM, so no shortfall is given (the evidence says what "
                          "TFLM's own objects hold).")


def test_the_stacks_reach_below_its_limit_is_a_figure_of_the_stack():
    """Paint left at the limit (a frame's untouched locals) hid how far the stack ran into the arena:
    `arena info` said a peak inside the stack while `arena fault` said 296 B past it, and
    $arena_stack_room() was 4. The post-mortem's deepest evidence now lowers the stack's figures."""
    s = figures.StackFigures(low=STACK_LO, high=STACK_HI, sp=STACK_HI - 64, hwm=STACK_LO + 4, source="scan",
                             painted=True, arena_end=END)
    assert s.peak == STACK_HI - STACK_LO - 4 and s.room_left == 4 and not s.peak_is_lower_bound and not s.overflowed
    s.reach_low = STACK_LO - 296
    assert s.peak == STACK_HI - STACK_LO + 296 and s.room_left == -296 and s.peak_is_lower_bound
    assert s.lowest == STACK_LO - 296 and s.overflowed   # the snapshot's `overflowed` says it too
    check = figures._stack_check(s)
    assert check.verdict == "FAIL" and check.reason.startswith(
        f"the stack ran 296 B past its limit {STACK_LO:#x} into what lies below (peak >= "
        f"{STACK_HI - STACK_LO + 296} B")


def test_without_a_fault_address_a_stacked_register_is_a_candidate_not_the_culprit():
    """A RAM dump without the SCB (no BFAR/MMFAR): stacked r0 holds a stack word + 36, but the
    faulting instruction may have used another register as its address (r0 was the destination of
    an `ldrb r0, [r8, #8]` on real TFLM 58aa9833f): said as a candidate, not as what was followed."""
    img = smashed_image()
    img.put(END - 56, 0x5AFE0002)
    reader = img.reader()
    st = tflmstate.assess(reader, layout(), INTERP, FACTS)
    f = faultrecord.make_fault(source="registers", exception="HardFault", cfsr=0, hfsr=0, mmfar=None, bfar=None,
                          exc_return=0xFFFFFFF9, frame_addr=STACK_HI - 96, frame=[0x5AFE0002 + 36] + [0] * 7,
                          status_unknown="a RAM dump holds no System Control Block")
    plan = dict(PLAN, arena={"recommended_bytes": SIZE}, tail={"bytes": END - TAIL, "regions": [
        {"offset": PLANNER - ARENA, "size": 44, "what": "GreedyMemoryPlanner", "role": "memory-planner"}]})
    v = postmortem.stack_into_arena(reader, FACTS, st, stack_figures(STACK_LO), f, plan)
    line = next(e for e in v.evidence if e.startswith("stacked r0"))
    assert line == (f"stacked r0 0x5afe0026 is 0x5afe0002 + 36: the value the stack left at {END - 56:#x} in "
                    "GreedyMemoryPlanner, perhaps loaded as one of TFLM's pointers and followed (no faulting address "
                    "is known, BFAR/MMFAR: which register the faulting access used is not, so this is a candidate, "
                    "not the culprit)"), v.evidence


def test_a_stack_the_dump_lacks_is_said_unread_not_unpainted():
    """A RAM dump cut short of the stack: the high-water mark is unknown because the stack was not
    read, not because it was never painted (a trial's truncated dump got "stack not painted?")."""
    from arenascope_plugin.present import render
    why = "0x203fe710..0x203ff000 is outside the RAM dump"
    s = figures.StackFigures(low=STACK_LO, high=STACK_HI, sp=None, hwm=None, source="none", painted=False,
                             arena_end=END, unread=why)
    check = figures._stack_check(s)
    assert check.verdict == "WARN" and check.reason.startswith(f"the stack {STACK_LO:#x}-{STACK_HI:#x} could not be "
                                                               f"read ({why})")
    assert f"high-water mark:          unknown: the stack could not be read ({why})" in "\n".join(
        render.stack_lines(s, indent=""))
    s.reach_low = STACK_LO - 288   # what the post-mortem found below the limit still counts
    assert figures._stack_check(s).verdict == "FAIL" and s.peak == STACK_HI - STACK_LO + 288
