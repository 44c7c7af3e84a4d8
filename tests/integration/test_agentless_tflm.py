"""Agentless mode against a real, unmodified TFLM firmware (optional: CI has no TFLM).

Build a TFLM application for QEMU mps2-an386 by hand, outside the project (docs/integrating-tflm.md,
"Checking agentless mode"), with -g and a plain MicroInterpreter(model, resolver, arena, size),
then:
  ARENASCOPE_TFLM_ELF=/path/app.elf ARENASCOPE_TFLM_BREAK=inference_done \\
  ARENASCOPE_TFLM_MODEL=tflm_hello_world_int8.tflite ctest -R agentless --output-on-failure
(ARENASCOPE_TFLM_HOST_ELF: the same application built for x86-64, run under plain gdb.)
ARENASCOPE_TFLM_MODEL names the model's entry in ../shared/tflm-figures (real TFLM's own figures
at 90b983c2 on the Cortex-M4): the plugin's head, tail, arena_used_bytes() and every buffer's
offset and lifetime must equal them. Skips cleanly without the variables."""
import json
import os
import pathlib
import tempfile

import pytest

from harness import PLANNER, ROOT, TFLM_FIGURES, gdb_batch, qemu

ELF = os.environ.get("ARENASCOPE_TFLM_ELF")
HOST_ELF = os.environ.get("ARENASCOPE_TFLM_HOST_ELF")  # the same application built for x86-64
BREAK = os.environ.get("ARENASCOPE_TFLM_BREAK", "inference_done")
MODEL = os.environ.get("ARENASCOPE_TFLM_MODEL")

def check_against_figures(snap, build):
    a = snap["arenas"][0]
    assert a["tflm_figures"] and snap["state"]["measured"] is False
    if MODEL and TFLM_FIGURES.exists():
        fig = json.loads(TFLM_FIGURES.read_text())["models"][MODEL][build]
        assert a["head_bytes"] == fig["head_bytes"]
        assert a["tail_bytes"] == fig["tail_bytes"]
        assert a["used_bytes"] == fig["arena_used_bytes"]
        # The planner's tail equals TFLM's here, so its minimum arena holds and the headroom is
        # measured against it: real TFLM's bisected minimum.
        assert a["minimum_arena_bytes"] == fig["min_arena_bytes"] and not a["headroom_is_upper_estimate"]
        head = [(r["size_bytes"], r["offset"], r["first_use"], r["last_use"]) for r in a["regions"]
                if r["kind"] in ("tensor", "scratch")]
        assert head == [(p["size"], p["offset"], p["first_used"], p["last_used"]) for p in fig["plan"]]


@pytest.mark.skipif(not HOST_ELF or not pathlib.Path(HOST_ELF).exists(),
                    reason="ARENASCOPE_TFLM_HOST_ELF names no TFLM host build (optional test)")
def test_agentless_on_the_host_equals_tflms_own_figures():
    with tempfile.TemporaryDirectory() as tmp:
        snap_path = os.path.join(tmp, "s.json")
        _, text = gdb_batch(pathlib.Path(HOST_ELF), [f"source {ROOT / 'gdbplugin' / 'arenascope.py'}",
                                                     f"set arena planner-path {PLANNER}", "set arena colour off",
                                                     f"break {BREAK}", "run", "arena info",
                                                     f"arena snapshot {snap_path}"], gdb="gdb")
        snap = json.loads(pathlib.Path(snap_path).read_text())
    assert "TFLM's own objects, no arenascope agent (agentless" in text and "8-byte addresses" in text, text
    assert "arena: warning:" not in text and "Traceback" not in text, text
    check_against_figures(snap, "host")


@pytest.mark.skipif(not ELF or not pathlib.Path(ELF).exists(),
                    reason="ARENASCOPE_TFLM_ELF names no TFLM firmware (optional test)")
def test_agentless_map_equals_tflms_own_figures():
    with tempfile.TemporaryDirectory() as tmp:
        snap_path = os.path.join(tmp, "s.json")
        with qemu(pathlib.Path(ELF), semihosting=True) as (port, _):
            _, text = gdb_batch(pathlib.Path(ELF), [f"source {ROOT / 'gdbplugin' / 'arenascope.py'}",
                                                    f"set arena planner-path {PLANNER}", "set arena colour off",
                                                    f"break {BREAK}", "continue", "arena info", "arena check",
                                                    f"arena snapshot {snap_path}"], remote_port=port)
        snap = json.loads(pathlib.Path(snap_path).read_text())
    assert "TFLM's own objects, no arenascope agent (agentless" in text, text
    assert "inferences completed:   unavailable" in text and "Traceback" not in text
    assert "arena: warning:" not in text, text  # TFLM's placement equals the planner's
    check_against_figures(snap, "arm_m4")
