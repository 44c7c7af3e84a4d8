"""TFLM's objects read defensively: what state the interpreter is in when TFLM itself is broken.

tflm.walk trusts TFLM's pointers, which holds on healthy firmware. After the stack has run into
the arena's persistent tail, or after AllocateTensors failed or crashed, those pointers hold
stack words or a half-built state. This module never follows a pointer it has not checked:
static facts come from the ELF (the arena's data object and size, the code, flash and RAM ranges,
the vtables of TFLM's classes); each TFLM object is read and checked on its own (its vtable
pointer, its pointers into the arena, flash or RAM, its counters), and what is unreadable or
implausible is said object by object. From that, `assess` says which condition the interpreter
is in (CONDITIONS). No GDB import; tested on byte images (tests/plugin/test_tflm_state.py).

Facts of TFLM 90b983c2 it relies on (tensorflow/tflite-micro):
- micro_interpreter.cc: the constructor calls MicroAllocator::Create, which puts the
  SingleArenaBufferAllocator, the GreedyMemoryPlanner and the MicroAllocator in the arena's tail
  (micro_allocator.cc); tensors_allocated_ turns true only at the end of AllocateTensors;
  input_tensors_ and output_tensors_ stay null until its last step; a failed AllocateTensors
  rolls nothing back.
- micro_allocator.cc: StartModelAllocation sets model_is_allocating_ and creates the builtin data
  allocator; FinishModelAllocation clears model_is_allocating_.
- single_arena_buffer_allocator.cc: buffer_head_ <= head_ <= temp_ and tail_ <= buffer_tail_;
  AllocatePersistentBuffer checks tail_ only against head_, so a persistent allocation can move
  tail_ below temp_ (then GetAvailableMemory, tail_ - temp_ in size_t, underflows).
- greedy_memory_planner.cc: AddBuffer fails with "Too many buffers (max is N)" once buffer_count_
  reaches max_buffer_count_ (the free space / 40 B).
"""
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from arenascope_plugin.acquire.planner import ROLE_ARENA_ALLOCATOR, ROLE_MEMORY_PLANNER, ROLE_MICRO_ALLOCATOR
from arenascope_plugin.acquire.reader import MemoryReader, MemoryReadError
from arenascope_plugin.decode import tflm_profile as P
from arenascope_plugin.decode.tflm import NPA, PA, Layout, is_two_arena

Span = tuple[int, int]   # [lo, hi) of memory

MI, MA, SA, GP = P.INTERPRETER, P.MICRO_ALLOCATOR, P.ARENA_ALLOCATOR, P.GREEDY_PLANNER
ALLOCATOR_ROLES = (ROLE_MICRO_ALLOCATOR, ROLE_ARENA_ALLOCATOR, "non-persistent-arena-allocator",
                   "persistent-arena-allocator")

# What `assess` can say of an interpreter, and what each means.
CONDITIONS = {
    "allocated": "AllocateTensors succeeded and TFLM's allocator objects are sound",
    "smashed": "AllocateTensors succeeded, but TFLM's objects in the arena's tail no longer hold TFLM's values",
    "not-started": "the interpreter is constructed and AllocateTensors has not run",
    "unfinished": "AllocateTensors started and did not finish (it failed, or the core is stuck or stopped in it)",
    "unknown": "TFLM's objects are unreadable or implausible, so the state cannot be told",
}
# What the headroom is when TFLM never laid the arena out (State.laid_out False): `arena info`
# prints it in the figure's place and $arena_headroom() fails with it.
HEADROOM_NOT_MEASURED = "not measured: AllocateTensors did not finish (`arena fault` gives the shortfall)"
NOT_STARTED = "not measured yet: AllocateTensors has not run (stop after it to see the arena laid out)"
# What the tail, used bytes, peak and headroom are when TFLM laid the arena out but its allocator is
# overwritten and no prediction applies (State.tail_known False).
TAIL_UNKNOWN = ("unknown: TFLM's arena allocator is overwritten and no prediction of this firmware's tail is at "
                "hand (`arena fault` says why)")


@dataclass
class Facts:
    """What the ELF says, with no target read (the caller fills it: GDB or pyelftools)."""
    arena: tuple[str, int, int] | None = None           # (symbol, start, size) of the tensor arena's object
    code: list[tuple[int, int]] = field(default_factory=list)    # executable sections [lo, hi)
    flash: list[tuple[int, int]] = field(default_factory=list)   # read-only sections, code included
    ram: list[tuple[int, int]] = field(default_factory=list)     # writable sections, and the heap
    heap: list[tuple[int, int]] = field(default_factory=list)    # the heap (linker symbols), part of ram
    vtables: dict[str, tuple[int, int]] = field(default_factory=dict)  # role -> (vtable address, size)
    stack: tuple[int, int] | None = None                 # (low, high) of the main stack
    # Whether a call instruction ends right before a return address (the architecture port's
    # call_before(reader, value)); None: no return address is recognised.
    call_before: Callable | None = None

    def inside(self, spans: Iterable[Span], value: int) -> bool:
        return any(lo <= value < hi for lo, hi in spans)


@dataclass
class ObjectCheck:
    """One TFLM object as read: where, how big, and what is wrong with it (nothing: sound)."""
    name: str
    addr: int
    size: int
    problems: list[str] = field(default_factory=list)
    values: dict[str, int] = field(default_factory=dict)   # member -> value read
    at: dict[int, str] = field(default_factory=dict)       # address -> the member stored there
    role: str = ""                                         # its planner tail role (acquire.planner.ROLE_*), "" for none

    @property
    def sound(self) -> bool:
        return not self.problems


@dataclass
class State:
    interpreter: int
    condition: str
    evidence: list[str]                          # one line each, in the order they were established
    objects: list[ObjectCheck]
    arena_base: int | None = None                # TFLM's buffer_head_ (the arena start aligned up to 16)
    arena_size: int | None = None                # buffer_tail_ - buffer_head_
    arena_symbol: str | None = None
    allocator: dict[str, int] | None = None      # the SingleArenaBufferAllocator's pointers, when sound (two-arena
                                                 # mode: the non-persistent buffer's, tail_ at its end)
    two_arena: bool = False                      # MicroAllocator::Create(persistent, .., non_persistent, ..)
    persistent: dict[str, int] | None = None     # two-arena: the PersistentArenaBufferAllocator's pointers
    tensors_allocated: bool | None = None
    planner_counts: tuple[int, int] | None = None      # (buffer_count_, max_buffer_count_) of the greedy planner
    io_tensors: dict[str, int] = field(default_factory=dict)   # input_tensors_ / output_tensors_
    init_status: int | None = None               # initialization_status_ (kTfLiteOk 0, kTfLiteError 1)
    constructor_failed: bool = False             # the MicroInterpreter's constructor could not allocate
    replay_mismatch: str = ""                    # what TFLM holds that contradicts the planner's replay (then unused)
    tail_known: bool = True                      # False: the tail's extent is neither read nor predicted

    @property
    def smashed(self) -> list[ObjectCheck]:
        return [o for o in self.objects if not o.sound]

    @property
    def laid_out(self) -> bool:
        """Whether AllocateTensors laid the arena out (whatever happened to it since): its used
        bytes and headroom mean something."""
        return self.condition in ("allocated", "smashed")

    @property
    def unmeasured(self) -> str | None:
        """Why used bytes, peak and headroom measure nothing (HEADROOM_NOT_MEASURED, TAIL_UNKNOWN),
        or None when they hold."""
        if self.condition == "not-started":
            return NOT_STARTED
        if not self.laid_out:
            return HEADROOM_NOT_MEASURED
        return None if self.tail_known else TAIL_UNKNOWN


def _ptr(reader, addr, lay):
    return int.from_bytes(reader.read(addr, lay.pointer), "little")


def _member(lay, type_name, member):
    """(offset, size) of a member the Layout knows, required or optional, or None."""
    if member in lay.offsets.get(type_name, {}):
        return lay.offsets[type_name][member], lay.member_sizes.get(type_name, {}).get(member, lay.pointer)
    return lay.optional.get(type_name, {}).get(member)


def _read_member(reader, lay, type_name, base, member):
    where = _member(lay, type_name, member)
    if where is None:
        return None
    offset, size = where
    return int.from_bytes(reader.read(base + offset, size), "little")


def points(facts: Facts, value: int, arena: Span | None) -> str:
    """Where a pointer value points: 'null', 'arena', 'flash', 'ram' or 'nowhere' (none of the
    ELF's memory: not a pointer the firmware made)."""
    if value == 0:
        return "null"
    if arena and arena[0] <= value < arena[1]:
        return "arena"
    if not facts.flash and not facts.ram:
        return "unknown"  # no memory map (a position-independent host build): not checked
    if facts.inside(facts.flash, value):
        return "flash"
    if facts.inside(facts.ram, value) or (facts.stack and facts.stack[0] <= value < facts.stack[1]):
        return "ram"
    return "nowhere"


def stack_value(facts: Facts, value: int, reader: MemoryReader | None = None) -> str | None:
    """Why a word looks like one the stack wrote, or None: a return address (into code, right
    after a call instruction: facts.call_before, the port's, read through `reader`), or a pointer
    into the stack. TFLM's tail objects hold neither."""
    if facts.call_before is not None and facts.inside(facts.code, value & ~1) and reader is not None and \
            facts.call_before(reader, value):
        return f"{value:#x}, a return address (the instruction before it is a call)"
    # Strictly above the stack's low bound: an arena that ends where the stack starts has TFLM's own
    # end-of-arena pointers (buffer_tail_, tail_ at first) equal to it.
    if facts.stack and facts.stack[0] < value < facts.stack[1]:
        return f"{value:#x}, a pointer into the stack {facts.stack[0]:#x}-{facts.stack[1]:#x}"
    return None


def arena_span(facts: Facts) -> Span | None:
    """(start, end) of the arena's buffer as the ELF gives it (facts.arena), or None."""
    if not facts.arena:
        return None
    _name, start, size = facts.arena
    return start, start + size


def _in_vtable(facts, cls, value, lay):
    """Whether value points into role cls's vtable (past its offset-to-top and RTTI words)."""
    lo, size = facts.vtables[cls]
    return lo < value < lo + max(size, 3 * lay.pointer)


def _check_vptr(check, facts, cls, lay, reader):
    """Reads the object's vtable pointer (its first word) and adds a problem unless it points
    into `cls`'s vtable (or the object cannot be read)."""
    span = facts.vtables.get(cls)
    if span is None or not check.sound:
        return
    try:
        value = _ptr(reader, check.addr, lay)
    except MemoryReadError as exc:
        check.problems.append(f"unreadable ({exc})")
        return
    lo = span[0]
    if not _in_vtable(facts, cls, value, lay):
        why = stack_value(facts, value, reader)
        check.problems.append(f"its vtable pointer is {value:#x}, not into {lay.cls(cls)}'s vtable at {lo:#x}"
                              + (f" ({why})" if why else ""))


def _check_pointer(check, facts, name, value, arena, allowed, reader=None):
    kind = points(facts, value, arena)
    if kind not in allowed and kind != "unknown":
        why = stack_value(facts, value, reader)
        check.problems.append(f"{name} is {value:#x} ({kind if kind != 'nowhere' else 'no memory of the ELF'}"
                              f"{'; ' + why if why else ''}), where TFLM keeps a pointer into "
                              f"{' or '.join(a for a in allowed if a != 'null')}"
                              f"{' or null' if 'null' in allowed else ''}")


def _object(reader, lay, name, addr, size, members, role=""):
    """An ObjectCheck with the members read; an unreadable object is one problem."""
    check = ObjectCheck(name=name, addr=addr, size=size, role=role)
    try:
        for type_name, member in members:
            value = _read_member(reader, lay, type_name, addr, member)
            if value is not None:
                check.values[member] = value
                check.at[addr + _member(lay, type_name, member)[0]] = lay.member(type_name, member)
    except MemoryReadError as exc:
        check.problems.append(f"unreadable ({exc})")
    return check


def check_allocator_objects(reader: MemoryReader, lay: Layout, facts: Facts, allocator: int,
                            arena: Span | None) -> list[ObjectCheck]:
    """ObjectChecks of the MicroAllocator at `allocator`, its SingleArenaBufferAllocator and its
    memory planner, in that order (the ones that could be reached)."""
    out = []
    ma = _object(reader, lay, lay.name(MA), allocator, lay.sizes[MA],
                 [(MA, P.NON_PERSISTENT_ALLOCATOR), (MA, "memory_planner_"), (MA, "builtin_data_allocator_"),
                  (MA, "max_head_buffer_usage_"), (MA, "scratch_buffer_request_count_"),
                  (MA, "model_is_allocating_"), (MA, P.PERSISTENT_ALLOCATOR)], ROLE_MICRO_ALLOCATOR)
    out.append(ma)
    _check_vptr(ma, facts, MA, lay, reader)
    if any(p.startswith("unreadable") for p in ma.problems):
        return out
    _check_micro_allocator(ma, lay, facts, arena, reader)
    v = ma.values
    two = lay.two_arena_known and is_two_arena(lay, v[P.NON_PERSISTENT_ALLOCATOR],
                                               v.get(P.PERSISTENT_ALLOCATOR)) and \
        _is_a(reader, lay, facts, NPA, v[P.NON_PERSISTENT_ALLOCATOR], ma.sound)
    if two:
        out += _two_arena_objects(reader, lay, facts, v, arena)
    elif points(facts, v[P.NON_PERSISTENT_ALLOCATOR], arena) in ("arena", "ram", "unknown"):
        out.append(_arena_allocator_object(reader, lay, facts, v[P.NON_PERSISTENT_ALLOCATOR], arena))
    out += _planner_objects(reader, lay, facts, v["memory_planner_"], arena)
    return out


def _check_micro_allocator(ma, lay, facts, arena, reader):
    """Adds the MicroAllocator's problems: its pointers where TFLM keeps them, its usage within the
    arena, its bool a bool."""
    v = ma.values
    _check_pointer(ma, facts, lay.member(MA, P.NON_PERSISTENT_ALLOCATOR), v[P.NON_PERSISTENT_ALLOCATOR], arena,
                   ("arena", "ram"), reader)
    _check_pointer(ma, facts, "memory_planner_", v["memory_planner_"], arena, ("arena", "ram"), reader)
    _check_pointer(ma, facts, "builtin_data_allocator_", v["builtin_data_allocator_"], arena, ("arena", "null"), reader)
    if arena and v["max_head_buffer_usage_"] > arena[1] - arena[0]:
        ma.problems.append(f"max_head_buffer_usage_ is {v['max_head_buffer_usage_']}, more than the arena's "
                           f"{arena[1] - arena[0]} B")
    if v.get("model_is_allocating_", 0) > 1:
        ma.problems.append(f"model_is_allocating_ (a bool) holds {v['model_is_allocating_']}")


def _arena_allocator_object(reader, lay, facts, non_persistent, arena):
    """The ObjectCheck of the one arena's SingleArenaBufferAllocator, whose interface
    `non_persistent` (the MicroAllocator's pointer) points to: vtable, pointers in the arena,
    in order."""
    saba_addr = non_persistent - lay.saba_nonpersistent_base
    sa = _object(reader, lay, lay.name(SA), saba_addr, lay.sizes[SA],
                 [(SA, k) for k in ("buffer_head_", "buffer_tail_", "head_", "temp_", "tail_",
                                    "temp_buffer_count_")], ROLE_ARENA_ALLOCATOR)
    _check_vptr(sa, facts, SA, lay, reader)
    if not sa.sound:
        return sa
    s = sa.values
    for k in ("buffer_head_", "buffer_tail_", "head_", "temp_", "tail_"):
        if arena and not arena[0] <= s[k] <= arena[1]:
            _check_pointer(sa, facts, k, s[k], arena, ("arena",), reader)
    if sa.sound and not (s["buffer_head_"] <= s["head_"] <= s["temp_"] <= s["buffer_tail_"] and
                         s["head_"] <= s["tail_"] <= s["buffer_tail_"]):
        sa.problems.append(
            f"its pointers are out of order: buffer_head_ {s['buffer_head_']:#x}, head_ {s['head_']:#x}, "
            f"temp_ {s['temp_']:#x}, tail_ {s['tail_']:#x}, buffer_tail_ {s['buffer_tail_']:#x}")
    return sa


def _planner_objects(reader, lay, facts, planner, arena):
    """The ObjectChecks of the memory planner at `planner`, when it can be reached: of an unknown
    type, only when it is overwritten; of a known type, with its counts."""
    out = []
    planners = [c for c in P.PLANNERS if c in facts.vtables]
    reached = points(facts, planner, arena) in ("arena", "ram", "unknown")
    if reached and not lay.planner_type and planners:
        # its type not known (agentless._planner_type reads it from the vtable pointer): a pointer
        # into no planner class's vtable is an overwritten planner
        gp = _object(reader, lay, lay.name(planners[0]), planner, lay.sizes.get(planners[0]) or 2 * lay.pointer,
                     [], ROLE_MEMORY_PLANNER)
        try:
            value = _ptr(reader, planner, lay)
        except MemoryReadError as exc:
            gp.problems.append(f"unreadable ({exc})")
        else:
            if not any(_in_vtable(facts, c, value, lay) for c in planners):
                gp.problems.append(f"its vtable pointer is {value:#x}, not into "
                                   + " or ".join(f"{lay.cls(c)}'s vtable at {facts.vtables[c][0]:#x}"
                                                 for c in planners))
        if not gp.sound:
            out.append(gp)
    if reached and lay.planner_type:
        out.append(_typed_planner_object(reader, lay, facts, planner))
    return out


def _typed_planner_object(reader, lay, facts, planner):
    """The ObjectCheck of a planner of the known type lay.planner_type: vtable, and its counts
    (buffer_count_, max_buffer_count_) a planner's."""
    size = lay.planner_size or 2 * lay.pointer
    gp = _object(reader, lay, lay.name(lay.planner_type), planner, size,
                 [(GP, "max_buffer_count_"), (GP, "buffer_count_")], ROLE_MEMORY_PLANNER)
    _check_vptr(gp, facts, lay.planner_type, lay, reader)
    c = gp.values
    for k in ("buffer_count_", "max_buffer_count_"):  # ints (greedy_memory_planner.h)
        if k in c and c[k] >= 1 << 31:
            c[k] -= 1 << 32
    if gp.sound and "buffer_count_" in c and not 0 <= c["buffer_count_"] <= c["max_buffer_count_"]:
        gp.problems.append(f"buffer_count_ {c['buffer_count_']} and max_buffer_count_ {c['max_buffer_count_']} "
                           "are not a planner's counts (0 <= buffer_count_ <= max_buffer_count_)")
    return gp


def _is_a(reader, lay, facts, cls, addr, otherwise):
    """Whether the object at `addr` has `cls`'s vtable pointer (so that stack words in a smashed
    MicroAllocator are not taken for two-arena mode); `otherwise` when the ELF gives no vtable."""
    span = facts.vtables.get(cls)
    if span is None:
        return otherwise
    try:
        value = _ptr(reader, addr, lay)
    except MemoryReadError:
        return False
    return span[0] < value < span[0] + max(span[1], 3 * lay.pointer)


def _two_arena_objects(reader, lay, facts, v, arena):
    """Two-arena mode's NonPersistentArenaBufferAllocator and PersistentArenaBufferAllocator
    (micro_allocator.cc CreateNonPersistentArenaAllocator / CreatePersistentArenaAllocator: both
    objects in the persistent buffer, the data object `arena` that holds the MicroAllocator),
    checked: vtable, pointers in RAM, in order (non_persistent_arena_buffer_allocator.h:
    buffer_head_ <= head_temp_ <= next_temp_ <= buffer_tail_; persistent_arena_buffer_allocator.h:
    buffer_head_ <= tail_temp_ <= buffer_tail_)."""
    out = []
    specs = [(lay.name(NPA), NPA, v[P.NON_PERSISTENT_ALLOCATOR],
              ("buffer_head_", "buffer_tail_", "head_temp_", "next_temp_", "temp_buffer_count_"),
              "non-persistent-arena-allocator"),
             (lay.name(PA), PA, v[P.PERSISTENT_ALLOCATOR],
              ("buffer_head_", "buffer_tail_", "tail_temp_"), "persistent-arena-allocator")]
    for name, cls, addr, members, role in specs:
        if points(facts, addr, arena) not in ("arena", "ram", "unknown"):
            continue
        o = _object(reader, lay, name, addr, lay.sizes[cls], [(cls, k) for k in members], role)
        out.append(o)
        _check_vptr(o, facts, cls, lay, reader)
        if not o.sound:
            continue
        x = o.values
        for k in members[:-1] if cls == NPA else members:
            _check_pointer(o, facts, k, x[k], arena, ("arena", "ram"), reader)
        order = ("buffer_head_", "head_temp_", "next_temp_", "buffer_tail_") if cls == NPA else \
            ("buffer_head_", "tail_temp_", "buffer_tail_")
        if o.sound and [x[k] for k in order] != sorted(x[k] for k in order):
            o.problems.append("its pointers are out of order: " + ", ".join(f"{k} {x[k]:#x}" for k in order))
    return out


def assess(reader: MemoryReader, lay: Layout, interpreter: int, facts: Facts,
           constructor_tail: int | None = None) -> State:
    """The State of the interpreter at `interpreter`. `constructor_tail`: the persistent bytes
    TFLM's constructor alone allocates (MicroAllocator::Create; the planner's replay gives it),
    to tell "not started" from "unfinished" when the allocator does not say. Never raises for
    what the target holds: unreadable and implausible objects are in the State's evidence."""
    evidence: list[str] = []
    objects: list[ObjectCheck] = []
    st = State(interpreter=interpreter, condition="unknown", evidence=evidence, objects=objects)
    interp = _object(reader, lay, lay.name(MI), interpreter, lay.sizes.get(MI, 0),
                     [(MI, "model_"), (MI, "allocator_"), (MI, "tensors_allocated_"), (MI, "input_tensors_"),
                      (MI, "output_tensors_"), (MI, "scratch_buffer_handles_"), (MI, "initialization_status_")])
    objects.append(interp)
    if not interp.sound:
        evidence.append(f"the MicroInterpreter at {interpreter:#x} is {interp.problems[0]}")
        return st
    v = interp.values
    allocator = v["allocator_"]
    arena = arena_span(facts)
    _take_interpreter(st, interp, facts, arena, reader)
    if allocator == 0 and not st.tensors_allocated and interp.sound:
        return _constructor_failed(st, arena)
    if arena and not arena[0] <= allocator < arena[1]:
        _check_pointer(interp, facts, "allocator_", allocator, arena, ("arena",), reader)
    if not interp.sound:
        evidence.append("the MicroInterpreter object itself does not hold TFLM's values: "
                        + "; ".join(interp.problems) + " (something overwrote it: it lives outside the arena, "
                        "in .data/.bss, so not the arena's own use; a wild write, or the stack if it is below it)")
        _whole_arena(st, arena)
        return st
    found = check_allocator_objects(reader, lay, facts, allocator, arena)
    objects.extend(found)
    by_role = {o.role: o for o in found}
    _take_allocators(st, by_role, arena)
    gp = next((o for o in found if o.role not in ALLOCATOR_ROLES), None)
    if gp is not None and gp.sound and "buffer_count_" in gp.values:
        st.planner_counts = (gp.values["buffer_count_"], gp.values["max_buffer_count_"])
    bad = [o for o in found if not o.sound]
    for o in bad:
        evidence.append(f"{o.name} at {o.addr:#x}: " + "; ".join(o.problems))
    if bad:
        st.condition = "smashed" if st.tensors_allocated else "unknown"
        return st
    ma = by_role[ROLE_MICRO_ALLOCATOR].values
    s = st.allocator
    if s is None:  # its pointer led nowhere readable as one (checked above): nothing more is known
        evidence.append(f"the {lay.name(MA)} at {allocator:#x} gives no {lay.name(SA)} to read")
        return st
    if st.tensors_allocated:
        st.condition = "allocated"
        return st
    return _allocation_progress(st, s, ma, constructor_tail)


def _whole_arena(st: State, arena: Span | None) -> None:
    """The State's arena, when no allocator gives it: the arena's data object, its start aligned
    up to 16 as MicroAllocator::Create aligns it."""
    if arena:
        st.arena_base = (arena[0] + 15) & ~15
        st.arena_size = arena[1] - st.arena_base


def _take_interpreter(st: State, interp: ObjectCheck, facts: Facts, arena: Span | None,
                      reader: MemoryReader) -> None:
    """What the MicroInterpreter's own members say, into the State; its problems into `interp`."""
    v = interp.values
    if facts.arena:
        st.arena_symbol = facts.arena[0]
    if v["tensors_allocated_"] > 1:
        interp.problems.append(f"tensors_allocated_ (a bool) holds {v['tensors_allocated_']}")
    st.tensors_allocated = v["tensors_allocated_"] == 1
    st.io_tensors = {"input_tensors_": v["input_tensors_"], "output_tensors_": v["output_tensors_"]}
    st.init_status = v.get("initialization_status_")
    _check_pointer(interp, facts, "model_", v["model_"], arena, ("flash", "ram"), reader)


def _constructor_failed(st: State, arena: Span | None) -> State:
    """The State when MicroAllocator::Create's persistent allocation of the MicroAllocator did not
    fit: TFLM placement-news it at the null it got (micro_allocator.cc) and the interpreter keeps
    that."""
    st.condition = "unfinished"
    st.constructor_failed = True
    _whole_arena(st, arena)
    st.evidence.append("the MicroInterpreter's allocator_ is null: the arena could not hold TFLM's own allocator "
                       "objects, so MicroAllocator::Create built the MicroAllocator at address 0 (a placement new "
                       "through the null its failed allocation returned; on a board with flash at 0 that write "
                       "faults, on RAM at 0 it overwrites the vector table)")
    return st


def _take_allocators(st: State, by_role: dict[str, ObjectCheck], arena: Span | None) -> None:
    """The arena allocators' pointers and the arena they give, into the State: two-arena mode's
    pair, else the one SingleArenaBufferAllocator, else the arena's data object."""
    sa = by_role.get(ROLE_ARENA_ALLOCATOR)
    npa, pa = by_role.get("non-persistent-arena-allocator"), by_role.get("persistent-arena-allocator")
    if npa is not None or pa is not None:
        st.two_arena = True
    if npa is not None and npa.sound and pa is not None and pa.sound:
        n = npa.values
        st.allocator = {"buffer_head_": n["buffer_head_"], "buffer_tail_": n["buffer_tail_"], "head_": n["head_temp_"],
                        "temp_": n["next_temp_"], "tail_": n["buffer_tail_"]}
        st.persistent = {k: pa.values[k] for k in ("buffer_head_", "buffer_tail_", "tail_temp_")}
        st.arena_base = n["buffer_head_"]
        st.arena_size = n["buffer_tail_"] - n["buffer_head_"]
    elif sa is not None and sa.sound:
        st.allocator = {k: sa.values[k] for k in ("buffer_head_", "buffer_tail_", "head_", "temp_", "tail_")}
        st.arena_base = sa.values["buffer_head_"]
        st.arena_size = sa.values["buffer_tail_"] - sa.values["buffer_head_"]
    else:
        _whole_arena(st, arena)


def _allocation_progress(st: State, s: dict[str, int], ma: dict[str, int], constructor_tail: int | None) -> State:
    """The State of an interpreter whose allocators are sound and whose tensors_allocated_ is false
    (`s`: the arena allocator's pointers, st.allocator; `ma`: the MicroAllocator's values): not
    started, or unfinished with what shows how far AllocateTensors went."""
    used_tail = st.persistent["buffer_tail_"] - st.persistent["tail_temp_"] if st.persistent else \
        s["buffer_tail_"] - s["tail_"]
    allocating = ma.get("model_is_allocating_")
    started = bool(allocating) or ma["builtin_data_allocator_"] != 0 or \
        (constructor_tail is not None and used_tail > constructor_tail)
    if not started:
        st.condition = "not-started"
        st.evidence.append(f"tensors_allocated_ is false and the tail holds only what the constructor allocates "
                           f"({used_tail} B): AllocateTensors has not run")
        return st
    st.condition = "unfinished"
    st.evidence.append("tensors_allocated_ is false, but the arena allocator has moved past what the constructor "
                       f"allocates: AllocateTensors started (tail {used_tail} B, head {s['head_'] - s['buffer_head_']} "
                       f"B, temp up to +{s['temp_'] - s['buffer_head_']})")
    if allocating:
        st.evidence.append("MicroAllocator.model_is_allocating_ is still true: FinishModelAllocation did not complete")
    st.evidence += _unfinished_evidence(st, s)
    return st


def _unfinished_evidence(st: State, s: dict[str, int]) -> list[str]:
    """What an unfinished AllocateTensors left that says why (`s`: the arena allocator's pointers)."""
    evidence: list[str] = []
    if s["tail_"] < s["temp_"]:
        evidence.append(f"tail_ {s['tail_']:#x} is below temp_ {s['temp_']:#x}: a persistent allocation went into "
                        "temporary memory, and the free space TFLM computes (tail_ - temp_) wraps around")
    if st.planner_counts and st.arena_size and st.planner_counts[1] > st.arena_size // 40:
        evidence.append(f"the memory planner was given room for {st.planner_counts[1]} buffers, more than the whole "
                        f"{st.arena_size} B arena holds (40 B each): the free space TFLM computed wrapped around, so "
                        "the planner writes its arrays far outside the arena")
    elif st.planner_counts and st.planner_counts[1] and st.planner_counts[0] >= st.planner_counts[1]:
        evidence.append(f"the memory planner holds {st.planner_counts[0]} buffers, its maximum for the free space "
                        f"({st.planner_counts[1]}): planning ran out of room (\"Too many buffers\")")
    if not st.io_tensors["input_tensors_"]:
        evidence.append("input_tensors_ is null: the last step of AllocateTensors never ran, so input(i) and "
                        "output(i) return whatever word is at address 4*i")
    if st.init_status == 1:
        evidence.append("initialization_status_ is kTfLiteError: AllocateTensors failed in StartModelAllocation, or "
                        "ran again after failing (MicroInterpreter::Invoke calls it while tensors_allocated_ is "
                        "false), which then fails with \"Model allocation started before finishing previously "
                        "allocated model\"")
    return evidence


def words(reader: MemoryReader, addr: int, size: int) -> list[tuple[int, int]]:
    """[(address, value)] of the whole little-endian words in [addr, addr + size), [] when the
    range is unreadable or empty."""
    if size < 4:
        return []
    try:
        data = reader.read(addr, size - size % 4)
    except MemoryReadError:
        return []
    return [(addr + i, int.from_bytes(data[i:i + 4], "little")) for i in range(0, len(data), 4)]


def stack_reach(reader: MemoryReader, facts: Facts, low_limit: int,
                scan_from: int, read: list[tuple[int, int]] | None = None) -> tuple[int, int, str] | None:
    """How far below the stack's limit the stack wrote: the lowest word in [scan_from, low_limit)
    that holds a stack value (stack_value: a return address or a pointer into the stack; every
    stack frame of a call holds a return address), scanning whole words (`read`: those words,
    when the caller has read them already). Returns (lowest address, its value, why) or None
    when no such word is there."""
    for at, value in read if read is not None else words(reader, scan_from, low_limit - scan_from):
        why = stack_value(facts, value, reader)
        if why:
            return at, value, why
    return None
