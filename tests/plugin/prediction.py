"""Test helpers: the planner tool of the build, and the plugin's snapshot of a model's prediction
(the arena `arena plan --model` builds from the planner's JSON, through the plugin's own
snapshot builder), to set against `arenascope-plan --snapshot`'s."""
import functools
import json
import os
import pathlib
import subprocess

from arenascope_plugin.analyse import figures
from arenascope_plugin.decode import abi, plan, tflm
from arenascope_plugin.present import snapshot
from conftest import ROOT, SHARED

BUILD = pathlib.Path(os.environ.get("ARENASCOPE_BUILD_DIR", ROOT / "build"))
PLANNER = BUILD / "planner" / "arenascope-plan"
DSCNN = BUILD / "planner" / "dscnn_kws.tflite"
SHARED_MODELS = sorted((SHARED / "models").glob("*.tflite")) if (SHARED / "models").is_dir() else []
NOT_BUILT = "planner not built (cmake --build build)"


def run_planner(*args):
    """The tool's exit status and stdout; 1 is a model TFLM would reject, 4 and 5 an --arena-size
    too small (planner/include/arenascope/planner/gate.h); the JSON is printed all the same."""
    r = subprocess.run([str(PLANNER), *map(str, args)], capture_output=True, text=True, timeout=60)
    assert r.returncode in (0, 1, 4, 5), r.stderr
    return r.returncode, r.stdout


@functools.cache
def _plan_text(model_path, args):
    return run_planner("--json", *args, model_path)[1]


def plan_json(model_path, *args):
    """The planner's JSON (a fresh copy: callers may change it), run once per model and options."""
    return json.loads(_plan_text(str(model_path), tuple(map(str, args))))


def planner_snapshot(tmp_path, model_path, *args):
    out = tmp_path / f"{pathlib.Path(model_path).stem}{'_'.join(args)}.json"
    run_planner("--snapshot", out, *args, model_path)
    return json.loads(out.read_text())


def plugin_snapshot_of_plan(doc):
    """snapshot.build on the arena plan.arena_from_plan makes of the planner's JSON, with the
    figures and checks the plugin computes for it: the minimum arena from the JSON (as agentless
    mode takes it), no stack, no guard band, nothing measured, the source a model's."""
    arena = plan.arena_from_plan(doc)
    desc = tflm.descriptor(tflm.Walk(interpreter=0, model_addr=0, arena=arena), 4 if doc["target"] == "cortex-m" else 8)
    desc.measured_by = "model"
    figs = {0: figures.arena_figures(arena, minimum_arena=doc["arena"]["minimum_bytes"])}
    stack = figures.StackFigures(low=0, high=0, sp=None, hwm=None, source="none", painted=False, arena_end=None)
    source = {"elf": None, "located_by": "model", "model": doc["model"], "predicted_by": "arenascope-plan",
              "target": doc["target"]}
    assert desc.abi_major == abi.ABI_MAJOR
    return snapshot.build(desc, figs, stack, figures.checks(desc, stack, figs), source)
