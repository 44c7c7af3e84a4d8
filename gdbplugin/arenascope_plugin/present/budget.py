"""The planner's prediction of the whole arena in words (`arena plan --model`), and the saving a
better memory plan offers (`arena plan` on a target)."""
from arenascope_plugin.acquire.planner import SCHEMA, PlannerError, printable


def arena_lines(doc):
    """The tool's prediction of the whole arena, in words: arena_used_bytes(), the minimum arena
    AllocateTensors succeeds in and the request that sets it, the recommendation. [] when the
    document has no prediction (an older tool)."""
    a = doc.get("arena")
    if not isinstance(a, dict) or doc.get("tflm_rejects"):
        return []  # an older tool, or a model TFLM rejects: no arena to speak of
    k = doc.get("kernels")  # absent from older tools, which planned the reference kernels
    kernels = "reference kernels" if not isinstance(k, dict) or k.get("set") != "cmsis-nn" else \
        f"CMSIS-NN kernels for {printable(k.get('cpu'))}"
    try:
        lines = [f"arena ({doc['target']}, {kernels}): arena_used_bytes() {a['arena_used_bytes']} B after "
                 f"AllocateTensors; minimum arena {a['minimum_bytes']} B "
                 f"(set by {a['set_by']['phase']}: {printable(a['set_by']['request'])}); "
                 f"recommended {a['recommended_bytes']} B (minimum + {a['margin_pct']} %)"]
        if not a["exact"]:
            missing = printable("; ".join(a["unmodelled_kernels"])) or "unknown"
            lines.append(f"the minimum and arena_used_bytes() are FLOORS, not predictions: not modelled: {missing}")
    except (KeyError, TypeError) as e:
        raise PlannerError(f"the planner's JSON does not follow \"{SCHEMA}\" ({type(e).__name__}: {e}): "
                           "rebuild arenascope-plan with this plugin") from None
    return lines


def saving_lines(arena, doc, model_file: str | None = None) -> list[str]:
    """What the model's memory plan could save, in words, for `arena plan` on a target: how many
    regions the model's own offline plan places (regions flagged "offline": TFLM's
    OfflineMemoryAllocation metadata), and, when the planner's JSON `doc` for the arena's model
    (None: not known) has a best plan smaller than TFLM's greedy one, by how much and the command
    that writes it into the model (arenascope-plan --write-offline-plan, docs/offline-plan.md).
    model_file: the .tflite path to name in that command (`set arena model`), else a placeholder."""
    offline = sum(1 for r in arena.regions if "offline" in r.flag_names)
    lines = []
    if offline:
        lines.append(f"  {offline} region(s) placed by the model's offline plan (its OfflineMemoryAllocation "
                     "metadata; flagged \"offline\" in `arena regions` and the map)")
    if doc is None:
        return lines
    try:
        greedy, best = doc["plans"]["tflm-greedy"]["head_bytes"], doc["plans"]["best"]
        if doc.get("approximate") or best["head_bytes"] >= greedy:
            return lines
        gap = best.get("gap_bytes")
        model = model_file or "MODEL.tflite"
        head = (f"this model's head can be {greedy - best['head_bytes']} B smaller: TFLM's "
                f"{'plan with the offline plan it carries' if best.get('replaces_offline_plan') else 'greedy plan'} "
                f"takes {greedy} B, the best plan found {best['head_bytes']} B"
                + (" (the lower bound)" if gap == 0 else f" ({gap} B above the lower bound)" if gap else ""))
        minimum, better = doc["arena"]["minimum_bytes"], best.get("minimum_arena_bytes")
        if better is not None and better >= minimum:
            lines.append(f"  {head}; but the minimum arena stays {minimum} B (set by "
                         f"{printable(doc['arena']['set_by']['request'])}, not by the head): no RAM to gain")
        else:
            arena = f"; the minimum arena {minimum} -> {better} B" if better is not None else ""
            lines.append(f"  {head}{arena}: write it into the model with `arenascope-plan --write-offline-plan "
                         f"OUT.tflite {model}` and build the firmware with OUT.tflite")
    except (KeyError, TypeError) as e:
        raise PlannerError(f"the planner's JSON does not follow \"{SCHEMA}\" ({type(e).__name__}: {e}): "
                           "rebuild arenascope-plan with this plugin") from None
    return lines
