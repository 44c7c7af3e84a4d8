"""The one pipeline behind every front end: find the target's arena (the agent's descriptor, else
TFLM's own objects), read it, name its regions, rescan the bands and the stack, compute the
figures, run the checks, find the fault, build the snapshot. `arena ...` at a stop (gdb/), the
live poller (serve/livepoll.py) and the standalone `arenascope` tool all call gather() and
snapshot() here, with their own acquire/ parts:

    ctx = gather(Target(reader, symbols, core), settings, cache, scanner, verify=True)
    snap = snapshot(ctx)

No GDB here. Errors: errors.ArenascopeError's (TargetError, DecodeError, MemoryReadError,
TornReadError, NotFoundError, ...), each saying what happened, where, and what to do.
"""
import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from arenascope_plugin import ports, stackbudget_job
from arenascope_plugin.acquire.elfinfo import STACK_SYMBOLS, STACK_TOP_AND_SIZE_SYMBOLS
from arenascope_plugin.acquire.planner import PlannerError
from arenascope_plugin.acquire.reader import MemoryReader, MemoryReadError
from arenascope_plugin.acquire.symbols import Core, Symbols
from arenascope_plugin.analyse import (
    agentless,
    agentregions,
    diagnosis,
    faults,
    figures,
    modelplan,
    rambudget,
    tasks,
)
from arenascope_plugin.analyse.bands import BandScanner
from arenascope_plugin.analyse.diagnosis import Diagnosis
from arenascope_plugin.analyse.tasks import TaskStack
from arenascope_plugin.decode import abi, freertos, kernels, regionnames, tflm, tflmstate
from arenascope_plugin.decode.descriptor import Band, DecodeError, Descriptor
from arenascope_plugin.decode.kernels import KernelBuild
from arenascope_plugin.decode.locate import NotFoundError, locate, scan
from arenascope_plugin.decode.session import DescriptorSession
from arenascope_plugin.errors import TargetError
from arenascope_plugin.present import faultjson
from arenascope_plugin.present import snapshot as snapshot_json
from arenascope_plugin.remedy import Remedy

DEFAULT_STACK_PAINT = 0xCCCCCCCC  # the agent's default (target_agent/include/arenascope/agent_config.h)


@dataclass
class Target:
    """The acquire/ parts one front end reads through."""
    reader: MemoryReader
    symbols: Symbols
    core: Core


@dataclass
class Settings:
    """The user's settings, resolved to values by the front end (`set arena ...`, the tool's
    options). None: automatic."""
    canary_pattern: int | None = None
    stack_paint_pattern: int | None = None
    stack_range: tuple[int, int] | None = None
    descriptor_address: int | None = None
    scan_range: tuple[int, int] | None = None
    model: str = ""                       # agentless: the .tflite file, "" to read the model from the ELF
    planner: str | None = None            # the arenascope-plan executable, None when not found
    fault_sp: tuple[str, object] | None = None     # (expression, its value or why it has none)
    interpreter: int | None = None        # agentless: the MicroInterpreter `arena attach` named
    kernels: str = "auto"                 # the firmware's TFLM kernels: auto (from the ELF), reference, cmsis-nn
    cpu: str = "auto"                     # the CPU CMSIS-NN is built for: auto (the ELF's attributes) or a name


@dataclass
class Context:
    """What one gather found. warnings: [(key, text)], said by the front end (once a stop)."""
    target: Target
    settings: Settings
    cache: dict
    warnings: list[tuple[str, str]] = field(default_factory=list)
    desc: Descriptor | None = None
    located_by: str | None = None
    tflm_layout: tflm.Layout | None = None     # agentless: TFLM's era and its source
    figs: dict[int, figures.ArenaFigures] = field(default_factory=dict)
    stack: figures.StackFigures | None = None
    seq_odd: bool = False
    note: str | None = None
    stale: list[str] = field(default_factory=list)
    stack_source: str = "the descriptor"
    minimum_arena: int | None = None      # the planner's minimum arena, when it holds for this firmware
    descriptor_error: str | None = None     # why the agent's descriptor was not used (corrupt): agentless
    tflm: tflmstate.State | None = None   # agentless: the interpreter's state
    plan: dict | None = None              # agentless: the planner's JSON for the model
    plan_note: str = ""                   # agentless: why there is no plan (warned once)
    facts: tflmstate.Facts | None = None  # agentless: what the ELF says of TFLM
    halt: Any = None                      # where the core is stopped (faults.halt_of), unwound once
    verdicts: Any = None                  # (fault, [postmortem.Verdict]) computed for it
    on_warn: Callable | None = None       # told each warning as it is found (key, text)
    kernel: freertos.Kernel | None = None  # the RTOS's tasks, None without one
    tasks: list[TaskStack] = field(default_factory=list)  # measured
    intact_regions: list = field(default_factory=list)  # checksummed regions as allocated (faultread.damaged_regions)
    diagnosis: Diagnosis | None = None  # the post-mortem (analyse/diagnosis.diagnose), computed once
    kernels: KernelBuild | None = None  # agentless: the TFLM kernels the planner assumed

    @property
    def reader(self) -> MemoryReader:
        return self.target.reader

    @property
    def symbols(self) -> Symbols:
        return self.target.symbols

    @property
    def core(self) -> Core:
        return self.target.core

    @property
    def port(self):
        """The architecture port (ports/) for the firmware's ELF, by its header (Symbols.abi):
        Cortex-M's when the ABI is not one a port serves (a host build: the agent's fault record
        is Cortex-M's layout, and no core registers say a fault)."""
        return ports.of(self.symbols)

    def warn(self, key: str, text: str) -> None:
        self.warnings.append((key, text))
        if self.on_warn is not None:
            self.on_warn(key, text)


def _session(ctx, address):
    sessions = ctx.cache.setdefault("sessions", {})
    if address not in sessions:
        ram = [(lo, hi) for lo, hi, kind, _ in ctx.symbols.memories() if kind == "ram"] or None
        sessions[address] = DescriptorSession(ctx.reader, address, ram_ranges=ram)
    session = sessions[address]
    session.reader = ctx.reader
    return session


def _scan_ranges(ctx):
    """(ranges, their source, why empty) for a descriptor scan."""
    user = ctx.settings.scan_range
    if user:
        return [(user[0], user[1], "scan-range")], f"{Remedy('scan-range'):q}", ""
    ranges, why = ctx.symbols.ram_ranges()
    return ranges, "the ELF's RAM sections", why


def _find_descriptor(ctx, fresh_tables=False):
    pinned = ctx.cache.get("descriptor") if ctx.cache.get("pin") else None
    if pinned is not None:  # a poller: found once, the region tables re-read when their generation moves
        ctx.desc = _session(ctx, pinned[0]).read()  # a static object: a reset keeps it where it was
        ctx.located_by, ctx.seq_odd = pinned[1], ctx.desc.halted_in_update
        return
    if ctx.cache.get("pin") and ctx.cache.get("no descriptor"):
        raise NotFoundError(ctx.cache["no descriptor"])  # a poller scans for it once
    override = ctx.settings.descriptor_address
    symbol = None if override is not None else ctx.symbols.address("arenascope_descriptor")
    if override is None and symbol is None:
        ranges, source, why = _scan_ranges(ctx)
        try:
            address, how = locate(ctx.reader, ranges=ranges, range_source=source, why_no_ranges=why,
                                  warn=lambda text: ctx.warn("descriptor-candidates", text))
        except NotFoundError as exc:
            if ctx.cache.get("pin"):
                ctx.cache["no descriptor"] = str(exc)
            raise
    else:
        address, how = locate(ctx.reader, override=override, symbol=symbol)
    try:
        ctx.desc = _session(ctx, address).read(fresh_tables=fresh_tables)
    except DecodeError as exc:
        if symbol is None or "magic is" not in str(exc):
            raise
        # The ELF's symbol holds no descriptor: the agent has not run arenascope_init yet, or the
        # ELF is not the firmware that runs. A scan tells which.
        ranges, source, _ = _scan_ranges(ctx)
        found, _, several = scan(ctx.reader, [r for r in ranges if not r[0] <= address < r[1]] +
                                 [(lo, address, n) for lo, hi, n in ranges if lo <= address < hi] +
                                 [(address + 8, hi, n) for lo, hi, n in ranges if lo <= address < hi]) \
            if ranges else (None, [], None)
        if several:
            ctx.warn("descriptor-candidates", f"scanning {source}: {several}")
        if found is None:
            raise DecodeError(f"{exc}; or the loaded ELF does not match the running firmware") from None
        ctx.warn("stale-symbol", f"the ELF's symbol arenascope_descriptor is at {address:#x} but the descriptor is at "
                 f"{found:#x}: the loaded ELF does not match the running firmware (load the right one with `file`)")
        address, how = found, f"magic found by scanning {source}; the ELF's symbol is stale"
        ctx.desc = _session(ctx, address).read(fresh_tables=fresh_tables)
    ctx.located_by = how
    ctx.seq_odd = ctx.desc.halted_in_update
    if ctx.cache.get("pin"):
        ctx.cache["descriptor"] = (address, how)


def kernel_build(ctx) -> kernels.KernelBuild:
    """The firmware's TFLM kernels and CPU, as set or read from the ELF (modelplan.kernel_build)."""
    return modelplan.kernel_build(ctx.symbols, None, ctx.settings.kernels, ctx.settings.cpu)


def _name_regions(ctx):
    """Names the agent's regions from the model each arena publishes (the planner tool)."""
    desc, planner = ctx.desc, ctx.settings.planner
    if planner is None and any(a.model_addr for a in desc.arenas):
        ctx.warn("planner", "the planner tool arenascope-plan was not found (not at build/planner/arenascope-plan "
                 "beside the plugin, nor on PATH; `pip install` does not bring it): the regions are not named "
                 "from the model; build it (bash tools/build.sh) and put it on PATH or "
                 f"{Remedy('planner-path', '/path/to/arenascope-plan'):q}")
    if any(a.flags & abi.ARENA_FLAG_PLANNER_IDS for a in desc.arenas):  # the TFLM adapter's arena
        for w in agentregions.label_planner_ids(ctx.reader, ctx.symbols, desc, planner, kernel_build(ctx)):
            ctx.warn(w, w)
    if any(a.model_addr and not a.flags & abi.ARENA_FLAG_PLANNER_IDS for a in desc.arenas):
        for w in agentregions.label_from_model(ctx.reader, ctx.symbols, desc, planner, kernel_build(ctx)):
            ctx.warn(w, w)
    _names_from_elf(ctx)


def _names_from_elf(ctx):
    """The names the firmware gives its own regions (ARENASCOPE_REGION_NAMES, decode/regionnames.py):
    from the ELF's section, read once per ELF file; they win over the names found above."""
    data, size, _why = ctx.symbols.section_bytes(regionnames.SECTION, regionnames.SECTION_CAP)
    if not size:
        return  # no section: the firmware names nothing (or the ELF is not on disk)
    names, warnings = regionnames.parse(data, size)
    for w in warnings:
        ctx.warn(f"region-names: {w}", w)  # one key a problem: each is said once a stop
    regionnames.apply(ctx.desc.arenas, names)


def model_plan(ctx, arena) -> dict | None:
    """The planner's JSON for the model `arena` runs: agentless, the one the walk used; an agent's
    arena, the model it publishes (arenascope_arena_set_model), planned once per model. None when
    the arena publishes no model, the planner tool is not found, or the model cannot be read or
    planned (a caller with nothing to say about the plan then says nothing)."""
    if ctx.desc is not None and ctx.desc.agentless:
        return ctx.plan
    if not arena.model_addr or not arena.model_size or ctx.settings.planner is None:
        return None
    try:
        return modelplan.published_plan(ctx.reader, ctx.symbols, ctx.desc, arena, ctx.settings.planner,
                                        kernel_build(ctx))
    except (PlannerError, MemoryReadError, ValueError, OSError):
        return None


def _load_agentless(ctx):
    loaded = _load_interpreter(ctx)
    _say_moved(ctx, loaded)
    return loaded


def _say_moved(ctx, loaded):
    """An arena whose base differs from the one the previous stop or refresh of this session saw
    (ctx.cache keeps it) moved: a per-inference arena (Edge Impulse's default, built and freed for
    each inference) allocated again elsewhere. Said once a move; carried by the arena while it
    stays there (moved_from: the snapshot's arenas[].moved_from, which the viewer shows)."""
    if loaded.desc is None or not loaded.desc.arenas:
        return
    now = [(a.base_addr, a.size) for a in loaded.desc.arenas]
    before = ctx.cache.get("arena-bases")
    ctx.cache["arena-bases"] = now
    moved = ctx.cache.setdefault("arena-moved", {})  # arena index -> (from, to) of its last move
    moves = []
    if before and len(before) == len(now) and before != now:
        for a, (lo, size) in zip(loaded.desc.arenas, before, strict=True):
            if a.base_addr != lo:
                moved[a.index] = (lo, a.base_addr)
                moves.append(f"{lo:#x}+{size} -> {a.base_addr:#x}+{a.size}")
    for a in loaded.desc.arenas:
        if a.index in moved and moved[a.index][1] == a.base_addr:
            a.moved_from = moved[a.index][0]
    if moves:
        ctx.warn("arena-moved", f"the arena moved since the last look ({'; '.join(moves)}): TFLM's arena was "
                 "allocated again elsewhere (a per-inference arena, freed after each inference, or the "
                 "interpreter built again); the figures are the new one's")


def _load_interpreter(ctx):
    pinned = ctx.cache.get("interpreter") if ctx.cache.get("pin") else None
    if pinned is not None and ctx.cache.get("loaded") is not None:
        # A poller: TFLM lays the arena out once. Its allocator's state (a handful of words) says
        # whether it moved (another AllocateTensors, a reset): only then are the objects walked again.
        try:
            state = tflm.allocator_state(ctx.reader, tflm.layout(ctx.symbols), pinned[0])
        except (MemoryReadError, tflm.AgentlessError):
            state = None
        kept_state, kept = ctx.cache["loaded"]
        if state is not None and state == kept_state:
            return copy.deepcopy(kept)
    def load(attached, how):
        return agentless.load(ctx.reader, ctx.symbols, ctx.settings.planner, ctx.settings.model, attached=attached,
                              attached_how=how, warn=lambda w: ctx.warn("interpreters", w),
                              plans=ctx.cache.setdefault("plans", {}), build=kernel_build(ctx))
    if pinned is None:
        loaded = load(ctx.settings.interpreter, None)
    else:
        try:
            loaded = load(pinned[0], pinned[1])
            if agentless.freed_interpreter(ctx.reader, ctx.symbols, tflm.layout(ctx.symbols), pinned[0]):
                raise TargetError("the pinned interpreter was freed")
        except TargetError:  # the interpreter the poller followed is gone (freed, rebuilt): look again
            ctx.cache.pop("interpreter", None)
            ctx.cache.pop("loaded", None)
            loaded = load(ctx.settings.interpreter, None)
    if ctx.cache.get("pin") and loaded.state is not None and loaded.state.interpreter:
        ctx.cache["interpreter"] = (loaded.state.interpreter, loaded.found_by)
        try:
            state = tflm.allocator_state(ctx.reader, tflm.layout(ctx.symbols), loaded.state.interpreter)
            ctx.cache["loaded"] = (state, copy.deepcopy(loaded))
        except (MemoryReadError, tflm.AgentlessError):
            ctx.cache.pop("loaded", None)
    return loaded


def _agentless(ctx, exc, need_descriptor):
    """No usable descriptor (exc says why): TFLM's own objects instead."""
    if isinstance(exc, DecodeError):  # an agent is there, but its descriptor cannot be trusted
        ctx.descriptor_error = str(exc)
        ctx.warn("descriptor-corrupt", f"the arenascope descriptor is corrupt ({exc}); showing TFLM's own objects "
                 "instead (agentless mode); `arena check` fails until the descriptor is sound")
    try:
        loaded = _load_agentless(ctx)
    except (TargetError, MemoryReadError) as exc2:
        inside = faults.constructor_note(ctx)
        if inside and need_descriptor:
            raise TargetError("TFLM's interpreter is not built yet: the core is inside the "
                              "tflite::MicroInterpreter constructor; `arena fault` says why") from None
        error = TargetError(inside) if inside else exc2
        if need_descriptor:
            raise error from None
        loaded = agentless.Loaded(state=tflmstate.State(interpreter=0, condition="unknown", evidence=[str(error)],
                                                        objects=[]))
    ctx.desc, ctx.located_by, ctx.minimum_arena = loaded.desc, loaded.how, loaded.minimum
    ctx.tflm_layout = loaded.layout
    ctx.kernels = kernel_build(ctx)
    ctx.tflm, ctx.plan, ctx.facts, ctx.plan_note = loaded.state, loaded.plan, loaded.facts, loaded.plan_note
    if ctx.desc is not None and ctx.plan is None:  # the head's regions come from the plan
        ctx.desc.unplanned = ctx.plan_note or "no plan"
    for m in loaded.mismatches + ([loaded.plan_note] if loaded.plan_note else []):
        ctx.warn(m, m)
    if ctx.tflm.condition == "not-started" and ctx.tflm.interpreter:
        ctx.warn("tflm-state", "TFLM has not laid the arena out yet: the interpreter is constructed and "
                 "AllocateTensors has not run (the figures are the constructor's; stop after AllocateTensors)")
    elif ctx.tflm.condition != "allocated" and ctx.tflm.interpreter:
        ctx.warn("tflm-state", f"TFLM is not in a healthy state: {tflmstate.CONDITIONS[ctx.tflm.condition]} "
                 "(`arena info` shows the evidence, `arena fault` the verdict)")
    if ctx.desc is None:
        why = "; ".join(ctx.tflm.evidence) or "its arena's bounds are unknown"
        if need_descriptor:
            raise TargetError(f"TFLM's arena cannot be shown: {why}; `arena fault` says what can be known")
        ctx.note = f"TFLM's arena cannot be shown ({why})" if ctx.tflm.interpreter else why
    found = ctx.symbols.stack_bounds()
    if found and ctx.desc is not None:
        ctx.desc.stack = Band(low_addr=found[0], high_addr=found[1], touched_lo=abi.NONE, touched_hi=abi.NONE)
        ctx.stack_source = f"the linker symbols {found[2]}"


def _overridden(desc, settings):
    """A corrupt fill pattern the user's setting replaces (`set arena canary-pattern`,
    `stack-paint-pattern`) stays named, and its rules run against the setting's pattern."""
    given = {"canary_pattern": settings.canary_pattern, "stack_paint_pattern": settings.stack_paint_pattern}
    for c in desc.corrupt:
        if given.get(c.field) is not None and c.rules:
            c.rules = ()
            c.why += f"; the setting's {given[c.field]:#010x} is used instead"


def _in_declared_memory(ctx, name, lo, hi, _pattern):
    """Whether [lo, hi) may be scanned: it overlaps the RAM the ELF and the target declare
    (Symbols.memories(): sections, the heap, named target memory; and the linker's stack), or
    nothing is declared. A band the descriptor puts elsewhere (a corrupt address: peripheral
    space, where a read can have side effects) is not read, and said."""
    ram = [(a, b) for a, b, kind, _ in ctx.symbols.memories() if kind == "ram"]
    found = ctx.symbols.stack_bounds()
    ram += [found[:2]] if found else []
    if not ram or any(a < hi and lo < b for a, b in ram):
        return True
    ctx.warn("band-outside-ram", f"the {name} {lo:#x}-{hi:#x} lies in no RAM the ELF or the target declares: not "
             f"read (a corrupt descriptor? {Remedy('memory'):q} names RAM the ELF does not)")
    return False


def _measure(ctx, scanner, which, stack=None):
    """Re-measures the descriptor's bands from target memory (the agent's figures are from its
    last arenascope_measure, which a fault may have overtaken) and, given stack=(low, high,
    pattern), the stack's paint, in one scanner call. Returns (names of the bands whose figures
    changed, whether everything has a whole pass, (high-water mark, painted) of the stack or
    (None, None))."""
    desc = ctx.desc
    pattern = ctx.settings.canary_pattern if ctx.settings.canary_pattern is not None else desc.canary_pattern
    bands = ([("guard band", desc.guard)] if "guard" in which else []) + \
            ([(f"arena {a.index} free band", a.canary) for a in desc.arenas] if "free" in which else [])
    # a band is not read against a pattern the descriptor holds corrupt (it would be "damaged" everywhere)
    bands = [(n, b) for n, b in bands if b.filled and not desc.not_judged("canary")]
    wanted: list[tuple] = [(n, b.low_addr, b.high_addr, pattern) for n, b in bands]
    if stack is not None:
        wanted.append(("stack", *stack))
    wanted = [w for w in wanted if _in_declared_memory(ctx, *w)]
    results = scanner.measure(ctx.reader, wanted)
    changed = []
    for name, band in bands:
        got = results.get(name)
        if got is None:
            continue
        before = (band.touched_lo, band.touched_hi)
        band.touched_lo, band.touched_hi = got[0], got[1]
        if desc.agent_measured and before != (band.touched_lo, band.touched_hi):
            changed.append(name)
    hwm = painted = None
    if stack is not None and results.get("stack") is not None:
        got = results["stack"]
        hwm, painted = (stack[1] if got[0] == abi.NONE else stack[0] + got[0]), got[2]
    return changed, all(r is not None for r in results.values()), (hwm, painted)


def _measure_stack(ctx, scanner, low, high, pattern):
    """(high-water mark, painted) of [low, high) with no descriptor: the lowest address whose word
    lost the paint (high if none), and whether any painted word is left; (None, None) before a
    whole pass."""
    got = scanner.measure(ctx.reader, [("stack", low, high, pattern)]).get("stack")
    if got is None:
        return None, None
    return (high if got[0] == abi.NONE else low + got[0]), got[2]


MEASURED_BY = "host scan of target memory"
# The cache key of the whole band scans of memory that has not changed since (a dict the front
# end keeps and empties when the target runs or its memory is written: GDB's at each stop).
STOP_SCANS = "stop_scans"
TABLES_READ = "region tables"  # in it: the region tables were read fresh since


def gather(target: Target, settings: Settings, cache: dict | None = None, scanner: BandScanner | None = None,
           need_descriptor: bool = True, verify: bool = False, on_warn: Callable | None = None) -> Context:
    """Reads everything a command needs. verify: re-read the region tables and re-measure the bands
    and the stack from target memory instead of trusting the agent's last measurement (check, map,
    stack, whereis, snapshot, live). Without verify only the guard band is re-read (it is small), so
    a stale agent measurement is noticed. cache: a dict the front end keeps between calls
    (descriptor sessions, plans); scanner: whole scans by default, the live poller's incremental
    one; on_warn(key, text): told each warning as it is found. Raises an errors.ArenascopeError."""
    ctx = Context(target=target, settings=settings, cache={} if cache is None else cache, on_warn=on_warn)
    scanner = scanner or BandScanner(memo=ctx.cache.get(STOP_SCANS))
    _read_descriptor(ctx, need_descriptor, verify)
    sp = target.core.register("sp")
    if ctx.desc is not None:
        _stack_of_descriptor(ctx, scanner, verify, sp)
    else:
        _stack_without_descriptor(ctx, scanner, sp)
    if ctx.stack is not None and ctx.stack.sp is not None and not ctx.stack.sp_on_stack:
        # SP in one of the ELF's data objects: a handler's own stack (the agent's RISC-V trap stack).
        held = target.symbols.object_at(ctx.stack.sp)
        ctx.stack.sp_object = (held[0], ctx.stack.sp - held[1]) if held is not None else None
    _rtos_tasks(ctx, scanner)
    if ctx.tflm is not None and ctx.tflm.condition == "smashed" and ctx.stack is not None:
        # How far the stack ran into TFLM's tail is a figure of every command (info, check,
        # stack, snapshot, $arena_stack_room), not only of `arena fault`: the post-mortem finds it.
        diagnosis.diagnose(ctx)
    return ctx


def _read_descriptor(ctx: Context, need_descriptor: bool, verify: bool) -> None:
    """Finds the arenascope descriptor and names its regions (the region tables re-read when
    verify), or, with none, falls back to TFLM's own objects; sets ctx.note when neither is read
    and need_descriptor is false, else raises."""
    settings, symbols = ctx.settings, ctx.target.symbols
    try:
        if settings.interpreter is not None:
            raise NotFoundError("`arena attach` named a MicroInterpreter")
        this_stop = ctx.cache.get(STOP_SCANS)
        # the region tables re-read once a stop, however many commands verify them
        fresh = verify and not (this_stop is not None and this_stop.get(TABLES_READ))
        _find_descriptor(ctx, fresh_tables=fresh)
        assert ctx.desc is not None  # _find_descriptor sets it, or raises
        if fresh and this_stop is not None:
            this_stop[TABLES_READ] = True
        _name_regions(ctx)
        if not ctx.desc.arenas and agentless.tflm_in_elf(symbols):
            # The agent runs but no arena is published: an application publishes it after
            # AllocateTensors, which may not have finished. TFLM's own objects say why.
            try:
                loaded = _load_agentless(ctx)
                ctx.tflm, ctx.plan, ctx.facts = loaded.state, loaded.plan, loaded.facts
            except (TargetError, MemoryReadError) as exc:
                ctx.note = f"no arena published, and TFLM's interpreter could not be read ({exc})"
    except (NotFoundError, DecodeError) as exc:
        older = agentless.unsupported_tflm(symbols) if settings.interpreter is None else None
        if settings.interpreter is not None or agentless.tflm_in_elf(symbols):
            _agentless(ctx, exc, need_descriptor)  # no agent: walk TFLM's own objects
        elif older:  # TFLM of another layout: said as such, not as a missing agent
            if need_descriptor:
                raise TargetError(older) from None
            ctx.note = older
        elif need_descriptor:
            raise
        else:
            ctx.note = f"no usable arenascope descriptor ({exc})"


def _stack_of_descriptor(ctx: Context, scanner: BandScanner, verify: bool, sp: int | None) -> None:
    """Sets the arenas' figures and ctx.stack from the descriptor, re-measuring the bands and the
    stack when verify (or when the guard band shows the agent's measurement stale)."""
    desc, settings = ctx.desc, ctx.settings
    assert desc is not None
    bounds = settings.stack_range
    lo, hi = bounds or (desc.stack.low_addr, desc.stack.high_addr)
    _overridden(desc, settings)
    paint = settings.stack_paint_pattern if settings.stack_paint_pattern is not None else desc.stack_paint_pattern
    complete, (scanned, painted) = False, (None, None)
    if not verify and desc.agent_measured and desc.guard.filled:
        ctx.stale, _, _ = _measure(ctx, scanner, ("guard",))
        verify = bool(ctx.stale)  # a fault overtook the agent's measurement: measure everything now
    stack = (lo, hi, paint) if (bounds or verify or not desc.measured) and hi > lo and \
        not desc.not_judged("stack") else None
    unread = ""
    try:
        if verify and not desc.agentless:  # agentless: no bands to scan
            _, complete, (scanned, painted) = _measure(ctx, scanner, ("guard", "free"), stack)
        elif stack is not None:
            _, _, (scanned, painted) = _measure(ctx, scanner, (), stack)
    except MemoryReadError as exc:
        if stack is None or not ctx.reader.origin:
            raise
        _stack_unreadable(ctx, exc)  # a RAM dump that lacks part of the stack: the rest is still read
        unread = str(exc)
        if verify and not desc.agentless:
            _, complete, _ = _measure(ctx, scanner, ("guard", "free"))
    ctx.figs = {a.index: figures.arena_figures(a, ctx.minimum_arena) for a in desc.arenas}
    if complete:
        desc.flags |= abi.FLAG_MEASURED
        desc.measured_by = MEASURED_BY + (": the agent's last measurement is stale (the guard band changed "
                                          "after it)" if ctx.stale else "")
    ctx.stack = figures.stack_figures(desc, sp=sp, scanned_hwm=scanned, bounds=bounds, painted=painted,
                                      apart=_apart_from_stack(ctx, desc))
    ctx.stack.unread = unread if ctx.stack.hwm is None else ""


def _stack_without_descriptor(ctx: Context, scanner: BandScanner, sp: int | None) -> None:
    """Sets ctx.stack with no descriptor: the bounds set by `arena stack-range` or the linker's
    symbols, its paint scanned; raises when neither gives bounds."""
    settings, symbols = ctx.settings, ctx.target.symbols
    bounds = settings.stack_range
    linker = None if bounds else symbols.stack_bounds()
    found = bounds or linker
    ctx.stack_source = (f"{Remedy('stack-range'):q}" if bounds else
                        f"the linker symbols {linker[2]}" if linker else "")
    if not found:
        raise TargetError("no stack bounds: no arenascope descriptor, no linker symbols (" +
                          ", ".join([f"{a}/{b}" for a, b in STACK_SYMBOLS] +
                                    [f"{a} - {b}" for a, b in STACK_TOP_AND_SIZE_SYMBOLS]) +
                          f"); set them with {Remedy('stack-range', 'LOW HIGH'):q}")
    lo, hi = found[0], found[1]
    pattern = settings.stack_paint_pattern if settings.stack_paint_pattern is not None else DEFAULT_STACK_PAINT
    try:
        hwm, painted = _measure_stack(ctx, scanner, lo, hi, pattern)
    except MemoryReadError as exc:
        if not ctx.reader.origin:
            raise
        _stack_unreadable(ctx, exc)
        hwm, painted, unread = None, None, str(exc)
    else:
        unread = ""
    ctx.stack = figures.StackFigures(low=lo, high=hi, sp=sp, hwm=hwm, source="scan" if hwm is not None else
                                     "none", painted=bool(painted), arena_end=None, unread=unread)


def _stack_unreadable(ctx: Context, exc: MemoryReadError) -> None:
    """Says that the stack's paint could not be scanned (a RAM dump lacking part of it)."""
    ctx.warn("stack-unreadable", f"the stack's paint cannot be scanned ({exc}): its high-water mark is unknown")


def _rtos_tasks(ctx: Context, scanner: BandScanner) -> None:
    """The RTOS's tasks and their stacks (FreeRTOS, from the ELF's DWARF), measured in one scanner
    call; the running task's SP is the port's thread SP when it lies near its stack."""
    ctx.kernel = freertos.walk(ctx.reader, ctx.symbols)
    if ctx.kernel is None:
        return
    for problem in ctx.kernel.problems:
        ctx.warn("rtos", problem)
    sp = ctx.port.thread_sp(ctx.core)
    running = ctx.kernel.running
    if running is None or sp is None or not (running.stack_low - (64 << 10) <= sp <= (running.stack_high or sp)):
        sp = None  # not the running task's (the scheduler has not started, or a server without its SP)
    ctx.tasks = tasks.stacks(ctx.kernel, ctx.desc, ctx.symbols, sp)
    wanted = [(tasks.scan_key(ts), *span, freertos.FILL) for ts in ctx.tasks if (span := ts.scan_range())]
    try:
        results = scanner.measure(ctx.reader, wanted)
    except (MemoryReadError, TargetError) as exc:
        ctx.warn("rtos", f"the tasks' stacks could not be scanned ({exc})")
        results = {}
    tasks.measure(ctx.tasks, results, ctx.desc)
    if any(ts.overflowed for ts in ctx.tasks) and ctx.port.stack_limit_hit_now(ctx):
        for ts in ctx.tasks:
            ts.limit_stopped = ctx.port.thread_limit_words if ts.task.tcb == ctx.kernel.current else ""


def _guard_writer(ctx: Context) -> figures.GuardWriter | None:
    """Who touched the guard band when more than the band says it (figures.GuardWriter): the fault
    handler's own frames after an armed MSPLIM stopped an overflow (descriptor flag STACK_LIMIT
    and CFSR.STKOF), or the RTOS task right above it that overflowed."""
    desc = ctx.desc
    if desc is None or not desc.guard.filled or not desc.guard.touched:
        return None
    if not desc.agentless and desc.flags & abi.FLAG_STACK_LIMIT and ctx.port.stack_limit_hit_now(ctx):
        return figures.GuardWriter(stack_limit=True)
    ts = tasks.guard_task(ctx.tasks, desc)
    if ts is not None:
        return figures.GuardWriter(task=ts.stack_name, task_low=ts.task.stack_low,
                                   task_through=ts.stack is not None and ts.stack.peak_is_lower_bound)
    return None


def _apart_from_stack(ctx: Context, desc) -> Callable[[int], str | None]:
    """apart(address) for the stack rule: the name of the target memory (external RAM the user or
    GDB's memory map names, or that verified objects were found in: Symbols.target_memory) holding
    the address when the stack is not in it, else None."""
    spans = ctx.symbols.target_memory()
    low = desc.stack.low_addr

    def apart(addr):
        for lo, hi, what in spans:
            if lo <= addr < hi:
                return None if lo <= low < hi else what
        return None
    return apart


def checks_of(ctx: Context, with_fault: bool = True, with_budget: bool = False) -> list:
    """The `arena check` rules for what gather found (figures.checks, plus TFLM's condition and a
    corrupt descriptor in agentless mode) and, with_fault, the `fault` rule: FAIL when the core
    took a fault this boot (analyse/diagnosis.Diagnosis.check); with_budget, the `budget` rule:
    the stack rule with the worst case from the ELF (`arena check --budget`, analyse/rambudget)."""
    # gather() with need_descriptor (every caller's here) returns a descriptor, and stack figures always
    assert ctx.desc is not None and ctx.stack is not None
    # the heap and named target memory are RAM too: an arena malloc'd from them is in bounds
    ram = [(lo, hi, what) for lo, hi, kind, what in ctx.symbols.memories() if kind == "ram"]
    out = figures.checks(ctx.desc, ctx.stack, ctx.figs, seq_odd=ctx.seq_odd, ram_ranges=ram,
                         guard_writer=_guard_writer(ctx))
    if ctx.tflm is not None and ctx.tflm.unmeasured:
        # Used bytes and headroom of an arena TFLM never finished laying out, or whose overwritten
        # tail nothing tells, measure nothing.
        out = [c for c in out if c.rule not in ("used", "headroom")]
    if ctx.tflm is not None and ctx.tflm.condition != "allocated":
        out.insert(0, figures.Check("tflm", figures.WARN if ctx.tflm.condition == "not-started" else figures.FAIL,
                                    f"{tflmstate.CONDITIONS[ctx.tflm.condition]}: "
                                    + ("; ".join(ctx.tflm.evidence[:2]) or "no evidence readable")
                                    + " (`arena fault` gives the verdict)"))
    if ctx.kernel is not None and ctx.kernel.problems:
        out.append(figures.Check("tasks", figures.WARN, f"{ctx.kernel.name}'s task lists: "
                                 + "; ".join(ctx.kernel.problems[:3])))
    out += [tasks.check(ts) for ts in ctx.tasks]
    if ctx.descriptor_error:
        out.insert(0, figures.Check("descriptor", figures.FAIL, f"the arenascope descriptor is corrupt "
                                    f"({ctx.descriptor_error}): the figures below are TFLM's own (agentless)"))
    fault = diagnosis.diagnose(ctx).check() if with_fault else None
    budget = [rambudget.check(stackbudget_job.predicted(ctx.symbols.elf_path), ctx.stack)] if with_budget else []
    return out + ([fault] if fault is not None else []) + budget


def snapshot(ctx: Context, with_fault: bool = True) -> dict:
    """The snapshot of what gather found (docs/snapshot-schema.md): figures, checks, TFLM's
    objects and, with_fault, the fault and its verdicts."""
    assert ctx.desc is not None and ctx.stack is not None  # as in checks_of: gather() with need_descriptor
    source = {"elf": ctx.symbols.elf_path, "located_by": ctx.located_by}
    if ctx.reader.origin:
        source["dump"] = ctx.reader.origin  # read from a RAM dump: the snapshot says so
    snap = snapshot_json.build(ctx.desc, ctx.figs, ctx.stack, checks_of(ctx, with_fault), source)
    # Which memory each lies in (Symbols.memories: "RAM (.bss)", "the heap (...)", "psram (named by
    # the user)"), for the viewer's RAM column; absent where none the firmware describes.
    apart = _apart_from_stack(ctx, ctx.desc) if ctx.desc.stack.filled else None
    for a in snap["arenas"]:
        if (memory := ctx.symbols.memory_of(a["base_addr"])) is not None:
            a["in_memory"] = memory
        if apart and apart(a["base_addr"]):
            a["apart_from_stack"] = True  # the stack rule's: the stack cannot run into it
    if snap.get("stack") and (memory := ctx.symbols.memory_of(snap["stack"]["low_addr"])) is not None:
        snap["stack"]["in_memory"] = memory
    if snap.get("stack") and not ctx.reader.origin:  # a dump's ELF may not be the file on disk now
        predicted = snapshot_json.predicted_json(stackbudget_job.predicted(ctx.symbols.elf_path))
        if predicted is not None:
            snap["stack"]["predicted"] = predicted
        ram = snapshot_json.ram_map_json(stackbudget_job.ram_map(ctx.symbols.elf_path, ctx.symbols))
        if ram is not None:
            snap["ram_map"] = ram
    if ctx.kernel is not None:
        snap["tasks"] = snapshot_json.tasks_json(ctx.kernel, ctx.tasks)
    st = ctx.tflm
    if st is not None and st.interpreter:
        snap["tflm"] = {"interpreter_addr": st.interpreter, "condition": st.condition,
                        "meaning": tflmstate.CONDITIONS[st.condition], "evidence": st.evidence,
                        "arena_symbol": st.arena_symbol, "allocator": st.allocator,
                        "objects": [{"name": o.name, "addr": o.addr, "size_bytes": o.size, "sound": o.sound,
                                     "problems": o.problems} for o in st.objects],
                        "verdicts": []}
        if ctx.tflm_layout is not None:
            snap["tflm"]["layout"] = tflm.layout_json(ctx.tflm_layout)
    if with_fault:
        d = diagnosis.diagnose(ctx)
        snap["fault"] = faultjson.snapshot_fault(d)
        if "tflm" in snap:
            snap["tflm"]["verdicts"] = [v.json() for v in d.tflm_verdicts]
    return snap

