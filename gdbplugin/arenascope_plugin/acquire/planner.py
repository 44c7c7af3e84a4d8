"""A model's memory plan from the planner tool (arenascope-plan --json, docs/arena-budget.md),
as a decode.Arena, so that `arena plan --model FILE` draws it with the same chart as a target's
plan. Parsing models, lifetimes and plans is the C++ tool's alone; this module only runs it
and maps its JSON (schema "arenascope-plan/1") onto regions. No GDB import: unit-testable."""
import json
import os
import subprocess
import tempfile

from arenascope_plugin.decode.descriptor import Arena, Region

SCHEMA = "arenascope-plan/1"
TIMEOUT_S = 60


class PlannerError(Exception):
    """The planner tool is missing, failed, or printed something that is not its JSON."""


def printable(text):
    """Text from a model (names of tensors and custom operators can hold any character) as one
    terminal line: control characters, newlines included, become '?', as the tool's table does."""
    return "".join(c if c.isprintable() else "?" for c in str(text))


def run_planner(tool, model_path, target="cortex-m", margin_pct=None, arena_size=None):
    """Runs `tool --json --target TARGET [--margin PCT] [--arena-size N] model_path`; returns
    (document, error). error is the tool's message when it printed a budget but also said TFLM
    would reject the model (exit status 1 with JSON). arena_size: also replay TFLM's allocation
    at that many bytes (the document's `replay`, docs/arena-budget.md)."""
    if not tool:
        raise PlannerError("the planner tool arenascope-plan was not found: build it (cmake --build build) or "
                           "`set arena planner-path /path/to/arenascope-plan`")
    try:
        # Model names need not be UTF-8: never let a byte of them break the command.
        margin = ["--margin", str(margin_pct)] if margin_pct is not None else []
        if arena_size is not None:
            margin += ["--arena-size", str(arena_size)]
        r = subprocess.run([tool, "--json", "--target", target, *margin, "--", model_path], capture_output=True,
                           encoding="utf-8", errors="replace", timeout=TIMEOUT_S, check=False)
    except OSError as e:
        raise PlannerError(f"cannot run {tool}: {e.strerror}") from None
    except subprocess.TimeoutExpired:
        raise PlannerError(f"{tool} did not finish in {TIMEOUT_S} s on {model_path}") from None
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    message = printable(lines[0]).replace("arenascope-plan: ", "", 1) if lines else ""
    try:
        doc = json.loads(r.stdout) if r.stdout.strip() else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        if r.returncode == 1 and message and r.stderr.startswith("arenascope-plan: "):
            raise PlannerError(message)  # the tool's own error: it names the file and the problem
        raise PlannerError(f"{tool} is not arenascope-plan (it printed no \"{SCHEMA}\" plan, exit status "
                           f"{r.returncode}): `set arena planner-path auto`, or the path of build/planner/arenascope-plan")
    return doc, (message if r.returncode else None)


def target_for(pointer_bytes):
    """The planner's --target for a target whose pointers have pointer_bytes bytes."""
    return "cortex-m" if pointer_bytes == 4 else "host"


def run_planner_on_bytes(tool, data, pointer_bytes, arena_size=None):
    """run_planner on a model held in memory (read from an ELF or a target), for the ABI of a
    target with pointer_bytes-byte pointers; the temporary file is always removed."""
    f = tempfile.NamedTemporaryFile(prefix="arenascope-model-", suffix=".tflite", delete=False)
    try:
        f.write(data)
        f.close()
        return run_planner(tool, f.name, target_for(pointer_bytes), arena_size=arena_size)
    finally:
        f.close()
        os.unlink(f.name)


def arena_from_plan(doc):
    """The tool's TFLM-greedy plan as an Arena of planned regions: offset = the buffer's offset in
    the head, lifetime = its inclusive scopes, head = TFLM's head. Base address 0: a model has no
    target address. PlannerError when the document lacks what the schema promises."""
    try:
        return _arena_from_plan(doc)
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        raise PlannerError(f"the planner's JSON does not follow \"{SCHEMA}\" ({type(e).__name__}: {e}): "
                           "rebuild arenascope-plan with this plugin") from None


def _arena_from_plan(doc):
    tensors = {(sg["index"], t["index"]): t for sg in doc["subgraphs"] for t in sg["tensors"]}
    regions = []
    for b in doc["buffers"]:
        t = tensors.get((b["subgraph"], b["tensor"])) if b["tensor"] >= 0 else None
        regions.append(Region(index=len(regions), offset=b["offset"], size=b["size"], id=b["id"],
                              kind="scratch" if b["tensor"] < 0 else "tensor", flags=0,
                              first_use=b["first"], last_use=b["last"], name=printable(b["name"]),
                              shape=t["shape"] if t else None, dtype=t["type"] if t else None))
    head = doc["plans"]["tflm-greedy"]["head_bytes"]
    return Arena(index=0, base_addr=0, regions_addr=0, model_addr=0, size=head, head=head, temp=head, tail=head,
                 model_size=doc["file_bytes"], canary=None, alignment=16, region_count=len(regions),
                 region_capacity=len(regions), flags=0, regions=regions)


def arena_lines(doc):
    """The tool's prediction of the whole arena, in words: arena_used_bytes(), the minimum arena
    AllocateTensors succeeds in and the request that sets it, the recommendation. [] when the
    document has no prediction (an older tool)."""
    a = doc.get("arena")
    if not isinstance(a, dict) or doc.get("tflm_rejects"):
        return []  # an older tool, or a model TFLM rejects: no arena to speak of
    try:
        lines = [f"arena ({doc['target']}, reference kernels): arena_used_bytes() {a['arena_used_bytes']} B after "
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
