"""The golden test of the two snapshot writers: for the same model, `arenascope-plan --snapshot`
(planner/src/snapshot.cpp) and the plugin's snapshot builder (snapshot.build on the arena
decode.plan.arena_from_plan makes of the planner's JSON, as `arena plan --model` builds it) give the same
figures: arena size, head, temp, tail, used, peak, headroom (bytes and the rounded percentage),
the minimum arena, every region (offset, size, kind, id, flags, label, name, lifetimes, shape,
type), the plan over time, the stack (none) and its rule factor, the source and state, and the
checks both compute (plan, used), reasons included. What neither derives from the other (the
stack rule's factor, the rounding, scratch labels) is pinned by
tests/fixtures/shared_definitions_golden.json (test_shared_definitions.py). Skipped when the
planner is not built; the shared models without ../shared."""
import pytest

from arenascope_plugin import version
from prediction import DSCNN, NOT_BUILT, PLANNER, SHARED_MODELS, plan_json, planner_snapshot, plugin_snapshot_of_plan

built = pytest.mark.skipif(not PLANNER.exists() or not DSCNN.exists(), reason=NOT_BUILT)
# Only the planner writes these: its verdict on the prediction itself (the plugin's verdict adds
# its own rules: bounds, alignment, headroom, stack), and the fault (the plugin adds it where
# there is one).
PLANNER_ONLY = {"fault", "verdict", "checks"}


def compare(tmp_path, model_path, *args):
    theirs = planner_snapshot(tmp_path, model_path, *args)
    ours = plugin_snapshot_of_plan(plan_json(model_path, *args))
    assert set(ours) | PLANNER_ONLY == set(theirs), set(ours) ^ set(theirs)
    # source: all but the time each was written at
    assert {k: v for k, v in ours["source"].items() if k != "time"} == \
        {k: v for k, v in theirs["source"].items() if k != "time"}
    assert theirs["source"]["arenascope_version"] == version.VERSION
    assert ours["state"] == theirs["state"]
    assert ours["stack"] == theirs["stack"] and ours["guard"] == theirs["guard"] is None
    (a,), (b,) = ours["arenas"], theirs["arenas"]
    assert set(a) == set(b)
    for key in sorted(set(a) - {"regions"}):
        assert a[key] == b[key], key
    assert len(a["regions"]) == len(b["regions"])
    for ra, rb in zip(a["regions"], b["regions"], strict=True):
        assert ra == rb
    # The checks both compute: the same verdicts, in the same words.
    shared = {c["rule"] for c in ours["checks"]} & {c["rule"] for c in theirs["checks"]}
    assert shared == {"plan", "used"}
    for rule in sorted(shared):
        assert [c for c in ours["checks"] if c["rule"] == rule] == [c for c in theirs["checks"] if c["rule"] == rule]
    return a


@built
@pytest.mark.parametrize("args", [(), ("--target", "host"), ("--adapter",), ("--margin", "0"), ("--margin", "100")])
def test_the_planner_and_the_plugin_give_the_dscnn_the_same_snapshot(tmp_path, args):
    a = compare(tmp_path, DSCNN, *args)
    # Worked in test_planner_models.py: the DS-CNN's head is two 25x5x64 int8 activations.
    assert a["head_bytes"] == 16000 and a["tail_offset"] + a["tail_bytes"] == a["size_bytes"]
    assert a["headroom_bytes"] == a["size_bytes"] - max(a["minimum_arena_bytes"], a["used_bytes"])


@built
@pytest.mark.skipif(not SHARED_MODELS, reason="../shared/models absent (a clone on its own)")
@pytest.mark.parametrize("model_path", SHARED_MODELS, ids=[m.stem for m in SHARED_MODELS])
def test_the_planner_and_the_plugin_give_every_shared_model_the_same_snapshot(tmp_path, model_path):
    compare(tmp_path, model_path)
