"""`arenascope-plan --json` follows docs/planner-schema.json for every model the tests use: the
project's DS-CNN from the build (each option that changes the JSON: --target, --adapter,
--margin, and --arena-size below, at and above the minimum), and every model in ../shared/models
when present (skipped without ../shared); the schema refuses what breaks the contract. Skipped
when the planner is not built."""
import copy
import json

import jsonschema
import pytest

from arenascope_plugin.acquire import planner
from conftest import ROOT
from prediction import DSCNN, NOT_BUILT, PLANNER, SHARED_MODELS, plan_json

SCHEMA = json.loads((ROOT / "docs" / "planner-schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
ROLES = SCHEMA["$defs"]["tail_role"]["enum"]
built = pytest.mark.skipif(not PLANNER.exists() or not DSCNN.exists(), reason=NOT_BUILT)
shared = pytest.mark.skipif(not SHARED_MODELS, reason="../shared/models absent (a clone on its own)")


def valid(doc):
    errors = [f"{e.json_path}: {e.message}" for e in VALIDATOR.iter_errors(doc)]
    assert not errors, errors[:5]
    return doc


def test_the_schema_is_a_schema_of_this_contract():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["properties"]["schema"]["const"] == planner.SCHEMA


def sizes(doc):
    """--arena-size values that take the replay through each of its answers: the MicroInterpreter's
    constructor fails, AllocateTensors fails on the way, one byte short, the minimum and the
    recommendation."""
    low, rec = doc["arena"]["minimum_bytes"], doc["arena"]["recommended_bytes"]
    return sorted({1, 200, low // 2, low - 1, low, rec})


@built
@pytest.mark.parametrize("args", [(), ("--target", "host"), ("--adapter",), ("--margin", "0"), ("--margin", "100"),
                                  ("--target", "host", "--adapter")])
def test_the_dscnn_budget_follows_the_schema(args):
    doc = valid(plan_json(DSCNN, *args))
    assert {t["role"] for t in doc["tail"]["regions"]} >= {
        "arena-allocator", "micro-allocator", "builtin-data-allocator", "subgraph-allocations", "eval-tensors",
        "node-and-registration", "builtin-data", "op-data", "kernel-buffer", "input-tensor-array", "input-tensor",
        "input-quantization", "input-zero-points", "output-tensor-array", "output-tensor"}
    assert ("memory-planner" in {t["role"] for t in doc["tail"]["regions"]}) == ("--adapter" not in args)


@built
def test_every_replay_of_the_dscnn_follows_the_schema():
    doc = plan_json(DSCNN)
    fits = set()
    for n in sizes(doc):
        at = valid(plan_json(DSCNN, "--arena-size", n))["replay"]
        fits.add(at["fits"])
        assert at["arena_bytes"] == n and all(p["role"] in ROLES for p in at["persistent"])
    assert fits == {True, False}


@built
@shared
@pytest.mark.parametrize("model_path", SHARED_MODELS, ids=[m.stem for m in SHARED_MODELS])
def test_every_shared_models_budget_and_replays_follow_the_schema(model_path):
    valid(plan_json(model_path, "--target", "host"))
    doc = valid(plan_json(model_path))
    valid(plan_json(model_path, "--arena-size", doc["arena"]["minimum_bytes"] - 1))  # one byte short


@built
@shared
def test_the_shared_models_use_every_role():
    used = set()
    for m in SHARED_MODELS:
        used |= {t["role"] for t in plan_json(m)["tail"]["regions"]}
    assert used == set(ROLES)


@built
@pytest.mark.parametrize("mutate,where", [
    (lambda d: d["tail"]["regions"][0].pop("role"), "$.tail.regions[0]"),
    (lambda d: d["tail"]["regions"][0].update(role="SingleArenaBufferAllocator"), "$.tail.regions[0].role"),
    (lambda d: d.update(schema="arenascope-plan/1"), "$.schema"),
    (lambda d: d.update(extra=1), "$"),
    (lambda d: d["buffers"][0].update(offset=-1), "$.buffers[0].offset"),
    (lambda d: d["steps"][0].update(role=None), "$.steps[0]"),
    (lambda d: d["arena"].pop("recommended_bytes"), "$.arena"),
])
def test_the_schema_refuses_what_breaks_the_contract(mutate, where):
    doc = copy.deepcopy(plan_json(DSCNN))
    mutate(doc)
    paths = {e.json_path for e in VALIDATOR.iter_errors(doc)}
    assert paths and any(p.startswith(where) for p in paths), paths


@built
@pytest.mark.parametrize("sizes", [(20000, 20000), (20000, 100), (64, 64), (100, 20000)])
@pytest.mark.parametrize("target", ["cortex-m", "riscv32", "xtensa", "host"])
def test_the_two_arena_budget_follows_the_schema(sizes, target):
    doc = valid(plan_json(DSCNN, "--target", target, "--persistent-size", sizes[0], "--non-persistent-size", sizes[1]))
    t = doc["two_arena"]
    assert t["fits"] == (t["runs_out"] is None) == (t["failed"] is None)
    broken = copy.deepcopy(doc)
    broken["two_arena"]["runs_out"] = "both"
    assert list(VALIDATOR.iter_errors(broken))


def test_an_arena_too_small_is_the_gates_answer_not_a_planner_error():
    """`arenascope-plan --arena-size N` exits 4 when N is too small (the gate, for CI); the plugin's
    run_planner takes the document, with its replay and gate, and no error from that status."""
    if not PLANNER.exists():
        pytest.skip(NOT_BUILT)
    minimum = plan_json(DSCNN)["arena"]["minimum_bytes"]
    doc, error = planner.run_planner(str(PLANNER), DSCNN, arena_size=minimum - 16)
    assert error is None and not doc["replay"]["fits"]
    assert (doc["gate"]["verdict"], doc["gate"]["exit_status"], doc["gate"]["minimum_bytes"]) == \
        ("DOES NOT FIT", 4, minimum)
