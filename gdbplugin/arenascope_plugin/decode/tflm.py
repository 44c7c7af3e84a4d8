"""Agentless mode: TFLM's own objects, walked from a tflite::MicroInterpreter, as an arena map.

An unmodified TFLM firmware has no arenascope descriptor; its MicroInterpreter holds everything
(TFLM-INTERNALS.md, section 1; checked against tensorflow/tflite-micro 90b983c2):
  MicroInterpreter.allocator_ -> MicroAllocator.non_persistent_buffer_allocator_
      -> SingleArenaBufferAllocator {buffer_head_, buffer_tail_, head_, tail_, temp_}
  MicroInterpreter.graph_.subgraph_allocations_[s] -> {node_and_registrations, tensors[]}
      tensors[t].data.data: where TFLM put tensor t (head: planned; tail: variable)
  MicroInterpreter.scratch_buffer_handles_[k].data: scratch buffer k
  MicroInterpreter.input_tensors_ / output_tensors_: the persistent TfLiteTensor copies
Two-arena mode (MicroAllocator::Create(persistent, size, non_persistent, size), micro_allocator.cc):
  MicroAllocator.non_persistent_buffer_allocator_ -> NonPersistentArenaBufferAllocator
      {buffer_head_, buffer_tail_, head_temp_, next_temp_}: the head and the temporaries
  MicroAllocator.persistent_buffer_allocator_ -> PersistentArenaBufferAllocator
      {buffer_head_, buffer_tail_, tail_temp_}: the tail, with both allocator objects in it
  Told from one arena by the two pointers: one SingleArenaBufferAllocator holds both interfaces,
  so persistent_buffer_allocator_ then points inside the object non_persistent_ points into.
  The walk then gives two Arenas: 0 the non-persistent buffer, 1 the persistent one.
Lifetimes, sizes and names come from the model, through the planner tool (planner.py), never from
a second implementation here. Every member offset and type size comes from the firmware's DWARF
(the GDB side builds a Layout from gdb.Type); this module only reads memory with them, so it is
tested on byte images laid out from a Layout. The planner's arrays in free arena space are
overwritten by the first Invoke: nothing here reads them. No GDB import.
"""
import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from arenascope_plugin.acquire.planner import (
    ROLE_BUILTIN_DATA,
    ROLE_BUILTIN_DATA_ALLOCATOR,
    ROLE_KERNEL_BUFFER,
    ROLE_OP_DATA,
)
from arenascope_plugin.acquire.reader import MemoryReader, MemoryReadError
from arenascope_plugin.acquire.symbols import Symbols
from arenascope_plugin.decode import abi, measuredlayout
from arenascope_plugin.decode import tflm_profile as P
from arenascope_plugin.decode.descriptor import Arena, Band, Descriptor, Region
from arenascope_plugin.decode.plan import scratch_label
from arenascope_plugin.errors import ArenascopeError, TargetError

VARIABLE = next(bit for bit, name in abi.REGION_FLAGS.items() if name == "variable")
OFFLINE = next(bit for bit, name in abi.REGION_FLAGS.items() if name == "offline")
UNNAMED_TAIL = "other persistent data (per-channel buffers, quantization) and padding"  # no pointer to it

# What the walk reads, by role: the one table (tflm_profile) names the classes and members per era.
NPA, PA = P.TWO_ARENA_NON_PERSISTENT, P.TWO_ARENA_PERSISTENT


class AgentlessError(ArenascopeError):
    """TFLM's objects cannot be walked: the message says which and what to do."""


@dataclass
class Layout:
    """Member offsets and type sizes from DWARF, in bytes, by role (tflm_profile: INTERPRETER,
    MICRO_ALLOCATOR, ...) and member key; `era` says which TFLM the firmware links."""
    pointer: int                                    # 4 or 8
    offsets: dict[str, dict[str, int]]              # role -> member key -> offset
    sizes: dict[str, int]                           # role -> sizeof
    saba_nonpersistent_base: int = 0                # offset of INonPersistentBufferAllocator in SABA
    saba_persistent_base: int | None = None         # offset of IPersistentBufferAllocator in SABA (None: unknown)
    planner_type: str = ""                          # role of memory_planner_'s dynamic type (P.PLANNERS), "" unknown
    planner_size: int = 0
    # Sizes of members that are not pointer-sized (bools, enums: 1 byte on arm-none-eabi, whose
    # enums are short), and OPTIONAL members found: type -> member -> (offset, size).
    member_sizes: dict[str, dict[str, int]] = field(
        default_factory=lambda: {P.INTERPRETER: {"tensors_allocated_": 1}})
    optional: dict[str, dict[str, tuple]] = field(default_factory=dict)
    era: P.Era = P.NEWEST
    # Where the layout came from: "" the firmware's DWARF; else the real build arenascope measured
    # it on (tflm_profile.measured), for the classes the DWARF does not describe (`undescribed`),
    # with how many facts the DWARF and vtables confirmed.
    measured: str = ""
    undescribed: list[str] = field(default_factory=list)
    confirmed: int = 0

    def cls(self, role: str) -> str:
        """The era's class for a role, e.g. tflite::SimpleMemoryAllocator for ARENA_ALLOCATOR."""
        return self.era.cls(role) or role

    def name(self, role: str) -> str:
        """The era's class for a role without its namespace, as messages and region names say it."""
        return P.short(self.cls(role))

    def member(self, role: str, key: str) -> str:
        """The era's name of a member, as messages say it."""
        return self.era.member(role, key) or key

    def source(self) -> str:
        """Where the layout came from, as `arena info`, `arena interpreters` and the snapshot say it."""
        if not self.measured:
            return "the firmware's debug information"
        return (f"arenascope's layout of TFLM {self.era.id} measured on {self.measured}: the firmware's debug "
                f"information does not describe {', '.join(P.short(c) for c in self.undescribed)} (TFLM built "
                f"without -g, or not linked); {self.confirmed} sizes, offsets and vtables it does describe agree")

    def describe(self) -> str:
        """The era, and where the layout came from when it is not the firmware's DWARF."""
        return self.era.describe() + (f"; layout: {self.source()}" if self.measured else "")

    def off(self, type_name: str, member: str) -> int:
        return self.offsets[type_name][member]

    def opt(self, type_name: str, member: str) -> int | None:
        """The offset of an OPTIONAL member the firmware has, or None."""
        found = self.optional.get(type_name, {}).get(member)
        return None if found is None else found[0]

    @property
    def two_arena_known(self) -> bool:
        """Whether the firmware's DWARF describes two-arena mode's allocators (and the
        MicroAllocator's persistent_buffer_allocator_ that tells the modes apart)."""
        return self.opt(P.MICRO_ALLOCATOR, P.PERSISTENT_ALLOCATOR) is not None and \
            all(self.opt(NPA, m) is not None for m in ("buffer_head_", "buffer_tail_", "head_temp_", "next_temp_")) \
            and all(self.opt(PA, m) is not None for m in ("buffer_head_", "buffer_tail_", "tail_temp_")) and \
            bool(self.sizes.get(NPA)) and bool(self.sizes.get(PA))


def layout_json(lay: Layout) -> dict:
    """The snapshot's tflm.layout (and `arena interpreters --json`'s tflm_layout): the era
    (tflm_profile.era_json) and `source`: {"from": "debug-information"} or {"from": "measured",
    "measured_on", "undescribed": [classes], "confirmed": facts that agree}."""
    source = {"from": "measured", "measured_on": lay.measured, "undescribed": list(lay.undescribed),
              "confirmed": lay.confirmed} if lay.measured else {"from": "debug-information"}
    return {**P.era_json(lay.era), "source": source}


def era_of(symbols: Symbols) -> P.Era:
    """The TFLM era the firmware links (tflm_profile.detect over its symbols and DWARF), kept on
    symbols.memo. A firmware whose DWARF describes none of TFLM's classes with vtables (TFLM built
    without -g) is told by its vtables and its MicroInterpreter against the measured layouts
    (measuredlayout.era_of). TargetError when no era matches: said as an unsupported TFLM naming the
    classes found, or as missing debug information when the era's vtable is there but not its
    types and no measured layout fits."""
    memo = getattr(symbols, "memo", None)
    if memo is not None and "tflm-era" in memo:
        return memo["tflm-era"]

    def has_member(cls, member):
        found = symbols.members(cls, [member]) if member else None
        return found is not None and member in found  # (an empty dict holds no member either)

    def has_vtable(sym):
        return symbols.address(sym) is not None

    era, found = P.detect(has_vtable, lambda cls: symbols.type_size(cls) is not None, has_member)
    if era is None:
        candidates = P.undescribed(has_vtable) if symbols.type_size(P.NEWEST.cls_of(P.INTERPRETER)) else []
        if candidates:
            era = measuredlayout.era_of(symbols, candidates)
        else:
            linked = next((e for sym, e in P.graph_vtables() if has_vtable(sym)), None)
            if linked is not None and symbols.type_size(linked.cls_of(P.MICRO_ALLOCATOR)) is None:
                raise TargetError(f"agentless mode: this firmware links TFLM ({linked.describe()}), but its debug "
                                  f"information describes neither {linked.cls(P.MICRO_ALLOCATOR)} nor "
                                  f"{linked.cls(P.INTERPRETER)}: build the application with -g (and keep the "
                                  "ELF's symbols); the plugin reads TFLM's objects by their layout")
            raise TargetError("agentless mode: " + P.unsupported(found))
    if memo is not None:
        memo["tflm-era"] = era
    return era


def layout(symbols: Symbols) -> Layout:
    """TFLM's Layout in the firmware, from its debug information through Symbols (GDB's types or
    the DWARF read with pyelftools: the same questions, the same answers), for the era it links.
    Kept on the Symbols object (symbols.memo). TargetError names what is missing: no -g, or a TFLM
    no era of tflm_profile describes."""
    memo = getattr(symbols, "memo", None)
    if memo is not None and "tflm-layout" in memo:
        return memo["tflm-layout"]
    era = era_of(symbols)

    def ask(role, keys):
        """{key: (offset, size)} of the role's members this firmware has, None: no such type."""
        cls = era.cls(role)
        if cls is None:
            return None
        names = {m: k for k in keys if (m := era.member(role, k))}
        found = symbols.members(cls, list(names))
        return None if found is None else {names[m]: v for m, v in found.items() if m in names}

    offsets, member_sizes, optional, sizes, undescribed = {}, {}, {}, {}, []
    for role, keys in P.OPTIONAL.items():
        found = ask(role, keys)
        if found:  # another planner, or another TFLM: the post-mortem says less, nothing fails
            optional[role] = {m: v for m, v in found.items() if v[1] is not None}
    for role, keys in P.REQUIRED.items():
        found = ask(role, keys)
        if found is None:  # TFLM built without -g: the era's measured layout, where it is confirmed
            undescribed.append(role)
            continue
        # (`or k`: never taken, every era names REQUIRED's members; a None would stop the join)
        missing = [era.member(role, k) or k for k in keys if k not in found]
        if missing:
            raise TargetError(f"agentless mode: {era.cls(role)} has no member {', '.join(missing)} in this firmware: "
                              f"a TFLM between the layouts the plugin knows (closest: {era.describe()}); say which "
                              "TFLM commit you build, or add the arenascope agent")
        offsets[role] = {m: v[0] for m, v in found.items()}
        member_sizes[role] = {m: v[1] for m, v in found.items() if v[1] is not None}
    for role in P.SIZED:
        size = symbols.type_size(era.cls_of(role))
        if size is None:
            if role not in undescribed:
                undescribed.append(role)
        else:
            sizes[role] = size
    for role in P.SIZED_IF_PRESENT:
        size = symbols.type_size(cls) if (cls := era.cls(role)) else None
        if size:
            sizes[role] = size
    arena_cls = era.cls_of(P.ARENA_ALLOCATOR)
    np_base, p_base = (era.cls(r) for r in (P.NON_PERSISTENT_BASE, P.PERSISTENT_BASE))
    base = (symbols.base_offset(arena_cls, np_base) if np_base else 0) or 0
    persistent_base = symbols.base_offset(arena_cls, p_base) if p_base else None
    lay = Layout(pointer=symbols.pointer_size(), offsets=offsets, sizes=sizes, saba_nonpersistent_base=base,
                 saba_persistent_base=persistent_base, member_sizes=member_sizes, optional=optional, era=era)
    if undescribed:
        measuredlayout.fill(symbols, lay, undescribed)
    return _keep(memo, lay)


def _keep(memo, lay: Layout) -> Layout:
    if memo is not None:
        memo["tflm-layout"] = lay
    return lay


@dataclass
class Walk:
    """What the walk found, besides the Arena."""
    interpreter: int
    model_addr: int
    arena: Arena                                          # the one arena; two-arena mode: the non-persistent buffer
    mismatches: list[str] = field(default_factory=list)  # TFLM's placement differs from the planner's
    two_arena: bool = False
    arenas: list[Arena] = field(default_factory=list)     # every buffer: [arena], or [non-persistent, persistent]


def _ptr(reader, addr, layout):
    return int.from_bytes(reader.read(addr, layout.pointer), "little")


def _u(reader, addr, size):
    return int.from_bytes(reader.read(addr, size), "little")


def read_header(reader: MemoryReader, layout: Layout, interpreter: int) -> tuple[int, bool]:
    """(model address, tensors_allocated) of the interpreter at `interpreter`."""
    mi = P.INTERPRETER
    model = _ptr(reader, interpreter + layout.off(mi, "model_"), layout)
    allocated = _u(reader, interpreter + layout.off(mi, "tensors_allocated_"), 1)
    return model, bool(allocated)


@dataclass
class Allocators:
    """The arena allocators of a MicroAllocator: one SingleArenaBufferAllocator (two False), or
    two-arena mode's NonPersistentArenaBufferAllocator and PersistentArenaBufferAllocator. head_*:
    the buffer holding the head and temporaries (head_ / temp_ are TFLM's head_ and temp_, or
    head_temp_ and next_temp_); tail_*: the buffer holding the persistent tail (tail_ is tail_, or
    tail_temp_). One arena: both buffers are the same."""
    two: bool
    non_persistent: int      # the object non_persistent_buffer_allocator_'s object starts at
    persistent: int
    head_base: int
    head_end: int
    head_: int
    temp_: int
    tail_base: int
    tail_end: int
    tail_: int

    def key(self) -> tuple:
        return (self.two, self.non_persistent, self.persistent, self.head_base, self.head_end, self.head_, self.temp_,
                self.tail_base, self.tail_end, self.tail_)


def is_two_arena(layout: Layout, non_persistent_ptr: int, persistent_ptr: int | None) -> bool:
    """Whether a MicroAllocator's two allocator pointers are two objects (two-arena mode): one
    SingleArenaBufferAllocator serves both (micro_allocator.cc passes the same object for both),
    so its two pointers are that object's two base sub-objects, IPersistentBufferAllocator's
    offset minus INonPersistentBufferAllocator's apart (DWARF; unknown: one pointer, as the
    second base of a class whose first base is a vtable pointer only). Two-arena mode's objects
    sit side by side in the persistent buffer, so lying within one object's size is no test."""
    if persistent_ptr is None:
        return False
    apart = (layout.saba_persistent_base if layout.saba_persistent_base is not None else layout.pointer) - \
        layout.saba_nonpersistent_base
    return persistent_ptr - non_persistent_ptr != apart


def allocators(reader: MemoryReader, layout: Layout, allocator: int) -> Allocators:
    """The arena allocators of the MicroAllocator at `allocator`. AgentlessError when it uses two
    buffers and the firmware's DWARF does not describe their allocators."""
    ma, sa = P.MICRO_ALLOCATOR, P.ARENA_ALLOCATOR
    np_ptr = _ptr(reader, allocator + layout.off(ma, P.NON_PERSISTENT_ALLOCATOR), layout)
    p_off = layout.opt(ma, P.PERSISTENT_ALLOCATOR)
    p_ptr = _ptr(reader, allocator + p_off, layout) if p_off is not None else None
    if not is_two_arena(layout, np_ptr, p_ptr):
        saba = np_ptr - layout.saba_nonpersistent_base
        bh, bt, head, temp, tail = (_ptr(reader, saba + layout.off(sa, k), layout)
                                    for k in ("buffer_head_", "buffer_tail_", "head_", "temp_", "tail_"))
        return Allocators(False, saba, saba, bh, bt, head, temp, bh, bt, tail)
    if not layout.two_arena_known:
        raise AgentlessError(f"the {layout.name(ma)} at {allocator:#x} uses two buffers (its persistent and "
                             "non-persistent allocators are different objects: TFLM's two-arena mode), but the "
                             f"firmware's debug information has no {layout.cls(NPA)} or {layout.name(PA)} to read "
                             "them by: build TFLM with -g")
    bh, bt, head, temp = (_ptr(reader, np_ptr + layout.opt(NPA, k), layout)
                          for k in ("buffer_head_", "buffer_tail_", "head_temp_", "next_temp_"))
    pbh, pbt, ptail = (_ptr(reader, p_ptr + layout.opt(PA, k), layout) for k in ("buffer_head_", "buffer_tail_",
                                                                               "tail_temp_"))
    return Allocators(True, np_ptr, p_ptr, bh, bt, head, temp, pbh, pbt, ptail)


def allocator_state(reader: MemoryReader, layout: Layout, interpreter: int) -> tuple:
    """What says whether TFLM's layout of the interpreter at `interpreter` moved: (model address,
    tensors_allocated_, allocator address, and the arena allocators' pointers (Allocators.key)).
    A handful of words: the live reader reads it at every refresh and walks the objects again
    only when it changed (docs/integrating-tflm.md)."""
    mi = P.INTERPRETER
    model_addr, allocated = read_header(reader, layout, interpreter)
    if not allocated:
        return model_addr, False, 0
    allocator = _ptr(reader, interpreter + layout.off(mi, "allocator_"), layout)
    return (model_addr, True, allocator, *allocators(reader, layout, allocator).key())


@dataclass
class _Pointers:
    """What `walk` reads of the interpreter and its MicroAllocator before the model's arrays."""
    allocator: int
    al: Allocators
    subgraphs: int            # graph_.subgraph_allocations_
    handles: int              # scratch_buffer_handles_
    io_arrays: list[int]      # input_tensors_, output_tensors_
    planner: int              # memory_planner_
    max_head: int             # max_head_buffer_usage_
    scratch_count: int        # scratch_buffer_request_count_
    tensor_arrays: list[int] = field(default_factory=list)  # per subgraph: tensors
    node_arrays: list[int] = field(default_factory=list)    # per subgraph: node_and_registrations


def walk(reader: MemoryReader, layout: Layout, interpreter: int, plan: dict, kernel_sizes: bool = True,
         shared_allocator: bool = False) -> Walk:
    """The arena of the interpreter at `interpreter`, as TFLM laid it out, with the planner's JSON
    for its model (`plan`, schema acquire.planner.SCHEMA) giving names, sizes and lifetimes.
    kernel_sizes False: the kernels' data (OpData, builtin options, persistent buffers), which
    only the planner sizes, is left in the unnamed tail (the replay is not this firmware's).
    shared_allocator: other interpreters use the same MicroAllocator, whose scratch buffer count
    is then theirs too (not compared with this model's)."""
    model_addr, allocated = read_header(reader, layout, interpreter)
    if not allocated:
        raise AgentlessError(f"the MicroInterpreter at {interpreter:#x} has not allocated its tensors yet "
                             "(tensors_allocated_ is false): continue past AllocateTensors() and ask again")
    ptrs = _read_pointers(reader, layout, interpreter)
    _check_allocators(layout, ptrs.al)
    _read_subgraph_arrays(reader, layout, ptrs, len(plan["subgraphs"]))
    regions, mismatches = _head_regions(reader, layout, plan, ptrs, shared_allocator)
    tail_items = _tail_objects(reader, layout, plan, ptrs)
    kernel_items, op_data = _kernel_data(reader, layout, plan, ptrs, kernel_sizes)
    tail_items += kernel_items
    tail_items += _io_objects(reader, layout, plan, ptrs)
    al = ptrs.al
    tail_lo, tail_size = al.tail_ - al.tail_base, al.tail_end - al.tail_base
    known = []
    for addr, nbytes, label, kind, flags in tail_items:
        offset = addr - al.tail_base
        if nbytes and tail_lo <= offset and offset + nbytes <= tail_size:
            known.append((offset, nbytes, label, kind, flags))
    known += _kernel_buffers(reader, layout, plan, op_data, known, al.tail_base, tail_lo, tail_size)
    # What the interpreter does not point to (kernel data, builtin options, quantization, padding):
    # the gaps between the known objects, named as such.
    filled = fill_tail(known, tail_lo, tail_size)
    tail_regions = regions if not al.two else []
    for offset, nbytes, label, kind, flags in filled:
        tail_regions.append(Region(index=len(tail_regions), offset=offset, size=nbytes, id=abi.ID_NONE, kind=kind,
                                   flags=flags, first_use=abi.USE_NONE, last_use=abi.USE_NONE, name=label))
    return _walk_out(interpreter, model_addr, plan, ptrs, regions, tail_regions, mismatches)


def _read_pointers(reader: MemoryReader, layout: Layout, interpreter: int) -> _Pointers:
    """The interpreter's and its MicroAllocator's pointers and counters `walk` starts from."""
    mi, ma = P.INTERPRETER, P.MICRO_ALLOCATOR
    p = layout.pointer
    allocator = _ptr(reader, interpreter + layout.off(mi, "allocator_"), layout)
    al = allocators(reader, layout, allocator)
    graph = interpreter + layout.off(mi, "graph_")
    subgraphs = _ptr(reader, graph + layout.off(P.GRAPH, "subgraph_allocations_"), layout)
    handles = _ptr(reader, interpreter + layout.off(mi, "scratch_buffer_handles_"), layout)
    io_arrays = [_ptr(reader, interpreter + layout.off(mi, k), layout) for k in ("input_tensors_", "output_tensors_")]
    planner = _ptr(reader, allocator + layout.off(ma, "memory_planner_"), layout)
    max_head = _u(reader, allocator + layout.off(ma, "max_head_buffer_usage_"), p)
    scratch_count = _u(reader, allocator + layout.off(ma, "scratch_buffer_request_count_"), p)
    return _Pointers(allocator, al, subgraphs, handles, io_arrays, planner, max_head, scratch_count)


def _check_allocators(layout: Layout, al: Allocators) -> None:
    """AgentlessError unless the arena allocators' pointers are in TFLM's order."""
    buffer_head, buffer_tail, head_ptr, temp_ptr = al.head_base, al.head_end, al.head_, al.temp_
    tail_base, tail_end, tail_ptr = al.tail_base, al.tail_end, al.tail_
    if al.two:
        if not buffer_head <= head_ptr <= temp_ptr <= buffer_tail:
            raise AgentlessError(f"the {layout.name(NPA)} at {al.non_persistent:#x} does not hold a buffer: "
                                 f"buffer_head_ {buffer_head:#x}, head_temp_ {head_ptr:#x}, next_temp_ {temp_ptr:#x}, "
                                 f"buffer_tail_ {buffer_tail:#x} are not in order (another TFLM version, or memory "
                                 "overwritten)")
        if not tail_base <= tail_ptr <= tail_end:
            raise AgentlessError(f"the {layout.name(PA)} at {al.persistent:#x} does not hold a buffer: "
                                 f"buffer_head_ {tail_base:#x}, tail_temp_ {tail_ptr:#x}, buffer_tail_ {tail_end:#x} "
                                 "are not in order (another TFLM version, or memory overwritten)")
    elif not buffer_head <= head_ptr <= tail_ptr <= buffer_tail or not head_ptr <= temp_ptr <= buffer_tail:
        raise AgentlessError(f"the {layout.name(P.ARENA_ALLOCATOR)} at {al.non_persistent:#x} does not hold an arena: "
                             f"buffer_head_ {buffer_head:#x}, "
                             f"head_ {head_ptr:#x}, temp_ {temp_ptr:#x}, tail_ {tail_ptr:#x}, buffer_tail_ "
                             f"{buffer_tail:#x} are not in order (another TFLM version, or not a MicroInterpreter)")


def _read_subgraph_arrays(reader: MemoryReader, layout: Layout, ptrs: _Pointers, count: int) -> None:
    """Fills ptrs.node_arrays and ptrs.tensor_arrays from the first `count` subgraph allocations."""
    sga = P.SUBGRAPH_ALLOCATIONS
    for s in range(count):
        entry = ptrs.subgraphs + s * layout.sizes[sga]
        ptrs.node_arrays.append(_ptr(reader, entry + layout.off(sga, "node_and_registrations"), layout))
        ptrs.tensor_arrays.append(_ptr(reader, entry + layout.off(sga, "tensors"), layout))


def _tensor_data(reader: MemoryReader, layout: Layout, ptrs: _Pointers, s: int, t: int) -> int:
    """tensors[t].data.data of subgraph s: where TFLM put tensor t."""
    ev = P.EVAL_TENSOR
    return _ptr(reader, ptrs.tensor_arrays[s] + t * layout.sizes[ev] + layout.off(ev, "data"), layout)


def _head_regions(reader: MemoryReader, layout: Layout, plan: dict, ptrs: _Pointers,
                  shared_allocator: bool) -> tuple[list[Region], list[str]]:
    """The head: every planned buffer where TFLM put it (planner id order, as the agent
    publishes), and where TFLM's placement differs from the planner's (the Walk's mismatches)."""
    buffer_head, buffer_tail = ptrs.al.head_base, ptrs.al.head_end
    size = buffer_tail - buffer_head
    scratch_count, handles = ptrs.scratch_count, ptrs.handles
    mismatches: list[str] = []  # the Walk's, made once its arena is
    regions: list[Region] = []
    predicted_scratch = sum(1 for b in plan["buffers"] if b["tensor"] < 0)
    if scratch_count != predicted_scratch and not shared_allocator:
        mismatches.append(
            f"TFLM holds {scratch_count} scratch buffer(s), the planner predicts {predicted_scratch} (optimized "
            "kernels such as CMSIS-NN request others): the map shows only those both know")
    for b in plan["buffers"]:
        if b["tensor"] >= 0:
            where = _tensor_data(reader, layout, ptrs, b["subgraph"], b["tensor"])
            what = f"tensor {b['tensor']}"
        else:
            if b["scratch"] >= scratch_count or not handles:
                continue  # said above
            where = _ptr(reader, handles + b["scratch"] * layout.sizes[P.SCRATCH_HANDLE] +
                         layout.off(P.SCRATCH_HANDLE, "data"), layout)
            what = scratch_label(b["scratch"])
        offset = where - buffer_head
        if not 0 <= offset <= size - b["size"]:
            mismatches.append(
                f"{what} is at {where:#x}, outside the arena {buffer_head:#x}-{buffer_tail:#x}: not shown (the "
                "model is not the one the interpreter runs, or TFLM's tensor table is corrupt)")
            continue
        if offset != b["offset"]:
            mismatches.append(f"{what}: TFLM put it at +{offset}, the planner predicted +{b['offset']}")
        regions.append(Region(index=len(regions), offset=offset, size=b["size"],
                              id=b["tensor"] if b["tensor"] >= 0 else b["scratch"],
                              kind="tensor" if b["tensor"] >= 0 else "scratch",
                              flags=OFFLINE if b.get("offline") else 0,  # placed by the model's offline plan
                              first_use=b["first"], last_use=b["last"], name=b["name"]))
    return regions, mismatches


def _tail_objects(reader: MemoryReader, layout: Layout, plan: dict, ptrs: _Pointers) -> list[tuple]:
    """The tail: TFLM's objects and arrays the interpreter points to, sized by DWARF, as
    (address, size, label, kind, flags); the variable tensors too."""
    ma, sga, ev = P.MICRO_ALLOCATOR, P.SUBGRAPH_ALLOCATIONS, P.EVAL_TENSOR
    al, subgraph_docs = ptrs.al, plan["subgraphs"]
    allocator_objects = [(al.persistent, layout.sizes[PA], layout.name(PA), "metadata", 0),
                         (al.non_persistent, layout.sizes[NPA], layout.name(NPA), "metadata", 0)] \
        if al.two else [(al.non_persistent, layout.sizes[P.ARENA_ALLOCATOR], layout.name(P.ARENA_ALLOCATOR),
                         "metadata", 0)]
    tail_items: list[tuple] = [*allocator_objects,
                               (ptrs.allocator, layout.sizes[ma], layout.name(ma), "metadata", 0),
                               (ptrs.subgraphs, len(subgraph_docs) * layout.sizes[sga], f"{layout.name(sga)}[]",
                                "metadata", 0)]
    if layout.planner_size:
        tail_items.append((ptrs.planner, layout.planner_size, layout.name(layout.planner_type), "metadata", 0))
    # MicroBuiltinDataAllocator is local to micro_allocator.cc (no DWARF name to size it by): its
    # size is the planner's (a vtable pointer and the persistent allocator's, 8 / 16 B).
    builtin = next((t["size"] for t in plan.get("tail", {}).get("regions", [])
                    if t.get("role") == ROLE_BUILTIN_DATA_ALLOCATOR), 2 * layout.pointer)
    tail_items.append((_ptr(reader, ptrs.allocator + layout.off(ma, "builtin_data_allocator_"), layout), builtin,
                       layout.name(P.BUILTIN_DATA_ALLOCATOR), "metadata", 0))
    for s, sg in enumerate(subgraph_docs):
        tail_items.append((ptrs.tensor_arrays[s], len(sg["tensors"]) * layout.sizes[ev],
                           f"subgraph {s}: {layout.name(ev)}[{len(sg['tensors'])}]", "metadata", 0))
        tail_items.append((ptrs.node_arrays[s], len(sg["operators"]) * layout.sizes[P.NODE_AND_REGISTRATION],
                           f"subgraph {s}: {layout.name(P.NODE_AND_REGISTRATION)}[{len(sg['operators'])}]",
                           "metadata", 0))
        for t in sg["tensors"]:
            if t["placement"] == "persistent":
                tail_items.append((_tensor_data(reader, layout, ptrs, s, t["index"]), t["bytes"],
                                   f"variable tensor {t['index']}", "persistent", VARIABLE))
    return tail_items


def _kernel_data(reader: MemoryReader, layout: Layout, plan: dict, ptrs: _Pointers,
                 kernel_sizes: bool) -> tuple[list[tuple], list[tuple]]:
    """Each operator's builtin options (node.builtin_data, from Parse) and OpData (node.user_data,
    from Init), sized by the planner's prediction of that operator's requests (by their roles), as
    tail items, and (subgraph, operator, address, size) of each OpData found: none of either when
    kernel_sizes is False (they stay in the unnamed tail)."""
    kernel_requests = {(t["subgraph"], t["operator"], t["role"]): t for t in
                       reversed(plan.get("tail", {}).get("regions", [])) if t.get("operator", -1) >= 0} \
        if kernel_sizes else {}
    nar, node = P.NODE_AND_REGISTRATION, P.NODE
    items: list[tuple] = []
    op_data: list[tuple] = []  # (subgraph, operator, address, size) of each OpData found
    for s, sg in enumerate(plan["subgraphs"]):
        for i in range(len(sg["operators"])):
            at = ptrs.node_arrays[s] + i * layout.sizes[nar] + layout.off(nar, "node")
            for member, role in (("builtin_data", ROLE_BUILTIN_DATA), ("user_data", ROLE_OP_DATA)):
                request = kernel_requests.get((s, i, role))
                if request:
                    addr = _ptr(reader, at + layout.off(node, member), layout)
                    items.append((addr, request["size"], request["what"], "persistent", 0))
                    if role == ROLE_OP_DATA:
                        op_data.append((s, i, addr, request["size"]))
    return items, op_data


def _io_objects(reader: MemoryReader, layout: Layout, plan: dict, ptrs: _Pointers) -> list[tuple]:
    """The scratch buffer handles, and the input and output tensor arrays with the TfLiteTensors
    they point to, as tail items."""
    p = layout.pointer
    items: list[tuple] = []
    if ptrs.scratch_count and ptrs.handles:
        items.append((ptrs.handles, ptrs.scratch_count * layout.sizes[P.SCRATCH_HANDLE],
                      f"ScratchBufferHandle[{ptrs.scratch_count}]", "metadata", 0))
    main = plan["subgraphs"][0]
    for array, names, what in zip(ptrs.io_arrays, (main["inputs"], main["outputs"]), ("input", "output"),
                                  strict=True):
        if not array:
            continue
        items.append((array, len(names) * p, f"{what} TfLiteTensor*[{len(names)}]", "metadata", 0))
        for k, t in enumerate(names):
            tensor = _ptr(reader, array + k * p, layout)
            items.append((tensor, layout.sizes[P.TFLITE_TENSOR], f"{what} tensor {t}: TfLiteTensor", "metadata", 0))
    return items


def _walk_out(interpreter: int, model_addr: int, plan: dict, ptrs: _Pointers, regions: list[Region],
              tail_regions: list[Region], mismatches: list[str]) -> Walk:
    """The Walk: one Arena, or two-arena mode's non-persistent and persistent buffers."""
    al = ptrs.al
    buffer_head, size = al.head_base, al.head_end - al.head_base
    tail_lo, tail_size = al.tail_ - al.tail_base, al.tail_end - al.tail_base
    no_band = Band(low_addr=0, high_addr=0, touched_lo=abi.NONE, touched_hi=abi.NONE)
    arena = Arena(index=0, base_addr=buffer_head, regions_addr=0, model_addr=model_addr, size=size,
                  head=ptrs.max_head, temp=max(al.head_, al.temp_) - buffer_head,
                  tail=size if al.two else tail_lo, model_size=plan["file_bytes"], canary=no_band,
                  alignment=16, region_count=len(regions), region_capacity=len(regions),
                  flags=abi.ARENA_FLAG_TFLM, regions=regions, memory="non-persistent" if al.two else "")
    walk_out = Walk(interpreter=interpreter, model_addr=model_addr, arena=arena, mismatches=mismatches,
                    two_arena=al.two, arenas=[arena])
    if al.two:  # the persistent buffer: no head, the tail only
        walk_out.arenas.append(Arena(index=1, base_addr=al.tail_base, regions_addr=0, model_addr=model_addr,
                                     size=tail_size, head=0, temp=0, tail=tail_lo, model_size=plan["file_bytes"],
                                     canary=no_band, alignment=16, region_count=len(tail_regions),
                                     region_capacity=len(tail_regions), flags=abi.ARENA_FLAG_TFLM,
                                     regions=tail_regions, memory="persistent"))
    return walk_out


def fill_tail(known: Sequence[tuple], tail_lo: int, tail_size: int) -> list[tuple]:
    """The tail [tail_lo, tail_size) as regions (offset, size, label, kind, flags): the known
    objects in address order (one that overlaps an earlier one is dropped) and the gaps between
    them, named UNNAMED_TAIL (kernel data, builtin options, quantization, padding)."""
    at = tail_lo
    filled: list[tuple] = []
    for offset, nbytes, label, kind, flags in sorted(known):
        if offset > at:
            filled.append((at, offset - at, UNNAMED_TAIL, "persistent", 0))
        if offset >= at:
            filled.append((offset, nbytes, label, kind, flags))
            at = offset + nbytes
    if at < tail_size:
        filled.append((at, tail_size - at, UNNAMED_TAIL, "persistent", 0))
    return filled


def merge_shared(arena: Arena, others: list[tuple[str, Arena]]) -> int:
    """Names, in the tail of `arena` (one interpreter's walk), the objects of the other
    interpreters sharing its MicroAllocator (TFLM's way to run several models in one arena): each
    other walk's named tail objects (`who`: the interpreter, prefixed to their names) that lie in
    bytes the first left unnamed. The head is left as it is (it holds one plan at a time).
    Returns how many regions were named so."""
    own = [r for r in arena.regions if r.offset >= arena.tail and r.name != UNNAMED_TAIL]
    known = [(r.offset, r.size, r.name, r.kind, r.flags) for r in own]
    taken = {(r.offset, r.size) for r in own}
    added = 0
    for who, other in others:
        for r in other.regions:
            if r.offset >= other.tail and r.name != UNNAMED_TAIL and (r.offset, r.size) not in taken and \
                    all(r.offset + r.size <= o or o + n <= r.offset for o, n, *_ in known):
                known.append((r.offset, r.size, f"{who}: {r.name}", r.kind, r.flags))
                taken.add((r.offset, r.size))
                added += 1
    head = [r for r in arena.regions if r.offset < arena.tail or r.kind in ("tensor", "scratch")]
    tail = [Region(index=0, offset=o, size=n, id=abi.ID_NONE, kind=k, flags=f, first_use=abi.USE_NONE,
                   last_use=abi.USE_NONE, name=label) for o, n, label, k, f in fill_tail(known, arena.tail, arena.size)]
    arena.regions = head + tail
    for k, r in enumerate(arena.regions):
        r.index = k
    arena.region_count = arena.region_capacity = len(arena.regions)
    return added


def _kernel_buffers(reader, layout, plan, op_data, known, tail_base, tail_lo, tail_size):
    """The persistent buffers a kernel allocates in Prepare (the planner's "kernel-buffer" requests:
    CMSIS-NN's kernel sums on an MVE core, per-channel multipliers and shifts), found through the
    pointers to them that the operator's OpData holds: a pointer-aligned word of the OpData that
    points into the tail where the request fits in bytes no known object covers. Requests that
    several words fit (two per-channel arrays of one size) take them in the planner's order when
    there are exactly as many such words as requests; otherwise they stay in the unnamed tail.
    Returns [(offset, size, label, kind, flags)]."""
    requests: dict[tuple[int, int], list[dict]] = {}
    for t in plan.get("tail", {}).get("regions", []):
        if t.get("role") == ROLE_KERNEL_BUFFER and t.get("operator", -1) >= 0:
            requests.setdefault((t["subgraph"], t["operator"]), []).append(t)
    taken = sorted((o, o + n) for o, n, *_ in known)

    def free(lo, hi):
        return tail_lo <= lo and hi <= tail_size and all(hi <= a or b <= lo for a, b in taken)

    found = []
    for s, i, addr, size in op_data:
        wanted = requests.get((s, i))
        if not wanted or not tail_lo <= addr - tail_base <= tail_size - size:
            continue  # no buffer to look for, or an OpData outside the tail (not shown either): not read
        data = reader.read(addr, size)
        p = layout.pointer
        words = [int.from_bytes(data[k:k + p], "little") for k in range(0, size - p + 1, p)]
        def fits(t, used, words=words):
            return {w - tail_base for w in words if w not in used and free(w - tail_base, w - tail_base + t["size"])}

        used: set[int] = set()
        left = []
        for t in wanted:
            where = fits(t, used)
            if len(where) != 1:
                left.append(t)
                continue
            offset = where.pop()
            used.add(offset + tail_base)
            taken.append((offset, offset + t["size"]))
            found.append((offset, t["size"], t["what"], "persistent", 0))
        candidates = sorted(set().union(*(fits(t, used) for t in left))) if left else []
        if len(left) < 2 or len(candidates) != len(left):
            continue
        pairs = list(zip(sorted(left, key=lambda t: t.get("offset", 0)), candidates, strict=True))
        spans = sorted((o, o + t["size"]) for t, o in pairs)
        if all(free(o, o + t["size"]) for t, o in pairs) and all(a[1] <= b[0] for a, b in itertools.pairwise(spans)):
            for t, offset in pairs:
                taken.append((offset, offset + t["size"]))
                found.append((offset, t["size"], t["what"], "persistent", 0))
    return found


def scan_ram(reader: MemoryReader, layout: Layout, ranges: Iterable[tuple[int, int, str]],
             graph_vptr: int) -> list[int]:
    """The addresses of the MicroInterpreters in RAM ranges [(lo, hi, name)]: where the vtable
    pointer of an embedded MicroInterpreterGraph (`graph_vptr`: its vtable + 2 pointers) sits,
    pointer-aligned, minus the offset of graph_."""
    needle = graph_vptr.to_bytes(layout.pointer, "little")
    graph_off = layout.off(P.INTERPRETER, "graph_")
    found = []
    for lo, hi, _name in ranges:
        at = lo
        while at < hi:
            n = min(64 * 1024, hi - at)
            try:
                chunk = reader.read(at, n)
            except MemoryReadError:
                if n <= 256:  # this piece is unreadable (a RAM dump that lacks it): the rest is still searched
                    at += n
                    continue
                n = 256  # halve down to the unreadable part: read what can be, 256 B at a time
                try:
                    chunk = reader.read(at, n)
                except MemoryReadError:
                    at += n
                    continue
            k = chunk.find(needle)
            while k >= 0:
                if (at + k) % layout.pointer == 0:
                    found.append(at + k - graph_off)
                k = chunk.find(needle, k + 1)
            at += n
    return found


def split_tail(arena: Arena, walked_arena: Arena) -> str | None:
    """Replaces, in the TFLM adapter's `arena` (it publishes the persistent tail as one region, the
    last), that region by the tail objects `walked_arena` found, when both are the same arena (base,
    size and tail offset equal). Returns None when done, else why not (a string)."""
    whole = [r for r in arena.regions if r.kind == "persistent" and r.id == abi.ID_NONE and r.offset == arena.tail]
    if len(whole) != 1 or whole[0] is not arena.regions[-1] or whole[0].offset + whole[0].size != arena.size:
        return "the published tail is not one region at the table's end"
    w = walked_arena
    if (w.base_addr, w.size, w.tail) != (arena.base_addr, arena.size, arena.tail):
        return (f"the MicroInterpreter found holds the arena {w.base_addr:#x}+{w.size} with its tail at +{w.tail}, "
                f"the adapter published {arena.base_addr:#x}+{arena.size} with its tail at +{arena.tail}")
    first = whole[0].index
    pieces = [r for r in w.regions if r.offset >= w.tail and r.kind not in ("tensor", "scratch")]
    for k, r in enumerate(pieces):
        r.index = first + k
    arena.regions[-1:] = pieces
    return None


def descriptor(walked: Walk, addr_size: int, stack: Band | None = None) -> Descriptor:
    """A Descriptor for the walked arena, so every command reads both modes alike. What only the
    agent measures (canary bands, invoke counter, torn reads, fault record) is absent: flags 0
    (not measured), no guard band, invoke_phase 0."""
    none = Band(low_addr=0, high_addr=0, touched_lo=abi.NONE, touched_hi=abi.NONE)
    arenas = walked.arenas or [walked.arena]
    return Descriptor(address=walked.interpreter, abi_major=abi.ABI_MAJOR, abi_minor=abi.ABI_MINOR, descriptor_size=0,
                      addr_size=addr_size, arena_capacity=len(arenas), arena_count=len(arenas), arena_entry_size=0,
                      region_entry_size=0,
                      flags=0, seq=0, layout_generation=0, invoke_phase=0, canary_pattern=0xAAAAAAAA,
                      stack_paint_pattern=0xCCCCCCCC,
                      fault_record_addr=0, stack=stack or none, guard=none, arenas=arenas,
                      measured_by="nobody (agentless: no agent in this firmware)", agentless=True)
