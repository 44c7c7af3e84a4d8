"""`arena diff` and `arenascope diff` with real parts: the planner's prediction of the demo's model
(`arenascope-plan --snapshot`, cortex-m, margin 15 % as the build lays the demo out) against the
demo firmware on QEMU, through GDB, and two stops of one run (the tensor overrun of scenario 2).
Expected values are read by the test itself from the two snapshot files."""
import json
import subprocess

import jsonschema
import pytest

from harness import DEMO_MODEL, FIRMWARE, PLANNER, ROOT, gdb_batch, qemu

PLUGIN = ROOT / "gdbplugin" / "arenascope.py"
TOOL = ROOT / "gdbplugin" / "arenascope"
SCHEMA = json.loads((ROOT / "docs" / "diff-schema.json").read_text())
pytestmark = pytest.mark.skipif(not FIRMWARE.exists() or not PLANNER.exists(), reason="firmware or planner not built")


def size_text(n):
    """The plugin's way of writing a size (render.py): bytes, and KiB from 1024 B."""
    return f"{n} B" if n < 1024 else f"{n} B ({n / 1024:.1f} KiB)"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The prediction, the target's snapshot at the first inference, and GDB's diffs."""
    tmp = tmp_path_factory.mktemp("diff")
    predicted, target = tmp / "predicted.json", tmp / "target.json"
    subprocess.run([str(PLANNER), "--snapshot", str(predicted), "--target", "cortex-m", "--margin", "15",
                    str(DEMO_MODEL)], check=True, capture_output=True, timeout=60)
    marker = "@@diff@@"
    with qemu(FIRMWARE) as (port, _log):
        _, text = gdb_batch(FIRMWARE, [
            f"source {PLUGIN}", "set arena colour off", f"set arena planner-path {PLANNER}",
            "break demo_invoke_done if invokes == 1", "continue", "delete", f"arena snapshot {target}",
            f"echo {marker}now\\n", f"arena diff {target}",
            f"echo {marker}json\\n", f"arena diff {predicted} {target} --json",
            # Scenario 2 (examples/demo/workload.c): a write 64 B past the head into the free band.
            "set var demo_scenario = 2", "break demo_invoke_done if invokes == 2", "continue", "delete",
            f"echo {marker}overrun\\n", f"arena diff {target}",
            f"echo {marker}bad\\n", f"arena diff {tmp / 'absent.json'}", f"echo {marker}end\\n"], remote_port=port)
    assert "Traceback" not in text and "internal error" not in text, text
    parts = dict(p.split("\n", 1) for p in text.split(marker)[1:])
    parts["stderr"] = text  # GDB writes errors to stderr, which gdb_batch puts after stdout
    return json.loads(predicted.read_text()), json.loads(target.read_text()), predicted, target, parts


def test_the_target_against_itself_at_the_same_stop_is_identical(run):
    *_, parts = run
    lines = [line for line in parts["now"].splitlines() if line.strip()]
    assert lines[-1].startswith("identical: 1 arena(s), ") and len(lines) == 3, parts["now"]


def test_the_prediction_against_the_target_in_gdb_and_standalone(run):
    p, t, predicted, target, parts = run
    gdb_doc, _ = json.JSONDecoder().raw_decode(parts["json"])  # then GDB's "Breakpoint 2 at ..."
    r = subprocess.run(["/usr/bin/python3", str(TOOL), "diff", str(predicted), str(target), "--json"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stderr  # differences
    doc = json.loads(r.stdout)
    for d in (doc, gdb_doc):
        jsonschema.validate(d, SCHEMA)
    assert doc["arenas"] == gdb_doc["arenas"] and doc["checks"] == gdb_doc["checks"]
    (pa,), (ta,) = p["arenas"], t["arenas"]
    figs = {f["name"]: f for f in doc["arenas"][0]["figures"]}
    for name in ("size_bytes", "head_bytes", "temp_bytes", "tail_bytes", "used_bytes", "peak_bytes"):
        assert (figs[name]["a"], figs[name]["b"], figs[name]["delta"]) == (pa[name], ta[name], ta[name] - pa[name])
    # The demo lays its arena out as predicted; its first operator takes 64 B of temp above the head.
    assert figs["head_bytes"]["delta"] == 0 and figs["tail_bytes"]["delta"] == 0
    assert figs["temp_bytes"]["delta"] == 64 == ta["temp_bytes"] - ta["head_bytes"]
    # Every region matched (the tensors by id, the tail objects by name); the only change is the
    # agent's checksum flag on TFLM's immutable objects, which a prediction has not.
    regions = doc["arenas"][0]["regions"]
    assert regions["appeared"] == regions["vanished"] == regions["ambiguous"] == []
    immutable = sorted(r["index"] for r in ta["regions"] if "immutable" in r["flags"])
    assert immutable and sorted(c["b"]["index"] for c in regions["changed"]) == immutable
    assert all(c["changes"] == ["flags"] for c in regions["changed"])
    assert regions["unchanged"] == len(ta["regions"]) - len(immutable) == len(pa["regions"]) - len(immutable)
    # The checks: the prediction's own rule goes, the target's rules come; plan and used stay.
    assert {c["rule"] for c in doc["checks"]["changed"]} == \
        {c["rule"] for c in p["checks"]} ^ {c["rule"] for c in t["checks"]}
    r = subprocess.run(["/usr/bin/python3", str(TOOL), "diff", str(predicted), str(target)],
                       capture_output=True, text=True, timeout=60)
    assert f"  temp high-water:     {size_text(pa['temp_bytes'])} -> {size_text(ta['temp_bytes'])}  +64 B" \
        in r.stdout.splitlines(), r.stdout
    assert r.stdout.splitlines()[-1].startswith("differences: ")


def test_two_stops_show_the_overrun(run):
    _, t, *_, parts = run
    text = parts["overrun"].splitlines()
    intact = t["arenas"][0]["free_band"]["intact_bytes"]
    assert "verdict: PASS -> FAIL" in text and "  canary:              PASS -> FAIL" in text, parts["overrun"]
    assert f"  free band intact:    {size_text(intact)} -> {size_text(intact - 64)}  -64 B" in text, parts["overrun"]


def test_a_missing_file_is_one_line_in_gdb(run):
    *_, parts = run
    lines = [line for line in parts["stderr"].splitlines() if "absent.json" in line and "@@" not in line]
    assert len(lines) == 1 and lines[0].startswith("arena diff: cannot read the snapshot ")
    assert "No such file or directory; give a snapshot `arena snapshot FILE`" in lines[0]
