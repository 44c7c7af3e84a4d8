"""The snapshot's limits are defined once per language and stated in the schema: the C++ header
the planner and the viewer share (common/include/arenascope/snapshot_limits.h), the plugin's
constants (present/snapshot.py) and docs/snapshot-schema.json's regions maxItems agree."""
import json
import pathlib
import re

from arenascope_plugin.present import snapshot

ROOT = pathlib.Path(__file__).resolve().parents[2]
HEADER = (ROOT / "common" / "include" / "arenascope" / "snapshot_limits.h").read_text()
SCHEMA = json.loads((ROOT / "docs" / "snapshot-schema.json").read_text())


def constant(name):
    """The header's `constexpr std::size_t NAME = N;` or `= N << S;` value."""
    m = re.search(rf"constexpr std::size_t {name} = (\d+)u?(?: << (\d+))?;", HEADER)
    assert m, f"{name} not found in snapshot_limits.h"
    return int(m.group(1)) << int(m.group(2) or 0)


def test_the_header_the_plugin_and_the_schema_agree():
    assert constant("kMaxSnapshotBytes") == snapshot.MAX_SNAPSHOT_BYTES == 64 << 20
    assert constant("kMaxRegions") == snapshot.MAX_REGIONS == 200000
    assert constant("kMaxScopes") == snapshot.MAX_SCOPE == 200000
    regions = SCHEMA["$defs"]["arena"]["properties"]["regions"]
    assert regions["maxItems"] == snapshot.MAX_REGIONS
