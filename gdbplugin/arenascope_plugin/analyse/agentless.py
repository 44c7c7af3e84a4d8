"""Agentless mode, GDB side: the Layout from the firmware's DWARF, the MicroInterpreter to walk,
and its model's bytes for the planner tool. The walk itself is tflm.py (no GDB there).

Where the interpreter comes from, in order: `arena attach EXPR` (any lvalue or address of a
tflite::MicroInterpreter); else a scan of the ELF's RAM for the vtable pointer of its embedded
MicroInterpreterGraph (`vtable for tflite::MicroInterpreterGraph` + 2 pointers), minus the
graph_ member's offset (TFLM-INTERNALS.md section 6, checked against TFLM 90b983c2).
"""
import hashlib
import os

import gdb  # pylint: disable=import-error

from arenascope_plugin.decode import abi, tflm, tflmstate
from arenascope_plugin.acquire import elfinfo, planner
from arenascope_plugin.analyse import postmortem
from arenascope_plugin.decode.descriptor import Arena, Band, Region
from arenascope_plugin.acquire.reader import MemoryReadError
from arenascope_plugin.acquire.gdbtarget import _SIDE_EFFECT, GdbReader, TargetError, elf_ram_ranges, eval_read_only, stack_symbols

_ATTACHED = {}  # inferior number -> interpreter address given by `arena attach`


def attached():
    return gdb.selected_inferior().num in _ATTACHED


def detach():
    _ATTACHED.pop(gdb.selected_inferior().num, None)


def _graph_vtable():
    """The address of `vtable for tflite::MicroInterpreterGraph`, or None when the ELF has none."""
    try:
        return int(gdb.parse_and_eval("(long)&'vtable for tflite::MicroInterpreterGraph'"))
    except gdb.error:
        return None


def tflm_in_elf():
    """Whether the loaded ELF links TFLM's interpreter (its MicroInterpreterGraph vtable)."""
    return _graph_vtable() is not None


def attach(expr):
    """`arena attach EXPR`: remember the interpreter EXPR names (an object, a reference or a pointer
    to one, or an address). Checked before it is kept: its graph's vtable pointer must be
    MicroInterpreterGraph's. Never evaluates what could write memory or call the target."""
    if _SIDE_EFFECT.search(expr):
        raise TargetError(f"refusing {expr!r}: it could write target memory or call a target function, and "
                          "arenascope only reads; give the interpreter variable, a pointer to it, or its address")
    try:
        v = eval_read_only(expr)
    except gdb.error as e:
        raise TargetError(f"cannot evaluate '{expr}': {e}") from None
    t = v.type.strip_typedefs()
    if t.code == gdb.TYPE_CODE_REF:
        v, t = v.referenced_value(), t.target().strip_typedefs()
    if t.code == gdb.TYPE_CODE_PTR:
        target = t.target().strip_typedefs()
        if target.code != gdb.TYPE_CODE_VOID and target.name != "tflite::MicroInterpreter":
            raise TargetError(f"'{expr}' is a {t}, not a pointer to a tflite::MicroInterpreter")
        address = int(v)
    elif t.code == gdb.TYPE_CODE_STRUCT:
        if t.name != "tflite::MicroInterpreter":
            raise TargetError(f"'{expr}' is a {t}, not a tflite::MicroInterpreter")
        address = int(v.address)
    elif t.code == gdb.TYPE_CODE_INT and not expr.strip()[:1].isalpha():
        address = int(v)  # a number or arithmetic: an address, checked below
    else:
        raise TargetError(f"'{expr}' is a {t}, not a tflite::MicroInterpreter or a pointer to one")
    check_interpreter(GdbReader(), layout(), address, expr)
    _ATTACHED[gdb.selected_inferior().num] = address
    return address


def _graph_vptr(lay):
    """The value a MicroInterpreterGraph's vtable pointer holds (the vtable + 2 pointers), or None."""
    vtable = _graph_vtable()
    if vtable is None:
        return None
    return (vtable & ((1 << 8 * lay.pointer) - 1)) + 2 * lay.pointer


def check_interpreter(reader, lay, address, what):
    """TargetError unless a constructed MicroInterpreter is at `address` (its graph_'s vtable)."""
    if not address:
        raise TargetError(f"'{what}' is a null pointer: the interpreter is not constructed yet (stop later)")
    expected = _graph_vptr(lay)
    try:
        got = int.from_bytes(reader.read(address + lay.off("tflite::MicroInterpreter", "graph_"), lay.pointer),
                             "little")
    except MemoryReadError as e:
        raise TargetError(f"'{what}' ({address:#x}) is not readable memory ({e}): not a MicroInterpreter") from None
    if expected is not None and got != expected:
        raise TargetError(f"no constructed tflite::MicroInterpreter at {address:#x} ('{what}'): its graph_ member "
                          f"does not point to MicroInterpreterGraph's vtable ({got:#x}, expected {expected:#x}); "
                          "or the loaded ELF is not the firmware the target runs (`compare-sections`)")


def _type(name):
    try:
        return gdb.lookup_type(name).strip_typedefs()
    except gdb.error:
        raise TargetError(f"agentless mode: the firmware's debug information has no type {name}: build TFLM and "
                          f"the application with -g (and keep the ELF's symbols); the plugin reads TFLM's objects "
                          f"by their DWARF layout ({tflm.CHECKED_AGAINST})") from None


def _member_offsets(t, wanted, prefix=0, out=None, sizes=None):
    """Offsets of the wanted members, looking into base classes too (bitpos / 8); their sizes
    into `sizes` when given."""
    out = {} if out is None else out
    for f in t.fields():
        if f.is_base_class:
            _member_offsets(f.type.strip_typedefs(), wanted, prefix + f.bitpos // 8, out, sizes)
        elif f.name in wanted and f.name not in out:
            out[f.name] = prefix + f.bitpos // 8
            if sizes is not None:
                sizes[f.name] = f.type.strip_typedefs().sizeof
    return out


def layout():
    """The Layout of the loaded ELF's TFLM, from DWARF. TargetError names a missing member."""
    offsets, member_sizes, optional = {}, {}, {}
    for type_name, members in tflm.OPTIONAL.items():
        try:
            t = gdb.lookup_type(type_name).strip_typedefs()
        except gdb.error:
            continue  # another planner, or another TFLM: the post-mortem says less, nothing fails
        widths = {}
        found = _member_offsets(t, set(members), sizes=widths)
        optional[type_name] = {m: (found[m], widths[m]) for m in found}
    for type_name, members in tflm.MEMBERS.items():
        widths = {}
        found = _member_offsets(_type(type_name), set(members), sizes=widths)
        member_sizes[type_name] = widths
        missing = [m for m in members if m not in found]
        if missing:
            raise TargetError(f"agentless mode: {type_name} has no member {', '.join(missing)} in this firmware: "
                              f"another TFLM version than the plugin knows ({tflm.CHECKED_AGAINST}); say which "
                              "TFLM you build, or add the arenascope agent")
        offsets[type_name] = found
    sizes = {name: _type(name).sizeof for name in tflm.SIZES}
    saba = _type("tflite::SingleArenaBufferAllocator")
    base = next((f.bitpos // 8 for f in saba.fields()
                 if f.is_base_class and f.type.strip_typedefs().name == "tflite::INonPersistentBufferAllocator"), 0)
    return tflm.Layout(pointer=_type("void").pointer().sizeof, offsets=offsets, sizes=sizes,
                       saba_nonpersistent_base=base, member_sizes=member_sizes, optional=optional)


def _planner_type(lay, reader, allocator):
    """Dynamic type and size of MicroAllocator.memory_planner_, from its vtable symbol."""
    p = lay.pointer
    planner = int.from_bytes(reader.read(allocator + lay.off("tflite::MicroAllocator", "memory_planner_"), p), "little")
    vptr = int.from_bytes(reader.read(planner, p), "little")
    text = gdb.execute(f"info symbol {vptr:#x}", to_string=True)
    if text.startswith("vtable for "):
        name = text[len("vtable for "):].split(" + ")[0].split(" in section")[0].strip()
        try:
            lay.planner_type, lay.planner_size = name, gdb.lookup_type(name).strip_typedefs().sizeof
        except gdb.error:
            pass


def find_interpreter(reader, lay):
    """The interpreter's address and how it was found; TargetError when there is none."""
    attached = _ATTACHED.get(gdb.selected_inferior().num)
    if attached is not None:
        return attached, "`arena attach`"
    found = scan_interpreters(reader, lay)
    if not found:
        _explain_missing_interpreter(reader, lay)
        raise TargetError("no arenascope descriptor and no constructed tflite::MicroInterpreter in the ELF's "
                          ".data/.bss: stop after the interpreter is constructed; if it lives on the stack or the "
                          "heap, name it with `arena attach EXPR`; or the loaded ELF is not the one the target runs")
    allocated = [a for a in found if tflm.read_header(reader, lay, a)[1]]
    chosen = (allocated or found)[0]
    if len(found) > 1:
        gdb.write(f"arena: {len(found)} MicroInterpreters in RAM ({', '.join(f'{a:#x}' for a in found)}); showing "
                  f"the one at {chosen:#x} (choose another with `arena attach EXPR`)\n")
    return chosen, "a scan for the MicroInterpreterGraph vtable"


def _explain_missing_interpreter(reader, lay):
    """TargetError naming the ELF's data object the size of a tflite::MicroInterpreter whose
    graph_ vtable pointer is not MicroInterpreterGraph's (overwritten, or not constructed yet);
    returns when there is none."""
    progspace = gdb.current_progspace()
    path = progspace.filename if progspace else None
    size, expected = lay.sizes.get("tflite::MicroInterpreter"), _graph_vptr(lay)
    if not path or not size or expected is None or not elf_ram_ranges()[0]:
        return
    for name, address in elfinfo.objects_of_size(path, size):
        try:
            got = int.from_bytes(reader.read(address + lay.off("tflite::MicroInterpreter", "graph_"), lay.pointer),
                                 "little")
        except MemoryReadError:
            continue
        try:  # GDB's name for it, demangled (the symbol table holds e.g. _ZL11interpreter)
            name = gdb.execute(f"info symbol {address:#x}", to_string=True).split(" in section")[0].strip()
        except gdb.error:
            pass
        raise TargetError(f"'{name}' at {address:#x}, the size of a tflite::MicroInterpreter, does not hold a "
                          f"constructed one: its graph_ vtable pointer is {got:#x}, not MicroInterpreterGraph's "
                          f"({expected:#x}). Either its constructor has not run yet (stop later: a static "
                          "interpreter is built by __libc_init_array before main), or something overwrote the "
                          f"object: `watch -l *(unsigned int *){address + lay.off('tflite::MicroInterpreter', 'graph_'):#x}`"
                          " and run again to catch the writer")


def scan_interpreters(reader, lay):
    """The addresses of the MicroInterpreters in the ELF's RAM (by their graph's vtable pointer)."""
    vptr = _graph_vptr(lay)
    if vptr is None:
        raise TargetError("no arenascope descriptor, and no TFLM MicroInterpreter in this ELF (no symbol "
                          "'vtable for tflite::MicroInterpreterGraph'): link the arenascope agent, or load the "
                          "firmware's ELF built with TFLM and -g")
    ranges, _ = elf_ram_ranges()
    if not ranges:  # a position-independent executable: its sections where the process has them
        for line in gdb.execute("info files", to_string=True).splitlines():
            parts = line.split()
            if len(parts) == 5 and parts[1] == "-" and parts[3] == "is" and parts[4] in (".data", ".bss"):
                entry = (int(parts[0], 16), int(parts[2], 16), parts[4])
                if entry not in ranges:  # a remote target lists them twice
                    ranges.append(entry)
    return tflm.scan_ram(reader, lay, ranges, vptr)


def _model_bytes(reader, address):
    """The model flatbuffer the interpreter's model_ points into (GetModel returns its root table,
    a few bytes into the buffer): the ELF data object that holds `address`, read from the ELF
    file's own bytes (pyelftools), or from target memory when the ELF has no bytes for it."""
    progspace = gdb.current_progspace()
    path = progspace.filename if progspace else None
    if not path or not os.path.exists(path):
        raise TargetError("agentless mode: the loaded ELF is not on disk, so the model's size is unknown: give the "
                          "model file with `set arena model FILE.tflite`")
    # GDB names the symbol at the runtime address (a position-independent executable is
    # relocated); the ELF gives that symbol's size and bytes.
    text = gdb.execute(f"info symbol {address:#x}", to_string=True)
    if text.startswith("No symbol"):
        raise TargetError(f"agentless mode: no symbol of the ELF holds the model at {address:#x}: give the model "
                          "file with `set arena model FILE.tflite`")
    name = text.split(" in section")[0].split(" + ")[0].strip()
    into = int(text.split(" + ")[1].split()[0]) if " + " in text.split(" in section")[0] else 0
    try:
        size, data = elfinfo.object_bytes(path, name)
    except ValueError as e:
        raise TargetError(f"agentless mode: the model at {address:#x} is in '{name}': {e}: give the model file with "
                          "`set arena model FILE.tflite`") from None
    if data is not None:
        return name, data
    return name, reader.read(address - into, size)  # e.g. a model copied to RAM at run time


def _check_model_file(reader, path, model_addr):
    """TargetError unless the file holds the model the interpreter runs: its bytes from the
    buffer's start (the root table's offset before model_) equal the target's."""
    try:
        with open(os.path.expanduser(path), "rb") as f:
            data = f.read()
    except OSError as e:
        raise TargetError(f"`set arena model`: cannot read {path}: {e.strerror}") from None
    if len(data) < 8:
        raise TargetError(f"`set arena model`: {path} is not a TensorFlow Lite model ({len(data)} bytes)")
    root = int.from_bytes(data[:4], "little")
    n = min(len(data), 4096)
    try:
        same = reader.read(model_addr - root, n) == data[:n]
    except MemoryReadError:
        same = False
    if not same:
        raise TargetError(f"`set arena model`: {path} is not the model the interpreter runs (its bytes differ from "
                          f"those at {model_addr - root:#x}): give the file the firmware was built with, or "
                          "`set arena model auto` to read it from the ELF")


class Loaded:
    """What agentless.load found: the Descriptor every command reads (None when not even the
    arena's bounds are known), how the interpreter was found, the planner's mismatches, its
    minimum arena when it holds for this firmware, the interpreter's tflmstate.State, the
    planner's JSON (or None, and why), and the ELF's tflmstate.Facts."""

    def __init__(self, **kw):
        self.desc = self.how = self.minimum = self.state = self.plan = self.facts = None
        self.mismatches, self.plan_note = [], ""
        self.__dict__.update(kw)


def elf_facts(lay, allocator):
    """tflmstate.Facts of the loaded ELF: its memory map and TFLM's vtables (from the file; none
    for a position-independent executable, whose file addresses are not the process's), the data
    object that holds the MicroAllocator (the tensor arena: TFLM puts the allocator in its tail)
    and the linker's stack bounds."""
    progspace = gdb.current_progspace()
    path = progspace.filename if progspace else None
    facts = tflmstate.Facts()
    if path and os.path.exists(path) and elf_ram_ranges()[0]:
        mm = elfinfo.memory_map(path)
        facts.code, facts.flash, facts.ram = mm["code"], mm["flash"], mm["ram"]
        facts.vtables = elfinfo.vtables(path, tflmstate.VTABLE_CLASSES)
    try:
        text = gdb.execute(f"info symbol {allocator:#x}", to_string=True) if allocator else "No symbol"
    except gdb.error:
        text = "No symbol"
    if not text.startswith("No symbol"):
        name = text.split(" in section")[0].split(" + ")[0].strip()
        into = int(text.split(" + ")[1].split()[0]) if " + " in text.split(" in section")[0] else 0
        try:
            size = gdb.parse_and_eval(f"sizeof({name})")
            facts.arena = (name, allocator - into, int(size))
        except gdb.error:
            held = elfinfo.object_at(path, allocator) if path and facts.ram else None
            facts.arena = held
    if facts.arena is None and path and facts.ram:
        # No allocator to find the arena by (null: the constructor failed): the ELF's largest data
        # object whose name says arena (tensor_arena, g_arena, kTensorArena, ...).
        named = [(z, n, v) for n, v, z, t in elfinfo.data_objects(path) if "arena" in n.lower()]
        if named:
            z, n, v = max(named)
            facts.arena = (n, v, z)
    found = stack_symbols()
    if found:
        facts.stack = (found[0], found[1])
    return facts


def _constructor_tail(doc):
    """The persistent bytes MicroAllocator::Create allocates (its three objects), from the
    planner's tail at the recommended size, or None."""
    try:
        end = doc["arena"]["recommended_bytes"]
        own = [t["offset"] for t in doc["tail"]["regions"]
               if t["what"] in ("SingleArenaBufferAllocator", "GreedyMemoryPlanner", "MicroAllocator")]
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
    s = state.allocator
    if s:
        head, temp, tail = (s[k] - s["buffer_head_"] for k in ("head_", "temp_", "tail_"))
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
    for addr, nbytes, what in reversed(postmortem.tail_layout(doc, base, size)):
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


def load(reader, planner_tool, model_setting=""):
    """The interpreter's arena for agentless mode, as a Loaded. Healthy firmware: TFLM's objects
    walked (tflm.walk). Where TFLM is broken (smashed tail, AllocateTensors unfinished) the
    objects are checked one by one (tflmstate.assess) and the arena is reconstructed from what is
    sound and what the planner predicts: every command still answers. TargetError only when no
    interpreter is there at all."""
    lay = layout()
    interpreter, how = find_interpreter(reader, lay)
    check_interpreter(reader, lay, interpreter, f"{interpreter:#x}")
    out = Loaded(how=f"agentless: the MicroInterpreter at {interpreter:#x} ({how})")
    model_addr, _allocated = tflm.read_header(reader, lay, interpreter)
    allocator = int.from_bytes(reader.read(interpreter + lay.off("tflite::MicroInterpreter", "allocator_"),
                                           lay.pointer), "little")
    try:
        _planner_type(lay, reader, allocator)
    except (MemoryReadError, gdb.error, IndexError, ValueError):
        pass  # a smashed planner pointer: the checks below say so
    out.facts = facts = elf_facts(lay, allocator)
    out.state = state = tflmstate.assess(reader, lay, interpreter, facts)
    try:  # planned at the arena's size as TFLM took it (the allocator's bounds, else the ELF's object)
        out.plan = plan_for(reader, lay, model_addr, planner_tool, model_setting, arena_size=state.arena_size)
    except (TargetError, MemoryReadError) as e:
        out.plan_note = str(e)
    doc = out.plan
    if state.condition == "not-started" and doc is not None:
        # Without model_is_allocating_ (another TFLM) only the tail's size tells not-started from
        # unfinished: the planner gives what the constructor alone allocates.
        out.state = state = tflmstate.assess(reader, lay, interpreter, facts, _constructor_tail(doc))
    if state.condition == "allocated" and doc is not None:
        try:
            walked = tflm.walk(reader, lay, interpreter, doc)
        except tflm.AgentlessError as e:
            state.condition, walked = "smashed", None
            state.evidence.append(str(e))
        except MemoryReadError as e:
            state.condition, walked = "smashed", None
            state.evidence.append(f"following the MicroInterpreter at {interpreter:#x} led to unreadable memory ({e})")
        except (KeyError, TypeError, ValueError, IndexError) as e:
            raise TargetError(f"agentless mode: the planner's JSON does not follow \"{planner.SCHEMA}\" "
                              f"({type(e).__name__}: {e}): is `set arena planner-path` arenascope-plan?") from None
        if walked is not None:
            out.desc, out.mismatches = tflm.descriptor(walked, lay.pointer), walked.mismatches
            # The planner's minimum arena holds for this firmware when its tail is the one TFLM
            # built (same kernels, same TFLM): then the headroom is measured against it.
            a = walked.arena
            predicted = doc.get("arena") or {}
            if predicted.get("exact") and postmortem.tail_bytes_at(doc, a.size) == a.size - a.tail and \
                    doc["plans"]["tflm-greedy"]["head_bytes"] == a.head:
                out.minimum = predicted.get("minimum_bytes")
            return out
    out.desc = _reconstructed(state, doc, lay)
    if out.desc is not None and doc is not None and (doc.get("arena") or {}).get("exact"):
        out.minimum = doc["arena"].get("minimum_bytes")  # the model's need: its arena is TFLM's, broken or not
    return out


def plan_for(reader, lay, model_addr, planner_tool, model_setting="", arena_size=None):
    """The planner's JSON for the model the interpreter runs: `set arena model FILE` (checked
    against the target's bytes), else the model's bytes from the ELF (or the target)."""
    if model_setting in ("auto", '""', "''"):
        model_setting = ""
    if model_setting:
        _check_model_file(reader, model_setting, model_addr)
    try:
        if model_setting:
            return planner.run_planner(planner_tool, model_setting, planner.target_for(lay.pointer),
                                     arena_size=arena_size)[0]
        return planner.run_planner_on_bytes(planner_tool, _model_bytes(reader, model_addr)[1], lay.pointer,
                                          arena_size=arena_size)[0]
    except planner.PlannerError as e:
        raise TargetError(f"agentless mode: {e}") from None


MAX_MODEL_BYTES = 64 << 20  # a published model larger than this is not read over the link
_PLANS = {}       # sha256 of a published model's bytes -> the planner's JSON for it
_ELF_MODELS = {}  # (ELF path, its mtime, address, size) -> the model's bytes the ELF file holds, or None


def _published_model_bytes(reader, a):
    """The bytes of the model an arena publishes: from the ELF file when the address starts one of
    its data objects (no target reads; the file is parsed once), else from target memory."""
    progspace = gdb.current_progspace()
    path = progspace.filename if progspace else None
    if path and os.path.exists(path):
        key = (path, os.path.getmtime(path), a.model_addr, a.model_size)
        if key not in _ELF_MODELS:
            held = elfinfo.object_at(path, a.model_addr)
            data = elfinfo.object_bytes(path, held[0])[1] \
                if held is not None and held[1] == a.model_addr and held[2] >= a.model_size else None
            _ELF_MODELS[key] = data[:a.model_size] if data is not None else None
        if _ELF_MODELS[key] is not None:
            return _ELF_MODELS[key]
    return reader.read(a.model_addr, a.model_size)


def _published_plan(reader, desc, a, planner_tool):
    """The planner's JSON for the model arena `a` publishes (arenascope_arena_set_model), planned
    once per distinct model. Raises planner.PlannerError, MemoryReadError, ValueError or OSError."""
    if a.model_size > MAX_MODEL_BYTES:
        raise ValueError(f"the published model size {a.model_size} B is implausible (more than "
                         f"{MAX_MODEL_BYTES >> 20} MiB)")
    data = _published_model_bytes(reader, a)
    key = hashlib.sha256(data).hexdigest()
    if key not in _PLANS:
        _PLANS[key] = planner.run_planner_on_bytes(planner_tool, data, desc.addr_size)[0]
    return _PLANS[key]


def label_from_model(reader, desc, planner_tool):
    """Names an agent arena's unnamed regions from the model it publishes (arenascope_arena_set_
    model), through the planner tool: a tensor or scratch buffer by its id, offset and size in the
    plan; a tail region by its distance from the arena's end and its size in the predicted tail
    (TFLM lays the tail out from the top down, the same way in any arena whose end is 16-byte
    aligned). Regions that match nothing keep their kind's label. Returns warnings."""
    warnings = []
    for a in desc.arenas:
        if a.flags & abi.ARENA_FLAG_PLANNER_IDS or not a.model_addr or not a.model_size or not planner_tool:
            continue  # (no planner tool built: the regions keep their kinds' labels)
        unnamed = [r for r in a.regions if r.name is None]
        if not unnamed:
            continue
        try:
            doc = _published_plan(reader, desc, a, planner_tool)
            buffers = {(b["tensor"] if b["tensor"] >= 0 else b["scratch"], b["tensor"] < 0, b["offset"], b["size"]):
                       b["name"] for b in doc.get("buffers", [])}
            end = doc.get("arena", {}).get("recommended_bytes")
            tail = {(end - t["offset"], t["size"]): t["what"] for t in doc.get("tail", {}).get("regions", [])} \
                if end else {}
        except (planner.PlannerError, MemoryReadError, ValueError, OSError) as e:
            warnings.append(f"arena {a.index}: cannot plan the published model ({e}): regions are not named")
            continue
        except (KeyError, TypeError) as e:
            warnings.append(f"arena {a.index}: the planner's JSON does not follow \"{planner.SCHEMA}\" ({e})")
            continue
        for r in unnamed:
            if r.kind in ("tensor", "scratch"):
                r.name = buffers.get((r.id, r.kind == "scratch", r.offset, r.size))
            elif r.kind in ("persistent", "metadata") and (a.base_addr + a.size) % 16 == 0:
                r.name = tail.get((a.size - r.offset, r.size))
    return warnings


def label_planner_ids(reader, desc, planner_tool):
    """The TFLM adapter publishes TFLM's plan with planner buffer ids as region ids
    (ARENA_FLAG_PLANNER_IDS) and the model's address: map each id to its tensor or scratch buffer
    through the planner tool on the model's bytes, when every published buffer fits the model's
    plan. Otherwise the buffers are named "TFLM planner buffer N" and a warning says why.
    Returns the warnings."""
    warnings = []
    for a in desc.arenas:
        if not a.flags & abi.ARENA_FLAG_PLANNER_IDS:
            continue
        planned = [r for r in a.regions if r.first_use != abi.USE_NONE and r.kind == "tensor" and r.name is None]
        for r in a.regions:
            if r.kind == "persistent" and r.name is None:
                r.name = "TFLM's persistent tail (published whole by the adapter)"
        if not planned:
            continue  # no buffers, or named already (sessions keep their regions)
        why = _plan_for_published_model(reader, desc, a, planner_tool, planned)
        if isinstance(why, str):
            warnings.append(f"arena {a.index}: {why}: its buffers keep TFLM's planner ids")
            for r in planned:
                r.name = f"TFLM planner buffer {r.id}"
            continue
        doc, buffers, tensors = why
        for r in planned:
            b = buffers[r.id]
            t = tensors.get((b["subgraph"], b["tensor"]))
            r.kind = "tensor" if b["tensor"] >= 0 else "scratch"
            r.id = b["tensor"] if b["tensor"] >= 0 else b["scratch"]
            r.name, r.shape, r.dtype = b["name"], (t or {}).get("shape"), (t or {}).get("type")
        if len(planned) < len(buffers):
            warnings.append(f"arena {a.index}: the region table holds {len(planned)} of the model's {len(buffers)} "
                            "planned buffers: the adapter's table is too small (it keeps one entry for the tail)")
        why_whole, mismatches = _split_tail(reader, a, doc)
        if why_whole:
            warnings.append(f"arena {a.index}: the persistent tail is shown whole: {why_whole}")
        warnings += [f"arena {a.index}: {m}" for m in mismatches]
    return warnings


_ADAPTER_INTERPRETER = {}  # (inferior number, arena base) -> the MicroInterpreter found for it


def _split_tail(reader, a, doc):
    """The adapter publishes TFLM's persistent tail as one region. When the ELF carries TFLM's DWARF,
    walk the MicroInterpreter that owns this arena as agentless mode does (tflm.walk) and show the
    tail's objects instead. Returns why not (a string) when TFLM's objects are there but do not
    match, None otherwise (no TFLM debug information is no warning: the tail stays whole)."""
    if not tflm_in_elf():
        return None, []
    try:
        lay = layout()
    except TargetError:
        return None, []  # TFLM built without -g, or another version: the tail stays whole, named as such
    key = (gdb.selected_inferior().num, a.base_addr)
    why = "no MicroInterpreter found in the ELF's RAM"
    try:
        cached = _ADAPTER_INTERPRETER.get(key)
        candidates = [cached] if cached is not None else scan_interpreters(reader, lay)
    except (TargetError, MemoryReadError) as e:
        return f"TFLM's interpreters could not be scanned for ({e})", []
    for interpreter in candidates:  # the one whose arena this is (a firmware may have several)
        try:
            check_interpreter(reader, lay, interpreter, f"{interpreter:#x}")
            walked = tflm.walk(reader, lay, interpreter, doc)
        except (TargetError, tflm.AgentlessError, MemoryReadError) as e:
            why = (f"walking TFLM's objects from the MicroInterpreter at {interpreter:#x} failed ({e}): a pointer on "
                   "the way is not valid (memory corrupted, or stopped while TFLM was still building them)")
            continue
        except (KeyError, TypeError, ValueError, IndexError) as e:
            return f"the planner's JSON does not follow \"{planner.SCHEMA}\" ({type(e).__name__}: {e})", []
        if walked.arena.base_addr == a.base_addr:
            _ADAPTER_INTERPRETER[key] = interpreter
            return tflm.split_tail(a, walked.arena), walked.mismatches
        why = tflm.split_tail(a, walked.arena) if len(candidates) == 1 else \
            f"none of the {len(candidates)} MicroInterpreters in RAM holds the arena at {a.base_addr:#x}"
    _ADAPTER_INTERPRETER.pop(key, None)
    return why, []


def _plan_for_published_model(reader, desc, a, planner_tool, planned):
    """(planner JSON, buffers, tensors) of the planner's plan for the published model, or why not (a string)."""
    if not a.model_addr or not a.model_size:
        return "the adapter published no model"
    try:
        doc = _published_plan(reader, desc, a, planner_tool)
    except ValueError as e:
        return str(e)
    except (planner.PlannerError, MemoryReadError, OSError) as e:
        return f"cannot plan the published model ({e})"
    buffers = doc.get("buffers", [])
    for r in planned:
        if r.id >= len(buffers) or buffers[r.id]["size"] != r.size:
            return (f"planner buffer {r.id} ({r.size} B) is not in the published model's plan: the published model is "
                    "not the one the interpreter runs")
    if len(planned) > len(buffers):
        return "TFLM planned more buffers than the published model's plan has (optimized kernels' scratch buffers?)"
    tensors = {(sg["index"], t["index"]): t for sg in doc.get("subgraphs", []) for t in sg.get("tensors", [])}
    return doc, buffers, tensors
