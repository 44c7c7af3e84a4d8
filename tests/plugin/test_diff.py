"""`arena diff` / `arenascope diff` (analyse/diff.py, present/diff.py, cli.py diff_main) on snapshot
pairs built here by hand: the expected moved/grew/appeared/... lists are written out below, not
computed by the code under test. Every JSON output is validated against docs/diff-schema.json;
hostile files give one line and exit status 2, never a traceback."""
import copy
import json

import jsonschema
import pytest

from arenascope_plugin import cli
from arenascope_plugin.analyse import diff
from arenascope_plugin.present import diff as diff_text
from arenascope_plugin.present import snapshot, style
from conftest import ROOT

SCHEMA = json.loads((ROOT / "docs" / "diff-schema.json").read_text())
SNAPSHOT_SCHEMA = json.loads((ROOT / "docs" / "snapshot-schema.json").read_text())


@pytest.fixture(autouse=True)
def plain():
    """Plain text (other tests turn colour on)."""
    was, style.enabled = style.enabled, False
    yield
    style.enabled = was


def region(index, kind, offset, size, rid=None, life=None, name=None, flags=()):
    """A snapshot region (docs/snapshot-schema.md, Region); label as the plugin writes it."""
    label = name or (f"tensor {rid}" if kind == "tensor" else f"scratch {rid}" if kind == "scratch" and rid is not None
                     else kind)
    return {"index": index, "id": rid, "kind": kind, "offset": offset, "address": 0x20000000 + offset,
            "size_bytes": size, "first_use": life[0] if life else None, "last_use": life[1] if life else None,
            "flags": list(flags), "label": label, "name": name, "shape": None, "dtype": None}


def snap(regions, size=1024, head=256, temp=256, tail=896, used=384, peak=384, minimum=None, free=None,
         stack_peak=200, room=8448, guard=256, checks=(("plan", "PASS"),), index=0):
    """A valid version-3 snapshot with one arena (figures given by hand, not derived)."""
    checks = [{"rule": r, "verdict": v, "reason": f"{r} reason"} for r, v in checks]
    worst = "FAIL" if any(c["verdict"] == "FAIL" for c in checks) else \
        "WARN" if any(c["verdict"] == "WARN" for c in checks) else "PASS"
    return {
        "schema": "arenascope.snapshot", "version": 3,
        "source": {"elf": "fw.elf", "located_by": "symbol", "descriptor_address": 0x20000000, "abi": "1.1",
                   "addr_size": 4, "time": "2026-12-03T00:00:00+00:00"},
        "state": {"invokes": 1, "in_invoke": False, "measured": True, "measured_by": "agent", "seq": 2,
                  "layout_generation": 1},
        "arenas": [{
            "index": index, "base_addr": 0x20000000, "size_bytes": size, "alignment_bytes": 16, "head_bytes": head,
            "temp_bytes": temp, "tail_offset": tail, "tail_bytes": size - tail, "tflm_figures": False,
            "model_addr": None, "model_size_bytes": None, "used_bytes": used, "peak_bytes": peak,
            "headroom_bytes": size - peak, "headroom_pct": 0, "minimum_arena_bytes": minimum,
            "headroom_is_upper_estimate": minimum is None,
            "free_band": None if free is None else {"low_addr": 0x20000000 + temp, "high_addr": 0x20000000 + tail,
                                                    "size_bytes": tail - temp, "measured": True, "intact_bytes": free,
                                                    "touched": None, "offset": temp},
            "damage": None, "region_capacity": len(regions), "regions": copy.deepcopy(regions),
            "plan": {"scopes": 0, "live_bytes": [], "live_regions": [], "lower_bound_bytes": 0,
                     "lower_bound_scope": 0}}],
        "stack": {"low_addr": 0x20010000, "high_addr": 0x20012000, "size_bytes": 8192, "sp": None, "hwm_addr": None,
                  "peak_bytes": stack_peak, "peak_is_lower_bound": False, "source": "scan", "overflowed": False,
                  "arena_end_addr": 0x20000400, "room_bytes": room, "required_room_bytes": 300, "rule_factor": 1.5},
        "guard": None if guard is None else {"low_addr": 0x20000400, "high_addr": 0x20000500, "size_bytes": 256,
                                             "measured": True, "intact_bytes": guard, "touched": None},
        "checks": checks, "verdict": worst,
    }


def run(a, b, show_all=False):
    """(Diff, text lines, JSON) of two snapshot dicts, the JSON validated against the schema."""
    for s in (a, b):
        jsonschema.validate(s, SNAPSHOT_SCHEMA)  # the hand-built inputs are real snapshots
    d = diff.compare(a, snapshot.check_for_diff(a), b, snapshot.check_for_diff(b))
    doc = diff_text.json_doc(d, "A.json", a, "B.json", b, show_all)
    jsonschema.validate(doc, SCHEMA)
    return d, diff_text.text_lines(d, "A.json", a, "B.json", b, show_all), doc


# Two builds, written out by hand:
#   tensor 1 "conv": 100 B at +0 -> 120 B at +0            grew (+20 B)
#   tensor 2: at +100 -> at +128, 50 B                      moved
#   tensor 3: scopes 1..1 -> 1..4                           lifetime
#   scratch 0 (op 1 CONV_2D im2col): only in A              vanished
#   scratch 1: only in B                                    appeared
#   MicroAllocator / MicroAllocator (predicted), +900 36 B  unchanged (the suffix is not a name)
A_REGIONS = [region(0, "tensor", 0, 100, 1, (1, 2), "conv"), region(1, "tensor", 100, 50, 2, (2, 3)),
             region(2, "tensor", 160, 10, 3, (1, 1)), region(3, "scratch", 200, 48, 0, (2, 2),
                                                           "scratch 0 (op 1 CONV_2D im2col)"),
             region(4, "metadata", 900, 36, name="MicroAllocator")]
B_REGIONS = [region(0, "tensor", 0, 120, 1, (1, 2), "conv"), region(1, "tensor", 128, 50, 2, (2, 3)),
             region(2, "tensor", 160, 10, 3, (1, 4)), region(3, "scratch", 200, 32, 1, (3, 3)),
             region(4, "metadata", 900, 36, name="MicroAllocator (predicted)")]


def two_builds():
    a = snap(A_REGIONS, head=248, temp=248, used=376, peak=376, free=600, checks=(("plan", "PASS"),
                                                                                 ("canary", "PASS")))
    b = snap(B_REGIONS, head=232, temp=300, used=428, peak=460, free=540, stack_peak=260,
             checks=(("plan", "PASS"), ("canary", "FAIL"), ("bounds", "PASS")))
    return a, b


def test_two_builds_give_the_hand_written_lists():
    a, b = two_builds()
    d, text, doc = run(a, b)
    (ar,) = d.arenas
    assert [(c.key, c.changes) for c in ar.changed] == [("tensor 1", ["grew"]), ("tensor 2", ["moved"]),
                                                        ("tensor 3", ["lifetime"])]
    assert [(k, r.offset, r.size) for k, r in ar.appeared] == [("scratch 1", 200, 32)]
    assert [(k, r.offset, r.size) for k, r in ar.vanished] == [("scratch 0", 200, 48)]
    assert [c.key for c in ar.unchanged] == ["label MicroAllocator"] and not ar.ambiguous
    # Figures: A, B, B - A as given above.
    figs = {f["name"]: (f["a"], f["b"], f["delta"]) for f in doc["arenas"][0]["figures"]}
    assert figs["head_bytes"] == (248, 232, -16) and figs["temp_bytes"] == (248, 300, 52)
    assert figs["peak_bytes"] == (376, 460, 84) and figs["headroom_bytes"] == (648, 564, -84)
    assert figs["free_band_intact_bytes"] == (600, 540, -60) and figs["size_bytes"] == (1024, 1024, 0)
    assert figs["minimum_arena_bytes"] == (None, None, None)
    assert {f["name"]: f["delta"] for f in doc["target"]["figures"]} == \
        {"stack_peak_bytes": 60, "stack_room_bytes": 0, "guard_intact_bytes": 0}
    assert doc["checks"] == {"unchanged": 1, "changed": [{"rule": "canary", "a": "PASS", "b": "FAIL"},
                                                         {"rule": "bounds", "a": None, "b": "PASS"}]}
    assert doc["verdict"] == {"a": "PASS", "b": "FAIL", "changed": True} and doc["identical"] is False
    # The text: what changed first, exact bytes, signed deltas, offsets as +N, one line per region.
    assert text[2:6] == ["verdict: PASS -> FAIL", "checks: 2 changed, 1 unchanged",
                         "  canary:              PASS -> FAIL", "  bounds:              (none) -> PASS"]
    assert "  head:                248 B -> 232 B  -16 B" in text
    assert "  size:                1024 B (1.0 KiB) -> 1024 B (1.0 KiB)  +0 B" not in text  # unchanged: not shown
    assert "    grew           tensor 1 (conv): 100 B -> 120 B (+20 B)" in text
    assert "    moved          tensor 2: +100 -> +128" in text
    assert "    lifetime       tensor 3: scopes 1..1 -> scopes 1..4" in text
    assert "    appeared       scratch 1: +200, 32 B, scopes 3..3, scratch" in text
    assert "    vanished       scratch 0 (op 1 CONV_2D im2col): +200, 48 B, scopes 2..2, scratch" in text
    assert "  regions: 1 unchanged, 3 changed, 1 appeared, 1 vanished" in text
    assert text[-1] == "differences: 7 figure(s), 5 region(s), 2 check(s) changed; verdict PASS -> FAIL"
    assert not any("MicroAllocator" in line for line in text)
    _, all_text, all_doc = run(a, b, show_all=True)
    assert "    unchanged      MicroAllocator: +900, 36 B, whole run, metadata" in all_text
    assert [u["key"] for u in all_doc["arenas"][0]["regions"]["unchanged_list"]] == ["label MicroAllocator"]


def test_a_snapshot_against_itself_is_identical_in_one_line():
    a, _ = two_builds()
    d, text, doc = run(a, copy.deepcopy(a))
    assert d.identical and doc["identical"] and len(text) == 3
    assert text[2] == ("identical: 1 arena(s), 5 region(s), 2 check(s), verdict PASS (sources, times and addresses "
                       "are not compared)")
    assert doc["arenas"][0]["regions"] == {"unchanged": 5, "changed": [], "appeared": [], "vanished": [],
                                           "ambiguous": []}


def test_a_region_that_moved_grew_and_changed_kind_is_one_line_with_every_change():
    a = snap([region(0, "tensor", 0, 64, 7, (1, 2), "state", flags=("variable",))])
    b = snap([region(0, "persistent", 512, 96, 7, None, "state", flags=("variable",))])
    d, text, _ = run(a, b)
    assert [c.changes for c in d.arenas[0].changed] == [["moved", "grew", "lifetime", "kind"]]
    assert ("    moved, grew, lifetime, kind tensor 7 (state): +0 -> +512; 64 B -> 96 B (+32 B); scopes 1..2 -> "
            "whole run; tensor -> persistent") in text


def test_duplicate_names_are_ambiguous_not_guessed():
    # Two "OpDataConv" in A (56 B each), three in B: no id or name tells them apart.
    a = snap([region(0, "persistent", 500, 56, name="OpDataConv"), region(1, "persistent", 560, 56, name="OpDataConv")])
    b = snap([region(0, "persistent", 500, 56, name="OpDataConv"), region(1, "persistent", 560, 56, name="OpDataConv"),
              region(2, "persistent", 620, 56, name="OpDataConv")])
    d, text, doc = run(a, b)
    (g,) = d.arenas[0].ambiguous
    assert (g.key, len(g.a), len(g.b)) == ("label OpDataConv", 2, 3)
    assert not d.arenas[0].appeared and not d.arenas[0].vanished and not d.identical
    amb = doc["arenas"][0]["regions"]["ambiguous"][0]
    assert (amb["a_count"], amb["b_count"], amb["a_bytes"], amb["b_bytes"]) == (2, 3, 112, 168)
    assert any(line.startswith("    ambiguous      OpDataConv: 2 region(s), 112 B in A; 3, 168 B in B: neither an id "
                               "nor a name tells them apart") for line in text)
    # The same duplicates on both sides, in another table order: the same regions, unchanged.
    d, text, _ = run(a, snap(list(reversed([dict(r, index=1 - r["index"]) for r in a["arenas"][0]["regions"]]))))
    assert d.identical and d.arenas[0].ambiguous_same == 2


def test_unnamed_tail_objects_match_a_named_prediction_by_place():
    # A: a target without the planner tool (its tail objects are all "metadata"); B: the prediction.
    a = snap([region(0, "metadata", 900, 36, flags=("immutable",)), region(1, "metadata", 940, 8),
              region(2, "metadata", 960, 8)])
    b = snap([region(0, "metadata", 900, 36, name="MicroAllocator"), region(1, "metadata", 944, 8, name="X"),
              region(2, "metadata", 970, 8)])
    d, text, _ = run(a, b)
    ar = d.arenas[0]
    # +900 36 B: one region on each side, one unnamed: the same object, its flag changed.
    assert [(c.key, c.changes) for c in ar.changed] == [("label MicroAllocator", ["flags"])]
    # A flag-only change is summarised (a target's "immutable" against a prediction's nothing).
    assert "    flags only     1 region(s) differ only in their flags (immutable -> -): `--all` lists them" in text
    # Left: A's two unnamed 8 B objects, B's unnamed one at +970: ambiguous; B's "X" appeared.
    assert [(g.key, [r.offset for r in g.a], [r.offset for r in g.b]) for g in ar.ambiguous] == \
        [("label metadata", [940, 960], [970])]
    assert [(k, r.offset) for k, r in ar.appeared] == [("label X", 944)] and not ar.vanished


def test_arenas_only_on_one_side():
    a, b = snap([], index=0), snap([], index=1)
    d, text, doc = run(a, b)
    assert [(x.index, x.side) for x in d.arenas] == [(0, "a"), (1, "b")]
    assert "arena 0: only in A (vanished)" in text and "arena 1: only in B (appeared)" in text
    assert doc["arenas"][0]["regions"] is None and not d.identical


# --- hostile input: one line, status 2, never a traceback ----------------------------------------

def cli_run(capsys, *argv):
    rc = cli.main(["diff", *map(str, argv)])
    out = capsys.readouterr()
    assert "Traceback" not in out.err + out.out
    return rc, out.out, out.err


def write(tmp_path, name, doc):
    path = tmp_path / name
    path.write_text(json.dumps(doc) if not isinstance(doc, str) else doc)
    return path


def test_the_standalone_exit_status_is_diffs(tmp_path, capsys):
    a, b = two_builds()
    pa, pb = write(tmp_path, "a.json", a), write(tmp_path, "b.json", b)
    assert cli_run(capsys, pa, pa)[0] == 0
    rc, out, _ = cli_run(capsys, pa, pb)
    assert rc == 1 and out.splitlines()[-1].startswith("differences: 7 figure(s)")
    rc, out, _ = cli_run(capsys, pa, pb, "--json")
    assert rc == 1
    jsonschema.validate(json.loads(out), SCHEMA)


def _missing_stack(doc):
    del doc["stack"]


def _string_figure(doc):
    doc["arenas"][0]["used_bytes"] = "12"


def _bad_verdict(doc):
    doc["checks"][0]["verdict"] = "OK"


def _band_string(doc):
    doc["arenas"][0]["free_band"] = "intact"


def _region_past_end(doc):
    doc["arenas"][0]["regions"][0]["offset"] = 1000


def _same_index(doc):
    doc["arenas"].append(copy.deepcopy(doc["arenas"][0]))


@pytest.mark.parametrize("spoil, message", [
    (lambda d: d.update(version=1), "snapshot version 1: this plugin reads versions 2 and 3"),
    (lambda d: d.update(version=4), "snapshot version 4: this plugin reads versions 2 and 3"),
    (lambda d: d.update(schema="other"), "not an arenascope snapshot"),
    (_missing_stack, "$.stack: missing"),
    (_string_figure, "$.arenas[0].used_bytes: expected an integer or null, found '12'"),
    (_bad_verdict, "$.checks[0]: expected {rule, verdict PASS/WARN/FAIL}"),
    (_band_string, "$.arenas[0].free_band: expected an object or null"),
    (_region_past_end, "$.arenas[0].regions[0]: +1000..+1100 runs past the arena's 1024 B"),
    (_same_index, "$.arenas: two arenas have the same index"),
])
def test_a_snapshot_missing_or_spoiling_a_field_is_one_line_naming_it(tmp_path, capsys, spoil, message):
    a, _ = two_builds()
    good = write(tmp_path, "good.json", a)
    spoil(a)
    bad = write(tmp_path, "bad.json", a)
    rc, out, err = cli_run(capsys, good, bad)
    assert rc == 2 and out == "" and len(err.splitlines()) == 1, err
    assert err.startswith(f"arenascope diff: {bad}: ") and message in err, err
    assert "give a snapshot `arena snapshot FILE` or `arenascope-plan --snapshot FILE` wrote" in err


def test_missing_not_json_a_directory_and_a_huge_file(tmp_path, capsys):
    a, _ = two_builds()
    good = write(tmp_path, "good.json", a)
    cases = [(tmp_path / "absent.json", "cannot read the snapshot"),
             (write(tmp_path, "t.json", "{not json"), "is not a snapshot's JSON"),
             (tmp_path, "is not a regular file"),
             (write(tmp_path, "list.json", "[1, 2]"), "not an arenascope snapshot")]
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as f:
        f.truncate(snapshot.MAX_SNAPSHOT_BYTES + 10)
    cases.append((huge, "is larger than 64 MiB"))
    for path, message in cases:
        rc, _, err = cli_run(capsys, good, path)
        assert rc == 2 and message in err and str(path) in err and len(err.splitlines()) == 1, err


def test_thousands_of_regions_are_matched_one_by_one(tmp_path, capsys):
    n = 5000
    a = snap([region(i, "tensor", 8 * i, 8, i, (1, 2)) for i in range(n)], size=8 * n + 1024, head=8 * n,
             temp=8 * n, tail=8 * n + 1024)
    b = copy.deepcopy(a)
    for r in b["arenas"][0]["regions"][::10]:  # every tenth tensor lives one scope longer
        r["last_use"] = 3
    d, text, _ = run(a, b)
    assert len(d.arenas[0].changed) == n // 10 and len(d.arenas[0].unchanged) == n - n // 10
    assert text[-1] == f"differences: 0 figure(s), {n // 10} region(s), 0 check(s) changed; verdict PASS in both"


# --- properties ----------------------------------------------------------------------------------

def test_properties_of_any_pair():
    """diff(A, A) is identical; diff(A, B) and diff(B, A) mirror each other (appeared <-> vanished,
    grew <-> shrank); every region of each side is accounted for exactly once."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    names = st.sampled_from([None, "conv", "MicroAllocator", "MicroAllocator (predicted)", "OpDataConv"])
    one = st.tuples(st.sampled_from(["tensor", "scratch", "persistent", "metadata"]), st.integers(0, 31),
                    st.integers(0, 15), st.one_of(st.none(), st.integers(0, 6)), st.integers(0, 3), names,
                    st.booleans())

    def build(rows):
        regions = []
        for i, (kind, off, size, rid, life, name, imm) in enumerate(rows):
            rid = rid if kind in ("tensor", "scratch") or (kind == "persistent" and rid is not None and life) else None
            planned = kind in ("tensor", "scratch")
            regions.append(region(i, kind, off * 16, size * 4, rid, (life, life + 1) if planned else None, name,
                                  ("immutable",) if imm else ()))
        return snap(regions)

    def accounted(ar, side):
        matched = len(ar.changed) + len(ar.unchanged) + ar.ambiguous_same
        only = len(ar.vanished if side == "a" else ar.appeared)
        return matched + only + sum(len(g.a if side == "a" else g.b) for g in ar.ambiguous)

    swap = {"grew": "shrank", "shrank": "grew"}

    @settings(max_examples=300, deadline=None)
    @given(st.lists(one, max_size=12), st.lists(one, max_size=12))
    def check(rows_a, rows_b):
        a, b = build(rows_a), build(rows_b)
        same = diff.compare(a, snapshot.check_for_diff(a), copy.deepcopy(a), snapshot.check_for_diff(a))
        assert same.identical
        ab = diff.compare(a, snapshot.check_for_diff(a), b, snapshot.check_for_diff(b))
        ba = diff.compare(b, snapshot.check_for_diff(b), a, snapshot.check_for_diff(a))
        (x,), (y,) = ab.arenas, ba.arenas
        assert sorted((k, r.index) for k, r in x.appeared) == sorted((k, r.index) for k, r in y.vanished)
        assert sorted((k, r.index) for k, r in x.vanished) == sorted((k, r.index) for k, r in y.appeared)
        assert sorted((c.a.index, c.b.index, tuple(c.changes)) for c in x.changed) == \
            sorted((c.b.index, c.a.index, tuple(swap.get(k, k) for k in c.changes)) for c in y.changed)
        assert len(x.unchanged) + x.ambiguous_same == len(y.unchanged) + y.ambiguous_same
        assert sorted(g.key for g in x.ambiguous) == sorted(g.key for g in y.ambiguous)
        assert accounted(x, "a") == len(rows_a) and accounted(x, "b") == len(rows_b)
        assert ab.identical == ba.identical
        if ab.identical:
            assert diff_text.summary(ab).startswith("identical: ")
        jsonschema.validate(diff_text.json_doc(ab, "a", a, "b", b, True), SCHEMA)

    check()


def test_a_fault_and_damage_are_changes_and_different_models_are_named():
    """Issue 33: a healthy stop against the fault said "72 unchanged" and nothing of the fault; two
    models were compared without a word."""
    a = snap([region(0, "tensor", 0, 64, rid=0, name="input")])
    b = snap([region(0, "tensor", 0, 64, rid=0, name="input")])
    b["fault"] = {"exception": "BusFault", "source": "core registers", "arch": "cortex-m",
                  "registers": [{"name": "CFSR", "value": 0x8200, "meaning": ""},
                                {"name": "BFAR", "value": 0x5A5A5A58, "meaning": ""}],
                  "fault_address": {"register": "BFAR", "value": 0x5A5A5A58}, "bits": [], "frame": None,
                  "pc_where": None,
                  "lr_where": None, "causes": [], "notes": [], "stale": False, "damaged_regions": [0],
                  "verdicts": [{"kind": "stack-into-arena", "headline": "VERDICT: x", "evidence": [], "smashed": []}]}
    agentless = json.loads(json.dumps(b))
    agentless["fault"]["damaged_regions"] = []
    agentless["fault"]["verdicts"][0]["smashed"] = [{"name": "MicroAllocator", "addr": 0x20000100, "size": 36,
                                                     "why": "its vtable pointer is 0x5a5a5a5a"}]
    d, text, doc = run(a, b)
    assert not d.identical and d.fault_changed
    assert d.fault_a is None and d.fault_b == {"exception": "BusFault", "stale": False,
                                               "verdicts": ["stack-into-arena"], "damaged_regions": 1,
                                               "overwritten": []}
    assert "fault: none -> BusFault, verdicts stack-into-arena, 1 region(s) overwritten" in text
    assert ", the fault changed;" in text[-1], text[-1]
    assert doc["fault"] == {"a": None, "b": d.fault_b, "changed": True} and doc["models_differ"] is None
    # Agentless, the damage is the objects the verdict names (no checksums).
    _d, text3, _doc = run(a, agentless)
    assert "fault: none -> BusFault, verdicts stack-into-arena, overwritten: MicroAllocator" in text3, text3
    # Two models: tensors of the same index named differently on both sides.
    c = snap([region(0, "tensor", 0, 64, rid=0, name="conv0/relu")])
    d2, text2, doc2 = run(a, c)
    assert d2.models == "1 of the 1 tensors both name differ (tensor 0: 'input' in A, 'conv0/relu' in B)"
    assert text2[2].startswith("different models: 1 of the 1 tensors both name differ"), text2
    assert doc2["models_differ"] == d2.models and "different models" in doc2["summary"]
