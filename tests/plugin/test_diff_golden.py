"""The diff the plugin hands the viewer's compare mode (docs/diff-schema.json): the plugin's
output for two fixture snapshots is the golden file tests/fixtures/diff_golden.json, byte for
byte as JSON; tests/viewer/diffdoc_test.cpp reads the same file and checks what the viewer makes
of it. One fixture, both sides of the contract. Regenerate after a deliberate change with:
gdbplugin/arenascope diff tests/fixtures/demo_overrun_snapshot.json
tests/fixtures/demo_overrun_changed_snapshot.json --json > tests/fixtures/diff_golden.json (from
the repository's root)."""
import json

import jsonschema

from arenascope_plugin.analyse import diff
from arenascope_plugin.present import diff as diff_text
from arenascope_plugin.present import snapshot
from conftest import ROOT

A = "tests/fixtures/demo_overrun_snapshot.json"
B = "tests/fixtures/demo_overrun_changed_snapshot.json"


def test_the_plugins_diff_of_the_two_fixtures_is_the_golden_file(monkeypatch):
    monkeypatch.chdir(ROOT)  # the file names are recorded as given
    doc_a, arenas_a = snapshot.read_for_diff(A)
    doc_b, arenas_b = snapshot.read_for_diff(B)
    got = diff_text.json_doc(diff.compare(doc_a, arenas_a, doc_b, arenas_b), A, doc_a, B, doc_b, False)
    golden = json.loads((ROOT / "tests" / "fixtures" / "diff_golden.json").read_text())
    jsonschema.validate(golden, json.loads((ROOT / "docs" / "diff-schema.json").read_text()))
    assert got == golden
    # What the fixture was made to hold (by hand: tensor 5 moved 16 B, tensor 8 grew to 32 B,
    # tensor 13's lifetime 4..5 -> 3..6, scratch 13 removed, scratch 14 added).
    regions = golden["arenas"][0]["regions"]
    assert [(c["name"], c["changes"]) for c in regions["changed"]] == [
        ("tensor 5", ["moved"]), ("tensor 8", ["grew"]), ("tensor 13", ["lifetime"])]
    assert [x["name"] for x in regions["appeared"]] == ["scratch 14"]
    assert [x["name"] for x in regions["vanished"]] == ["scratch 13"]
