"""The planner's prediction of the whole arena in words (`arena plan --model`)."""
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
