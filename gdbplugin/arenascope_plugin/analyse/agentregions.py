"""An agent arena's regions named (agent mode, not agentless): from the model the arena publishes
(arenascope_arena_set_model), planned by the planner tool (analyse/modelplan.py), and, for the
TFLM adapter's tables (ARENA_FLAG_PLANNER_IDS), TFLM's planner ids mapped to their tensors and the
persistent tail split into TFLM's objects when the ELF carries TFLM's DWARF (the MicroInterpreter
found and walked as agentless mode does: analyse/agentless.py). No GDB here."""
from arenascope_plugin.acquire import planner
from arenascope_plugin.acquire.reader import MemoryReader, MemoryReadError
from arenascope_plugin.acquire.symbols import Symbols
from arenascope_plugin.analyse import modelplan
from arenascope_plugin.analyse.agentless import check_interpreter, scan_interpreters, tflm_in_elf
from arenascope_plugin.decode import abi, kernels, tflm
from arenascope_plugin.decode.descriptor import Descriptor
from arenascope_plugin.errors import TargetError


def label_from_model(reader: MemoryReader, symbols: Symbols, desc: Descriptor, planner_tool: str | None,
                     build: kernels.KernelBuild | None = None) -> list[str]:
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
            doc = modelplan.published_plan(reader, symbols, desc, a, planner_tool, build)
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


def label_planner_ids(reader: MemoryReader, symbols: Symbols, desc: Descriptor,
                      planner_tool: str | None, build: kernels.KernelBuild | None = None) -> list[str]:
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
        why = _plan_for_published_model(reader, symbols, desc, a, planner_tool, planned, build)
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
        why_whole, mismatches = _split_tail(reader, symbols, a, doc)
        if why_whole:
            warnings.append(f"arena {a.index}: the persistent tail is shown whole: {why_whole}")
        warnings += [f"arena {a.index}: {m}" for m in mismatches]
    return warnings


_ADAPTER_INTERPRETER = {}  # (ELF, arena base) -> the MicroInterpreter found for it


def _split_tail(reader, symbols, a, doc):
    """The adapter publishes TFLM's persistent tail as one region. When the ELF carries TFLM's DWARF,
    walk the MicroInterpreter that owns this arena as agentless mode does (tflm.walk) and show the
    tail's objects instead. Returns why not (a string) when TFLM's objects are there but do not
    match, None otherwise (no TFLM debug information is no warning: the tail stays whole)."""
    if not tflm_in_elf(symbols):
        return None, []
    try:
        lay = tflm.layout(symbols)
    except TargetError:
        return None, []  # TFLM built without -g, or another version: the tail stays whole, named as such
    key = (symbols.elf_path, a.base_addr)
    why = "no MicroInterpreter found in the ELF's RAM"
    try:
        cached = _ADAPTER_INTERPRETER.get(key)
        candidates = [cached] if cached is not None else scan_interpreters(reader, symbols, lay)
    except (TargetError, MemoryReadError) as e:
        return f"TFLM's interpreters could not be scanned for ({e})", []
    for interpreter in candidates:  # the one whose arena this is (a firmware may have several)
        try:
            check_interpreter(reader, symbols, lay, interpreter, f"{interpreter:#x}")
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


def _plan_for_published_model(reader, symbols, desc, a, planner_tool, planned, build=None):
    """(planner JSON, buffers, tensors) of the planner's plan for the published model, or why not (a string)."""
    if not a.model_addr or not a.model_size:
        return "the adapter published no model"
    try:
        doc = modelplan.published_plan(reader, symbols, desc, a, planner_tool, build)
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
