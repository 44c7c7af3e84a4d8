"""One version: the VERSION file at the repository root is what every tool's --version, the GDB
plugin (`arena version`, `arena info`'s first line), CMake's project and every snapshot (the
planner's --snapshot, the plugin's `arena snapshot`) say. A plugin copied without VERSION says
"unknown" and works."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from harness import BUILD, HOST_DEMO, ROOT, gdb_batch

VERSION = (ROOT / "VERSION").read_text()
EXPECTED = VERSION.strip()
PLUGIN = ROOT / "gdbplugin" / "arenascope.py"
DSCNN = BUILD / "planner" / "dscnn_kws.tflite"
SCHEMA = json.loads((ROOT / "docs" / "snapshot-schema.json").read_text())
PLAN_SCHEMA = json.loads((ROOT / "docs" / "planner-schema.json").read_text())["properties"]["schema"]["const"]

TOOLS = [("arenascope-plan", BUILD / "planner" / "arenascope-plan"),
         ("arenascope-write-dscnn", BUILD / "planner" / "arenascope-write-dscnn"),
         ("arenascope-viewer", BUILD / "viewer" / "arenascope-viewer"),
         ("arenascope", ROOT / "gdbplugin" / "arenascope")]


def test_the_version_file_is_one_line_major_minor_patch():
    assert re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+\n", VERSION), repr(VERSION)


def test_cmake_project_version_is_the_file():
    cache = (BUILD / "CMakeCache.txt").read_text()
    assert f"CMAKE_PROJECT_VERSION:STATIC={EXPECTED}\n" in cache


@pytest.mark.parametrize("name,path", TOOLS, ids=[n for n, _ in TOOLS])
def test_every_tool_prints_the_version(name, path):
    if name == "arenascope-viewer" and not path.exists():
        pytest.skip("viewer not built (ARENASCOPE_VIEWER off)")
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}  # no window for it
    r = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60, env=env,
                       stdin=subprocess.DEVNULL)
    assert (r.returncode, r.stdout, r.stderr) == (0, f"{name} {EXPECTED}\n", "")


def test_standalone_live_says_the_version_too():
    r = subprocess.run([str(ROOT / "gdbplugin" / "arenascope"), "live", "--version"], capture_output=True, text=True,
                       timeout=60)
    assert (r.returncode, r.stdout) == (0, f"arenascope {EXPECTED}\n")


def test_gdb_plugin_says_the_version_with_no_target():
    r = subprocess.run(["gdb-multiarch", "-batch", "-nx", "-ex", f"source {PLUGIN}", "-ex", "arena version"],
                       capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"arenascope {EXPECTED}", r.stdout
    # ... and the formats' versions (CHANGELOG.md names the file defining each)
    assert any(re.fullmatch(r"  agent ABI: +1\.x .*", line) for line in lines), r.stdout
    assert '"arenascope.snapshot" version 3' in r.stdout and f'"{PLAN_SCHEMA}"' in r.stdout


def test_planner_snapshot_carries_the_version(tmp_path):
    out = tmp_path / "plan.json"
    subprocess.run([str(BUILD / "planner" / "arenascope-plan"), "--snapshot", str(out), str(DSCNN)], check=True,
                   capture_output=True, timeout=120)
    snap = json.loads(out.read_text())
    assert snap["source"]["arenascope_version"] == EXPECTED
    import jsonschema
    jsonschema.validate(snap, SCHEMA)


@pytest.mark.skipif(not HOST_DEMO.exists(), reason="host demo not built")
def test_arena_info_header_and_plugin_snapshot_carry_the_version(tmp_path):
    out = tmp_path / "snap.json"
    _, text = gdb_batch(HOST_DEMO, [f"source {PLUGIN}", "set arena colour off", "break demo_invoke_done", "run",
                                    "arena info", f"arena snapshot {out}"], gdb="gdb", args=["3"])
    assert "Traceback" not in text
    info = text[text.index(f"arenascope {EXPECTED}\n"):]
    assert info.splitlines()[1].startswith("arenascope descriptor at "), info  # the header, then the figures
    snap = json.loads(out.read_text())
    assert snap["source"]["arenascope_version"] == EXPECTED
    import jsonschema
    jsonschema.validate(snap, SCHEMA)


def test_a_plugin_without_the_version_file_says_unknown(tmp_path):
    """gdbplugin/ copied alone (no VERSION two folders above the package): "unknown", no error."""
    shutil.copytree(ROOT / "gdbplugin", tmp_path / "gdbplugin", ignore=shutil.ignore_patterns("__pycache__"))
    r = subprocess.run([sys.executable, str(tmp_path / "gdbplugin" / "arenascope"), "--version"], capture_output=True,
                       text=True, timeout=60)
    assert (r.returncode, r.stdout, r.stderr) == (0, "arenascope unknown\n", "")
    r = subprocess.run(["gdb-multiarch", "-batch", "-nx", "-ex", f"source {tmp_path / 'gdbplugin' / 'arenascope.py'}",
                        "-ex", "arena version"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert r.returncode == 0 and r.stdout.splitlines()[0] == "arenascope unknown", r.stdout + r.stderr
