"""The plugin's plan definitions against the golden fixture the planner is also checked with
(tests/fixtures/plan_definitions_golden.json, see tests/planner/planner_test.cpp)."""
import json
import pathlib

from arenascope_plugin.analyse import figures
from arenascope_plugin.decode.descriptor import Arena, Region

GOLDEN = pathlib.Path(__file__).resolve().parents[1] / "fixtures" / "plan_definitions_golden.json"


def arena_of(buffers):
    regions, offset = [], 0
    for i, b in enumerate(buffers):
        regions.append(Region(index=i, offset=offset, size=b["size"], id=i, kind=b["kind"], flags=0,
                              first_use=b["first"], last_use=b["last"], name=b["name"]))
        offset += b["size"]
    return Arena(index=0, base_addr=0x20000000, regions_addr=0, model_addr=0, size=offset, head=offset,
                 temp=offset, tail=offset, model_size=0, canary=None, alignment=16,
                 region_count=len(regions), region_capacity=len(regions), flags=0, regions=regions)


def test_plugin_plan_matches_the_golden_fixture():
    cases = json.loads(GOLDEN.read_text())["cases"]
    assert cases
    for case in cases:
        p = figures.plan(arena_of(case["buffers"]))
        assert p.live_bytes == case["live_bytes"], case["name"]
        assert p.lower_bound == case["lower_bound"], case["name"]
        assert p.lower_bound_scope == case["lower_bound_scope"], case["name"]
