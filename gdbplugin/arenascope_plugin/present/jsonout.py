"""The JSON documents of the reporting commands' --json (`arena info|check|regions|map|plan|
stack|fault|interpreters|whereis|version --json`, and `arenascope info|check|fault --json`). Each is parts of
the snapshot (snapshot.py, docs/snapshot-schema.json) with the same field names, cut from the same
analysed data the text report prints, plus "command" and "schema"; docs/command-json-schema.json
describes every one. Nothing here is computed anew."""
from arenascope_plugin.analyse import figures
from arenascope_plugin.present import faultjson, render, snapshot

SCHEMA = "arenascope.command"
VERSION = 1


def _doc(command: str, **parts) -> dict:
    return {"schema": SCHEMA, "version": VERSION, "command": command, **parts}


def error(command: str, message: str) -> dict:
    """The document a --json command prints when it fails: the error's text (what happened, where,
    what to do) instead of its report, so a script reading the output always reads JSON."""
    return _doc(command, error=message)


def info(snap: dict) -> dict:
    """`arena info --json`: the snapshot's source, state, arenas, stack and guard (and tflm)."""
    return _doc("info", **{k: snap[k] for k in ("source", "state", "arenas", "stack", "guard", "tflm") if k in snap})


def check(check_list: list[figures.Check]) -> dict:
    """`arena check --json`: the snapshot's checks (rule, verdict, reason) and verdict; ok is
    false when a check FAILs (what makes `gdb -batch` exit non-zero)."""
    verdict = figures.worst(check_list)
    return _doc("check", ok=verdict != figures.FAIL, verdict=verdict, checks=snapshot.checks_json(check_list))


def regions(snap: dict, desc, sort: str) -> dict:
    """`arena regions --json`: each arena's regions (the snapshot's region objects), in the order
    `arena regions --sort SORT` lists them."""
    out = []
    for a, sa in zip(desc.arenas, snap["arenas"], strict=True):
        order = [r.index for r in sorted(a.regions, key=render.SORT_KEYS[sort])]
        out.append({"index": sa["index"], "base_addr": sa["base_addr"], "regions": [sa["regions"][i] for i in order]})
    return _doc("regions", sort=sort, arenas=out)


def interpreters(attached, found: list[dict], layout: dict | None = None) -> dict:
    """`arena interpreters --json`: agentless.list_interpreters()'s entries, each buffer
    (what, base, size) as {what, base_addr, size_bytes}; attached: what `arena attach` named;
    tflm_layout: the firmware's TFLM era (tflm_profile.era_json)."""
    return _doc("interpreters", attached=attached, tflm_layout=layout, interpreters=[
        dict(e, buffers=[{"what": w, "base_addr": b, "size_bytes": s} for w, b, s in e["buffers"]]) for e in found])


def whereis(where: dict, overwritten: list[tuple[int, int, str, str]] = ()) -> dict:
    """`arena whereis ADDR --json`: analyse.figures.where()'s facts, and what holding the address
    was found overwritten (analyse/diagnosis.Diagnosis.overwritten: (address, size, what, why))."""
    return _doc("whereis", **where, overwritten=[{"what": w, "addr": a, "size_bytes": n, "why": y}
                                                 for a, n, w, y in overwritten])


def map_doc(snap: dict) -> dict:
    """`arena map --json`: what the bar draws, each arena's figures and regions as the snapshot
    has them (its arenas), and the guard band."""
    return _doc("map", arenas=snap["arenas"], guard=snap.get("guard"))


def plan(snap: dict) -> dict:
    """`arena plan --json` (on a target): each arena's plan, as in the snapshot."""
    return _doc("plan", arenas=[{"index": a["index"], "plan": a["plan"]} for a in snap["arenas"]])


def stack(stack_figures, tasks: dict | None) -> dict:
    """`arena stack --json`: the snapshot's stack (and tasks with an RTOS); works without the agent."""
    return _doc("stack", stack=snapshot.stack_json(stack_figures), tasks=tasks)


def fault(diagnosis) -> dict:
    """`arena fault --json` of an analyse/diagnosis.Diagnosis (faultjson.command_parts): the
    snapshot's fault (null when there is none, with why in note), and the verdicts, notes and
    verdict (PASS/FAIL) either way."""
    return _doc("fault", **faultjson.command_parts(diagnosis))
