"""The definitions the plugin shares with the planner, each defined once per language and checked
here against the one golden fixture (tests/fixtures/shared_definitions_golden.json; the planner
checks the same file in tests/planner/planner_test.cpp, SharedDefinitions) or against the
planner JSON's schema (docs/planner-schema.json: its schema string and its tail roles)."""
import json
import pathlib
import re

from arenascope_plugin.acquire import planner
from arenascope_plugin.acquire.reader import ImageReader
from arenascope_plugin.analyse import figures
from arenascope_plugin.decode import plan, tflmvalue
from arenascope_plugin.decode.descriptor import Region
from arenascope_plugin.decode.session import DescriptorSession
from arenascope_plugin.present import render, snapshot
from conftest import DESC_ADDR, TABLE_ADDR, demo_like

ROOT = pathlib.Path(__file__).resolve().parents[2]
GOLDEN = json.loads((ROOT / "tests" / "fixtures" / "shared_definitions_golden.json").read_text())
PLANNER_SCHEMA = json.loads((ROOT / "docs" / "planner-schema.json").read_text())


def stack(peak, room):
    return figures.StackFigures(low=0x1000, high=0x1000 + 4 * peak + 64, sp=None,
                                 hwm=0x1000 + 4 * peak + 64 - peak, source="agent", painted=True,
                                 arena_end=0x1000 + 4 * peak + 64 - room)


def test_the_stack_rule_factor_is_the_fixtures_and_every_text_says_it():
    assert figures.STACK_RULE_FACTOR == GOLDEN["stack_rule_factor"]
    for peak, required in GOLDEN["required_room"]:
        s = stack(peak, 0)
        assert s.required_room == required, peak
    # The texts print the factor, not a literal of their own: the check, the stack lines, the
    # snapshot (which the viewer reads).
    s = stack(200, 250)
    factor = f"{GOLDEN['stack_rule_factor']:g} x peak"
    assert factor in figures._stack_check(s).reason
    assert any(factor in line for line in render.stack_lines(s, indent=""))


def test_headroom_is_rounded_as_the_planner_rounds_it():
    for case in GOLDEN["headroom_pct"]:
        assert figures.headroom_pct_2dp(case["headroom"], case["peak"]) == case["hundredths"] / 100, case


def test_the_snapshot_writer_rounds_with_it():
    """snapshot.build writes headroom_pct through headroom_pct_2dp (not round(), which rounds half
    to even on a float): 1 B of headroom over a 20000 B peak is 0.005 %, 0.01 % half up."""
    desc, table = demo_like(4)
    d = DescriptorSession(ImageReader([(DESC_ADDR, desc), (TABLE_ADDR, table)]), DESC_ADDR).read()
    figs = {0: figures.arena_figures(d.arenas[0])}
    figs[0].headroom, figs[0].peak = 1, 20000
    st = figures.stack_figures(d)
    snap = snapshot.build(d, figs, st, figures.checks(d, st, figs), {"elf": None, "located_by": "test"})
    assert snap["arenas"][0]["headroom_pct"] == 0.01
    assert snap["stack"]["rule_factor"] == GOLDEN["stack_rule_factor"]


def test_scratch_buffers_are_labelled_one_way():
    for case in GOLDEN["scratch_labels"]:
        assert plan.scratch_label(case["index"], case.get("op"), case.get("what")) == case["label"], case
        if "op" not in case:  # what the plugin calls a scratch region it has no name for
            r = Region(index=0, offset=0, size=16, id=case["index"], kind="scratch", flags=0, first_use=0, last_use=0)
            assert figures.region_label(r) == case["label"]
    # The planner JSON's scratch names follow the same form (the schema says so, for the tool's output).
    pattern = PLANNER_SCHEMA["$defs"]["buffer"]["allOf"][0]["then"]["properties"]["name"]["pattern"]
    assert all(re.match(pattern, c["label"]) for c in GOLDEN["scratch_labels"] if "op" in c)


def test_the_roles_the_plugin_matches_on_are_the_planners():
    roles = PLANNER_SCHEMA["$defs"]["tail_role"]["enum"]
    used = [v for k, v in vars(planner).items() if k.startswith("ROLE_")]
    used += list(planner.CONSTRUCTOR_ROLES) + list(planner.POINTER_ARRAY_ROLES)
    assert used and set(used) <= set(roles), set(used) - set(roles)
    assert len(roles) == len(set(roles))


def test_the_schema_string_is_the_schemas():
    assert PLANNER_SCHEMA["properties"]["schema"]["const"] == planner.SCHEMA


def test_the_contract_versions_are_the_fixtures():
    from arenascope_plugin.serve import viewerlink
    want = GOLDEN["contract_versions"]
    assert (snapshot.VERSION, planner.SCHEMA, viewerlink.MESSAGE_VERSION) == \
        (want["snapshot"], want["planner_json"], want["live_message"])


def test_element_bytes_are_the_fixtures_tflite_type_sizes():
    """The printers' sizes (by TfLiteType, as GDB names kTfLiteInt8: int8) are the fixture's
    TfLiteTypeSizeOf, which the planner's type_size is checked against too."""
    golden = {name.lower(): size for name, size in GOLDEN["element_bytes"].items() if size is not None}
    assert tflmvalue.ELEMENT_BYTES == golden
