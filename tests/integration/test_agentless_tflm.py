"""Agentless mode against a real, unmodified TFLM firmware (optional: CI has no TFLM).

Build a TFLM application for QEMU mps2-an386 by hand, outside the project (docs/integrating-tflm.md,
"Checking agentless mode"), with -g and a plain MicroInterpreter(model, resolver, arena, size),
then:
  ARENASCOPE_TFLM_ELF=/path/app.elf ARENASCOPE_TFLM_BREAK=inference_done \\
  ARENASCOPE_TFLM_MODEL=tflm_hello_world_int8.tflite ctest -R agentless --output-on-failure
(ARENASCOPE_TFLM_HOST_ELF: the same application built for x86-64, run under plain gdb;
ARENASCOPE_TFLM_ADAPTER_ELF / ARENASCOPE_TFLM_HOST_ADAPTER_ELF: the application with the agent's
TFLM adapter, for QEMU / for x86-64.)
ARENASCOPE_TFLM_MODEL names the model's entry in ../shared/tflm-figures (real TFLM's own figures
at 90b983c2 on the Cortex-M4): the plugin's head, tail, arena_used_bytes() and every buffer's
offset and lifetime must equal them. Skips cleanly without the variables.

TFLM built with its CMSIS-NN kernels (docs/cmsis-nn.md, "Checked by hand on this project's side"):
  ARENASCOPE_TFLM_CMSIS_ELF=/path/app.elf ARENASCOPE_TFLM_CMSIS_BUILD=arm_m55_cmsis_nn \
  ARENASCOPE_TFLM_MODEL=tflm_micro_speech_quantized.tflite ctest -R agentless --output-on-failure
compares with ../shared/tflm-figures/cmsisnn-figures.json's record of that build (arm_m4_cmsis_nn
runs on QEMU mps2-an386, arm_m55_cmsis_nn on mps3-an547, arm_m3_cmsis_nn on mps2-an385)."""
import itertools
import json
import os
import pathlib
import tempfile

import pytest

from harness import PLANNER, ROOT, SHARED, TFLM_FIGURES, gdb_batch, qemu

SHARED_MODELS = SHARED / "models"

ELF = os.environ.get("ARENASCOPE_TFLM_ELF")
HOST_ELF = os.environ.get("ARENASCOPE_TFLM_HOST_ELF")  # the same application built for x86-64
ADAPTER_ELF = os.environ.get("ARENASCOPE_TFLM_ADAPTER_ELF")  # the application with the agent's TFLM adapter
HOST_ADAPTER_ELF = os.environ.get("ARENASCOPE_TFLM_HOST_ADAPTER_ELF")  # the same, built for x86-64
BREAK = os.environ.get("ARENASCOPE_TFLM_BREAK", "inference_done")
MODEL = os.environ.get("ARENASCOPE_TFLM_MODEL")

def snapshot_at_break(elf, commands=(), on_qemu=True, machine="mps2-an386"):
    """(GDB's output, the snapshot) of the plugin stopped at BREAK in `elf`: on QEMU `machine`
    (semihosting), or run on this host under plain gdb; `commands` run before the snapshot."""
    elf = pathlib.Path(elf)
    with tempfile.TemporaryDirectory() as tmp:
        snap_path = os.path.join(tmp, "s.json")
        steps = [f"source {ROOT / 'gdbplugin' / 'arenascope.py'}", f"set arena planner-path {PLANNER}",
                 "set arena colour off", f"break {BREAK}", "continue" if on_qemu else "run", *commands,
                 f"arena snapshot {snap_path}"]
        if on_qemu:
            with qemu(elf, semihosting=True, machine=machine) as (port, _):
                _, text = gdb_batch(elf, steps, remote_port=port)
        else:
            _, text = gdb_batch(elf, steps, gdb="gdb")
        return text, json.loads(pathlib.Path(snap_path).read_text())


def assert_plan_is_tflms(a, fig):
    """Every planned buffer's size, offset and lifetime equal real TFLM's PrintMemoryPlan."""
    head = [(r["size_bytes"], r["offset"], r["first_use"], r["last_use"]) for r in a["regions"]
            if r["kind"] in ("tensor", "scratch")]
    assert head == [(p["size"], p["offset"], p["first_used"], p["last_used"]) for p in fig["plan"]]


def check_against_figures(snap, build, figures=TFLM_FIGURES):
    a = snap["arenas"][0]
    assert a["tflm_figures"] and snap["state"]["measured"] is False
    if MODEL and figures.exists():
        fig = json.loads(figures.read_text())["models"][MODEL][build]
        assert a["head_bytes"] == fig["head_bytes"]
        assert a["tail_bytes"] == fig["tail_bytes"]
        assert a["used_bytes"] == fig["arena_used_bytes"]
        # The planner's tail equals TFLM's here, so its minimum arena holds and the headroom is
        # measured against it: real TFLM's bisected minimum.
        assert a["minimum_arena_bytes"] == fig["min_arena_bytes"] and not a["headroom_is_upper_estimate"]
        assert_plan_is_tflms(a, fig)


@pytest.mark.skipif(not HOST_ELF or not pathlib.Path(HOST_ELF).exists(),
                    reason="ARENASCOPE_TFLM_HOST_ELF names no TFLM host build (optional test)")
def test_agentless_on_the_host_equals_tflms_own_figures():
    text, snap = snapshot_at_break(HOST_ELF, ["arena info"], on_qemu=False)
    assert "TFLM's own objects, no arenascope agent (agentless" in text and "8-byte addresses" in text, text
    assert "arena: warning:" not in text and "Traceback" not in text, text
    check_against_figures(snap, "host")


@pytest.mark.skipif(not ELF or not pathlib.Path(ELF).exists(),
                    reason="ARENASCOPE_TFLM_ELF names no TFLM firmware (optional test)")
def test_agentless_map_equals_tflms_own_figures():
    text, snap = snapshot_at_break(ELF, ["arena info", "arena check"])
    assert "TFLM's own objects, no arenascope agent (agentless" in text, text
    assert "inferences completed:   unavailable" in text and "Traceback" not in text
    assert "arena: warning:" not in text, text  # TFLM's placement equals the planner's
    check_against_figures(snap, "arm_m4")


CMSIS_ELF = os.environ.get("ARENASCOPE_TFLM_CMSIS_ELF")  # TFLM built with its CMSIS-NN kernels (QEMU)
CMSIS_BUILD = os.environ.get("ARENASCOPE_TFLM_CMSIS_BUILD", "")  # its record in cmsisnn-figures.json
CMSIS_FIGURES = SHARED / "tflm-figures" / "cmsisnn-figures.json"
# cmsisnn-figures.json's builds: (the QEMU machine, the CPU the ELF's build attributes give)
# What the planner names each CMSIS-NN kernel's OpData (planner/src/kernels_cmsis_nn.cpp).
CMSIS_OPDATA = {"CONV_2D": "OpData (cmsis_nn/conv.cc)", "DEPTHWISE_CONV_2D": "OpData (cmsis_nn/depthwise_conv.cc)",
                "FULLY_CONNECTED": "OpData (cmsis_nn/fully_connected.cc)", "SOFTMAX": "CMSISNNSoftmaxParams",
                "SVDF": "CmsisNnOpDataSvdf"}
CMSIS_BUILDS = {"arm_m4_cmsis_nn": ("mps2-an386", "cortex-m4"), "arm_m55_cmsis_nn": ("mps3-an547", "cortex-m55"),
                "arm_m3_cmsis_nn": ("mps2-an385", "cortex-m3")}


@pytest.mark.skipif(not CMSIS_ELF or not pathlib.Path(CMSIS_ELF).exists() or not MODEL,
                    reason="ARENASCOPE_TFLM_CMSIS_ELF and _MODEL name no TFLM firmware with CMSIS-NN kernels "
                           "(optional test)")
def test_agentless_on_cmsis_nn_firmware_equals_tflms_own_figures():
    """The plugin reads the CMSIS-NN kernels and the CPU from the ELF, plans for them, and its
    head, tail, arena_used_bytes(), minimum arena and every buffer equal real TFLM's; the tail's
    kernel data is named after CMSIS-NN's kernel files."""
    assert CMSIS_BUILD in CMSIS_BUILDS, (f"ARENASCOPE_TFLM_CMSIS_BUILD={CMSIS_BUILD!r}: set it to the record of "
                                         f"cmsisnn-figures.json the firmware was built as, one of "
                                         f"{', '.join(CMSIS_BUILDS)}")
    machine, cpu = CMSIS_BUILDS[CMSIS_BUILD]
    text, snap = snapshot_at_break(CMSIS_ELF, ["arena info", "arena regions", "arena check"], machine=machine)
    assert "TFLM's own objects, no arenascope agent (agentless" in text and "Traceback" not in text, text
    assert f"kernels:                TFLM's CMSIS-NN kernels for {cpu}, as the planner assumed (CMSIS-NN " \
           "kernels: the ELF links arm_" in text, text
    assert f"CPU {cpu}: the ELF's build attributes" in text, text
    assert "arena: warning:" not in text, text  # TFLM's placement equals the planner's
    check_against_figures(snap, CMSIS_BUILD, CMSIS_FIGURES)
    # "subgraph 0 operator 2 (FULLY_CONNECTED): OpData (cmsis_nn/fully_connected.cc)": every
    # operator of a CMSIS-NN kernel has its kernel data named after CMSIS-NN's OpData.
    per_op = {}
    for r in snap["arenas"][0]["regions"]:
        head, _, what = r["name"].partition("): ")
        if what and "(" in head:
            per_op.setdefault(head.rsplit("(", 1)[1], set()).add(what)
    for op, name in CMSIS_OPDATA.items():
        if op in per_op:
            assert name in per_op[op], (op, per_op[op])
    assert set(CMSIS_OPDATA) & set(per_op), per_op
    # The kernels' persistent buffers from Prepare (CMSIS-NN's kernel sums on an MVE core) are
    # found through their OpData's pointer and named as the planner names them.
    import subprocess
    predicted = json.loads(subprocess.run([str(PLANNER), "--json", "--kernels", "cmsis-nn", "--cpu", cpu,
                                           str(SHARED_MODELS / MODEL)], capture_output=True, text=True,
                                          check=True).stdout)
    wanted = {t["what"] for t in predicted["tail"]["regions"] if t["role"] == "kernel-buffer"}
    assert wanted <= {r["name"] for r in snap["arenas"][0]["regions"]}, sorted(wanted)


def check_adapter(snap, text, target, build):
    """With the adapter (target_agent/adapters/tflm) the agent's descriptor holds TFLM's plan:
    every buffer equals real TFLM's PrintMemoryPlan (tflm-figures), named through the model; the
    tail and arena_used_bytes() are what `arenascope-plan --adapter` predicts for a planner that
    lives outside the arena (the layout change the adapter documents)."""
    import subprocess
    assert "arena: warning:" not in text and "Traceback" not in text, text
    assert not snap["source"]["located_by"].startswith("agentless"), snap["source"]  # the agent's descriptor
    a = snap["arenas"][0]
    assert a["tflm_figures"]
    predicted = json.loads(subprocess.run([str(PLANNER), "--json", "--adapter", "--target", target,
                                           str(SHARED_MODELS / MODEL)],
                                          capture_output=True, text=True, check=True).stdout)
    if (a["base_addr"] + a["size_bytes"]) % 16 == 0:  # the prediction is for a 16-byte aligned arena end
        assert a["tail_bytes"] == predicted["tail"]["bytes"]
        assert a["used_bytes"] == predicted["arena"]["arena_used_bytes"]
    if TFLM_FIGURES.exists():
        fig = json.loads(TFLM_FIGURES.read_text())["models"][MODEL][build]
        assert a["head_bytes"] == fig["head_bytes"]
        assert_plan_is_tflms(a, fig)
    names = {b["name"] for b in predicted["buffers"]}
    assert {r["name"] for r in a["regions"] if r["kind"] in ("tensor", "scratch")} <= names
    # The tail the adapter publishes whole is shown as TFLM's objects (walked as in agentless mode).
    tail = sorted((r["offset"], r["offset"] + r["size_bytes"], r["name"]) for r in a["regions"]
                  if r["kind"] not in ("tensor", "scratch"))
    assert tail[0][0] == a["size_bytes"] - a["tail_bytes"] and tail[-1][1] == a["size_bytes"], tail
    assert all(x[1] == y[0] for x, y in itertools.pairwise(tail)), tail
    assert {"MicroAllocator", "SingleArenaBufferAllocator", "SubgraphAllocations[]"} <= {t[2] for t in tail}, tail


@pytest.mark.skipif(not ADAPTER_ELF or not pathlib.Path(ADAPTER_ELF).exists() or not MODEL,
                    reason="ARENASCOPE_TFLM_ADAPTER_ELF and _MODEL name no firmware with the TFLM adapter (optional)")
def test_adapter_publishes_tflms_plan_and_the_documented_layout_change():
    text, snap = snapshot_at_break(ADAPTER_ELF)
    check_adapter(snap, text, "cortex-m", "arm_m4")


@pytest.mark.skipif(not HOST_ADAPTER_ELF or not pathlib.Path(HOST_ADAPTER_ELF).exists() or not MODEL,
                    reason="ARENASCOPE_TFLM_HOST_ADAPTER_ELF and _MODEL name no host build with the TFLM adapter "
                           "(optional)")
def test_adapter_on_the_host_publishes_tflms_plan_and_the_documented_layout_change():
    text, snap = snapshot_at_break(HOST_ADAPTER_ELF, on_qemu=False)
    check_adapter(snap, text, "host", "host")


LOOP_ELF = os.environ.get("ARENASCOPE_TFLM_LOOP_ELF")  # a TFLM firmware that keeps invoking (QEMU)


@pytest.mark.skipif(not LOOP_ELF or not pathlib.Path(LOOP_ELF).exists() or not MODEL,
                    reason="ARENASCOPE_TFLM_LOOP_ELF and _MODEL name no looping TFLM firmware (optional)")
def test_agentless_live_without_gdb_equals_tflms_figures_and_gdbs_layout(tmp_path):
    """The standalone `arenascope live` on an unmodified TFLM firmware, through the OpenOCD rig
    while it runs: its layout (pyelftools' DWARF) equals GDB's, its figures TFLM's own."""
    import subprocess
    import sys
    sys.path.insert(0, str(ROOT / "tests" / "rig" / "openocd_qemu"))
    sys.path.insert(0, str(ROOT / "gdbplugin"))
    from arenascope_plugin.acquire.elfsymbols import ElfSymbols  # pylint: disable=import-outside-toplevel
    from arenascope_plugin.decode import tflm  # pylint: disable=import-outside-toplevel
    from chain import Chain  # pylint: disable=import-outside-toplevel
    lay = tflm.layout(ElfSymbols(LOOP_ELF))
    dump = tmp_path / "gdb_layout.json"
    gdb_batch(pathlib.Path(LOOP_ELF), [f"source {ROOT / 'gdbplugin' / 'arenascope.py'}",
                                       "python import json; "
                                       "from arenascope_plugin.acquire.gdbtarget import GdbSymbols; "
                                       "from arenascope_plugin.decode import tflm; l = tflm.layout(GdbSymbols()); "
                                       f"open('{dump}', 'w').write(json.dumps([l.pointer, l.offsets, l.sizes, "
                                       "l.saba_nonpersistent_base, l.member_sizes, l.optional]))"])
    assert json.loads(dump.read_text()) == json.loads(json.dumps(
        [lay.pointer, lay.offsets, lay.sizes, lay.saba_nonpersistent_base, lay.member_sizes, lay.optional]))
    out = tmp_path / "last.json"
    with Chain(LOOP_ELF) as ch:
        r = subprocess.run([str(ROOT / "gdbplugin" / "arenascope"), "live", "--openocd", f"127.0.0.1:{ch.tport}",
                            "--elf", LOOP_ELF, "--planner", str(PLANNER), "--duration", "3", "--no-viewer",
                            "--snapshot-out", str(out)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    snap = json.loads(out.read_text())
    assert snap["source"]["located_by"].startswith("agentless: the MicroInterpreter at ")
    assert snap["live"]["refresh_index"] > 1
    if TFLM_FIGURES.exists():
        fig = json.loads(TFLM_FIGURES.read_text())["models"][MODEL]["arm_m4"]
        a = snap["arenas"][0]
        assert (a["head_bytes"], a["tail_bytes"], a["used_bytes"]) == (fig["head_bytes"], fig["tail_bytes"],
                                                                       fig["arena_used_bytes"])
