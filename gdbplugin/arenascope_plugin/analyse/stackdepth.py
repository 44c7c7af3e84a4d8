"""The stack's worst case before flashing: the deepest path from each entry point through the call
graph (analyse/callgraph.py), each function's frame added, with what the hardware stacks to enter
a handler. All figures in bytes.

A function's frame, in order of trust:
1. GCC's -fstack-usage file (`.su`) when given: "file:line:col:function<TAB>bytes<TAB>static|
   dynamic|dynamic,bounded" (GCC manual, -fstack-usage); "dynamic" (alloca, VLAs) is unbounded,
   and so is a function whose code moves SP by a register (Port.decode_code: dynamic_sp).
2. The ELF's call frame information (DWARF 5 section 6.4): the largest CFA offset from SP (or the
   frame pointer) over the function's rows, which is what its prologue pushes and reserves.
3. Its prologue, decoded (Port.prologue_bytes): PUSH / SUB SP on Thumb, ADDI sp on RISC-V.
A function with none of these is named, counted as 0 B, and the worst case is then a floor.

worst(f) = max(frame(f) + worst(a callee), worst(a tail callee)); a recursion (a cycle of direct calls
in the graph) has no bound: its functions are counted once around the cycle and the cycle is named
with what one more level costs. A call through a pointer assumed to reach a function (any
address-taken one, any override in a vtable slot) that would close a cycle is a recursion the ELF
cannot confirm: it is left out (callgraph.cut_pointer_cycles, in a walk from Reset) and named, so
the figure holds as long as pointers do not recurse. A cycle closed by a direct call that needs an
assumed pointer call on the way is counted once around and named as possible.

The thread's worst case is Reset's (main counted from it); each handler's is its own path plus
the port's exception_entry_bytes; on a core that nests exceptions (Cortex-M's NVIC)
the main stack's worst case is the thread's plus every distinct handler's, as priorities are not
known before the code runs; otherwise the thread's plus the deepest handler's. RTOS tasks run on
stacks of their own and are reported apart."""
import re
from dataclasses import dataclass, field

from arenascope_plugin.acquire import cfi as dwarf_cfi
from arenascope_plugin.analyse import callgraph

SU_LINE = re.compile(r"^(?P<where>.*?):(?P<line>\d+):(?P<col>\d+):(?P<name>.+)\t(?P<bytes>\d+)\t(?P<kind>[a-z,]+)\s*$")
CFI, SU, PROLOGUE, UNKNOWN = "call frame information", "-fstack-usage", "prologue", "not known"


@dataclass
class Step:
    """One function on a path: its name, address, frame (bytes, None: not known) and where the frame
    came from, and how it was reached: the call's instruction and address ("" for the entry), a
    tail call, an indirect call's rule; where the path leaves a cycle, the frames of the cycle's
    other functions it counts (extra, extra_note)."""
    name: str
    address: int
    frame: int | None
    source: str
    via: str = ""
    at: int | None = None
    tail: bool = False
    rule: str = ""
    extra: int = 0           # bytes counted here beyond the frame: the rest of a cycle the path goes round
    extra_note: str = ""     # what `extra` is


@dataclass
class Entry:
    """The worst case from one entry point: what it is ("Reset", "SysTick", "task ..."), its total
    (the path's frames, plus entry_bytes for a handler) and the path, and why the total may be
    short of the truth (`floor`: recursion cycles, indirect calls with no target, unknown or
    dynamic frames met on the way)."""
    what: str
    address: int
    bytes: int
    entry_bytes: int
    path: list[Step]
    cycles: list[list[str]] = field(default_factory=list)
    pointer_cycles: list[list[str]] = field(default_factory=list)
    bounded: list[list[str]] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    unknown_frames: list[str] = field(default_factory=list)
    dynamic_frames: list[str] = field(default_factory=list)

    @property
    def floor(self) -> bool:
        return bool(self.cycles or self.unresolved or self.unknown_frames or self.dynamic_frames)


@dataclass
class StackDepth:
    """The result (analyse(path)). thread: Reset's; handlers: each exception or interrupt handler's;
    tasks: each RTOS task's; main_stack_bytes: the main stack's worst case (thread plus handlers
    as the port nests them); exact: no floor anywhere on it; problem: why there is none."""
    arch: str = ""
    thread: Entry | None = None
    handlers: list[Entry] = field(default_factory=list)
    tasks: list[Entry] = field(default_factory=list)
    main_stack_bytes: int | None = None
    nesting: str = ""
    exception_entry_note: str = ""
    frames_from: dict = field(default_factory=dict)
    pointer_cuts: list = field(default_factory=list)
    functions: int = 0
    problem: str = ""

    @property
    def exact(self) -> bool:
        return self.thread is not None and not any(e.floor for e in [self.thread] + self.handlers)


def read_su(paths) -> dict[str, tuple[int, str]]:
    """{function name: (bytes, qualifier)} from GCC .su files; a name found twice keeps the larger
    frame (two static functions of the same name). C++ names are matched without return type and
    parameters. ValueError for a file that cannot be read."""
    out: dict[str, tuple[int, str]] = {}
    for p in paths:
        try:
            text = open(p, encoding="utf-8", errors="replace").read()
        except OSError as exc:
            raise ValueError(f"cannot read the stack usage file {p}: {exc.strerror}") from None
        found = 0
        for line in text.splitlines():
            m = SU_LINE.match(line)
            if not m:
                continue
            found += 1
            name = _su_name(m["name"])
            size, kind = int(m["bytes"]), m["kind"]
            if name not in out or out[name][0] < size:
                out[name] = (size, kind)
        if not found:
            raise ValueError(f"{p} holds no -fstack-usage line (FILE:LINE:COL:FUNCTION<TAB>BYTES<TAB>static): "
                             "give the .su files GCC writes beside the objects with -fstack-usage")
    return out


def _su_name(name: str) -> str:
    """"virtual TfLiteStatus tflite::MicroInterpreter::Invoke()" -> "tflite::MicroInterpreter::Invoke"."""
    if "(" in name:
        head = name[:name.index("(")]
        name = head.split(" ")[-1] if " " in head and "operator" not in head else head
    return name


class _Frames:
    """Each function's frame: .su, then the call frame information, then the prologue."""

    def __init__(self, g, path: str, su: dict) -> None:
        self.g, self.su, self.cfi = g, su, dwarf_cfi.Cfi(path)
        self.memo: dict[int, tuple[int | None, str]] = {}

    def of(self, addr: int) -> tuple[int | None, str]:
        if addr not in self.memo:
            self.memo[addr] = self._of(addr)
        return self.memo[addr]

    def _of(self, addr: int) -> tuple[int | None, str]:
        """(the frame's fixed bytes, where they came from); a source holding "dynamic" says SP also
        moves by a register (alloca, VLAs), which no figure bounds."""
        name = self.g.name(addr)
        dynamic = self.g.facts[addr].dynamic_sp
        if name in self.su:
            size, kind = self.su[name]
            return size, f"{SU}, dynamic" if kind == "dynamic" else SU
        regs = self.g.port.dwarf_frame_registers
        offsets = [r["cfa"].offset for r in self.cfi.rows(addr) if r["cfa"].expr is None and r["cfa"].reg in regs]
        if offsets:
            size, source = max(offsets), CFI
        else:
            code = self.g.image.read(addr, self.g.functions[addr][0])
            size = self.g.port.prologue_bytes(code) if code else None
            source = PROLOGUE if size is not None else UNKNOWN
        return size, f"{source}, dynamic: {dynamic}" if dynamic else source


@dataclass
class _Best:
    total: int
    edge: object          # the Edge the deepest path leaves by, or None (a leaf)
    reasons: frozenset    # ("cycle", i) / ("unresolved", addr) / ("unknown", addr) / ("dynamic", addr)
    ring: frozenset = frozenset()  # the cycle's functions, when this one is in a cycle (all counted once)


class _Worst:
    """worst(f) for every function, computed once over the graph's components."""

    def __init__(self, g, frames: _Frames, bounds: dict[int, int]) -> None:
        self.g, self.frames, self.bounds = g, frames, bounds
        self.best: dict[int, _Best] = {}
        # (True: a recursion; N: one the user bounds to N levels; False: a possible one through
        # pointers, its functions round to the first)
        self.cycles: list[tuple[bool | int, list[int]]] = []
        unresolved = {}
        for lo, site in g.unresolved:
            unresolved.setdefault(lo, []).append(site)
        for comp in callgraph.sccs(sorted(g.functions), g.edges):
            if len(comp) == 1 and all(e.callee != comp[0] for e in g.edges.get(comp[0], ())):
                self.best[comp[0]] = self._one(comp[0], unresolved)
            else:
                self._ring(comp, unresolved)

    def _own_reasons(self, v: int, unresolved: dict) -> set:
        frame, source = self.frames.of(v)
        out = set()
        if "dynamic" in source:
            out.add(("dynamic", v))
        elif frame is None:
            out.add(("unknown", v))
        if v in unresolved:
            out.add(("unresolved", v))
        return out

    def _one(self, v: int, unresolved: dict) -> _Best:
        """A function in no cycle: its frame plus its deepest callee (a tail callee alone)."""
        base = self.frames.of(v)[0] or 0
        reasons = self._own_reasons(v, unresolved)
        total, edge = base, None
        for e in self.g.edges.get(v, ()):
            b = self.best[e.callee]
            reasons |= b.reasons
            t = b.total if e.tail else base + b.total
            if t > total:
                total, edge = t, e
        return _Best(total, edge, frozenset(reasons))

    def _ring(self, comp: list[int], unresolved: dict) -> None:
        """A cycle: every function of it counted once, then the deepest way out; each member's path
        goes round to the member that leaves by it. A cycle of direct calls (and TFLM's dispatch)
        is a recursion with no bound ("cycle"); one that needs an assumed pointer call is only
        possible ("pointer-cycle"), and counting it once is a bound if the pointers never recurse."""
        members = set(comp)
        sure = {v: [e for e in self.g.edges.get(v, ()) if e.callee in members and e.rule not in callgraph.ASSUMED]
                for v in comp}
        reasons, ring = set(), sum(self.frames.of(v)[0] or 0 for v in comp)
        for sub_comp in callgraph.sccs(comp, sure):
            if len(sub_comp) > 1 or any(e.callee == sub_comp[0] for e in sure[sub_comp[0]]):
                levels = max((self.bounds[v] for v in sub_comp if v in self.bounds), default=None)
                self.cycles.append((levels or True, self._cycle(sub_comp[0], set(sub_comp), sure)))
                reasons.add(("bounded" if levels else "cycle", len(self.cycles) - 1))
                if levels:  # the user's bound: the recursion's own frames, that many times
                    ring += (levels - 1) * sum(self.frames.of(v)[0] or 0 for v in sub_comp)
        if any(e.callee in members and e.rule in callgraph.ASSUMED for v in comp for e in self.g.edges.get(v, ())) \
                and not any(kind == "cycle" for kind, _ in reasons):
            self.cycles.append((False, self._cycle(comp[0], members, self.g.edges)))
            reasons.add(("pointer-cycle", len(self.cycles) - 1))
        out_total, out_edge, leaver = 0, None, comp[0]
        for v in comp:
            reasons |= self._own_reasons(v, unresolved)
            for e in self.g.edges.get(v, ()):
                if e.callee in members:
                    continue
                b = self.best[e.callee]
                reasons |= b.reasons
                if b.total > out_total or out_edge is None:
                    out_total, out_edge, leaver = b.total, e, v
        toward = {leaver: out_edge}  # each member's next edge on its way to the leaver
        frontier = [leaver]
        while frontier:
            nxt = []
            for v in comp:
                if v in toward:
                    continue
                e = next((e for e in self.g.edges.get(v, ()) if e.callee in frontier), None)
                if e is not None:
                    toward[v] = e
                    nxt.append(v)
            frontier = nxt
        for v in comp:
            self.best[v] = _Best(ring + out_total, toward.get(v), frozenset(reasons), frozenset(members))

    @staticmethod
    def _cycle(start: int, members: set, edges: dict) -> list[int]:
        """One cycle through start inside `members` over `edges` (a breadth-first walk back to it)."""
        prev, frontier = {start: None}, [start]
        while frontier:
            nxt = []
            for v in frontier:
                for e in edges.get(v, ()):
                    if e.callee == start:
                        path = [v]
                        while prev[path[-1]] is not None:
                            path.append(prev[path[-1]])
                        return list(reversed(path)) + [start]
                    if e.callee in members and e.callee not in prev:
                        prev[e.callee] = v
                        nxt.append(e.callee)
            frontier = nxt
        return [start, start]

    def entry(self, what: str, addr: int, entry_bytes: int) -> Entry:
        b = self.best.get(addr)
        path, seen, v, via = [], set(), addr, None
        while v is not None and v not in seen:
            seen.add(v)
            frame, source = self.frames.of(v)
            path.append(Step(self.g.name(v), v, frame, source, via.text if via else "", via.at if via else None,
                             bool(via and via.tail), via.rule if via else ""))
            via = self.best[v].edge if v in self.best else None
            ring = self.best[v].ring if v in self.best else frozenset()
            if ring and (via is None or via.callee not in ring):  # the path leaves the cycle here
                shown = {s.address for s in path}
                rest = [c for c in ring if c not in shown]
                path[-1].extra = sum(self.frames.of(c)[0] or 0 for c in rest)
                path[-1].extra_note = (f"the other {len(rest)} functions of the cycle through here, each counted "
                                       "once: " + ", ".join(self.g.name(c) for c in sorted(rest)[:3])
                                       + (f" and {len(rest) - 3} more" if len(rest) > 3 else ""))
            v = via.callee if via else None
        out = Entry(what, addr, (b.total if b else 0) + entry_bytes, entry_bytes, path)
        for kind, x in sorted(b.reasons if b else (), key=str):
            if kind in ("cycle", "pointer-cycle", "bounded"):
                levels, cyc = self.cycles[x]
                per = sum(self.frames.of(c)[0] or 0 for c in cyc[:-1])
                named = [self.g.name(c) for c in cyc] + [f"{per} B a level"]
                if kind == "bounded":
                    out.bounded.append(named + [f"at most {levels} levels (--bound)"])
                else:
                    (out.cycles if kind == "cycle" else out.pointer_cycles).append(named)
            elif kind == "unresolved":
                out.unresolved += [f"{self.g.name(x)} at {s.at:#x} ({s.text})"
                                   for lo, s in self.g.unresolved if lo == x]
            elif kind == "unknown":
                out.unknown_frames.append(self.g.name(x))
            else:
                out.dynamic_frames.append(f"{self.g.name(x)} ({self.frames.of(x)[1].split('dynamic: ')[-1]})")
        return out


def analyse(path: str, su_files=(), calls: dict | None = None, bounds: dict | None = None) -> StackDepth:
    """The StackDepth of the ELF at path, with GCC's .su files `su_files`, the user's targets for
    the indirect calls of some functions (`calls`: {caller: [callee]}, callgraph.build) and the
    user's bounds on recursions ({function: levels}: a recursion through it goes at most that many
    levels deep). Functions are named as the output names them (demangled, no parameters) or by
    their linker names. ValueError for a .su file that cannot be read, or a name the ELF has no
    function by; StackDepth.problem for an ELF that cannot be analysed."""
    su = read_su(su_files)
    g = callgraph.build(path, calls or {})
    out = StackDepth()
    if g.problem:
        out.problem = g.problem
        return out
    by_bound = {g.address_of(name): levels for name, levels in (bounds or {}).items()}
    frames = _Frames(g, path, su)
    out.arch, out.functions = g.port.name, len(g.functions)
    out.exception_entry_note = g.port.exception_entry_note
    for addr in g.functions:
        source = frames.of(addr)[1].split(",")[0]  # "..., dynamic: SUB.W sp, sp, r3" counts as its source
        out.frames_from[source] = out.frames_from.get(source, 0) + 1
    entries = g.port.entry_points(g.image, g.facts)
    reset = entries[0] if entries else None  # Port.entry_points: where the core starts comes first
    if reset is None:
        out.problem = "the ELF names no entry point (e_entry is 0) and has no vector table"
        return out
    main = g.image.symbols.get("main")
    if main is not None and main in g.functions and not _reaches(g, reset[1], main):
        g.edges.setdefault(reset[1], []).append(callgraph.Edge(main, reset[1], "(the startup code reaches main)"))
    handler_addrs = [a for _, a in entries[1:]]
    cuts = callgraph.cut_pointer_cycles(g, [reset[1], *handler_addrs, *sorted(g.tasks), *sorted(g.functions)])
    out.pointer_cuts = [f"{g.name(v)} at {e.at:#x} ({e.text}) -> {g.name(e.callee)}" for v, e in cuts]
    worst = _Worst(g, frames, by_bound)
    out.thread = worst.entry(reset[0], reset[1], 0)
    entry_bytes = g.port.exception_entry_bytes(g.image.fpu)
    seen = {reset[1]}
    for what, addr in entries:
        if addr in seen or addr not in g.functions:
            continue
        seen.add(addr)
        names = [w for w, a in entries if a == addr]
        label = what if len(names) == 1 else f"{names[0]} and {len(names) - 1} more vectors"
        out.handlers.append(worst.entry(label, addr, entry_bytes))
    out.tasks = [worst.entry(f"task {g.name(a)} (created in {creator})", a, 0)
                 for a, creator in sorted(g.tasks.items())]
    handlers = [h.bytes for h in out.handlers]
    if g.port.nested_exceptions:
        out.main_stack_bytes = out.thread.bytes + sum(handlers)
        out.nesting = "every handler may preempt every other (priorities are set at run time)"
    else:
        out.main_stack_bytes = out.thread.bytes + max(handlers, default=0)
        out.nesting = "one trap at a time (the core does not nest them)"
    return out


def _reaches(g, src: int, dst: int) -> bool:
    seen, todo = {src}, [src]
    while todo:
        v = todo.pop()
        if v == dst:
            return True
        for e in g.edges.get(v, ()):
            if e.callee not in seen:
                seen.add(e.callee)
                todo.append(e.callee)
    return False
