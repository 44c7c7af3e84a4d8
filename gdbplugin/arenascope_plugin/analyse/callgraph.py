"""The firmware's call graph, from its code as the ELF holds it (acquire/elfcode.py), decoded by
the architecture's port (Port.decode_code: Thumb BL/B/BLX/BX, RISC-V JAL/JALR/C.JAL/C.JR ...).

An edge is a direct call, a tail call (a direct branch to another function: its frame replaces the
caller's) or an indirect call resolved by one of these rules, in this order:
1. TFLM's kernel dispatch (decode/tflm_profile.KERNEL_DISPATCHERS): an indirect call in
   graph's loop over the nodes goes to a kernel, the functions whose addresses the registration
   builders (REGISTRATION_BUILDERS) load: only the kernels the application registered are linked.
2. Any other indirect call goes to every function whose address the firmware takes (a constant in
   code, or a word of any loaded section outside the functions' instructions, equal to a
   function's address), except the handlers the hardware enters (the vector table's) and Reset:
   a C function pointer can only hold such an address. Kernels go only through rule 1 when the
   ELF has TFLM's dispatch. Functions whose addresses stand only in vtables (C++ virtual
   functions) are candidates only for calls made in C++ code (a mangled caller), and of those only
   the ones in the slot the call loads from (Port.decode_code: CodeSite.slot) when the decoder
   follows the loads, none when it loads from a struct rather than a vtable. Functions whose
   addresses stand only in the init/fini arrays are candidates only for the C runtime's calls
   through them (INIT_ARRAYS, INIT_RUNNERS), when the ELF has those runners. These
   edges are marked with this rule; one that would close a cycle is a recursion through pointers
   the ELF cannot confirm (cut_pointer_cycles). An indirect jump (no link) in a function
   that a data word points into (a switch's jump table) or in the port's switch helpers
   (Port.switch_helpers) stays in the function; elsewhere it is a tail call through a pointer,
   resolved as rule 2.
The user's --calls CALLER=CALLEE,... come before all of these. An indirect call with no candidate
stays unresolved and is named. Nothing here reads target
memory or runs code."""
import bisect
from dataclasses import dataclass, field

from arenascope_plugin import ports
from arenascope_plugin.acquire import elfcode, elfinfo
from arenascope_plugin.acquire.elfsymbols import ElfSymbols
from arenascope_plugin.acquire.symbols import short_name
from arenascope_plugin.decode import freertos, tflm_profile

DISPATCH, TAKEN = "TFLM's kernel dispatch", "a function whose address is taken"
INIT = "the C runtime's init/fini arrays"
VIRTUAL = "a C++ virtual call (the functions in that vtable slot)"
USER = "the user's --calls"
ASSUMED = (TAKEN, VIRTUAL)  # rules whose cycles are only possible: their candidates over-approximate
POINTER_BYTES = 4  # both decoders' cores are 32-bit: a vtable's words
# The constructor and destructor arrays (GNU ld's default scripts, newlib's and picolibc's: the
# bounds their linker scripts define) and the C runtime functions that call through them (newlib
# and picolibc's __libc_init_array / __libc_fini_array): a function whose address stands only in
# those arrays is called only by those.
INIT_ARRAYS = (("__preinit_array_start", "__preinit_array_end"), ("__init_array_start", "__init_array_end"),
               ("__fini_array_start", "__fini_array_end"), ("__bothinit_array_start", "__bothinit_array_end"))
INIT_RUNNERS = ("__libc_init_array", "__libc_fini_array")


@dataclass(frozen=True)
class Edge:
    callee: int          # the callee's address
    at: int              # the call site's address
    text: str            # the instruction ("BL", "BLX r3", "JAL")
    tail: bool = False   # a tail call: the caller's frame is gone when the callee runs
    rule: str = ""       # how an indirect call was resolved (DISPATCH, TAKEN); "" for a direct one


@dataclass
class Graph:
    """functions: {address: (size, demangled short name)}; edges: {address: [Edge]}; unresolved:
    [(caller address, site)] indirect calls with no candidate; taken: the address-taken functions;
    kernels: the TFLM kernels found; tasks: {address: creator} RTOS task entries; facts: {address:
    CodeFacts}; problem: why there is no graph ("" when there is one)."""
    image: object = None
    port: object = None
    functions: dict = field(default_factory=dict)
    edges: dict = field(default_factory=dict)
    unresolved: list = field(default_factory=list)
    taken: set = field(default_factory=set)
    virtual: set = field(default_factory=set)
    vslots: dict = field(default_factory=dict)
    init: set = field(default_factory=set)
    cxx: set = field(default_factory=set)
    kernels: set = field(default_factory=set)
    tasks: dict = field(default_factory=dict)
    switches: set = field(default_factory=set)
    facts: dict = field(default_factory=dict)
    problem: str = ""

    def name(self, addr: int) -> str:
        f = self.functions.get(addr)
        return f[1] if f else f"{addr:#x}"

    def address_of(self, name: str) -> int:
        """The function named `name` (as name() gives it, or its linker name); ValueError when the
        ELF has none."""
        found = [a for a, (_, n) in self.functions.items() if n == name]
        found += [lo for lo, _, linker in self.image.functions if linker == name]
        if not found:
            raise ValueError(f"the ELF has no function {name!r}: name it as the output does (e.g. "
                             "tflite::MicroInterpreter::Invoke) or by its linker name")
        return found[0]


def _matches(name: str, patterns) -> bool:
    for p in patterns:
        if p.endswith("*") and name.startswith(p[:-1]) or p.startswith("*") and name.endswith(p[1:]) or name == p:
            return True
    return False


def build(path: str, calls: dict | None = None) -> Graph:
    """The call graph of the ELF at path; Graph.problem says why there is none (not an ELF, no
    symbols, an architecture with no decoder). calls: {caller: [callee]} the user gives: every
    indirect call in caller goes to those (rule USER), before any other rule; ValueError for a
    name the ELF has no function by."""
    g = Graph()
    try:
        g.image = image = elfcode.read(path)
    except elfcode.ElfCodeError as exc:
        g.problem = str(exc)
        return g
    g.port = port = ports.for_abi(image.abi)
    if port is None or port.dwarf_sp is None:
        g.problem = (f"no call decoder for this ELF's architecture ({image.abi or 'unknown'}): the stack's worst case "
                     "is worked out for Cortex-M and RISC-V")
        return g
    demangled = ElfSymbols(path)
    for lo, size, name in image.functions:
        named = demangled.name_at(lo)
        g.functions[lo] = (size, short_name(named[0]) if named and named[1] == 0 else name)
        if name.startswith(elfinfo.CXX_PREFIX):
            g.cxx.add(lo)
        code = image.read(lo, size)
        g.facts[lo] = port.decode_code(code, lo, image.data_in(lo, lo + size)) if code else ports.CodeFacts()
    _address_taken(g, path)
    _kernels_and_tasks(g)
    entries = {a for _, a in port.entry_points(image, g.facts)}
    dispatchers = {a for a, (_, n) in g.functions.items() if n in tflm_profile.KERNEL_DISPATCHERS}
    runners = {a for a, (_, n) in g.functions.items() if n in INIT_RUNNERS}
    if not runners:
        g.taken |= g.init  # no C runtime runner: whatever calls through the arrays is not known
    kernels = [(a, DISPATCH) for a in sorted(g.kernels)]
    init = [(a, INIT) for a in sorted(g.init - g.taken - entries)]
    for_c = [(a, TAKEN) for a in sorted(g.taken - entries - (g.kernels if dispatchers else set()))]
    any_virtual = [(a, VIRTUAL) for a in sorted(g.virtual - g.taken - entries)]
    by_slot = {k: [(a, VIRTUAL) for a in sorted(v - g.taken - entries)] for k, v in g.vslots.items()}

    def targets(lo: int, site) -> list[tuple[int, str]]:
        if lo in dispatchers:
            return kernels
        if lo in runners:
            return init
        if lo not in g.cxx or site.field:
            return for_c  # C code, or a struct's function pointer: no virtual call
        return for_c + (by_slot.get(site.slot, []) if site.slot is not None else any_virtual)

    pinned = {g.address_of(caller): [(g.address_of(c), USER) for c in callees]
              for caller, callees in (calls or {}).items()}
    for lo, facts in g.facts.items():
        g.edges[lo] = _edges(g, lo, facts, (lambda _lo, _s, pin=pinned[lo]: pin) if lo in pinned else targets)
    return g


def _function_start(g: Graph, value: int) -> int | None:
    """The function a word points to the start of, as a code pointer (Port.code_pointer), or None."""
    addr = g.port.code_pointer(value)
    return addr if addr in g.functions else None


def _address_taken(g: Graph, path: str) -> None:
    """The functions whose addresses the code loads (its constants) or the data holds: every
    aligned word of each loaded section outside the functions' own bytes (whose literal pools
    are their constants), .rodata linked into .text included. A word in a vtable marks a virtual
    function; a word pointing inside a function marks a jump table (a switch)."""
    for facts in g.facts.values():
        g.taken.update(a for v in facts.constants if (a := _function_start(g, v)) is not None)
    vtables = sorted((v, v + z) for n, v, z, _ in elfinfo.data_objects(path) if n.startswith(elfinfo.VTABLE_PREFIX))
    syms = g.image.symbols
    arrays = [(syms[lo], syms[hi]) for lo, hi in INIT_ARRAYS if lo in syms and hi in syms]
    for lo, data in g.image.sections:
        for addr in range((lo + 3) & ~3, lo + len(data) - 3, 4):
            if g.image.function_at(addr) is not None:
                continue  # code: its constants are the decoder's (literal pools)
            word = int.from_bytes(data[addr - lo:addr - lo + 4], "little")
            a = _function_start(g, word)
            if a is not None:
                i = bisect.bisect_right(vtables, (addr, 1 << 64)) - 1
                if i >= 0 and addr < vtables[i][1]:
                    g.virtual.add(a)
                else:
                    (g.init if any(lo_ <= addr < hi_ for lo_, hi_ in arrays) else g.taken).add(a)
            elif (inside := g.image.function_at(g.port.code_address(word))) is not None:
                g.switches.add(inside[0])  # a jump table's entry: the function's indirect jumps are a switch
    typeinfo = {v for n, v in syms.items() if n.startswith(elfinfo.TYPEINFO_PREFIX)}
    for lo, hi in vtables:
        _vtable_slots(g, lo, hi, typeinfo)


def _vtable_slots(g: Graph, lo: int, hi: int, typeinfo: set) -> None:
    """The functions at each slot of the vtable object [lo, hi) (Itanium C++ ABI 2.5.2: the
    offset-to-top word, the typeinfo word (0 with -fno-rtti), then the virtual functions from the
    address point; a class with several bases has a secondary vtable after the primary one, each
    with the same two words before its address point). Every word that follows a 0-or-negative
    offset-to-top and a 0-or-typeinfo word is taken as an address point, which may add slots, never
    lose one."""
    words = [int.from_bytes(w, "little") if (w := g.image.read(a, POINTER_BYTES)) else None
             for a in range(lo, hi, POINTER_BYTES)]
    for i in range(2, len(words)):
        top, info = words[i - 2], words[i - 1]
        if top is None or not (top == 0 or top >= 0x80000000) or not (info == 0 or info in typeinfo):
            continue
        for k, w in enumerate(words[i:]):
            a = _function_start(g, w) if w is not None else None
            if a is not None:
                g.vslots.setdefault(k * POINTER_BYTES, set()).add(a)
    g.switches.update(a for a, (_, n) in g.functions.items() if _matches(n, g.port.switch_helpers))


def _kernels_and_tasks(g: Graph) -> None:
    creators = {a for a, (_, n) in g.functions.items() if n in freertos.TASK_CREATORS}
    for lo, facts in g.facts.items():
        name = g.functions[lo][1]
        found = {a for v in facts.constants if (a := _function_start(g, v)) is not None}
        if _matches(name, tflm_profile.REGISTRATION_BUILDERS):
            g.kernels |= found
        if creators and any(s.target in creators for s in facts.sites if s.kind == ports.CALL):
            for a in found - creators:
                g.tasks.setdefault(a, name)


def _edges(g: Graph, lo: int, facts, targets) -> list[Edge]:
    """The edges out of the function at lo: its direct calls and tail calls, and its indirect ones
    to targets(lo, site): [(callee, the rule that resolved it)]."""
    size = g.functions[lo][0]
    out = []
    for s in facts.sites:
        if s.kind in (ports.CALL, ports.JUMP):
            callee = g.image.function_at(s.target)
            if callee is None or (s.kind == ports.JUMP and lo <= s.target < lo + size):
                continue  # a branch inside the function, or into no known function
            out.append(Edge(callee[0], s.at, s.text, tail=s.kind == ports.JUMP))
            continue
        if s.kind == ports.INDIRECT_JUMP and lo in g.switches:
            continue
        found = targets(lo, s)
        if not found:
            g.unresolved.append((lo, s))
        out += [Edge(t, s.at, s.text, tail=s.kind == ports.INDIRECT_JUMP, rule=rule) for t, rule in found]
    return out


def cut_pointer_cycles(g: Graph, roots) -> list[tuple[int, Edge]]:
    """Leaves out each assumed edge (ASSUMED rules) that closes a cycle in a depth-first walk from
    `roots`, in order (Reset first, then the handlers, then the rest): a call through a pointer
    back into a function still on the walk's path, a recursion through pointers the ELF cannot
    confirm. A chain that only pointers join (A -(p)-> B -(p)-> leaf) keeps its edges in walk
    order. Then every assumed edge still inside a cycle (one a direct call closes). Returns
    [(caller, the edge left out)]."""
    state: dict[int, int] = {}  # 1: on the walk's path, 2: done
    cut = []
    for root in roots:
        if root in state or root not in g.functions:
            continue
        state[root] = 1
        work = [(root, iter(list(g.edges.get(root, ()))))]
        while work:
            v, it = work[-1]
            for e in it:
                seen = state.get(e.callee)
                if seen == 1 and e.rule in ASSUMED:
                    cut.append((v, e))
                elif seen is None:
                    state[e.callee] = 1
                    work.append((e.callee, iter(list(g.edges.get(e.callee, ())))))
                    break
            else:
                state[v] = 2
                work.pop()
    _remove(g, cut)
    # A cycle a direct call closes after a pointer call on the way (A -(p)-> B -> A): no walk order
    # leaves such an edge last, so every assumed edge still inside a cycle goes too.
    comp = {v: i for i, members in enumerate(sccs(sorted(g.functions), g.edges)) for v in members}
    more = [(v, e) for v, edges in g.edges.items() for e in edges
            if e.rule in ASSUMED and comp.get(e.callee) == comp.get(v)]
    _remove(g, more)
    return cut + more


def _remove(g: Graph, cut: list[tuple[int, Edge]]) -> None:
    gone: dict[int, set] = {}
    for v, e in cut:
        gone.setdefault(v, set()).add(e)
    for v, edges in gone.items():
        g.edges[v] = [e for e in g.edges[v] if e not in edges]


def sccs(nodes, edges) -> list[list[int]]:
    """Tarjan's strongly connected components, callees before callers (iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(edges.get(root, ())))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for e in it:
                w = e.callee
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(edges.get(w, ()))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(comp)
    return out
