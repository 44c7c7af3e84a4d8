"""The stack's worst case predicted from the ELF (`arenascope budget`, analyse/stackdepth.py) against
the peak the stack paint measures on the running firmware (`arena stack`), on QEMU: the demo and
the TFLM stand-in, on Cortex-M and RV32, a deep recursion and the demo's SysTick handler included;
real TFLM built by hand when ARENASCOPE_TFLM_RV32_MEASURE_ELF names it. The prediction is never
below the measured peak; `arena stack` says by how much."""
import json
import os
import re
import subprocess
import sys

import pytest

from harness import (
    BUILD,
    DEMO_MODEL,
    FIRMWARE,
    PLANNER,
    ROOT,
    RV32_VIRT,
    plugin_at_stops,
    real_elf,
    rv32_firmware_skip,
)

TOOL = ROOT / "gdbplugin" / "arenascope"
STANDIN = BUILD / "firmware" / "tflm_standin" / "tflm_standin_fw.elf"
DEMO_RV32 = BUILD / "firmware" / "demo_rv32" / "demo_rv32_fw.elf"
STANDIN_RV32 = BUILD / "firmware" / "tflm_standin_rv32" / "tflm_standin_rv32_fw.elf"
PEAK = re.compile(r"peak depth:\s+(>= )?(\d+) B")
PREDICTED = re.compile(r"predicted worst case:\s+(at least )?(\d+) B from the ELF's code")


def predicted(elf):
    r = subprocess.run([sys.executable, str(TOOL), "budget", "--elf", str(elf), "--json"], capture_output=True,
                       text=True, check=False, timeout=300)
    assert r.returncode in (0, 6), r.stderr
    return json.loads(r.stdout)


def measured_against_predicted(elf, stops, before=(), first=(), **machine):
    """(the measured peak, `arena stack`'s output) at the last stop, checked against the tool's JSON."""
    text = plugin_at_stops(elf, stops, ["arena stack"], first=first, **machine) if not before else \
        plugin_at_stops(elf, stops[:1], list(before) + [f"break {stops[1]}", "continue", "arena stack"], **machine)
    doc = predicted(elf)
    peak = PEAK.findall(text)[-1]
    said = PREDICTED.findall(text)[-1]
    assert int(said[1]) == doc["worst_bytes"] and bool(said[0]) == doc["worst_is_floor"], text
    return int(peak[1]), doc, text


@pytest.mark.parametrize("elf, stop, machine", [
    (FIRMWARE, "demo_invoke_done", {}),
    (STANDIN, "inference_done", {}),
    pytest.param(DEMO_RV32, "demo_invoke_done", RV32_VIRT, marks=rv32_firmware_skip(DEMO_RV32)),
    pytest.param(STANDIN_RV32, "inference_done", RV32_VIRT, marks=rv32_firmware_skip(STANDIN_RV32)),
], ids=["demo", "standin", "demo-rv32", "standin-rv32"])
def test_the_prediction_is_never_below_the_measured_peak(elf, stop, machine):
    peak, doc, text = measured_against_predicted(elf, [stop], **machine)
    assert 0 < peak <= doc["worst_bytes"], text
    assert f"the peak {peak} B is" in text and f"{doc['worst_bytes'] - peak} B below it" in text, text


def test_the_demos_systick_handler_is_in_the_prediction():
    """The demo takes SysTick on the main stack: its path, with the 108 B the core stacks (FP
    context: the demo uses the FPU), is in the main stack's worst case."""
    doc = predicted(FIRMWARE)
    systick = next(h for h in doc["depth"]["handlers"] if h["entry"] == "SysTick")
    assert systick["entry_bytes"] == 108 and systick["path"][0]["function"] == "demo_systick_isr"
    assert doc["worst_bytes"] >= doc["depth"]["thread"]["worst_bytes"] + systick["worst_bytes"]


def test_a_deep_recursion_is_named_and_runs_past_the_floor():
    """Scenario 1: recurse_down_to runs the stack into the arena. The prediction names that
    recursion as having no bound (exit 6), and `arena stack` says the peak went past the floor."""
    peak, doc, text = measured_against_predicted(
        FIRMWARE, ["demo_invoke_done", "BusFault_Handler"],
        before=["delete", "set var demo_scenario = 1"])
    assert doc["exit_status"] == 6 and doc["worst_is_floor"] and "recurse_down_to" in doc["reason"]
    assert peak > doc["worst_bytes"], text
    assert f"the peak {peak} B is above the floor {doc['worst_bytes']} B: recurse_down_to recursion ran deeper" \
        in text, text


@pytest.mark.parametrize("variable", ["ARENASCOPE_TFLM_RV32_HEALTHY_KWS_ELF", "ARENASCOPE_TFLM_RV32_MEASURE_ELF"])
def test_real_tflm_rv32_prediction_covers_the_measured_peak(variable, tmp_path):
    """Real TFLM built by hand (its firmware does not paint its stack: the test paints it at reset,
    with the plugin's paint word, through GDB's `restore`), run to done(): the prediction (a floor:
    TFLM's subgraph recursion has no bound the ELF shows) covers the peak."""
    elf = real_elf(variable, "hand-built real TFLM RV32 firmware")
    doc = predicted(elf)
    paint = tmp_path / "paint.bin"
    paint.write_bytes(b"\xcc" * doc["stack"]["bytes"])
    peak, doc, text = measured_against_predicted(
        elf, ["done"], first=[f"restore {paint} binary {doc['stack']['low']:#x}"], **RV32_VIRT)
    assert 0 < peak <= doc["worst_bytes"], text


def test_the_planner_answers_for_the_elf_through_the_tool():
    """arenascope-plan --elf FW.elf MODEL runs the tool's `budget` (ELF meaning stays in the plugin):
    the same JSON and exit status, the planner's gate on the ELF's arena included."""
    r = subprocess.run([str(PLANNER), "--elf", str(FIRMWARE), "--json", str(DEMO_MODEL)], capture_output=True,
                       text=True, timeout=300)
    doc = json.loads(r.stdout)
    assert r.returncode == doc["exit_status"] == 6, r.stderr  # the demo's deliberate recursion
    assert doc["arena_gate"]["verdict"] == "FITS" and doc["needed_arena_bytes"] == doc["arena_gate"]["minimum_bytes"]
    bounded = subprocess.run([str(PLANNER), "--elf", str(FIRMWARE), "--bound", "recurse_down_to=40", "--json",
                              str(DEMO_MODEL)], capture_output=True, text=True, timeout=300)
    got = json.loads(bounded.stdout)  # --bound passed on: the recursion is counted 40 times, no floor
    assert bounded.returncode == got["exit_status"] == 0 and not got["worst_is_floor"], bounded.stderr
    assert got["depth"]["thread"]["bounded_recursion"][0][-1] == "at most 40 levels (--bound)"
    refused = subprocess.run([str(PLANNER), "--elf", str(FIRMWARE), "--arena-size", "1000", str(DEMO_MODEL)],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "--elf takes the model, --json, --bound and --calls only" in refused.stderr
    missing = subprocess.run([str(PLANNER), "--elf", str(FIRMWARE), str(DEMO_MODEL)], capture_output=True, text=True,
                             timeout=60, env=dict(os.environ, ARENASCOPE_TOOL="/nonexistent/arenascope"))
    assert missing.returncode == 2 and "--elf needs the arenascope tool" in missing.stderr


def test_the_snapshot_and_the_report_carry_the_prediction(tmp_path):
    """`arena snapshot` has stack.predicted and ram_map (the tool's figures: the same analysis), and
    the HTML report the viewer draws shows the prediction under the measured peak and the RAM map."""
    snap, html = tmp_path / "s.json", tmp_path / "r.html"
    plugin_at_stops(FIRMWARE, ["demo_invoke_done"], [f"arena snapshot {snap}", f"arena report {html}"])
    doc = predicted(FIRMWARE)
    got = json.loads(snap.read_text())["stack"]["predicted"]
    assert (got["worst_bytes"], got["is_floor"]) == (doc["worst_bytes"], doc["worst_is_floor"])
    assert got["thread_bytes"] == doc["depth"]["thread"]["worst_bytes"]
    assert got["path"] == [s["function"] for s in doc["depth"]["thread"]["path"]]
    report = html.read_text()
    assert f"predicted  &gt;= {doc['worst_bytes']} B worst case (ELF)" in report
    ram = json.loads(snap.read_text())["ram_map"]  # the tool's RAM map, area by area, and the report lists it
    assert [(a["low_addr"], a["high_addr"], a["kind"]) for a in ram] == \
        [(a["low"], a["high"], a["kind"]) for a in doc["ram"]]
    arena = next(a for a in ram if a["kind"] == "arena")
    assert "RAM map (from the ELF)" in report
    assert f"  {arena['low_addr']:#010x} {arena['high_addr'] - arena['low_addr']:>9} B {arena['what']}" in report
