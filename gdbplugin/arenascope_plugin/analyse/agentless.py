"""Agentless mode: the MicroInterpreter to walk, its model planned (analyse/modelplan.py runs the
planner tool), and the arena rebuilt from TFLM's own objects (decode/tflm.py walks them,
decode/tflmstate.py checks them). An agent arena's regions are named in analyse/agentregions.py.
No GDB here: symbols, types and the ELF come through acquire.symbols.Symbols.

Where the interpreter comes from, in order: `arena attach EXPR` (the front end resolves it to an
address: Settings.interpreter); else a scan of the ELF's RAM for the vtable pointer of its
embedded graph (the era's graph class, decode/tflm_profile.py: its vtable + 2 pointers), minus
the graph_ member's offset (TFLM-INTERNALS.md section 6, checked on every era's TFLM).
"""
from collections.abc import Callable

from arenascope_plugin import ports
from arenascope_plugin.acquire import planner
from arenascope_plugin.acquire.reader import MemoryReader, MemoryReadError
from arenascope_plugin.acquire.symbols import Symbols
from arenascope_plugin.analyse import modelplan, postmortem
from arenascope_plugin.decode import abi, kernels, newlib_heap, tflm, tflmstate
from arenascope_plugin.decode import tflm_profile as P
from arenascope_plugin.decode.descriptor import Arena, Band, Region
from arenascope_plugin.errors import TargetError
from arenascope_plugin.remedy import Remedy


def tflm_in_elf(symbols: Symbols) -> bool:
    """Whether the firmware links a TFLM interpreter of any era (its graph's vtable)."""
    return any(symbols.address(sym) is not None for sym, _era in P.graph_vtables())


def unsupported_tflm(symbols: Symbols) -> str | None:
    """Why the firmware's TFLM cannot be read, when it links TFLM that no era of tflm_profile
    describes (or describes without the debug information to read it); None otherwise."""
    if not any(symbols.address(v) is not None for v in P.any_tflm_vtables()):
        return None
    try:
        tflm.era_of(symbols)
    except TargetError as e:
        return str(e)
    return None


def require_tflm(symbols: Symbols, command: str) -> None:
    """TargetError for a command that reads TFLM's objects (`arena interpreters`, `arena attach`)
    on a firmware that links no TFLM (said as such, not as a build without -g), or a TFLM no era
    describes."""
    older = unsupported_tflm(symbols)
    if older:
        raise TargetError(older)
    if any(symbols.address(v) is not None for v in P.any_tflm_vtables()):
        return
    agent = symbols.address("arenascope_descriptor") is not None
    raise TargetError(f"this firmware links no TFLM (no {P.NEWEST.cls(P.MICRO_ALLOCATOR)} or graph vtable in its "
                      f"symbol table), and `{command}` reads TFLM's MicroInterpreters"
                      + ("; its arenas are the ones the arenascope agent publishes: `arena info`, `arena regions`"
                         if agent else "; load the ELF of the firmware that runs TFLM (`file fw.elf`)"))


def _graph_vptr(symbols, lay):
    """The value the era's graph's vtable pointer holds (the vtable + 2 pointers), or None."""
    vtable = symbols.address(P.vtable_symbol(lay.cls(P.GRAPH)))
    if vtable is None:
        return None
    return (vtable & ((1 << 8 * lay.pointer) - 1)) + 2 * lay.pointer


def check_interpreter(reader: MemoryReader, symbols: Symbols, lay: tflm.Layout, address: int, what: str) -> None:
    """TargetError unless a constructed MicroInterpreter is at `address` (its graph_'s vtable)."""
    if not address:
        raise TargetError(f"'{what}' is a null pointer: the interpreter is not constructed yet (stop later)")
    expected = _graph_vptr(symbols, lay)
    try:
        got = int.from_bytes(reader.read(address + lay.off(P.INTERPRETER, "graph_"), lay.pointer), "little")
    except MemoryReadError as e:
        raise TargetError(f"'{what}' ({address:#x}) is not readable memory ({e}): not a MicroInterpreter") from None
    if expected is not None and got != expected:
        raise TargetError(f"no constructed {lay.cls(P.INTERPRETER)} at {address:#x} ('{what}'): its graph_ member "
                          f"does not point to {lay.name(P.GRAPH)}'s vtable ({got:#x}, expected {expected:#x}); "
                          "or the loaded ELF is not the firmware the target runs (`compare-sections`)")


def _planner_type(symbols, lay, reader, allocator):
    """Dynamic type (its role, tflm_profile.PLANNERS) and size of the MicroAllocator's
    memory_planner_, from its vtable symbol."""
    p = lay.pointer
    planner_ = int.from_bytes(reader.read(allocator + lay.off(P.MICRO_ALLOCATOR, "memory_planner_"), p), "little")
    vptr = int.from_bytes(reader.read(planner_, p), "little")
    named = symbols.name_at(vptr)
    if named and named[0].startswith("vtable for "):
        name = named[0][len("vtable for "):].strip()
        role = next((r for r in P.PLANNERS if lay.cls(r) == name), None)
        size = lay.sizes.get(role) if role else None  # the Layout's: DWARF's, or the measured one
        if size:
            lay.planner_type, lay.planner_size = role, size


def find_interpreter(reader: MemoryReader, symbols: Symbols, lay: tflm.Layout, attached: int | None = None,
                     warn: Callable[[str], object] | None = None) -> tuple[int, str, list[int] | None]:
    """The interpreter's address, how it was found, and every live interpreter the scan found
    (None when `arena attach` named it and nothing was scanned); TargetError when there is none.
    attached: the address `arena attach` named; warn(text) is told when there are several."""
    if attached is not None:
        return attached, "`arena attach`", None
    hows = dict(found_interpreters(reader, symbols, lay))
    found = list(hows)
    if not found:
        _explain_missing_interpreter(reader, symbols, lay)
        heap = _heap_scanned(symbols)
        where = ".data/.bss" + (f" or the first {heap[1] - heap[0]} B of its heap ({heap[0]:#x}-{heap[1]:#x})"
                                if heap else "")
        raise TargetError(f"no arenascope descriptor and no constructed {lay.cls(P.INTERPRETER)} in the ELF's "
                          f"{where}: stop after the interpreter is constructed (between inferences a per-inference "
                          "interpreter is freed: stop inside Invoke); if it lives on the stack or elsewhere, "
                          "name it with `arena attach EXPR`; or the loaded ELF is not the one the target runs")
    alive = [a for a in found if freed_interpreter(reader, symbols, lay, a) is None]
    if not alive:
        raise TargetError(freed_interpreter(reader, symbols, lay, found[0]))
    found = alive
    allocated = [a for a in found if tflm.read_header(reader, lay, a)[1]]
    chosen = (allocated or found)[0]
    if len(found) > 1 and warn is not None:
        warn(f"{len(found)} MicroInterpreters in RAM ({', '.join(f'{a:#x}' for a in found)}); showing "
             f"the one at {chosen:#x} (`arena interpreters` lists them; choose another with "
             "`arena attach --interpreter N` or `arena attach EXPR`)")
    return chosen, hows[chosen], found


def _allocator_of(reader, lay, interpreter):
    """The MicroAllocator the interpreter at `interpreter` uses (0: none, or unreadable)."""
    try:
        return int.from_bytes(reader.read(interpreter + lay.off(P.INTERPRETER, "allocator_"), lay.pointer), "little")
    except MemoryReadError:
        return 0


def sharing(reader: MemoryReader, symbols: Symbols, lay: tflm.Layout, interpreter: int,
            found: list[int] | None = None) -> list[int]:
    """The other constructed interpreters that use the MicroAllocator of the one at `interpreter`
    (TFLM's way to run several models in one arena: MicroAllocator::Create once, each
    MicroInterpreter given the allocator), in address order; [] when none, or none can be found.
    found: the interpreters a scan already found (None: scan now)."""
    allocator = _allocator_of(reader, lay, interpreter)
    if not allocator:
        return []
    try:
        found = scan_interpreters(reader, symbols, lay) if found is None else found
    except (TargetError, MemoryReadError):
        return []
    return [a for a in found if a != interpreter and _allocator_of(reader, lay, a) == allocator]


def _who(symbols, address):
    named = symbols.name_at(address)
    return f"'{named[0]}'" if named and not named[1] else f"the interpreter at {address:#x}"


def _has_vtable(reader, symbols, lay, addr, cls):
    """Whether the object at `addr` holds a pointer into `cls`'s vtable (by the ELF's symbols)."""
    named = symbols.name_at(int.from_bytes(reader.read(addr, lay.pointer), "little"))
    return bool(named) and named[0] == f"vtable for {lay.cls(cls)}"


def _allocator_problem(reader, symbols, lay, allocator):
    """Why the allocator objects of the MicroAllocator at `allocator` are not to be read (the first
    one tflmstate.check_allocator_objects finds unsound: its vtable, its pointers), or None."""
    facts = elf_facts(symbols, lay, allocator, reader)
    bad = [o for o in tflmstate.check_allocator_objects(reader, lay, facts, allocator, tflmstate.arena_span(facts))
           if not o.sound]
    return f"its {bad[0].name} at {bad[0].addr:#x}: {bad[0].problems[0]}" if bad else None


def list_interpreters(reader: MemoryReader, symbols: Symbols, lay: tflm.Layout) -> list[dict]:
    """Every MicroInterpreter found (found_interpreters), in address order (the numbers `arena attach
    --interpreter N` takes): {index, address, name (the symbol holding it, or ""), found_by (how
    it was found), shares_allocator_with (the index of the first interpreter listed that uses the
    same MicroAllocator, and so the same arena; None), freed (it lies in freed heap memory: not
    alive, nothing else read), allocated,
    two_arena, buffers: [(what, base, size)] (its arena, or its non-persistent and persistent
    buffers), problem (why its allocator could not be read, or "")}."""
    out, first_of = [], {}
    for k, (address, how) in enumerate(found_interpreters(reader, symbols, lay)):
        named = symbols.name_at(address)
        allocator = _allocator_of(reader, lay, address)
        entry = {"index": k, "address": address, "name": named[0] if named and not named[1] else "",
                 "found_by": how, "allocated": False, "two_arena": False, "buffers": [], "problem": "",
                 "shares_allocator_with": first_of.get(allocator) if allocator else None, "freed": False}
        if freed_interpreter(reader, symbols, lay, address):
            entry.update(freed=True, shares_allocator_with=None,
                         problem="it lies in freed heap memory: no interpreter is alive there now (between "
                                 "inferences of a per-inference interpreter)")
            out.append(entry)
            continue
        if allocator:
            first_of.setdefault(allocator, k)
        try:
            _model, entry["allocated"] = tflm.read_header(reader, lay, address)
            allocator = int.from_bytes(reader.read(address + lay.off(P.INTERPRETER, "allocator_"),
                                                   lay.pointer), "little")
            if allocator:
                # The objects first: pointers read from overwritten ones lead anywhere (an unreadable
                # address, or a "two-arena" MicroAllocator that is only a smashed one).
                problem = _allocator_problem(reader, symbols, lay, allocator)
                if problem:
                    raise tflm.AgentlessError(problem + " (overwritten: `arena fault` gives the verdict)")
                al = tflm.allocators(reader, lay, allocator)
                if al.two and not _has_vtable(reader, symbols, lay, al.non_persistent, tflm.NPA):
                    raise tflm.AgentlessError(f"its {lay.name(P.MICRO_ALLOCATOR)} at {allocator:#x} does not lead "
                                              "to TFLM's "
                                              "allocator objects (overwritten, or not constructed yet)")
                entry["two_arena"] = al.two
                entry["buffers"] = [("non-persistent", al.head_base, al.head_end - al.head_base),
                                    ("persistent", al.tail_base, al.tail_end - al.tail_base)] if al.two else \
                    [("arena", al.head_base, al.head_end - al.head_base)]
        except (MemoryReadError, tflm.AgentlessError) as e:
            entry["problem"] = str(e)
        out.append(entry)
    return out


def _explain_missing_interpreter(reader, symbols, lay):
    """TargetError naming the ELF's data object the size of a tflite::MicroInterpreter whose
    graph_ vtable pointer is not MicroInterpreterGraph's (overwritten, or not constructed yet);
    returns when there is none."""
    size, expected = lay.sizes.get(P.INTERPRETER), _graph_vptr(symbols, lay)
    if not size or expected is None:
        return
    for name, address in symbols.objects_of_size(size):
        try:
            got = int.from_bytes(reader.read(address + lay.off(P.INTERPRETER, "graph_"), lay.pointer), "little")
        except MemoryReadError:
            continue
        named = symbols.name_at(address)  # demangled (the symbol table holds e.g. _ZL11interpreter)
        if named:
            name = named[0]
        raise TargetError(f"'{name}' at {address:#x}, the size of a {lay.cls(P.INTERPRETER)}, does not hold a "
                          f"constructed one: its graph_ vtable pointer is {got:#x}, not {lay.name(P.GRAPH)}'s "
                          f"({expected:#x}). Either its constructor has not run yet (stop later: a static "
                          "interpreter is built by __libc_init_array before main), or something overwrote the "
                          "object: `watch -l *(unsigned int *)"
                          f"{address + lay.off(P.INTERPRETER, 'graph_'):#x}`"
                          " and run again to catch the writer")


# The heap is scanned for an interpreter (one made with `new`) only when the ELF's RAM sections
# hold none, and only its first MAX_HEAP_SCAN bytes (a heap grows up from its start, and an
# application makes its interpreter early): over a debug probe 1 MiB is seconds, PSRAM is MiBs.
MAX_HEAP_SCAN = 1 << 20


def _heap_scanned(symbols):
    """(start, end) of the part of the heap a scan reads, or None."""
    heap = symbols.heap_span()
    return (heap[0], min(heap[1], heap[0] + MAX_HEAP_SCAN)) if heap else None


def scan_interpreters(reader: MemoryReader, symbols: Symbols, lay: tflm.Layout) -> list[int]:
    """The addresses of found_interpreters, in address order."""
    return [a for a, _ in found_interpreters(reader, symbols, lay)]


def found_interpreters(reader: MemoryReader, symbols: Symbols, lay: tflm.Layout) -> list[tuple[int, str]]:
    """[(address, how it was found)] of the constructed MicroInterpreters, in address order: in the
    ELF's .data/.bss by their graph's vtable pointer (a static or function-static object); through
    the typed pointers the ELF's globals hold (`T *` globals and members of global structs:
    acquire/dwarfpointers.py; an interpreter made with `new`, or placed in external RAM); and,
    when neither finds one, in the heap its linker symbols bound: its first MAX_HEAP_SCAN bytes."""
    vptr = _graph_vptr(symbols, lay)
    if vptr is None:
        raise TargetError("no arenascope descriptor, and no TFLM MicroInterpreter in this ELF (no symbol "
                          f"'vtable for {lay.cls(P.GRAPH)}'): link the arenascope agent, or load the "
                          "firmware's ELF built with TFLM and -g")
    vtable = f"the {lay.name(P.GRAPH)} vtable"
    heap_span = symbols.heap_span()
    found = {a: f"a scan {'of the heap ' if heap_span and heap_span[0] <= a < heap_span[1] else ''}for {vtable}"
             for a in tflm.scan_ram(reader, lay, symbols.scan_ranges(), vptr)}  # (a linked .heap section)
    for label, address, chain in symbols.pointer_paths(lay.cls(P.INTERPRETER)):
        target = _follow(reader, lay, address, chain)
        if target and target not in found and _graph_vptr_at(reader, lay, target) == vptr:
            found[target] = f"the pointer {label}"
            if symbols.memory_of(target) is None:
                _infer_memory(reader, symbols, lay, target, label)
    heap = _heap_scanned(symbols) if not found else None
    if heap is not None:
        found = dict.fromkeys(tflm.scan_ram(reader, lay, [(heap[0], heap[1], "heap")], vptr),
                              f"a scan of the heap for {vtable}")
    return sorted(found.items())


def _infer_memory(reader, symbols, lay, interpreter, label):
    """An interpreter a typed pointer leads to, in memory no source describes (external RAM the
    user has not named): that memory exists (it holds a constructed interpreter), so the span of
    the interpreter and the arena its allocator bounds, when they are in order and within 16 MiB,
    counts as memory for this command, named with the advice to name it."""
    lo, hi = interpreter, interpreter + lay.sizes[P.INTERPRETER]
    allocator = _allocator_of(reader, lay, interpreter)
    try:
        al = tflm.allocators(reader, lay, allocator) if allocator else None
    except (MemoryReadError, tflm.AgentlessError):
        al = None
    if al is not None and al.head_base <= al.head_end and al.tail_base <= al.tail_end:
        spans = [(lo, hi), (al.head_base, al.head_end), (al.tail_base, al.tail_end)]
        if max(b for _, b in spans) - min(a for a, _ in spans) <= 16 << 20:
            lo, hi = min(a for a, _ in spans), max(b for _, b in spans)
    symbols.infer_memory(lo, hi, f"memory the ELF does not describe ({lo:#x}-{hi:#x}, holding the interpreter "
                                 f"{label} points to; name it with {Remedy('memory', 'NAME START END'):q})")


def _follow(reader, lay, address, chain):
    """The pointer a dwarfpointers path leads to (0 when a link is null or unreadable)."""
    p = lay.pointer
    try:
        for offset in chain:
            at = int.from_bytes(reader.read(address, p), "little")
            if not at:
                return 0
            address = at + offset
        return int.from_bytes(reader.read(address, p), "little")
    except MemoryReadError:
        return 0


def _graph_vptr_at(reader, lay, interpreter):
    try:
        return int.from_bytes(reader.read(interpreter + lay.off(P.INTERPRETER, "graph_"), lay.pointer), "little")
    except MemoryReadError:
        return None


def freed_interpreter(reader: MemoryReader, symbols: Symbols, lay: tflm.Layout, address: int) -> str | None:
    """Why the interpreter at `address` is not alive: it lies in memory the C library's heap holds
    free (newlib nano's or picolibc's free list, decode/newlib_heap.py), or None (alive, or nothing
    tells)."""
    heap = symbols.heap_span()
    chunks = newlib_heap.free_chunks(reader, symbols.address(newlib_heap.FREE_LIST), heap[:2] if heap else None,
                                     lay.pointer)
    size = lay.sizes.get(P.INTERPRETER, lay.pointer)
    chunk = newlib_heap.freed(chunks, address, size)
    if chunk is None:
        return None
    reused = "" if chunk[0] <= address and address + size <= chunk[1] else ", the rest of it reused since"
    return (f"the MicroInterpreter at {address:#x} is in freed heap memory (the C library's free list, "
            f"__malloc_free_list, holds {chunk[0]:#x}-{chunk[1]:#x}{reused}): no interpreter is alive now, as "
            "between inferences when the application builds the interpreter and its arena for each inference and "
            "frees them after; stop inside Invoke (`break tflite::MicroInterpreter::Invoke`) to see the arena")


class Loaded:
    """What agentless.load found: the Descriptor every command reads (None when not even the
    arena's bounds are known), how the interpreter was found, the planner's mismatches, its
    minimum arena when it holds for this firmware, the interpreter's tflmstate.State, the
    planner's JSON (or None, and why), and the ELF's tflmstate.Facts."""

    def __init__(self, **kw):
        self.desc = self.how = self.minimum = self.state = self.plan = self.facts = self.found_by = None
        self.layout = None  # the decode.tflm.Layout the objects were read by (its era, its source)
        self.mismatches, self.plan_note = [], ""
        self.__dict__.update(kw)


def _arena_from_objects(reader, lay, facts, allocator):
    """(what, start, size) of the arena TFLM's own objects say the MicroAllocator at `allocator`
    uses (its arena allocator's buffer_head_/buffer_tail_), when they are sane: in order, in RAM
    (the heap included), under 16 MiB, holding the allocator; else None. For an arena that is no
    data object of the ELF (the heap, a pointer to external RAM)."""
    try:
        al = tflm.allocators(reader, lay, allocator)
    except (MemoryReadError, tflm.AgentlessError):
        return None
    lo, hi = al.tail_base, al.tail_end
    if not lo < hi or hi - lo > 16 << 20 or not lo <= allocator < hi:
        return None
    where = next((k for k, spans in (("heap", facts.heap), ("RAM", facts.ram)) if facts.inside(spans, lo) and
                  facts.inside(spans, hi - 1)), None)
    if where is None:
        return None
    return (f"the {'heap block' if where == 'heap' else 'buffer'} at {lo:#x} (TFLM's arena allocator)", lo, hi - lo)


def elf_facts(symbols: Symbols, lay: tflm.Layout, allocator: int, reader: MemoryReader | None = None) \
        -> tflmstate.Facts:
    """tflmstate.Facts of the firmware: its memory map (the heap included) and TFLM's vtables
    (from the file; none for a position-independent executable, whose file addresses are not the
    process's), the arena that holds the MicroAllocator (TFLM puts the allocator in its tail): the
    ELF data object holding it, else (`reader` given) the buffer TFLM's allocator objects bound
    (a heap arena), and the linker's stack bounds."""
    facts = tflmstate.Facts(call_before=ports.of(symbols).call_before)
    mm = symbols.memory_map()
    facts.code, facts.flash, facts.ram, facts.heap = mm["code"], mm["flash"], mm["ram"], mm.get("heap", [])
    by_class = {c: r for r, c in P.vtable_classes(lay.era).items()}
    facts.vtables = {by_class[c]: span for c, span in symbols.vtables(list(by_class)).items()}
    named = symbols.name_at(allocator) if allocator else None
    if named is not None:
        name, into = named
        size = symbols.object_size(name)
        facts.arena = (name, allocator - into, size) if size else symbols.object_at(allocator)
    if facts.arena is None and allocator and reader is not None:
        facts.arena = _arena_from_objects(reader, lay, facts, allocator)
    if facts.arena is None and facts.ram and not allocator:
        # No allocator to find the arena by (null: the constructor failed): the ELF's largest data
        # object in RAM whose name says arena (tensor_arena, g_arena, kTensorArena, ...); never a
        # vtable or a constant ('vtable for tflite::SingleArenaBufferAllocator' is in flash).
        named_ = [(z, n, v) for n, v, z, t in symbols.data_objects() if "arena" in n.lower()
                  and not n.startswith("_ZTV") and facts.inside(facts.ram, v)]
        if named_:
            z, n, v = max(named_)
            facts.arena = (n, v, z)
    found = symbols.stack_bounds()
    if found:
        facts.stack = (found[0], found[1])
    return facts


def state_at(reader: MemoryReader, symbols: Symbols, interpreter: int) -> tflmstate.State:
    """The tflmstate.State of the MicroInterpreter at `interpreter` (any of them, not only the one
    the pipeline shows), its objects checked one by one, with no planner run and no walk: what the
    pretty-printers show for an interpreter. TargetError / MemoryReadError when it is unreadable."""
    lay = tflm.layout(symbols)
    allocator = int.from_bytes(reader.read(interpreter + lay.off(P.INTERPRETER, "allocator_"),
                                           lay.pointer), "little")
    return tflmstate.assess(reader, lay, interpreter, elf_facts(symbols, lay, allocator, reader))


def _constructor_tail(doc):
    """The persistent bytes MicroAllocator::Create allocates (its three objects), from the
    planner's tail at the recommended size, or None."""
    try:
        end = doc["arena"]["recommended_bytes"]
        own = [t["offset"] for t in doc["tail"]["regions"] if t["role"] in planner.CONSTRUCTOR_ROLES]
        return end - min(own) if own else None
    except (KeyError, TypeError, ValueError):
        return None


def _reconstructed(state, doc, lay):
    """A Descriptor for an interpreter whose objects cannot be walked (smashed, or AllocateTensors
    unfinished): the arena's bounds from the ELF, the allocator's marks where they are sound, and
    the tail objects where the planner predicts TFLM puts them, named '(predicted)'."""
    base, size = state.arena_base, state.arena_size
    if base is None or not size or size < 0:
        return None
    if state.two_arena:  # the prediction is of one arena: no reconstruction of two buffers
        state.evidence.append("two-arena mode (MicroAllocator::Create with a persistent and a non-persistent "
                              "buffer): the arena is shown only once AllocateTensors succeeded")
        return None
    s = state.allocator
    if s:
        head, temp, tail = (s[k] - s["buffer_head_"] for k in ("head_", "temp_", "tail_"))
    elif state.condition == "smashed" and postmortem.tail_bytes_at(doc, size) is None:
        state.tail_known = False  # overwritten, and no prediction: the bounds alone are known
        head = temp = 0
        tail = size
    else:
        head = (doc or {}).get("plans", {}).get("tflm-greedy", {}).get("head_bytes", 0) \
            if state.condition == "smashed" else 0
        tail = size - (postmortem.tail_bytes_at(doc, size) or 0)
        temp = head
    regions = []
    if state.condition == "smashed" and doc:
        for b in doc.get("buffers", []):
            if 0 <= b["offset"] and b["offset"] + b["size"] <= size:
                regions.append(Region(index=len(regions), offset=b["offset"], size=b["size"],
                                      id=b["tensor"] if b["tensor"] >= 0 else b["scratch"],
                                      kind="tensor" if b["tensor"] >= 0 else "scratch", flags=0,
                                      first_use=b["first"], last_use=b["last"], name=b["name"]))
    for addr, nbytes, what, _role in reversed(postmortem.tail_layout(doc, base, size)):
        offset = addr - base
        if offset >= max(tail, 0) and offset + nbytes <= size:
            regions.append(Region(index=len(regions), offset=offset, size=nbytes, id=abi.ID_NONE, kind="metadata",
                                  flags=0, first_use=abi.USE_NONE, last_use=abi.USE_NONE, name=f"{what} (predicted)"))
    none = Band(low_addr=0, high_addr=0, touched_lo=abi.NONE, touched_hi=abi.NONE)
    arena = Arena(index=0, base_addr=base, regions_addr=0, model_addr=0, size=size, head=max(head, 0),
                  temp=max(temp, head, 0), tail=min(max(tail, 0), size), model_size=(doc or {}).get("file_bytes", 0),
                  canary=none, alignment=16, region_count=len(regions), region_capacity=len(regions),
                  flags=abi.ARENA_FLAG_TFLM if s else 0, regions=regions)  # TFLM's own marks only when sound
    walked = tflm.Walk(interpreter=state.interpreter, model_addr=0, arena=arena)
    return tflm.descriptor(walked, lay.pointer)


def load(reader: MemoryReader, symbols: Symbols, planner_tool: str | None, model_setting: str = "",
         attached: int | None = None, warn: Callable[[str], object] | None = None, plans: dict | None = None,
         attached_how: str | None = None, build: kernels.KernelBuild | None = None) -> Loaded:
    """The interpreter's arena for agentless mode, as a Loaded. Healthy firmware: TFLM's objects
    walked (tflm.walk). Where TFLM is broken (smashed tail, AllocateTensors unfinished) the
    objects are checked one by one (tflmstate.assess) and the arena is reconstructed from what is
    sound and what the planner predicts: every command still answers. TargetError only when no
    interpreter is there at all."""
    lay = tflm.layout(symbols)
    interpreter, how, found = find_interpreter(reader, symbols, lay, attached, warn)
    how = attached_how or how
    check_interpreter(reader, symbols, lay, interpreter, f"{interpreter:#x}")
    out = Loaded(how=f"agentless: the MicroInterpreter at {interpreter:#x} ({how}); {lay.describe()}",
                 found_by=how, layout=lay)
    model_addr, _allocated = tflm.read_header(reader, lay, interpreter)
    allocator = int.from_bytes(reader.read(interpreter + lay.off(P.INTERPRETER, "allocator_"),
                                           lay.pointer), "little")
    try:
        _planner_type(symbols, lay, reader, allocator)
    except (MemoryReadError, IndexError, ValueError):
        pass  # a smashed planner pointer: the checks below say so
    out.facts = facts = elf_facts(symbols, lay, allocator, reader)
    out.state = state = tflmstate.assess(reader, lay, interpreter, facts)
    try:  # planned at the arena's size as TFLM took it (the allocator's bounds, else the ELF's object)
        out.plan = modelplan.plan_for(reader, symbols, lay, model_addr, planner_tool, model_setting,
                                      arena_size=None if state.two_arena else state.arena_size, plans=plans,
                                      build=build)
    except (TargetError, MemoryReadError) as e:
        out.plan_note = str(e)
    doc = out.plan
    if state.condition == "not-started" and doc is not None:
        # Without model_is_allocating_ (another TFLM) only the tail's size tells not-started from
        # unfinished: the planner gives what the constructor alone allocates.
        out.state = state = tflmstate.assess(reader, lay, interpreter, facts, _constructor_tail(doc))
    if state.condition != "allocated" and doc is not None:
        doc = _replay_checked(out, state, doc, allocator)
    others = sharing(reader, symbols, lay, interpreter, found) if state.condition == "allocated" else []
    if state.condition == "allocated" and doc is not None:
        try:
            walked = tflm.walk(reader, lay, interpreter, doc, shared_allocator=bool(others))
        except tflm.AgentlessError as e:
            state.condition, walked = "smashed", None
            state.evidence.append(str(e))
        except MemoryReadError as e:
            state.condition, walked = "smashed", None
            state.evidence.append(f"following the MicroInterpreter at {interpreter:#x} led to unreadable memory ({e})")
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise TargetError(f"agentless mode: the planner's JSON does not follow \"{planner.SCHEMA}\" "
                              f"({type(e).__name__}: {e}): is {Remedy('planner-path'):q} arenascope-plan?") from None
        if others and walked is not None:
            _name_shared(reader, symbols, lay, walked, others, planner_tool, plans, build)
        if walked is not None:
            a = walked.arena
            predicted_tail = postmortem.tail_bytes_at(doc, a.size)
            if not walked.two_arena and predicted_tail is not None and predicted_tail != a.size - a.tail and not others:
                # The replay is not this firmware's TFLM (or kernels, or model): its sizes of the
                # kernels' data would name wrong spans, and its minimum does not hold.
                revision = (doc.get("tflm") or {}).get("revision", P.NEWEST.id)
                walked = tflm.walk(reader, lay, interpreter, doc, kernel_sizes=False)
                walked.mismatches.append(
                    f"TFLM's persistent tail is {a.size - a.tail} B, the planner's replay of TFLM {revision} for this "
                    f"model gives {predicted_tail} B: another TFLM, other kernels or another model than it replays; "
                    "the kernels' data (OpData, builtin options) is left unnamed and the minimum arena is not known")
                a = walked.arena
            out.desc, out.mismatches = tflm.descriptor(walked, lay.pointer), walked.mismatches
            out.minimum = _minimum_of(walked, doc)
            return out
    out.desc = _reconstructed(state, doc, lay)
    if out.desc is not None and doc is not None and (doc.get("arena") or {}).get("exact"):
        out.minimum = doc["arena"].get("minimum_bytes")  # the model's need: its arena is TFLM's, broken or not
    return out


def _replay_checked(out: Loaded, state: tflmstate.State, doc: dict, allocator: int) -> dict | None:
    """doc, or None when what TFLM itself holds contradicts the planner's replay (then out and
    state say why). Where TFLM did not lay the arena out, the figures come from the replay: not
    when it disagrees (the same rule as the healthy walk's minimum)."""
    why = postmortem.replay_disagrees(state, doc, allocator)
    if not why:
        return doc
    revision = (doc.get("tflm") or {}).get("revision", P.NEWEST.id)
    out.plan_note = (f"the planner's replay of this model is not what this firmware's TFLM did ({why}): "
                     f"another model, other kernels, or a TFLM other than the {revision} it replays; its "
                     "figures (the shortfall, the predicted tail, the minimum) are left out")
    state.evidence.append(out.plan_note)
    state.replay_mismatch = why
    out.plan = None
    return None


def _minimum_of(walked, doc: dict) -> int | None:
    """The planner's minimum arena, when it holds for this firmware: its tail is the one TFLM built
    (same kernels, same TFLM); then the headroom is measured against it. (Two-arena mode: the
    prediction is the one arena's, so no minimum per buffer.)"""
    a, predicted = walked.arena, doc.get("arena") or {}
    if not walked.two_arena and predicted.get("exact") and \
            postmortem.tail_bytes_at(doc, a.size) == a.size - a.tail and \
            doc["plans"]["tflm-greedy"]["head_bytes"] == a.head:
        return predicted.get("minimum_bytes")
    return None


def _name_shared(reader, symbols, lay, walked, others, planner_tool, plans, build):
    """The tail of an arena several interpreters share (one MicroAllocator): each other one's
    objects named in it (tflm.merge_shared), from its own walk with its own model's plan, and a
    note saying so. An interpreter that cannot be walked is named in the note."""
    arena = walked.arenas[-1]  # the buffer holding the persistent tail
    walks, failed = [], []
    for other in others:
        try:
            model_addr, allocated = tflm.read_header(reader, lay, other)
            if not allocated:
                failed.append(f"{_who(symbols, other)} (not allocated yet)")
                continue
            doc = modelplan.plan_for(reader, symbols, lay, model_addr, planner_tool, "", arena_size=None,
                                     plans=plans, build=build)
            walks.append((_who(symbols, other), tflm.walk(reader, lay, other, doc).arenas[-1]))
        except (TargetError, MemoryReadError, tflm.AgentlessError, KeyError, TypeError, ValueError, IndexError) as e:
            failed.append(f"{_who(symbols, other)} ({e})")
    named = tflm.merge_shared(arena, walks)
    who = ", ".join(w for w, _ in walks) or "none walked"
    walked.mismatches.append(
        f"this arena is shared through one {lay.name(P.MICRO_ALLOCATOR)} with {len(others)} other interpreter(s) "
        f"({who}{'; not walked: ' + ', '.join(failed) if failed else ''}): its tail holds each one's objects "
        f"({named} of theirs named, prefixed with the interpreter), its head the plan of whichever ran last (shown: "
        "this one's; `arena attach --interpreter N` shows another's); one model's minimum arena does not apply")
