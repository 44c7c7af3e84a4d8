"""TFLM revision profiles: the one table of what TFLM calls its objects, era by era.

arenascope reads TFLM's objects by role (the interpreter, its graph, the MicroAllocator, the arena
allocator, the memory planner, ...). Which class plays a role, and what some members are called,
changed across TFLM's history; every such fact is here and nowhere else (a test,
tests/plugin/test_tflm_profile.py, keeps TFLM's class names and the member names that vary out of
every other module). Everything else about a class (member offsets, sizes, base classes) comes
from the firmware's own DWARF, so one era covers every commit with the same classes and members.
Where the firmware's TFLM library was built without -g (a vendor's prebuilt library), the classes
with vtables are only declared in its DWARF; their layout then comes from the era's measured
layout (tflm_layouts.py, measured on real builds per C ABI: `measured`), confirmed against what
the firmware still describes (decode.tflm.layout).

An era is told from the firmware's DWARF and symbol table (`detect`): which classes and members
exist. Each era names the upstream tensorflow/tflite-micro commits it spans, the commit it was
checked on (real TFLM built by hand, figures in docs/integrating-tflm.md), who ships it, and the
planner revision (`arenascope-plan --tflm ID`) that replays its allocation sequence.

Member keys: a role's members are asked for by key; the key is the member's name in the newest
TFLM where that name is the same in every era (buffer_head_, tensors_allocated_, ...); a member
whose name changed has a key of its own (NON_PERSISTENT_ALLOCATOR, ...), and an era lists the
members it names otherwise (`renamed`, None: absent).
"""
from dataclasses import dataclass, field
from typing import cast

from arenascope_plugin.acquire import elfinfo
from arenascope_plugin.decode.tflm_layouts import MEASURED

# Roles: what arenascope reads, whatever the class is called.
INTERPRETER = "interpreter"                      # the MicroInterpreter
GRAPH = "graph"                                  # MicroInterpreter.graph_: subgraph allocations
MICRO_ALLOCATOR = "micro-allocator"              # MicroAllocator
ARENA_ALLOCATOR = "arena-allocator"              # the one-arena allocator (head, temp, tail)
NON_PERSISTENT_BASE = "non-persistent-interface"  # the arena allocator's non-persistent interface
PERSISTENT_BASE = "persistent-interface"         # ... and its persistent interface
TWO_ARENA_NON_PERSISTENT = "two-arena-non-persistent"  # two-arena mode's non-persistent allocator
TWO_ARENA_PERSISTENT = "two-arena-persistent"    # two-arena mode's persistent allocator
GREEDY_PLANNER = "greedy-planner"                # GreedyMemoryPlanner
LINEAR_PLANNER = "linear-planner"                # LinearMemoryPlanner
SUBGRAPH_ALLOCATIONS = "subgraph-allocations"    # SubgraphAllocations {node_and_registrations, tensors}
EVAL_TENSOR = "eval-tensor"                      # TfLiteEvalTensor
NODE_AND_REGISTRATION = "node-and-registration"  # NodeAndRegistration
NODE = "node"                                    # TfLiteNode
SCRATCH_HANDLE = "scratch-handle"                # ScratchBufferHandle
TFLITE_TENSOR = "tflite-tensor"                  # TfLiteTensor
BUILTIN_DATA_ALLOCATOR = "builtin-data-allocator"  # micro_allocator.cc's local MicroBuiltinDataAllocator
PLANNERS = (GREEDY_PLANNER, LINEAR_PLANNER)

# Member keys that are not TFLM's names, because the member's name changed: the MicroAllocator's
# pointer to the allocator of the head and temporaries (the arena allocator, or two-arena mode's
# non-persistent one), and to the persistent one. Newest names here; an era's own in Era.renamed.
NON_PERSISTENT_ALLOCATOR = "non-persistent-allocator"
PERSISTENT_ALLOCATOR = "persistent-allocator"
_KEYED = {(MICRO_ALLOCATOR, NON_PERSISTENT_ALLOCATOR): "non_persistent_buffer_allocator_",
          (MICRO_ALLOCATOR, PERSISTENT_ALLOCATOR): "persistent_buffer_allocator_"}

# Classes every era names alike.
_COMMON = {
    INTERPRETER: "tflite::MicroInterpreter",
    MICRO_ALLOCATOR: "tflite::MicroAllocator",
    GREEDY_PLANNER: "tflite::GreedyMemoryPlanner",
    LINEAR_PLANNER: "tflite::LinearMemoryPlanner",
    SUBGRAPH_ALLOCATIONS: "tflite::SubgraphAllocations",
    EVAL_TENSOR: "TfLiteEvalTensor",
    NODE_AND_REGISTRATION: "tflite::NodeAndRegistration",
    NODE: "TfLiteNode",
    SCRATCH_HANDLE: "tflite::ScratchBufferHandle",
    TFLITE_TENSOR: "TfLiteTensor",
    BUILTIN_DATA_ALLOCATOR: "tflite::MicroBuiltinDataAllocator",
}
_INTERFACES = {
    NON_PERSISTENT_BASE: "tflite::INonPersistentBufferAllocator",
    PERSISTENT_BASE: "tflite::IPersistentBufferAllocator",
    TWO_ARENA_NON_PERSISTENT: "tflite::NonPersistentArenaBufferAllocator",
    TWO_ARENA_PERSISTENT: "tflite::PersistentArenaBufferAllocator",
}

# The members the walk reads, by role and key (see the module's docstring).
REQUIRED = {
    INTERPRETER: ["model_", "allocator_", "graph_", "tensors_allocated_", "scratch_buffer_handles_", "input_tensors_",
                  "output_tensors_"],
    GRAPH: ["subgraph_allocations_"],
    MICRO_ALLOCATOR: [NON_PERSISTENT_ALLOCATOR, "memory_planner_", "scratch_buffer_request_count_",
                      "max_head_buffer_usage_", "builtin_data_allocator_"],
    ARENA_ALLOCATOR: ["buffer_head_", "buffer_tail_", "head_", "tail_", "temp_"],
    SUBGRAPH_ALLOCATIONS: ["node_and_registrations", "tensors"],
    EVAL_TENSOR: ["data", "dims", "type"],
    SCRATCH_HANDLE: ["data"],
    NODE_AND_REGISTRATION: ["node"],
    NODE: ["user_data", "builtin_data"],
}
# Members read when the era has them (the post-mortem's evidence); a missing one is no error.
OPTIONAL = {
    INTERPRETER: ["initialization_status_"],
    MICRO_ALLOCATOR: ["model_is_allocating_", PERSISTENT_ALLOCATOR],
    TWO_ARENA_NON_PERSISTENT: ["buffer_head_", "buffer_tail_", "head_temp_", "next_temp_", "temp_buffer_count_"],
    TWO_ARENA_PERSISTENT: ["buffer_head_", "buffer_tail_", "tail_temp_"],
    ARENA_ALLOCATOR: ["temp_buffer_count_"],
    GREEDY_PLANNER: ["max_buffer_count_", "buffer_count_"],
}
# Roles whose size the walk needs, and roles sized when the firmware has them.
SIZED = [INTERPRETER, MICRO_ALLOCATOR, ARENA_ALLOCATOR, SUBGRAPH_ALLOCATIONS, EVAL_TENSOR, NODE_AND_REGISTRATION,
         SCRATCH_HANDLE, TFLITE_TENSOR]
SIZED_IF_PRESENT = [TWO_ARENA_NON_PERSISTENT, TWO_ARENA_PERSISTENT, GREEDY_PLANNER, LINEAR_PLANNER]
# Roles whose objects carry a vtable pointer the checks compare (tflmstate).
VIRTUAL = [MICRO_ALLOCATOR, ARENA_ALLOCATOR, GREEDY_PLANNER, LINEAR_PLANNER, GRAPH, TWO_ARENA_NON_PERSISTENT,
           TWO_ARENA_PERSISTENT]


# The stack's worst case before flashing (analyse/stackdepth.py). TFLM calls each kernel through
# its TFLMRegistration's function pointers (init, prepare, invoke, free, reset): every indirect call
# in these functions, the graph's loops over the nodes (micro_interpreter_graph.cc, and
# micro_graph.cc / micro_interpreter.cc in the 2022 eras), counts as a call to a kernel. The
# kernels are the functions whose addresses the registration builders load as constants
# (Register_CONV_2D() and the like return tflite::micro::RegisterOp(Init, Prepare, Eval)): the
# kernels the application registered, as only those are linked. Demangled names, matched whole
# (DISPATCHERS) or as a prefix or a suffix (REGISTRATION_BUILDERS: "prefix*", "*suffix").
KERNEL_DISPATCHERS = ("tflite::MicroInterpreterGraph::InvokeSubgraph",
                      "tflite::MicroInterpreterGraph::PrepareSubgraphs",
                      "tflite::MicroInterpreterGraph::InitSubgraphs", "tflite::MicroInterpreterGraph::FreeSubgraphs",
                      "tflite::MicroInterpreterGraph::ResetSubgraphs", "tflite::MicroGraph::InvokeSubgraph",
                      "tflite::MicroGraph::PrepareSubgraphs", "tflite::MicroGraph::InitSubgraphs",
                      "tflite::MicroGraph::FreeSubgraphs", "tflite::MicroGraph::ResetSubgraphs",
                      "tflite::MicroInterpreter::Invoke", "tflite::MicroInterpreter::AllocateTensors",
                      "tflite::MicroInterpreter::PrepareNodeAndRegistrationDataFromFlatbuffer")
REGISTRATION_BUILDERS = ("tflite::Register_*", "tflite::micro::RegisterOp*", "*::FindOp",
                         "tflite::MicroMutableOpResolver<*")


# Where `arena soak` stops once an inference without the agent: the entry of the next Invoke (the
# previous one has returned). Every era's MicroInterpreter has it (micro_interpreter.cc).
INVOKE = "tflite::MicroInterpreter::Invoke"


@dataclass(frozen=True)
class Era:
    """One layout era of TFLM (upstream tensorflow/tflite-micro)."""
    id: str                      # the planner revision that replays it: `arenascope-plan --tflm ID`
    title: str                   # what tells it apart, said to the user
    span: str                    # the upstream commits it covers (first .. last)
    checked: str                 # the commit it was checked on with real TFLM
    shipped_by: str              # who pins a TFLM of this era
    classes: dict = field(default_factory=dict)   # role -> class name (None: the era has no such class)
    renamed: dict = field(default_factory=dict)   # (role, key) -> this era's member name, None: absent
    # (role, member, present): a member that tells this era from the next one with the same
    # classes (the ErrorReporter members TFLM dropped on 2022-09-19)
    marker: tuple | None = None

    def cls(self, role: str) -> str | None:
        return self.classes.get(role, _COMMON.get(role))

    def cls_of(self, role: str) -> str:
        """cls() of a role every era has a class for (the graph, the allocators, SIZED's roles)."""
        name = self.cls(role)
        assert name is not None, f"TFLM era {self.id} has no {role} class"  # ERAS name these in every era
        return name

    def member(self, role: str, key: str) -> str | None:
        return self.renamed.get((role, key), _KEYED.get((role, key), key))

    def describe(self) -> str:
        return f"TFLM {self.id} layout ({self.title}; upstream {self.span}, checked on {self.checked})"


_NEWEST = {ARENA_ALLOCATOR: "tflite::SingleArenaBufferAllocator", **_INTERFACES}
ERAS = (
    Era(id="2026-08", title="MicroInterpreterGraph, SingleArenaBufferAllocator",
        span="c3cfd344e (2023-09-11) .. today", checked="90b983c2 (2026-08-20)",
        shipped_by="esp-tflite-micro, Zephyr v4.1 and later, pico-tflmicro, Infineon, NXP eIQ",
        classes={GRAPH: "tflite::MicroInterpreterGraph", **_NEWEST}),
    Era(id="2023-02", title="concrete MicroGraph, SingleArenaBufferAllocator",
        span="95761fcfd (2022-09-19) .. c3cfd344e (2023-09-11)", checked="58aa9833f (2023-02-13)",
        shipped_by="Arduino_TensorFlowLite, Edge Impulse's SDK, Zephyr v3.6's module",
        classes={GRAPH: "tflite::MicroGraph", **_NEWEST}, marker=(ARENA_ALLOCATOR, "error_reporter_", False)),
    Era(id="2022-09", title="concrete MicroGraph, SingleArenaBufferAllocator with an error_reporter_",
        span="86abc0af9 (2022-07-07) .. 95761fcfd (2022-09-19)", checked="59b39f6cb (2022-09-14)",
        shipped_by="SDKs that pinned TFLM between July and mid-September 2022 (Himax tflmtag2209)",
        classes={GRAPH: "tflite::MicroGraph", **_NEWEST}, marker=(ARENA_ALLOCATOR, "error_reporter_", True)),
    Era(id="2022-07", title="concrete MicroGraph, SimpleMemoryAllocator with buffer-allocator interfaces",
        span="45022bbbe (2022-04-05) .. 86abc0af9 (2022-07-07)", checked="547f8aeab (2022-07-06)",
        shipped_by="SDKs that pinned TFLM between April and July 2022",
        classes={GRAPH: "tflite::MicroGraph", **_INTERFACES, ARENA_ALLOCATOR: "tflite::SimpleMemoryAllocator"}),
    # (its SimpleMemoryAllocator is virtual on its own: a vtable pointer first, no base classes)
    Era(id="2022-03", title="concrete MicroGraph, one SimpleMemoryAllocator pointer, no allocator interfaces",
        span="the graph's arrival (2021-05) .. 45022bbbe (2022-04-05)", checked="5b3670d82 (2022-03-31)",
        shipped_by="SDKs that pinned TFLM before April 2022",
        classes={GRAPH: "tflite::MicroGraph", ARENA_ALLOCATOR: "tflite::SimpleMemoryAllocator",
                 NON_PERSISTENT_BASE: None, PERSISTENT_BASE: None, TWO_ARENA_NON_PERSISTENT: None,
                 TWO_ARENA_PERSISTENT: None},
        renamed={(MICRO_ALLOCATOR, NON_PERSISTENT_ALLOCATOR): "memory_allocator_",
                 (MICRO_ALLOCATOR, PERSISTENT_ALLOCATOR): None}),
)
NEWEST = ERAS[0]
BY_ID = {e.id: e for e in ERAS}


def era_json(era: Era) -> dict:
    """An era as the snapshot's tflm.layout, `arena interpreters --json` and `arena version --json`
    give it: {id, title, span, checked, shipped_by}."""
    return {"id": era.id, "title": era.title, "span": era.span, "checked": era.checked, "shipped_by": era.shipped_by}


def vtable_symbol(class_name: str) -> str:
    """The Itanium C++ ABI symbol of a class's vtable: tflite::MicroGraph -> _ZTVN6tflite10MicroGraphE
    (acquire.elfinfo.itanium_vtable)."""
    return elfinfo.itanium_vtable(class_name)


def short(class_name: str) -> str:
    return class_name.split("::")[-1]


def graph_vtables() -> list[tuple[str, Era]]:
    """(vtable symbol, era) of each era's graph class, newest first: a MicroInterpreter is found in
    RAM by its embedded graph's vtable pointer."""
    return [(vtable_symbol(e.cls_of(GRAPH)), e) for e in ERAS]


def any_tflm_vtables() -> list[str]:
    """Vtable symbols that only a firmware linking some TFLM has."""
    return sorted({vtable_symbol(e.cls_of(r)) for e in ERAS for r in (GRAPH, MICRO_ALLOCATOR)})


def detect(has_vtable, has_type, has_member) -> tuple[Era | None, list[str]]:
    """The era of a firmware: the first (newest) whose graph's vtable the symbol table holds and
    whose arena allocator (or two-arena allocators) and MicroAllocator members the DWARF describes. has_vtable(symbol),
    has_type(class) and has_member(class, member) ask the firmware. Returns (era, []) or (None,
    the TFLM classes found, for the message)."""
    # A firmware that makes only two-arena allocators may link no one-arena allocator of any era:
    # its two-arena allocators' types then stand for it.
    one_arena_linked = any(has_type(e.cls(ARENA_ALLOCATOR)) for e in ERAS)
    for era in ERAS:
        if not has_vtable(vtable_symbol(era.cls_of(GRAPH))):
            continue
        two_arena = era.cls(TWO_ARENA_NON_PERSISTENT)
        if not has_type(era.cls(ARENA_ALLOCATOR)) and \
                (one_arena_linked or not (two_arena and has_type(two_arena))):
            continue
        if era.marker is not None:
            role, member, present = era.marker
            if has_member(era.cls(role), member) != present:
                continue
        if has_member(era.cls(MICRO_ALLOCATOR), era.member(MICRO_ALLOCATOR, NON_PERSISTENT_ALLOCATOR)):
            return era, []
    roles = [MICRO_ALLOCATOR, ARENA_ALLOCATOR, GRAPH, TWO_ARENA_NON_PERSISTENT, TWO_ARENA_PERSISTENT]
    found = sorted({c for e in ERAS for r in roles if (c := e.cls(r)) and has_type(c)} |
                   {e.cls_of(GRAPH) for e in ERAS if has_vtable(vtable_symbol(e.cls_of(GRAPH)))})
    return None, found


def unsupported(found: list[str]) -> str:
    """The message for a TFLM no era matches, naming the classes found."""
    return ("this TFLM version is not supported: arenascope knows the layouts "
            + ", ".join(f"{e.id} ({e.title})" for e in ERAS) + "; this firmware has "
            + (", ".join(found) if found else "none of their classes")
            + ". The arenascope agent still shows its arena (docs/agent.md); please report the TFLM commit "
            "you build (docs/integrating-tflm.md)")


def measured(era: Era, abi: str | None) -> dict | None:
    """The era's layout measured on a real build for the C ABI (tflm_layouts.MEASURED's entry), or
    None when arenascope has not measured it."""
    # cast: the generated entries mix str, dict and None values, which mypy joins to object
    return next((m for m in cast(list[dict], MEASURED) if m["era"] == era.id and m["abi"] == abi), None)


def measured_list() -> str:
    """The measured layouts, as messages name them: "2026-08 on arm-eabi, ..."."""
    return ", ".join(f"{m['era']} on {m['abi']}" for m in cast(list[dict], MEASURED)) or "none"


def undescribed(has_vtable) -> list[Era]:
    """The eras a firmware may link when its DWARF describes none of TFLM's classes with vtables
    (TFLM built without -g): those whose graph, MicroAllocator and arena allocator vtables its
    symbol table holds, newest first. Eras with the same vtables are told apart by the
    MicroInterpreter, which the application's own DWARF still describes (decode.tflm.era_of)."""
    return [e for e in ERAS if all(has_vtable(vtable_symbol(e.cls_of(r))) for r in (GRAPH, MICRO_ALLOCATOR,
                                                                                  ARENA_ALLOCATOR))]


def vtable_classes(era: Era) -> dict[str, str]:
    """role -> class name of the era's classes that have vtables the checks compare."""
    return {r: c for r in VIRTUAL if (c := era.cls(r))}


def names_that_vary() -> set[str]:
    """Class and member names that are not the same in every era (the test keeps them here)."""
    varying = set()
    for role in {*_COMMON, *_INTERFACES, *_NEWEST, GRAPH}:
        names = [e.cls(role) for e in ERAS]
        if len(set(names)) > 1:
            varying |= {short(n) for n in names if n}
    members = {m for e in ERAS for m in e.renamed.values() if m} | set(_KEYED.values()) | \
        {e.marker[1] for e in ERAS if e.marker}
    return varying | members


def stable_classes() -> set[str]:
    """Class names every era has for its role (other modules may say these)."""
    return {short(c) for r, c in _COMMON.items() if all(e.cls(r) == c for e in ERAS)}
