"""Agentless decoding (tflm.py) on byte images of TFLM's structures, laid out here from the
member offsets `ptype/o` printed for TFLM 90b983c2 built for a Cortex-M4 with -g (also in
../shared/TFLM-INTERNALS.md, section 1). Every expected figure is where this test put it."""
import itertools
import json
import struct

import pytest

from arenascope_plugin.acquire.reader import ImageReader
from arenascope_plugin.analyse import figures
from arenascope_plugin.decode import abi, tflm
from arenascope_plugin.decode import tflm_profile as P
from arenascope_plugin.decode.descriptor import Arena, Band, Region

# ptype/o, arm-none-eabi-g++ 12.2 -mcpu=cortex-m4, TFLM 90b983c2.
LAYOUT = tflm.Layout(
    pointer=4,
    offsets={
        P.INTERPRETER: {"model_": 0, "allocator_": 108, "graph_": 112, "tensors_allocated_": 148,
                                     "scratch_buffer_handles_": 152, "input_tensors_": 156, "output_tensors_": 160},
        P.GRAPH: {"subgraph_allocations_": 16},
        P.MICRO_ALLOCATOR: {P.NON_PERSISTENT_ALLOCATOR: 4, "builtin_data_allocator_": 12,
                                   "memory_planner_": 16, "scratch_buffer_request_count_": 24,
                                   "max_head_buffer_usage_": 32},
        P.ARENA_ALLOCATOR: {"buffer_head_": 8, "buffer_tail_": 12, "head_": 16, "tail_": 20,
                                               "temp_": 24},
        P.SUBGRAPH_ALLOCATIONS: {"node_and_registrations": 0, "tensors": 4},
        P.EVAL_TENSOR: {"data": 0, "dims": 4, "type": 8},
        P.SCRATCH_HANDLE: {"data": 0},
        P.NODE_AND_REGISTRATION: {"node": 0},
        P.NODE: {"user_data": 12, "builtin_data": 16},
    },
    sizes={P.MICRO_ALLOCATOR: 36, P.ARENA_ALLOCATOR: 36, P.SUBGRAPH_ALLOCATIONS: 8,
           P.EVAL_TENSOR: 12, P.NODE_AND_REGISTRATION: 32, P.SCRATCH_HANDLE: 4,
           P.TFLITE_TENSOR: 32},
    planner_type=P.GREEDY_PLANNER, planner_size=44)

ARENA, SIZE = 0x20001000, 2048
INTERP = 0x20000100
END = ARENA + SIZE
# The tail, top down, as TFLM lays it out (addresses chosen here):
SABA = END - 36
PLANNER = SABA - 44
ALLOC = PLANNER - 36
BUILTIN = ALLOC - 8                  # MicroBuiltinDataAllocator, 8 B (the planner's size on a Cortex-M)
SUBGRAPHS = ALLOC - 8 - 8
EVALS = SUBGRAPHS - 4 * 12           # 4 tensors
NODES = EVALS - 2 * 32               # 2 operators
VARIABLE = (NODES - 64) & ~15        # tensor 3, 64 B, 16-aligned
HANDLES = VARIABLE - 4               # 1 scratch handle
IN_ARRAY, IN_TENSOR = HANDLES - 16, HANDLES - 48
OUT_ARRAY, OUT_TENSOR = IN_TENSOR - 16, IN_TENSOR - 48
TAIL = OUT_TENSOR - 24               # 24 B of kernel data below it
OPDATA = TAIL                        # operator 0's OpData (its node's user_data), 8 B of them
# The head: tensor 0 (input) at +0, tensor 2 (output) at +16, scratch 0 at +32; head 96.
HEAD = 96

PLAN = {  # arenascope-plan's JSON for such a model (the fields the walk reads)
    "file_bytes": 1234,
    "tail": {"regions": [{"subgraph": 0, "operator": 0, "phase": "init", "size": 8, "what": "op 0 OpData",
                          "role": "op-data"},
                         {"subgraph": 0, "operator": 0, "phase": "init", "size": 99, "what": "op 0 more state",
                          "role": "kernel-buffer"}]},
    "subgraphs": [{"index": 0, "inputs": [0], "outputs": [2],
                   "operators": [{"index": 0}, {"index": 1}],
                   "tensors": [{"index": 0, "placement": "arena", "bytes": 16},
                               {"index": 1, "placement": "flash", "bytes": 40},
                               {"index": 2, "placement": "arena", "bytes": 16},
                               {"index": 3, "placement": "persistent", "bytes": 64}]}],
    "buffers": [{"id": 0, "subgraph": 0, "tensor": 0, "scratch": -1, "name": "in", "size": 16, "first": 0, "last": 1,
                 "offset": 0},
                {"id": 1, "subgraph": 0, "tensor": 2, "scratch": -1, "name": "out", "size": 16, "first": 2, "last": 2,
                 "offset": 16},
                {"id": 2, "subgraph": 0, "tensor": -1, "scratch": 0, "name": "op 1 scratch", "size": 64, "first": 2,
                 "last": 2, "offset": 32}],
}


def image(allocated=True, out_at=16):
    mem = bytearray(0x3000)
    base = 0x20000000

    def put(addr, value, size=4):
        struct.pack_into("<I" if size == 4 else "<B", mem, addr - base, value)

    L = LAYOUT.offsets
    put(INTERP + 0, 0x8000)                      # model_ (in flash)
    put(INTERP + 108, ALLOC)
    put(INTERP + 112 + 16, SUBGRAPHS)
    put(INTERP + 148, 1 if allocated else 0, 1)
    put(INTERP + 152, HANDLES)
    put(INTERP + 156, IN_ARRAY)
    put(INTERP + 160, OUT_ARRAY)
    put(ALLOC + 4, SABA)                         # the INonPersistentBufferAllocator base is at +0
    put(ALLOC + 12, BUILTIN)
    put(ALLOC + 16, PLANNER)
    put(ALLOC + 24, 1)                           # scratch requests
    put(ALLOC + 32, HEAD)
    for member, value in (("buffer_head_", ARENA), ("buffer_tail_", END), ("head_", ARENA + HEAD),
                          ("tail_", TAIL), ("temp_", ARENA + HEAD)):
        put(SABA + L[P.ARENA_ALLOCATOR][member], value)
    put(SUBGRAPHS, NODES)
    put(SUBGRAPHS + 4, EVALS)
    for t, where in ((0, ARENA), (1, 0x8100), (2, ARENA + out_at), (3, VARIABLE)):
        put(EVALS + 12 * t, where)
    put(HANDLES, ARENA + 32)
    put(NODES + 12, OPDATA)                      # node 0's user_data; its builtin_data stays null
    put(IN_ARRAY, IN_TENSOR)
    put(OUT_ARRAY, OUT_TENSOR)
    return ImageReader([(base, mem)])


def test_walk_rebuilds_tflms_map():
    w = tflm.walk(image(), LAYOUT, INTERP, PLAN)
    a = w.arena
    assert (a.base_addr, a.size, a.head, a.temp, a.tail) == (ARENA, SIZE, HEAD, HEAD, TAIL - ARENA)
    assert a.tflm_figures and w.model_addr == 0x8000 and not w.mismatches
    head = [(r.offset, r.size, r.kind, r.first_use, r.last_use) for r in a.regions if r.kind in ("tensor", "scratch")]
    assert head == [(0, 16, "tensor", 0, 1), (16, 16, "tensor", 2, 2), (32, 64, "scratch", 2, 2)]
    tail = {r.name: (r.offset + ARENA, r.size) for r in a.regions if r.kind in ("persistent", "metadata")}
    assert tail["SingleArenaBufferAllocator"] == (SABA, 36)
    assert tail["GreedyMemoryPlanner"] == (PLANNER, 44)
    assert tail["MicroAllocator"] == (ALLOC, 36)
    assert tail["MicroBuiltinDataAllocator"] == (BUILTIN, 8)  # the size no PLAN tail region gives: 2 pointers
    assert tail["SubgraphAllocations[]"] == (SUBGRAPHS, 8)
    assert tail["subgraph 0: TfLiteEvalTensor[4]"] == (EVALS, 48)
    assert tail["subgraph 0: NodeAndRegistration[2]"] == (NODES, 64)
    assert tail["variable tensor 3"] == (VARIABLE, 64)
    assert tail["ScratchBufferHandle[1]"] == (HANDLES, 4)
    assert tail["op 0 OpData"] == (OPDATA, 8)  # the first Init request of operator 0 is its user_data
    assert tail["input tensor 0: TfLiteTensor"] == (IN_TENSOR, 32) and tail["input TfLiteTensor*[1]"] == (IN_ARRAY, 4)
    # The tail is covered from tail_ to the end, the unknown parts named as such, no overlap.
    spans = sorted((r.offset, r.offset + r.size) for r in a.regions if r.kind in ("persistent", "metadata"))
    assert spans[0][0] == TAIL - ARENA and spans[-1][1] == SIZE
    assert all(x[1] == y[0] for x, y in itertools.pairwise(spans))
    variable = next(r for r in a.regions if r.name == "variable tensor 3")
    assert variable.flag_names == ["variable"]
    assert not figures.overlaps(a)
    d = tflm.descriptor(w, 4)
    assert d.agentless and not d.measured and d.invokes == 0 and not d.guard.filled


def test_a_placement_other_than_the_planners_is_reported():
    w = tflm.walk(image(out_at=128), LAYOUT, INTERP, PLAN)
    assert w.mismatches == ["tensor 2: TFLM put it at +128, the planner predicted +16"]
    assert [r.offset for r in w.arena.regions if r.kind == "tensor"] == [0, 128]


def test_an_interpreter_before_allocate_tensors_is_refused():
    with pytest.raises(tflm.AgentlessError, match="has not allocated its tensors yet"):
        tflm.walk(image(allocated=False), LAYOUT, INTERP, PLAN)


def test_pointers_out_of_order_are_refused():
    reader = image()
    broken = ImageReader([(0x20000000, bytearray(reader.segments[0][1]))])
    mem = bytearray(broken.segments[0][1])
    struct.pack_into("<I", mem, SABA + 20 - 0x20000000, ARENA + 8)  # tail_ below head_
    with pytest.raises(tflm.AgentlessError, match="are not in order"):
        tflm.walk(ImageReader([(0x20000000, mem)]), LAYOUT, INTERP, PLAN)


def test_headroom_against_the_planners_minimum_when_it_holds():
    a = tflm.walk(image(), LAYOUT, INTERP, PLAN).arena
    used = HEAD + (SIZE - (TAIL - ARENA))
    plain = figures.arena_figures(a)
    assert (plain.used, plain.peak, plain.headroom, plain.minimum_arena) == (used, used, SIZE - used, None)
    known = figures.arena_figures(a, minimum_arena=used + 100)
    assert (known.peak, known.headroom, known.minimum_arena) == (used + 100, SIZE - used - 100, used + 100)


def test_scratch_buffers_the_planner_does_not_know_and_stray_pointers_are_said_not_fatal():
    plan = dict(PLAN, buffers=PLAN["buffers"] + [
        {"id": 3, "subgraph": 0, "tensor": -1, "scratch": 1, "name": "op 1 scratch 2", "size": 16, "first": 2,
         "last": 2, "offset": 96}])
    w = tflm.walk(image(out_at=SIZE + 64), LAYOUT, INTERP, plan)  # tensor 2 points past the arena
    assert w.mismatches[0].startswith("TFLM holds 1 scratch buffer(s), the planner predicts 2")
    assert any(m.startswith("tensor 2 is at ") and "not shown" in m for m in w.mismatches)
    assert [(r.kind, r.offset) for r in w.arena.regions if r.kind in ("tensor", "scratch")] == [
        ("tensor", 0), ("scratch", 32)]


def adapter_arena(base=ARENA, tail_offset=TAIL - ARENA):
    """The arena as the TFLM adapter publishes it (arenascope_tflm_recorder.c): the planned buffers
    with planner ids, then the whole persistent tail as the last region."""
    regions = [Region(index=i, offset=o, size=s, id=i, kind="tensor", flags=0, first_use=first, last_use=last,
                      name=None)
               for i, (o, s, first, last) in enumerate(((0, 16, 0, 1), (16, 16, 2, 2), (32, 64, 2, 2)))]
    regions.append(Region(index=3, offset=tail_offset, size=SIZE - tail_offset, id=abi.ID_NONE, kind="persistent",
                          flags=0, first_use=abi.USE_NONE, last_use=abi.USE_NONE, name=None))
    band = Band(low_addr=0, high_addr=0, touched_lo=abi.NONE, touched_hi=abi.NONE)
    return Arena(index=0, base_addr=base, regions_addr=0x20002000, model_addr=0x8000, size=SIZE, head=HEAD, temp=HEAD,
                 tail=tail_offset, model_size=1234, canary=band, alignment=16, region_count=4, region_capacity=4,
                 flags=abi.ARENA_FLAG_TFLM | abi.ARENA_FLAG_PLANNER_IDS, regions=regions)


def test_the_adapters_whole_tail_is_split_into_tflms_objects():
    a = adapter_arena()
    assert tflm.split_tail(a, tflm.walk(image(), LAYOUT, INTERP, PLAN).arena) is None
    assert [r.index for r in a.regions] == list(range(len(a.regions)))  # the table's order kept
    assert [(r.offset, r.size, r.id) for r in a.regions[:3]] == [(0, 16, 0), (16, 16, 1), (32, 64, 2)]
    tail = {r.name: (r.offset + ARENA, r.size) for r in a.regions[3:]}
    assert tail["MicroAllocator"] == (ALLOC, 36) and tail["variable tensor 3"] == (VARIABLE, 64)
    spans = [(r.offset, r.offset + r.size) for r in a.regions[3:]]
    assert spans[0][0] == TAIL - ARENA and spans[-1][1] == SIZE
    assert all(x[1] == y[0] for x, y in itertools.pairwise(spans))
    assert not figures.overlaps(a)


def test_the_adapters_tail_stays_whole_when_the_interpreter_holds_another_arena():
    walked = tflm.walk(image(), LAYOUT, INTERP, PLAN).arena
    a = adapter_arena(base=ARENA + 0x1000)
    why = tflm.split_tail(a, walked)
    assert why.startswith(f"the MicroInterpreter found holds the arena {ARENA:#x}+{SIZE}") and len(a.regions) == 4
    a = adapter_arena(tail_offset=TAIL - ARENA - 16)
    assert tflm.split_tail(a, walked) is not None and len(a.regions) == 4
    a = adapter_arena()
    a.regions.append(a.regions.pop(0))  # the tail is not the table's last entry
    assert tflm.split_tail(a, walked) == "the published tail is not one region at the table's end"


def test_live_agentless_walks_again_only_when_tflms_allocator_moves():
    """The live poller (the pipeline with its interpreter pinned) reads the allocator's state at
    each refresh (model_, tensors_allocated_, allocator_, the arena allocator's address and its
    five pointers: 9 reads) and checks and walks TFLM's objects again only when that state
    changed, e.g. a new tail_ after another AllocateTensors."""
    from arenascope_plugin import pipeline
    from arenascope_plugin.acquire.reader import CountingReader
    from arenascope_plugin.acquire.symbols import FixedCore, TableSymbols
    from arenascope_plugin.serve import livepoll
    img = image()
    counting = CountingReader(img)
    target = pipeline.Target(counting, TableSymbols(layout=LAYOUT), FixedCore(cortex_m=False))
    poller = livepoll.LivePoller(target, pipeline.Settings(interpreter=INTERP))
    first = poller.refresh()["arenas"][0]
    walked = counting.calls
    again = poller.refresh()["arenas"][0]
    assert counting.calls - walked == 9 and walked > 27
    assert again == first and again["tail_offset"] == TAIL - ARENA
    base, data = img.segments[0]
    mem = bytearray(data)
    struct.pack_into("<I", mem, SABA + LAYOUT.offsets[P.ARENA_ALLOCATOR]["tail_"] - base, TAIL - 16)
    img.segments[0] = (base, bytes(mem))
    before = counting.calls
    moved = poller.refresh()["arenas"][0]
    assert moved["tail_offset"] == TAIL - 16 - ARENA and counting.calls - before > 27


def test_a_link_lost_during_an_agentless_refresh_is_not_taken_for_unreadable_objects():
    """OpenOCD gone mid-refresh: TFLM's objects then look unreadable, which agentless mode would
    report as a damaged interpreter; the poller sees that its reader's link failed (TclReader's
    link_failures) and publishes nothing for the refresh (MemoryReadError: 'live read failed')."""
    from arenascope_plugin import pipeline
    from arenascope_plugin.acquire.reader import MemoryReadError
    from arenascope_plugin.acquire.symbols import FixedCore, TableSymbols
    from arenascope_plugin.serve import livepoll

    class Flaky:
        def __init__(self, inner):
            self.inner, self.up, self.link_failures, self.last_link_error = inner, True, 0, ""

        def read(self, addr, length):
            if not self.up:
                self.link_failures += 1
                self.last_link_error = "cannot connect to OpenOCD's Tcl port: Connection refused"
                raise MemoryReadError(addr, length, self.last_link_error)
            return self.inner.read(addr, length)

    reader = Flaky(image())
    target = pipeline.Target(reader, TableSymbols(layout=LAYOUT), FixedCore(cortex_m=False))
    poller = livepoll.LivePoller(target, pipeline.Settings(interpreter=INTERP))
    good = poller.refresh()
    reader.up = False
    with pytest.raises(livepoll.LinkError, match="the link failed during this refresh: cannot connect"):
        poller.refresh()
    assert poller.last is good and poller.lost("gone")["live"]["link"] == "lost"


# Two-arena mode (TFLM 90b983c2 micro_allocator.cc, the five-argument MicroAllocator::Create):
# the MicroAllocator's persistent_buffer_allocator_ (at +8: the member after
# non_persistent_buffer_allocator_) points to a PersistentArenaBufferAllocator, its
# non_persistent_buffer_allocator_ to a NonPersistentArenaBufferAllocator, both in the persistent
# buffer. Member offsets: a vtable pointer, then the members in declaration order
# (persistent_arena_buffer_allocator.h, non_persistent_arena_buffer_allocator.h).
TWO_LAYOUT = tflm.Layout(
    pointer=4, offsets=LAYOUT.offsets,
    sizes=dict(LAYOUT.sizes, **{tflm.NPA: 32, tflm.PA: 16}),
    planner_type=P.GREEDY_PLANNER, planner_size=44, saba_persistent_base=4,
    optional={P.MICRO_ALLOCATOR: {P.PERSISTENT_ALLOCATOR: (8, 4)},
              tflm.NPA: {"buffer_head_": (4, 4), "buffer_tail_": (8, 4), "head_temp_": (12, 4), "next_temp_": (16, 4)},
              tflm.PA: {"buffer_head_": (4, 4), "buffer_tail_": (8, 4), "tail_temp_": (12, 4)}})
NP_BASE, NP_SIZE = 0x20002000, 512         # the non-persistent buffer: head and temporaries
# The persistent buffer: image()'s arena 16 B longer, so that the two allocators (48 B) take the
# top where image()'s SingleArenaBufferAllocator (36 B) was, above its GreedyMemoryPlanner (a 4 B
# gap below them: TFLM would pack the planner right under them; the walk does not depend on it).
P_BASE, P_SIZE = ARENA, SIZE + 16
PABA, NPABA = END, END - 32                # Create's order, top down: 16 B, then 32 B
TWO_PLANNER = PLANNER


def two_arena_image():
    """image()'s model, its objects moved as two-arena mode places them: the head in the
    non-persistent buffer, the tail in the persistent one, with the two allocators at its top."""
    base, data = image().segments[0]
    mem = bytearray(data)

    def put(addr, value):
        struct.pack_into("<I", mem, addr - base, value)

    put(ALLOC + 4, NPABA)
    put(ALLOC + 8, PABA)
    put(ALLOC + 16, TWO_PLANNER)
    for off, value in ((4, NP_BASE), (8, NP_BASE + NP_SIZE), (12, NP_BASE + HEAD), (16, NP_BASE + HEAD)):
        put(NPABA + off, value)
    for off, value in ((4, P_BASE), (8, P_BASE + P_SIZE), (12, TAIL)):
        put(PABA + off, value)
    for t, where in ((0, NP_BASE), (2, NP_BASE + 16)):   # the head's tensors, now in the other buffer
        put(EVALS + 12 * t, where)
    put(HANDLES, NP_BASE + 32)
    return ImageReader([(base, mem)])


def test_walk_of_a_two_arena_interpreter_gives_both_buffers():
    w = tflm.walk(two_arena_image(), TWO_LAYOUT, INTERP, PLAN)
    assert w.two_arena and not w.mismatches, w.mismatches
    head, tail = w.arenas
    assert (head.index, head.memory, head.base_addr, head.size, head.head, head.temp, head.tail) == \
        (0, "non-persistent", NP_BASE, NP_SIZE, HEAD, HEAD, NP_SIZE)
    assert [(r.offset, r.size, r.kind) for r in head.regions] == [(0, 16, "tensor"), (16, 16, "tensor"),
                                                                  (32, 64, "scratch")]
    assert (tail.index, tail.memory, tail.base_addr, tail.size, tail.head, tail.tail) == \
        (1, "persistent", P_BASE, P_SIZE, 0, TAIL - P_BASE)
    named = {r.name: (tail.base_addr + r.offset, r.size) for r in tail.regions}
    assert named["PersistentArenaBufferAllocator"] == (PABA, 16)
    assert named["NonPersistentArenaBufferAllocator"] == (NPABA, 32)
    assert named["GreedyMemoryPlanner"] == (TWO_PLANNER, 44)
    assert named["MicroAllocator"] == (ALLOC, 36)
    assert "SingleArenaBufferAllocator" not in named
    assert sum(r.size for r in tail.regions) == P_BASE + P_SIZE - TAIL   # the tail covered, gaps named
    desc = tflm.descriptor(w, 4)
    assert desc.arena_count == 2 and [a.base_addr for a in desc.arenas] == [NP_BASE, P_BASE]


def test_one_arena_stays_one_arena_when_the_layout_knows_two_arena_mode():
    """A SingleArenaBufferAllocator serves both interfaces: persistent_buffer_allocator_ is its
    IPersistentBufferAllocator base, 4 B into it (DWARF's base offset)."""
    base, data = image().segments[0]
    mem = bytearray(data)
    struct.pack_into("<I", mem, ALLOC + 8 - base, SABA + 4)
    w = tflm.walk(ImageReader([(base, mem)]), TWO_LAYOUT, INTERP, PLAN)
    assert not w.two_arena and len(w.arenas) == 1 and w.arena.memory == ""
    assert (w.arena.base_addr, w.arena.size, w.arena.tail) == (ARENA, SIZE, TAIL - ARENA)
    # Two-arena objects side by side in memory are no single object: 4 B apart is the only test.
    assert tflm.is_two_arena(TWO_LAYOUT, NPABA, PABA) and not tflm.is_two_arena(TWO_LAYOUT, SABA, SABA + 4)


def test_arena_info_says_which_kernels_the_plan_assumed():
    """`arena info` in agentless mode names the kernels and CPU the planner was run for, with how
    they were found: from the ELF (a linked CMSIS-NN function; the CPU as set here), or the
    reference kernels when no CMSIS-NN function is linked."""
    from arenascope_plugin import pipeline
    from arenascope_plugin.acquire.symbols import FixedCore, TableSymbols
    from arenascope_plugin.present import textreports
    cmsis = TableSymbols({"arm_fully_connected_s8": 0x1000, "arm_svdf_s8": 0x1100}, layout=LAYOUT)
    ctx = pipeline.gather(pipeline.Target(image(), cmsis, FixedCore(cortex_m=False)),
                          pipeline.Settings(interpreter=INTERP, cpu="m55"))
    lines = textreports.info_report(ctx)
    assert lines[4] == ("  kernels:                TFLM's CMSIS-NN kernels for cortex-m55, as the planner assumed "
                        "(CMSIS-NN kernels: the ELF links arm_fully_connected_s8 and 1 more; CPU cortex-m55: "
                        "set arena cpu)"), lines
    assert lines[3].startswith("  band measurements:") and "arena 0" in lines[5], lines
    plain = pipeline.gather(pipeline.Target(image(), TableSymbols(layout=LAYOUT), FixedCore(cortex_m=False)),
                            pipeline.Settings(interpreter=INTERP))
    assert ("  kernels:                TFLM's reference kernels, as the planner assumed (reference kernels: the ELF "
            "links none of CMSIS-NN's functions)") in textreports.info_report(plain)


def test_a_kernel_buffer_is_named_through_the_pointer_its_opdata_holds():
    """A kernel's persistent buffer from Prepare (CMSIS-NN's kernel sums on an MVE core: the
    planner's "kernel-buffer" request) is found through the OpData word that points to it, and
    named as the planner names it; without such a word it stays in the unnamed tail."""
    plan = dict(PLAN, tail={"regions": [
        {"subgraph": 0, "operator": 0, "phase": "init", "size": 8, "what": "op 0 OpData", "role": "op-data"},
        {"subgraph": 0, "operator": 0, "phase": "prepare", "size": 12, "what": "op 0 kernel sums",
         "role": "kernel-buffer"}]})
    img = image()
    base, data = img.segments[0]
    mem = bytearray(data)
    struct.pack_into("<II", mem, OPDATA - base, 0x12345678, OPDATA + 8)  # OpData: a value, then the pointer
    img.segments[0] = (base, bytes(mem))
    a = tflm.walk(img, LAYOUT, INTERP, plan).arena
    tail = [(r.offset + ARENA, r.size, r.name) for r in a.regions if TAIL - ARENA <= r.offset < OUT_TENSOR - ARENA]
    assert tail == [(OPDATA, 8, "op 0 OpData"), (OPDATA + 8, 12, "op 0 kernel sums"),
                    (OPDATA + 20, 4, tflm.UNNAMED_TAIL)], tail
    assert not figures.overlaps(a)
    plain = tflm.walk(image(), LAYOUT, INTERP, plan).arena  # OpData without the pointer
    assert [r.name for r in plain.regions if r.offset == TAIL - ARENA + 8] == [tflm.UNNAMED_TAIL]


def test_a_tflm_no_era_describes_is_named_as_such_not_as_a_missing_agent_or_debug_info():
    """An ELF that links TFLM (its MicroAllocator's vtable) whose graph class is none of the eras'
    (tflm_profile): every command says "this TFLM version is not supported", naming the classes it
    found and the eras known; not "Link the agent" or "build TFLM with -g". An era's graph vtable
    with no DWARF for its classes is the -g case, and names the era."""
    from arenascope_plugin import pipeline
    from arenascope_plugin.acquire.symbols import FixedCore, TableSymbols
    from arenascope_plugin.analyse import agentless
    from arenascope_plugin.errors import TargetError
    odd = TableSymbols({"_ZTVN6tflite14MicroAllocatorE": 0x108B20, "__StackLimit": 0x20000080,
                        "__StackTop": 0x20000100}, ram=[(0x20000000, 0x20000100, ".bss")])
    text = agentless.unsupported_tflm(odd)
    assert text.startswith("agentless mode: this TFLM version is not supported: arenascope knows the layouts "
                           "2026-08 (MicroInterpreterGraph, SingleArenaBufferAllocator), 2023-02 (concrete "
                           "MicroGraph, SingleArenaBufferAllocator), 2022-09 "), text
    assert "this firmware has none of their classes" in text, text
    with pytest.raises(TargetError, match="this TFLM version is not supported"):
        agentless.require_tflm(odd, "arena interpreters")
    reader = ImageReader([(0x20000000, bytes(0x100))])
    with pytest.raises(TargetError, match="not supported") as err:
        pipeline.gather(pipeline.Target(reader, odd, FixedCore(cortex_m=False)), pipeline.Settings())
    assert "Link the agent" not in str(err.value) and "-g" not in str(err.value)
    ctx = pipeline.gather(pipeline.Target(reader, odd, FixedCore(cortex_m=False)), pipeline.Settings(),
                          need_descriptor=False)
    assert ctx.note == text  # `arena fault` says it as its "no arena verdict"
    # The 2023-02 era's graph (a concrete tflite::MicroGraph, nm of real TFLM 58aa9833f) without its
    # DWARF: the era is named, and -g is the remedy.
    stripped = TableSymbols({"_ZTVN6tflite10MicroGraphE": 0x108C4C, "_ZTVN6tflite14MicroAllocatorE": 0x108B20})
    text = agentless.unsupported_tflm(stripped)
    assert "links TFLM (TFLM 2023-02 layout (concrete MicroGraph" in text and "describes neither " \
        "tflite::MicroAllocator nor tflite::MicroInterpreter: build the application with -g" in text, text
    # Today's TFLM's graph vtable is no "unsupported" by itself; a firmware with no TFLM is not either.
    assert agentless.unsupported_tflm(TableSymbols({})) is None


def test_without_kernel_sizes_the_kernels_data_stays_unnamed():
    """Issue 34: when the planner's replay is not the firmware's TFLM (its tail differs from TFLM's),
    the sizes it gives the kernels' data would name wrong spans: agentless.load walks again with
    kernel_sizes=False, and operator 0's OpData (8 B at OPDATA here) is left in the unnamed tail."""
    plan = json.loads(json.dumps(PLAN))
    named = tflm.walk(image(), LAYOUT, INTERP, plan).arena
    assert [(r.offset, r.size) for r in named.regions if r.name == "op 0 OpData"] == [(OPDATA - ARENA, 8)]
    plain = tflm.walk(image(), LAYOUT, INTERP, plan, kernel_sizes=False).arena
    assert not [r for r in plain.regions if r.name == "op 0 OpData"]
    assert any(r.name == tflm.UNNAMED_TAIL and r.offset <= OPDATA - ARENA < r.offset + r.size for r in plain.regions)
    # everything TFLM itself points to is still named
    assert {r.name for r in named.regions} - {"op 0 OpData"} <= {r.name for r in plain.regions} | {tflm.UNNAMED_TAIL}


def test_the_heap_is_ram_and_a_heap_arena_is_bounded_by_tflms_own_objects():
    """Issue 35: an arena malloc'd from the heap (esp-tflite-micro, Edge Impulse) is no data object
    of the ELF. The heap is RAM (its linker symbols bound it), and the arena's bounds come from
    TFLM's arena allocator (buffer_head_/buffer_tail_) when they are sane, never from a symbol
    merely named like an arena."""
    from arenascope_plugin.acquire.symbols import TableSymbols
    from arenascope_plugin.analyse import agentless
    from arenascope_plugin.decode import tflmstate
    # newlib's _sbrk grows from `end`; CMSIS startups name __HeapBase/__HeapLimit
    assert TableSymbols({"end": 0x20000800, "__HeapLimit": 0x20003000}).heap_span() == \
        (0x20000800, 0x20003000, "end/__HeapLimit")
    assert TableSymbols({"__HeapBase": 0x20000800, "__StackLimit": 0x20003000, "__StackTop": 0x20004000}) \
        .heap_span() == (0x20000800, 0x20003000, "__HeapBase/__StackLimit")   # up to the stack
    assert TableSymbols({"end": 0x20000800}).heap_span() is None                 # no end, no stack: unknown
    facts = tflmstate.Facts(ram=[(0x20000000, 0x20000100), (ARENA - 0x100, END + 0x100)],
                            heap=[(ARENA - 0x100, END + 0x100)])
    found = agentless._arena_from_objects(image(), LAYOUT, facts, ALLOC)
    assert found == (f"the heap block at {ARENA:#x} (TFLM's arena allocator)", ARENA, SIZE)
    facts.heap, facts.ram = [], [(0x20000000, 0x20000100)]      # the buffer in no memory the target has
    assert agentless._arena_from_objects(image(), LAYOUT, facts, ALLOC) is None


def test_a_shared_arena_names_each_interpreters_tail_objects_and_keeps_one_head():
    """Issue 35, item 2: two interpreters on one MicroAllocator (TFLM's way to run two models in
    one arena). The first interpreter's walk leaves the second's objects unnamed; merge_shared
    names them, prefixed with the interpreter, in those bytes only, and keeps the first's head."""
    def region(offset, size, name, kind="persistent"):
        return Region(index=0, offset=offset, size=size, id=abi.ID_NONE, kind=kind, flags=0, first_use=abi.USE_NONE,
                      last_use=abi.USE_NONE, name=name)

    def arena(regions):
        return Arena(index=0, base_addr=0x20000000, regions_addr=0, model_addr=0, size=1000, head=64, temp=64,
                     tail=600, model_size=0, canary=Band(0, 0, abi.NONE, abi.NONE), alignment=16,
                     region_count=len(regions), region_capacity=len(regions), flags=abi.ARENA_FLAG_TFLM,
                     regions=regions)
    first = arena([region(0, 64, "tensor 0", "tensor"), region(600, 100, tflm.UNNAMED_TAIL),
                   region(700, 36, "MicroAllocator", "metadata"), region(736, 264, tflm.UNNAMED_TAIL)])
    second = arena([region(0, 32, "tensor 0", "tensor"), region(600, 40, "input tensor 0: TfLiteTensor", "metadata"),
                    region(640, 60, tflm.UNNAMED_TAIL), region(700, 36, "MicroAllocator", "metadata"),
                    region(800, 48, "subgraph 0 operator 0 (FULLY_CONNECTED): OpDataFullyConnected"),
                    region(848, 152, tflm.UNNAMED_TAIL)])
    assert tflm.merge_shared(first, [("'hello'", second)]) == 2
    got = [(r.index, r.offset, r.size, r.name) for r in first.regions]
    assert got == [(0, 0, 64, "tensor 0"), (1, 600, 40, "'hello': input tensor 0: TfLiteTensor"),
                   (2, 640, 60, tflm.UNNAMED_TAIL), (3, 700, 36, "MicroAllocator"),
                   (4, 736, 64, tflm.UNNAMED_TAIL),
                   (5, 800, 48, "'hello': subgraph 0 operator 0 (FULLY_CONNECTED): OpDataFullyConnected"),
                   (6, 848, 152, tflm.UNNAMED_TAIL)]
    assert first.region_count == 7 and not figures.overlaps(first)


def test_a_risc_v_core_whose_trap_registers_cannot_be_read_is_not_said_free_of_faults():
    """Issue 36's first finding: on an RV32 firmware halted in its trap handler `arena fault` said
    "no fault: the core is not in a fault handler", having read nothing of the core. The RISC-V
    port reads mcause; where it cannot be read, the answer says whether a trap handler runs is not
    known (a host build keeps its plain answer). Stack bounds are picolibc's (`__stack` -
    `__stack_size`)."""
    from arenascope_plugin import pipeline
    from arenascope_plugin.acquire.symbols import FixedCore, TableSymbols
    from arenascope_plugin.analyse import diagnosis
    from arenascope_plugin.present import textreports

    class Rv32(TableSymbols):
        abi_name = "riscv32-ilp32"

        def abi(self):
            return self.abi_name

    symbols = Rv32({"__stack": 0x80800000, "__stack_size": 0x1000}, ram=[(0x807FF000, 0x80800000, ".stack")])
    reader = ImageReader([(0x807FF000, bytes([0xCC]) * 0x1000)])
    ctx = pipeline.gather(pipeline.Target(reader, symbols, FixedCore({"pc": 0x80000100, "sp": 0x807FFF00},
                                                                     cortex_m=False)),
                          pipeline.Settings(), need_descriptor=False)
    d = diagnosis.diagnose(ctx)
    assert ctx.port.name == "riscv32"
    assert d.core_unknown.startswith("the RISC-V core's trap registers (mcause, mepc, mtval) cannot be read here"), \
        d.core_unknown
    assert textreports.no_fault_lines(d)[0].startswith("arena fault: the RISC-V core's trap registers"), \
        textreports.no_fault_lines(d)
    assert (ctx.stack.low, ctx.stack.high) == (0x807FF000, 0x80800000)
    symbols = Rv32({"__stack": 0x80800000, "__stack_size": 0x1000}, ram=[(0x807FF000, 0x80800000, ".stack")])
    symbols.abi_name = "x86_64-sysv"
    ctx = pipeline.gather(pipeline.Target(reader, symbols, FixedCore({"pc": 0x80000100}, cortex_m=False)),
                          pipeline.Settings(), need_descriptor=False)
    assert diagnosis.diagnose(ctx).core_unknown == ""
