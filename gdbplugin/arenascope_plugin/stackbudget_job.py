"""The stack budget before flashing, as both front ends run it (`arena budget` in GDB,
`arenascope budget` in the tool): the stack's worst case from the code (analyse/stackdepth.py),
the RAM map and the stack rule (analyse/rambudget.py), and, with a model, the planner's verdict on
the arena at the size the ELF gives it (acquire/planner.py). Nothing here reads target memory."""
import os
from dataclasses import dataclass

from arenascope_plugin import ports
from arenascope_plugin.acquire import planner
from arenascope_plugin.analyse import rambudget, stackdepth
from arenascope_plugin.present import stackbudget


@dataclass
class Answer:
    depth: stackdepth.StackDepth
    budget: rambudget.Budget
    gate: dict | None        # the planner's gate for the arena at its size in the ELF (None: no model)
    exit_status: int

    def lines(self) -> list[str]:
        """The stack rule's verdict first, then the planner's on the arena (with a model), then the rest."""
        out = stackbudget.report_lines(self.budget, self.depth)
        if self.gate is not None:
            out.insert(1, f"  the arena for the model (the planner): {self.gate['verdict']}: {self.gate['reason']}")
        return out

    def json(self) -> dict:
        doc = stackbudget.json_doc(self.budget, self.depth, self.exit_status)
        doc["arena_gate"] = self.gate
        return doc


_PREDICTED: dict = {}  # (path, mtime, size) -> StackDepth: `arena stack` asks at every stop


def predicted(path: str | None) -> stackdepth.StackDepth | None:
    """The stack's worst case from the ELF at path with no hints (as `arena budget` with no
    options), worked out once per version of the file; None without a file."""
    try:
        st = os.stat(path) if path else None
    except OSError:
        return None
    if st is None:
        return None
    key = (path, st.st_mtime_ns, st.st_size)
    if key not in _PREDICTED:
        _PREDICTED.clear()  # one ELF at a time (its RAM map too)
        _PREDICTED[key] = stackdepth.analyse(path)
    return _PREDICTED[key]


def ram_map(path: str | None, symbols) -> rambudget.Budget | None:
    """The RAM map before flashing and the stack rule on the predicted worst case, for the ELF at
    path (rambudget.build with predicted()'s analysis), worked out once per version of the file."""
    depth = predicted(path)
    if depth is None:
        return None
    key = ("ram-map", path)
    if _PREDICTED.get(key, (None,))[0] is not depth:
        _PREDICTED[key] = (depth, rambudget.build(path, symbols, depth))
    return _PREDICTED[key][1]


def su_files(given) -> list[str]:
    """The .su files the user gave (--su): each file as given, each directory's *.su under it."""
    out = []
    for p in given:
        p = os.path.expanduser(p)
        found = sorted(os.path.join(d, f) for d, _, fs in os.walk(p) for f in fs if f.endswith(".su")) \
            if os.path.isdir(p) else [p]
        if not found:
            raise ValueError(f"--su {p}: no .su file under it (GCC writes them beside the objects with -fstack-usage)")
        out += found
    return out


def _split(text: str) -> list[str]:
    """Comma-separated names, a comma inside <...> (a C++ template's arguments) kept."""
    out, depth, word = [], 0, ""
    for ch in text:
        depth += {"<": 1, ">": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            out.append(word.strip())
            word = ""
        else:
            word += ch
    return [w for w in out + [word.strip()] if w]


def parse_calls(given) -> dict[str, list[str]]:
    """{caller: [callee]} from --calls CALLER=CALLEE[,CALLEE...] (repeatable); ValueError says what
    is wrong."""
    out: dict[str, list[str]] = {}
    for text in given:
        caller, sep, callees = text.partition("=")
        if not sep or not caller.strip() or not _split(callees):
            raise ValueError(f"--calls {text!r}: give CALLER=CALLEE[,CALLEE...], e.g. "
                             "--calls 'vfprintf=__file_str_put'")
        out.setdefault(caller.strip(), []).extend(_split(callees))
    return out


def parse_bounds(given) -> dict[str, int]:
    """{function: levels} from --bound FUNCTION=LEVELS (repeatable); ValueError says what is wrong."""
    out = {}
    for text in given:
        name, sep, levels = text.rpartition("=")
        if not sep or not name.strip() or not levels.strip().isdigit() or int(levels) < 1:
            raise ValueError(f"--bound {text!r}: give FUNCTION=LEVELS, LEVELS a whole number from 1, e.g. "
                             "--bound 'recurse_down_to=40'")
        out[name.strip()] = int(levels)
    return out


def run(path: str, symbols, su_files=(), arena_symbol: str | None = None, model: str | None = None,
        planner_tool: str | None = None, arena_bytes: int | None = None, calls: dict | None = None,
        bounds: dict | None = None) -> Answer:
    """The Answer for the ELF at path. model: a .tflite whose minimum arena the planner gives (and
    whose allocation it replays at the arena's size in the ELF); arena_bytes: the arena the model
    needs, given directly. calls, bounds: the user's (stackdepth.analyse). ValueError for an
    unreadable .su file or a function the ELF does not have; planner.PlannerError when the planner
    cannot run."""
    if model and arena_bytes is not None:
        raise ValueError("give --model or --arena-bytes, not both: --model takes the planner's minimum arena")
    if arena_bytes is not None and not 0 < arena_bytes < 1 << 32:
        raise ValueError(f"--arena-bytes {arena_bytes}: an arena is 1 B to 4 GiB")
    depth = stackdepth.analyse(path, su_files, calls, bounds)
    budget = rambudget.build(path, symbols, depth, arena_symbol)
    gate = None
    if model:
        port = ports.for_abi(symbols.abi()) or ports.all_ports()[0]
        size = budget.arena.hi - budget.arena.lo if budget.arena else None
        doc, error = planner.run_planner(planner_tool, model, port.planner_target, arena_size=size)
        if error and not doc:
            raise planner.PlannerError(error)
        gate = doc.get("gate") if isinstance(doc, dict) else None
        minimum = (doc.get("arena") or {}).get("minimum_bytes") if isinstance(doc, dict) else None
        if arena_bytes is None:
            arena_bytes = minimum
    rambudget.need(budget, arena_bytes)
    status = stackbudget.exit_status(budget)
    if gate and gate.get("exit_status") in (stackbudget.EXIT_DOES_NOT_FIT, stackbudget.EXIT_CRASH_OR_HANG,
                                            stackbudget.EXIT_ERROR):
        status = gate["exit_status"]
    return Answer(depth, budget, gate, status)
