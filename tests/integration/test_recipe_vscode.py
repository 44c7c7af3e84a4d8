"""The VS Code Cortex-Debug recipe (examples/vscode/launch.json). The file is strict JSON (no
comments, no trailing commas), every configuration has the keys Cortex-Debug needs (type
cortex-debug, request launch/attach, servertype and what that server needs: OpenOCD configFiles,
J-Link device), gdbPath gdb-multiarch, and post-launch/attach commands that source the plugin
and run `arena info`.

Those command strings, read from the file, are then run in real gdb-multiarch against the demo
firmware on QEMU's mps2-an386: a STAND-IN for Cortex-Debug (QEMU's gdb stub replaces the GDB
server; ${workspaceFolder} is a folder holding the arenascope checkout as `arenascope/`, as the
README says to lay it out), stopped after the first inference, as a user's session would be.
Expected: nm's tensor_arena bounds in `arena info`.
"""
import json
import re
import shutil

import pytest

from harness import FIRMWARE, ROOT, elf_symbols, gdb_batch, qemu

LAUNCH = ROOT / "examples" / "vscode" / "launch.json"
SERVER_NEEDS = {"openocd": ["configFiles"], "jlink": ["device"], "pyocd": [], "stlink": [], "stutil": [],
                "bmp": ["BMPGDBSerialPort"], "qemu": ["machine"], "external": ["gdbTarget"]}


def configurations():
    return json.loads(LAUNCH.read_text())["configurations"]


def post_commands(config):
    return config.get("postLaunchCommands" if config["request"] == "launch" else "postAttachCommands")


def test_strict_json_and_required_keys():
    configs = configurations()
    assert {c["servertype"] for c in configs} >= {"openocd", "jlink", "pyocd"}
    assert {c["request"] for c in configs} == {"launch", "attach"}
    for c in configs:
        for key in ("name", "type", "request", "servertype", "executable", "gdbPath"):
            assert key in c, f"{c.get('name')}: no {key}"
        assert c["type"] == "cortex-debug" and c["gdbPath"] == "gdb-multiarch"
        for key in SERVER_NEEDS[c["servertype"]]:
            assert c.get(key), f"{c['name']}: servertype {c['servertype']} needs {key}"
        commands = post_commands(c)
        assert commands and re.fullmatch(r"source \$\{workspaceFolder\}/arenascope/gdbplugin/arenascope\.py",
                                         commands[0]) and "arena info" in commands, c["name"]


@pytest.mark.skipif(not FIRMWARE.exists() or not shutil.which("qemu-system-arm") or not shutil.which("gdb-multiarch"),
                    reason=f"{FIRMWARE} (cmake --build build), qemu-system-arm or gdb-multiarch missing")
def test_commands_work_in_gdb(tmp_path):
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "arenascope").symlink_to(ROOT)
    syms = elf_symbols(FIRMWARE)
    arena = syms["tensor_arena"]
    for config in configurations():
        commands = [c.replace("${workspaceFolder}", str(workspace)) for c in post_commands(config)]
        with qemu(FIRMWARE) as (port, _log):
            _dump, text = gdb_batch(FIRMWARE, ["break demo_invoke_done", "continue", "delete", *commands],
                                    remote_port=port, timeout=180)
        assert "arenascope descriptor at" in text and "arena 0 (published by the firmware)" in text, text
        assert re.search(rf"bounds:\s+{arena:#010x}-", text), f"{config['name']}:\n{text}"
