"""The plugin's side of `arena plan --model`: mapping the planner tool's JSON onto regions, and
its errors. The JSON here is written by hand (docs/planner-schema.json, which it follows: checked
below); the real tool's output is checked under GDB in tests/integration/test_planner_models.py."""
import json
import pathlib
import stat

import pytest

from arenascope_plugin.acquire import planner
from arenascope_plugin.analyse import figures
from arenascope_plugin.decode import plan
from arenascope_plugin.present import budget, render, snapshot

ROOT = pathlib.Path(__file__).resolve().parents[2]
PLANNER_SCHEMA = json.loads((ROOT / "docs" / "planner-schema.json").read_text())
DOC = {
    "schema": "arenascope-plan/2", "model": "m.tflite", "file_bytes": 1000, "target": "cortex-m",
    "subgraphs": [{"index": 0, "name": "", "inputs": [0], "outputs": [2], "operators": [],
                   "tensors": [{"index": 0, "name": "in", "shape": [1, 100], "type": "INT8", "bytes": 100,
                                "placement": "arena"},
                               {"index": 1, "name": "w", "shape": [4], "type": "INT8", "bytes": 4,
                                "placement": "flash"},
                               {"index": 2, "name": "out", "shape": [1, 10], "type": "INT8", "bytes": 10,
                                "placement": "arena"}]}],
    # in: 112 B at 0, scopes 0..1; out: 16 B at 112, scopes 1..1; scratch 64 B at 128, scope 1.
    "buffers": [{"id": 0, "subgraph": 0, "tensor": 0, "scratch": -1, "name": "in", "bytes": 100, "size": 112,
                 "first": 0, "last": 1, "offline": False, "offset": 0, "best_offset": 0},
                {"id": 1, "subgraph": 0, "tensor": 2, "scratch": -1, "name": "out", "bytes": 10, "size": 16,
                 "first": 1, "last": 1, "offline": False, "offset": 112, "best_offset": 112},
                {"id": 2, "subgraph": 0, "tensor": -1, "scratch": 0, "name": "scratch 0 (op 0 SVDF scratch)",
                 "bytes": 64, "size": 64, "first": 1, "last": 1, "offline": False, "offset": 128, "best_offset": 128}],
    "plans": {"tflm-greedy": {"head_bytes": 192}, "best": {"planner": "best-of-orderings", "head_bytes": 192}},
    "lower_bound": {"bytes": 192, "scope": 1}, "fragmentation_pct": 0.0, "approximate": False,
    "unmodelled_scratch": [], "tflm_rejects": [], "warnings": [],
    # The tail at the recommended 1184 B: the arena's allocator on top (an abridged tail).
    "tail": {"parts": [{"what": "allocator objects", "count": 1, "bytes": 36, "source": "x.cc"}],
             "requested_bytes": 36, "bytes": 48,
             "regions": [{"offset": 1148, "size": 36, "kind": "metadata", "tensor": -1, "subgraph": -1,
                          "operator": -1, "phase": "", "category": "allocator objects", "role": "arena-allocator",
                          "what": "SingleArenaBufferAllocator"}]},
    "arena": {"minimum_bytes": 1068, "exact": True, "arena_used_bytes": 240, "margin_pct": 10,
              "recommended_bytes": 1184, "planner_in_arena": True, "unmodelled_kernels": [],
              "set_by": {"phase": "AllocateTensors: memory planning (FinishModelAllocation)",
                         "request": "planner arrays", "source": "x.cc"}},
    "steps": [{"kind": "persistent", "phase": "MicroInterpreter constructor (MicroAllocator::Create)", "bytes": 36,
               "align": 4, "count": 1, "fatal": True, "subgraph": 0, "operator": -1, "tensor": -1,
               "category": "allocator objects", "role": "arena-allocator", "what": "SingleArenaBufferAllocator",
               "source": "x.cc"}],
}
NO_ARENA = {k: v for k, v in DOC.items() if k != "arena"}  # an older tool's: no prediction of the arena


def test_the_hand_written_plan_follows_the_schema():
    import jsonschema
    jsonschema.validate(DOC, PLANNER_SCHEMA)
    assert PLANNER_SCHEMA["properties"]["schema"]["const"] == planner.SCHEMA


def test_regions_follow_the_tools_buffers():
    a = plan.arena_from_plan(DOC)
    assert [(r.offset, r.size, r.kind, r.first_use, r.last_use) for r in a.regions] == [
        (0, 112, "tensor", 0, 1), (112, 16, "tensor", 1, 1), (128, 64, "scratch", 1, 1), (1148, 36, "metadata", -1, -1)]
    assert a.regions[0].shape == [1, 100] and a.regions[0].dtype == "INT8" and a.regions[2].shape is None
    assert [(r.id, r.flag_names, r.name) for r in a.regions] == [
        (0, ["input"], "in"), (2, ["output"], "out"), (0, [], "scratch 0 (op 0 SVDF scratch)"),
        (0xFFFF, [], "SingleArenaBufferAllocator")]
    # The whole predicted arena, as arenascope-plan --snapshot writes it: the recommended size.
    assert (a.head, a.temp, a.tail, a.size) == (192, 192, 1184 - 48, 1184) and not a.canary.filled
    p = figures.plan(a)
    assert p.live_bytes == [112, 192] and p.lower_bound == 192 and p.lower_bound_scope == 1
    chart = "\n".join(render.plan_lines(a, p, 16))
    assert "   192 B" in chart and "0=in, 1=out, *=scratch" in chart
    # 16 cells of 12 B. Scope 1: 'in' 0..112 (cells 0-8, and part of 9), 'out' 112..128 (cells 9
    # and 10), scratch 128..192 (part of 10, then 11-15). A cell shared side by side shows the
    # smallest region, so the 16-byte 'out' stays visible in both of its cells.
    row = [line for line in chart.splitlines() if line.split()[:2] == ["0", "1"]][0]
    assert row.split()[4] == "0" * 9 + "11" + "*" * 5, row


def test_arena_prediction_in_words():
    doc = dict(DOC, target="cortex-m", arena={
        "minimum_bytes": 1068, "exact": True, "arena_used_bytes": 676, "margin_pct": 10, "recommended_bytes": 1184,
        "set_by": {"phase": "AllocateTensors: memory planning", "request": "planner arrays", "source": "x.cc"},
        "unmodelled_kernels": []})
    assert budget.arena_lines(doc) == [
        "arena (cortex-m, reference kernels): arena_used_bytes() 676 B after AllocateTensors; minimum arena 1068 B "
        "(set by AllocateTensors: memory planning: planner arrays); recommended 1184 B (minimum + 10 %)"]
    doc["arena"] = dict(doc["arena"], exact=False, unmodelled_kernels=["subgraph 0 operator 2 (RELU)"])
    assert budget.arena_lines(doc)[1] == ("the minimum and arena_used_bytes() are FLOORS, not predictions: "
                                          "not modelled: subgraph 0 operator 2 (RELU)")
    assert budget.arena_lines(NO_ARENA) == []
    with pytest.raises(planner.PlannerError, match="does not follow"):
        budget.arena_lines(dict(doc, arena={"exact": True}))


def test_model_text_is_one_terminal_line():
    """Names come from the model and may hold newlines or escape codes (a custom operator's name):
    the chart's key and the prediction's words show them as '?', as the tool's own table does."""
    doc = json.loads(json.dumps(DOC))
    doc["buffers"][2]["name"] = "op 0 EVIL\nOP\x1b[31m scratch"
    a = plan.arena_from_plan(doc)
    assert a.regions[2].name == "op 0 EVIL?OP?[31m scratch"
    doc["target"] = "cortex-m"
    doc["arena"] = {"minimum_bytes": 1068, "exact": False, "arena_used_bytes": 676, "margin_pct": 10,
                    "recommended_bytes": 1184, "set_by": {"phase": "p", "request": "op 1 (A\rB)", "source": "x"},
                    "unmodelled_kernels": ["subgraph 0 operator 1 (A\nB)"]}
    assert budget.arena_lines(doc) == [
        "arena (cortex-m, reference kernels): arena_used_bytes() 676 B after AllocateTensors; minimum arena 1068 B "
        "(set by p: op 1 (A?B)); recommended 1184 B (minimum + 10 %)",
        "the minimum and arena_used_bytes() are FLOORS, not predictions: not modelled: subgraph 0 operator 1 (A?B)"]


def fake_tool(tmp_path, body):
    tool = tmp_path / "fake-plan"
    tool.write_text("#!/bin/sh\n" + body + "\n")
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    return str(tool)


def test_planner_errors_are_clear(tmp_path):
    with pytest.raises(planner.PlannerError, match=r"not found \(`pip install` does not bring it\): build it"):
        planner.run_planner(None, "m.tflite")
    with pytest.raises(planner.PlannerError, match="m.tflite: no such model file"):
        planner.run_planner(fake_tool(tmp_path, 'echo "arenascope-plan: m.tflite: no such model file" >&2; exit 1'),
                          "m.tflite")
    with pytest.raises(planner.PlannerError, match="is not arenascope-plan.*planner-path auto"):
        planner.run_planner(fake_tool(tmp_path, "echo not json; exit 0"), "m.tflite")
    with pytest.raises(planner.PlannerError, match="is not arenascope-plan"):
        planner.run_planner(fake_tool(tmp_path, "echo '[1, 2]'; echo 'unrecognized option' >&2; exit 1"), "m.tflite")
    # How it ended, in words, with what it said (a new user's trial: "exit status -11", its stderr dropped).
    with pytest.raises(planner.PlannerError) as e:
        planner.run_planner(fake_tool(tmp_path, "echo 'tensor 3 is odd' >&2; kill -SEGV $$"), "m.tflite")
    assert str(e.value).endswith("crashed (SIGSEGV) on m.tflite: tensor 3 is odd: a bug of arenascope-plan (run it "
                                 "by hand on the model to see it, and report it)"), e.value
    with pytest.raises(planner.PlannerError, match=r"printed no \"arenascope-plan/2\" plan and exited with status 3: "
                                                   r"busy\)"):
        planner.run_planner(fake_tool(tmp_path, "echo busy >&2; exit 3"), "m.tflite")
    # A model name that is not UTF-8 nor printable, in the tool's error: one clean line.
    with pytest.raises(planner.PlannerError) as e:
        tool = fake_tool(tmp_path, r"printf 'arenascope-plan: m.tflite: tensor \377\033x bad\nsecond\n' >&2; exit 1")
        planner.run_planner(tool, "m.tflite")
    assert str(e.value) == "m.tflite: tensor \ufffd?x bad"
    with pytest.raises(planner.PlannerError, match="does not follow"):
        plan.arena_from_plan({"schema": planner.SCHEMA, "buffers": [{}]})
    rejected = fake_tool(tmp_path,
                         f"echo '{json.dumps(DOC)}'; echo 'arenascope-plan: m.tflite: TFLM would reject' >&2; exit 1")
    doc, error = planner.run_planner(rejected, "m.tflite")
    assert doc["schema"] == planner.SCHEMA and error == "m.tflite: TFLM would reject"


FIXTURE = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "demo_overrun_snapshot.json"


def test_a_snapshots_plan_is_charted_from_its_regions():
    """`arena plan --snapshot`: the regions read back give the plan the snapshot itself carries
    (its `plan` section was computed when it was written)."""
    doc = json.loads(FIXTURE.read_text())
    arenas = snapshot.arenas_from_snapshot(doc)
    saved = doc["arenas"][0]
    a = arenas[0]
    assert (a.size, a.head, a.tail, len(a.regions)) == (saved["size_bytes"], saved["head_bytes"],
                                                         saved["tail_offset"], len(saved["regions"]))
    p = figures.plan(a)
    assert p.live_bytes == saved["plan"]["live_bytes"] and p.lower_bound == saved["plan"]["lower_bound_bytes"]
    variable = [r for r in saved["regions"] if "variable" in r["flags"]]
    assert variable and all(a.regions[r["index"]].flags & 0x01 for r in variable)


@pytest.mark.parametrize("mutate,message", [
    (lambda d: d.update(schema="x"), "not an arenascope snapshot"),
    (lambda d: d.update(version=1), "snapshot version 1"),
    (lambda d: d.update(source="x"), r"\$.source: expected an object"),
    (lambda d: d["arenas"][0]["regions"][0].pop("size_bytes"), r"regions\[0\].size_bytes: expected an integer"),
    (lambda d: d["arenas"][0]["regions"][1].update(index=7), "must be in index order"),
    (lambda d: d["arenas"][0].update(head_bytes="lots"), r"\$.arenas\[0\].head_bytes: expected an integer"),
    (lambda d: d["arenas"][0]["regions"][0].update(last_use=10 ** 9), "outside 0..200000"),
    (lambda d: d["arenas"][0]["regions"][0].update(first_use=5, last_use=2), "are not a lifetime"),
    (lambda d: d["arenas"][0]["regions"][0].update(flags=3), "flags: expected an array of strings"),
    (lambda d: d["arenas"][0]["regions"][0].update(size_bytes=-1), "outside 0.."),
    (lambda d: d["arenas"][0]["regions"][0].update(offset=d["arenas"][0]["size_bytes"]), "runs past the arena"),
    (lambda d: d["arenas"][0].update(index=True), "expected an integer"),
])
def test_bad_snapshots_are_refused_clearly(mutate, message):
    doc = json.loads(FIXTURE.read_text())
    mutate(doc)
    with pytest.raises(snapshot.SnapshotError, match=message):
        snapshot.arenas_from_snapshot(doc)


@pytest.mark.parametrize("text,message", [
    ('{"a": Infinity}', "Infinity is not a number JSON allows"),
    ("[" * 100000 + "]" * 100000, "RecursionError"),
    ("\xff\xfe", "UnicodeDecodeError"),
])
def test_unreadable_snapshot_files_are_refused_clearly(tmp_path, text, message):
    f = tmp_path / "s.json"
    f.write_bytes(text.encode("latin-1"))
    with pytest.raises(snapshot.SnapshotError, match=message):
        snapshot.load_snapshot_file(str(f))
    with pytest.raises(snapshot.SnapshotError, match="cannot read the snapshot"):
        snapshot.load_snapshot_file(str(tmp_path / "missing.json"))


def _with_best(best_head, gap=None, offline=False, **extra):
    doc = json.loads(json.dumps(DOC))
    doc["plans"]["best"] = {"planner": "search", "head_bytes": best_head, **({"gap_bytes": gap} if gap is not None
                                                                            else {})}
    for b in doc["buffers"]:
        b["offline"] = offline
    doc.update(extra)
    return doc


def test_the_saving_a_better_plan_offers():
    doc = _with_best(160, gap=0)
    a = plan.arena_from_plan(doc)
    lines = budget.saving_lines(a, doc, "fw/model.tflite")
    assert lines == ["  this model's head can be 32 B smaller: TFLM's greedy plan takes 192 B, the best plan found "
                     "160 B (the lower bound): write it into the model with `arenascope-plan --write-offline-plan "
                     "OUT.tflite fw/model.tflite` and build the firmware with OUT.tflite"]
    doc["plans"]["best"]["minimum_arena_bytes"] = doc["arena"]["minimum_bytes"] - 32
    assert f"; the minimum arena {doc['arena']['minimum_bytes']} -> {doc['arena']['minimum_bytes'] - 32} B: write" \
        in budget.saving_lines(a, doc)[0]
    assert "(16 B above the lower bound)" in budget.saving_lines(a, _with_best(160, gap=16))[0]
    assert "MODEL.tflite" in budget.saving_lines(a, doc)[0]  # no model file known: a placeholder


def test_a_head_saving_that_leaves_the_arena_says_so():
    doc = _with_best(160, gap=0)
    doc["plans"]["best"]["minimum_arena_bytes"] = doc["arena"]["minimum_bytes"]
    line = budget.saving_lines(plan.arena_from_plan(doc), doc)[0]
    assert f"but the minimum arena stays {doc['arena']['minimum_bytes']} B (set by " in line
    assert "no RAM to gain" in line and "--write-offline-plan" not in line


def test_no_saving_no_line():
    a = plan.arena_from_plan(DOC)
    assert budget.saving_lines(a, DOC) == []
    assert budget.saving_lines(a, None) == []
    # Unmodelled scratch: the best plan is not usable as an offline plan, so it is not offered.
    assert budget.saving_lines(a, _with_best(160, approximate=True)) == []


def test_offline_regions_are_counted():
    doc = _with_best(192, offline=True)
    a = plan.arena_from_plan(doc)
    assert budget.saving_lines(a, doc) == ["  3 region(s) placed by the model's offline plan (its "
                                           "OfflineMemoryAllocation metadata; flagged \"offline\" in `arena "
                                           "regions` and the map)"]
    # (The map's line is checked under GDB: tests/integration/test_offline_plan_gdb.py.)


def test_a_malformed_plan_is_an_error_not_a_crash():
    a = plan.arena_from_plan(DOC)
    for broken in ({"plans": {}}, {"plans": {"tflm-greedy": {"head_bytes": 1}, "best": "x"}}, {"plans": None}):
        with pytest.raises(planner.PlannerError, match="does not follow"):
            budget.saving_lines(a, broken)


def test_a_viewer_that_writes_no_report_or_crashes_is_said(tmp_path):
    """A report the viewer did not write was said written (a new user's trial); a crash was "exit
    status -11". An old report is kept when the new one fails."""
    from arenascope_plugin.present import htmlreport
    fixture = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "demo_overrun_snapshot.json"
    snap = json.loads(fixture.read_text())
    out = tmp_path / "r.html"
    out.write_text("the old report")
    silent = fake_tool(tmp_path, "echo garbage; exit 0")
    with pytest.raises(htmlreport.ReportError, match=r"exited with status 0 but wrote no .*r\.html: is it "
                                                     r"arenascope-viewer\?"):
        htmlreport.write_report(snap, str(out), viewer=silent)
    crashing = fake_tool(tmp_path, "echo 'drawing the map' >&2; kill -SEGV $$")
    with pytest.raises(htmlreport.ReportError, match=r"crashed \(SIGSEGV\) while drawing the report \(drawing the "
                                                     r"map\): a bug of the viewer"):
        htmlreport.write_report(snap, str(out), viewer=crashing)
    assert out.read_text() == "the old report"
    writes = fake_tool(tmp_path, 'while [ "$1" != --report ]; do shift; done; echo "<html>new</html>" > "$2"')
    assert htmlreport.write_report(snap, str(out), viewer=writes).startswith(f"wrote {out} (1 arena(s)")
    assert out.read_text() == "<html>new</html>\n"
