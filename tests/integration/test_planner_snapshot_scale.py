"""Issue 39: every snapshot the planner writes loads in the viewer. A 100,000-operator chain's
full snapshot passes the viewer's limits (common/include/arenascope/snapshot_limits.h: 64 MiB,
200,000 regions an arena), so the planner writes the compact one (docs/snapshot-schema.md
"Compact snapshots"), which the real viewer loads and draws; a model whose compact snapshot
still passes a limit is refused by the planner in the very words the viewer refuses such a file
with. The expected figures come from the chain's structure (tests/planner/write_chain.cpp: each
operator adds, or every third multiplies, the previous two activations)."""
import json
import pathlib
import shutil
import subprocess
import sys

import pytest

from harness import BUILD, PLANNER, xvfb

ROOT = pathlib.Path(__file__).resolve().parents[2]

VIEWER = BUILD / "viewer" / "arenascope-viewer"
WRITER = BUILD / "tests" / "planner" / "arenascope-write-chain"
MAX_BYTES, MAX_REGIONS = 64 << 20, 200000  # snapshot_limits.h (tests/plugin/test_snapshot_limits.py)
# The tail's regions apart from the per-operator ones: SingleArenaBufferAllocator,
# GreedyMemoryPlanner, MicroAllocator, MicroBuiltinDataAllocator, SubgraphAllocations,
# TfLiteEvalTensor[], NodeAndRegistration[]; the input and output TfLiteTensor* arrays and
# TfLiteTensors (docs/arena-budget.md, the whole arena's phases).
FRAMEWORK_TAIL = 7 + 4

pytestmark = [pytest.mark.skipif(not (PLANNER.exists() and WRITER.exists()), reason="planner not built")]


def chain(tmp_path, n):
    model = tmp_path / f"chain{n}.tflite"
    subprocess.run([str(WRITER), str(model), str(n)], check=True, capture_output=True, timeout=60)
    return model


def plan_snapshot(model, out):
    return subprocess.run([str(PLANNER), "--snapshot", str(out), str(model)], capture_output=True, text=True,
                          timeout=120)


def view(path, tmp_path, env, *more):
    return subprocess.run([str(VIEWER), str(path), "--screenshot", str(tmp_path / "shot.png"), "--frames", "1", *more],
                          capture_output=True, text=True, timeout=120, env=env)


def test_a_small_chain_keeps_its_full_snapshot(tmp_path):
    """Within the limits the snapshot is the full one, as before: one region an allocation."""
    n = 2000
    r = plan_snapshot(chain(tmp_path, n), tmp_path / "s.json")
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "s.json").read_text()
    regions = json.loads(text)["arenas"][0]["regions"]
    # n + 1 activations planned; a builtin-data and an OpData allocation an operator; the framework's
    assert len(regions) == (n + 1) + 2 * n + FRAMEWORK_TAIL
    assert not any("count" in r for r in regions) and text.startswith('{\n "arenas": [')


@pytest.mark.skipif(not VIEWER.exists() or shutil.which("Xvfb") is None, reason="viewer or Xvfb missing")
def test_a_100000_operator_chain_is_written_compact_and_the_viewer_draws_it(tmp_path):
    n = 100000
    out = tmp_path / "s.json"
    r = plan_snapshot(chain(tmp_path, n), out)
    assert r.returncode == 0, r.stderr
    size = out.stat().st_size
    assert size <= MAX_BYTES
    regions = json.loads(out.read_text())["arenas"][0]["regions"]
    # The full form: (n + 1) + 2n + 11 = 300,012 regions, over the limit; compact: the two
    # per-operator runs are one region each.
    assert len(regions) == (n + 1) + 2 + FRAMEWORK_TAIL <= MAX_REGIONS
    runs = [r for r in regions if r.get("count")]
    assert [(r["kind"], r["count"], r["label"]) for r in runs] == [
        ("persistent", n, "100,000 x builtin data (1-2 B each)"),
        ("persistent", n, "100,000 x Persistent buffer data (36-60 B each)")]
    adds, muls = n - n // 3, n // 3  # operator i multiplies when i % 3 == 2
    # TfLiteAddParams 2 B, TfLiteMulParams 1 B, alignment 1: back to back
    assert runs[0]["size_bytes"] == 2 * adds + 1 * muls
    # OpDataAdd 60 B, OpDataMul 36 B, 16-byte aligned down from the tail: 64 and 48 B apart, the
    # first (an OpDataAdd) 60 B up to its end
    assert runs[1]["size_bytes"] == 60 + 64 * (adds - 1) + 48 * muls
    assert runs[1]["offset"] + runs[1]["size_bytes"] <= runs[0]["offset"]
    with xvfb() as env:
        v = view(out, tmp_path, env, "--layout-out", str(tmp_path / "layout.json"))
    assert v.returncode == 0, v.stderr
    assert (tmp_path / "shot.png").stat().st_size > 0
    # the wider run is labelled on the map's bar (its lane is 2 px among 33,335 lanes), as far as
    # it fits: its count first
    labels = [lab["text"] for lab in json.loads((tmp_path / "layout.json").read_text())["map_picture"]["labels"]]
    assert any(t.startswith("100,000 x") for t in labels), labels
    # ... and the plugin reads it too (arena diff, arena plan --snapshot): uses up to 100,000, ids
    # past the agent's 16 bits
    d = subprocess.run([sys.executable, str(ROOT / "gdbplugin" / "arenascope"), "diff", str(out), str(out)],
                       capture_output=True, text=True, timeout=300)
    assert d.returncode == 0 and f"identical: 1 arena(s), {len(regions)} region(s)" in d.stdout, d.stdout + d.stderr


@pytest.mark.skipif(not VIEWER.exists() or shutil.which("Xvfb") is None, reason="viewer or Xvfb missing")
def test_over_the_region_limit_the_planner_and_the_viewer_refuse_in_the_same_words(tmp_path):
    # n + 1 + 2 + 11 = 200,001 regions even compact: one over the limit
    n = MAX_REGIONS + 1 - 1 - 2 - FRAMEWORK_TAIL
    out = tmp_path / "over.json"
    r = plan_snapshot(chain(tmp_path, n), out)
    assert r.returncode == 2 and not out.exists(), r.stderr
    sentence = r.stderr.strip().removeprefix("arenascope-plan: ")
    assert sentence.startswith(f"{out}: $.arenas[0].regions: 200001 regions in one arena, more than the 200000 "
                               "a snapshot may have"), sentence
    # The viewer given a snapshot with as many regions (a small chain's, its regions repeated;
    # compact, under the byte limit) says the same sentence.
    small = tmp_path / "small.json"
    assert plan_snapshot(chain(tmp_path, 10), small).returncode == 0
    doc = json.loads(small.read_text())
    arena = doc["arenas"][0]
    one = arena["regions"][-1]
    arena["regions"] = [dict(one, index=i) for i in range(MAX_REGIONS + 1)]
    out.write_text(json.dumps(doc, separators=(",", ":")))
    assert out.stat().st_size <= MAX_BYTES
    with xvfb() as env:
        v = view(out, tmp_path, env)
    assert v.returncode == 2
    assert sentence in v.stderr, v.stderr
