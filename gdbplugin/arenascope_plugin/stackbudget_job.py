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
        out = []
        if self.gate is not None:
            out.append(f"arena (the planner, on the model): {self.gate['verdict']}: {self.gate['reason']}")
        return out + stackbudget.report_lines(self.budget, self.depth)

    def json(self) -> dict:
        doc = stackbudget.json_doc(self.budget, self.depth, self.exit_status)
        doc["arena_gate"] = self.gate
        return doc


def su_files(given) -> list[str]:
    """The .su files the user gave (--su): each file as given, each directory's *.su under it."""
    out = []
    for p in given:
        p = os.path.expanduser(p)
        out += sorted(os.path.join(d, f) for d, _, fs in os.walk(p) for f in fs if f.endswith(".su")) \
            if os.path.isdir(p) else [p]
    return out


def run(path: str, symbols, su_files=(), arena_symbol: str | None = None, model: str | None = None,
        planner_tool: str | None = None, arena_bytes: int | None = None) -> Answer:
    """The Answer for the ELF at path. model: a .tflite whose minimum arena the planner gives (and
    whose allocation it replays at the arena's size in the ELF); arena_bytes: the arena the model
    needs, given directly. ValueError for an unreadable .su file; planner.PlannerError when the
    planner cannot run."""
    depth = stackdepth.analyse(path, su_files)
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
