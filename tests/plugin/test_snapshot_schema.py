"""Every snapshot the tests keep or make follows docs/snapshot-schema.json: the fixtures the viewer
and plugin tests read, the snapshots the plugin's unit layer builds (a target's, and a model's
prediction built from the planner's JSON), and `arenascope-plan --snapshot`'s for every model the
tests use (the project's DS-CNN from the build, ../shared/models when present; skipped when the
planner is not built). The integration tests validate the snapshots of real targets."""
import json

import jsonschema
import pytest

from arenascope_plugin.acquire.reader import ImageReader
from arenascope_plugin.analyse import figures
from arenascope_plugin.decode.session import DescriptorSession
from arenascope_plugin.present import snapshot
from conftest import ARENA_ADDR, DESC_ADDR, ROOT, TABLE_ADDR, demo_like
from prediction import DSCNN, NOT_BUILT, PLANNER, SHARED_MODELS, planner_snapshot, plugin_snapshot_of_plan
from test_model_plan import DOC

FIXTURES = ROOT / "tests" / "fixtures"
SCHEMA = json.loads((ROOT / "docs" / "snapshot-schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
# The fixtures that are not snapshots: golden definitions shared by the planner's and plugin's tests.
GOLDEN = {"plan_definitions_golden.json", "shared_definitions_golden.json"}
# The diff the plugin hands the viewer (docs/diff-schema.json; tests/plugin/test_diff_golden.py).
DIFF_GOLDEN = {"diff_golden.json"}


def valid(snap):
    errors = [f"{e.json_path}: {e.message}" for e in VALIDATOR.iter_errors(snap)]
    assert not errors, errors[:5]


def test_the_schema_is_a_schema():
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.json")))
def test_every_fixture_is_a_valid_snapshot_or_a_golden_file(name):
    doc = json.loads((FIXTURES / name).read_text())
    if name in GOLDEN:
        assert "schema" not in doc
        return
    if name in DIFF_GOLDEN:
        assert doc["schema"] == "arenascope.diff"
        return
    assert doc["schema"] == snapshot.SCHEMA and doc["version"] == snapshot.VERSION
    valid(doc)
    assert snapshot.arenas_from_snapshot(doc) is not None  # and the plugin reads it back


def target_snapshot(addr_size, **over):
    desc, table = demo_like(addr_size, **over)
    d = DescriptorSession(ImageReader([(DESC_ADDR, desc), (TABLE_ADDR, table)]), DESC_ADDR).read()
    figs = {0: figures.arena_figures(d.arenas[0])}
    s = figures.stack_figures(d)
    return snapshot.build(d, figs, s, figures.checks(d, s, figs), {"elf": "fw.elf", "located_by": "symbol"})


@pytest.mark.parametrize("addr_size", [4, 8])
def test_the_plugins_snapshots_are_valid(addr_size):
    valid(target_snapshot(addr_size))
    damaged = target_snapshot(addr_size, arena={"canary": {"low_addr": ARENA_ADDR + 288, "high_addr": ARENA_ADDR + 3072,
                                                           "touched_lo": 100, "touched_hi": 140}})
    valid(damaged)
    assert damaged["arenas"][0]["damage"] == {"offset": 388, "size_bytes": 40}


def test_the_plugins_snapshot_of_a_prediction_is_valid():
    valid(plugin_snapshot_of_plan(DOC))


VARIANTS = [(), ("--target", "host"), ("--adapter",), ("--margin", "0"), ("--margin", "100")]


@pytest.mark.skipif(not PLANNER.exists() or not DSCNN.exists(), reason=NOT_BUILT)
@pytest.mark.parametrize("args", VARIANTS)
def test_the_planners_snapshot_of_the_dscnn_is_valid(tmp_path, args):
    valid(planner_snapshot(tmp_path, DSCNN, *args))


@pytest.mark.skipif(not PLANNER.exists(), reason=NOT_BUILT)
@pytest.mark.skipif(not SHARED_MODELS, reason="../shared/models absent (a clone on its own)")
@pytest.mark.parametrize("model_path", SHARED_MODELS, ids=[m.stem for m in SHARED_MODELS])
def test_the_planners_snapshot_of_every_shared_model_is_valid(tmp_path, model_path):
    for args in VARIANTS[:2]:
        valid(planner_snapshot(tmp_path, model_path, *args))


def test_a_snapshot_that_breaks_its_schema_is_not_written(tmp_path):
    """The test suite sets ARENASCOPE_VALIDATE_SNAPSHOTS (conftest.py): a write checks the schema
    first. A region of a kind the schema does not list (what a region table's kind 99 made before
    the table was named corrupt) is refused by path, and the file before it stays."""
    snap = target_snapshot(4)
    assert snapshot.schema_errors(snap) == []
    snap["arenas"][0]["regions"][0]["kind"] = "kind99"
    out = tmp_path / "s.json"
    out.write_text("before")
    with pytest.raises(snapshot.SnapshotError) as err:
        snapshot.write_snapshot_file(snap, out)
    said = str(err.value)
    assert "$.arenas[0].regions[0].kind: 'kind99' is not one of" in said and "nothing written" in said
    assert out.read_text() == "before" and [p.name for p in tmp_path.iterdir()] == ["s.json"]
