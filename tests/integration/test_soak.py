"""`arena soak N` (gdb/cmd_soak.py, analyse/soak.py) on the demo firmware in QEMU: 1,000 inferences
with every rule checked after each, numbered by the agent's own count; a fault (scenario 8: the
stack into the arena) stops it at HardFault with FAIL; a target that never ends an inference is
stopped by --timeout; Ctrl-C (SIGINT to GDB) ends it with the report of what ran; a FAIL fails
`gdb -batch`. Expected figures come from the target (GDB's own reads) and the demo's plan."""
import re
import signal
import subprocess

import pytest

from harness import FIRMWARE, PLANNER, ROOT, gdb_batch, qemu

pytestmark = pytest.mark.skipif(not FIRMWARE.exists(), reason=f"{FIRMWARE} not built")
PLUGIN = ROOT / "gdbplugin" / "arenascope.py"
LOAD = [f"source {PLUGIN}", f"set arena planner-path {PLANNER}", "set arena colour off"]
FIRST = ["break demo_invoke_done if invokes == 1", "continue", "delete"]


def run(commands, timeout=600):
    with qemu(FIRMWARE) as (port, _):
        return gdb_batch(FIRMWARE, LOAD + FIRST + commands, remote_port=port, timeout=timeout)


def test_a_thousand_inferences_are_checked_and_numbered_by_the_target():
    _, text = run(["print arenascope_descriptor.invoke_phase", "arena soak 1000",
                   "print arenascope_descriptor.invoke_phase", "print arenascope_descriptor.arena[0]"])
    before, after = (int(re.findall(rf"^\${i} = (\d+)", text, re.M)[0]) for i in (1, 2))
    arena = {k: int(v) for k, v in re.findall(r"(\w+) = (\d+)", re.findall(r"^\$3 = (.*)$", text, re.M)[0])}
    assert "arena soak: 1000 inferences, stopping at the agent's arenascope_invoke_mark" in text
    assert re.search(r"^soak: 1000 inferences in [\d.]+ s \(.*\): PASS$", text, re.M), text
    assert "arena soak: 500/1000 inferences, worst so far: PASS" in text
    # one stop an inference, at the end of each: agent.h's invoke_phase is 2 x the completed ones, odd
    # while one runs; the run's first is the one after those completed before it, its last 999 later
    first = before // 2 + 1
    assert after % 2 == 1 and after // 2 + 1 == first + 999
    passed = set(re.findall(r"^  PASS  (\w+) +all 1000: ", text, re.M))
    assert {"canary", "guard", "stack", "used", "plan", "headroom"} <= passed, text
    assert not re.search(r"^  (WARN|FAIL) ", text, re.M), text
    # the arena's peak: TFLM's used-bytes formula on the agent's own marks, read by GDB
    used = max(arena["head_bytes"], arena["temp_bytes"]) + arena["size_bytes"] - arena["tail_offset"]
    assert f"arena 0 peak: {used} B, first seen at inference {first}" in text, text


def test_a_fault_stops_the_soak_at_the_handler_with_fail():
    _, text = run(["set var demo_scenario = 8", "arena soak 20"])
    assert "arena soak: FAIL: fault" in text, text  # the error that fails `gdb -batch`
    assert "stopped early: the target took a fault (HardFault) during inference 2" in text, text
    assert re.search(r"^  FAIL  fault +first at inference 2, 1 in all: HardFault this boot", text, re.M), text


def test_a_target_that_never_ends_an_inference_is_stopped_by_the_timeout():
    """--at a function the demo never calls again after its start: no inference ends."""
    _, text = run(["arena soak 3 --at demo_nodes --timeout 2"])
    assert "arena soak: FAIL: " in text, text
    assert re.search(r"stopped early: no inference ended within 2 s after inference (\d+), the last before the soak "
                     r"began: the target hangs", text), text


def test_ctrl_c_ends_the_soak_with_the_report_of_what_ran():
    with qemu(FIRMWARE) as (port, _):
        args = ["gdb-multiarch", "-q", "-nx", "-batch", "-ex", f"target remote :{port}"]
        for c in LOAD + FIRST + ["arena soak 100000"]:
            args += ["-ex", c]
        p = subprocess.Popen(args + [str(FIRMWARE)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        seen = []
        for line in p.stdout:
            seen.append(line)
            if line.startswith("arena soak: 100000 inferences"):
                p.send_signal(signal.SIGINT)
                break
        rest, _ = p.communicate(timeout=120)
    text = "".join(seen) + rest
    assert re.search(r"stopped early: Ctrl-C after inference \d+", text), text
    assert re.search(r"^soak: \d+ of 100000 inferences in [\d.]+ s", text, re.M), text


def test_without_the_agent_it_stops_at_each_invoke_and_counts_the_run():
    """The TFLM stand-in without the agent: the soak stops at each tflite::MicroInterpreter::Invoke,
    numbers the inferences itself, and judges TFLM's own figures (arena peak: the planner's
    arena_used_bytes for the stand-in's model, as test_tflm_standin.py checks)."""
    elf = FIRMWARE.parent / "tflm_standin" / "tflm_standin_fw.elf"
    with qemu(elf, semihosting=True) as (port, _):
        _, text = gdb_batch(elf, LOAD + ["break inference_done", "continue", "delete", "arena soak 20"],
                            remote_port=port, timeout=300)
    assert "stopping at each tflite::MicroInterpreter::Invoke" in text, text
    assert re.search(r"^soak: 20 inferences in [\d.]+ s \(.*\): PASS$", text, re.M), text
    assert set(re.findall(r"^  PASS  (\w+) +all 20: ", text, re.M)) >= {"stack", "used", "plan"}, text
    assert re.search(r"^arena 0 peak: \d+ B, first seen at inference 1$", text, re.M), text


def test_a_reset_during_the_run_is_a_fail_not_more_inferences(tmp_path):
    """The target resets mid-run (QEMU's system_reset from a stop hook at the 15th stop): the agent's
    count goes back, and the soak says so instead of counting on."""
    hook = tmp_path / "reset.gdb"
    hook.write_text("set $stops = 0\ndefine hook-stop\n  set $stops = $stops + 1\n  if $stops == 15\n"
                    "    monitor system_reset\n  end\nend\n")
    _, text = run([f"source {hook}", "arena soak 30"])
    assert re.search(r"stopped early: the target reset after inference \d+: the agent's inference count went back "
                     r"from \d+ to 0", text), text
    assert "arena soak: FAIL" in text, text


def test_a_place_gdb_cannot_find_and_a_timeout_that_is_no_number_are_refused():
    _, text = run(["arena soak 3 --at no_such_fn", "arena soak 3 --timeout inf", "arena soak 3 --timeout nan",
                   "info breakpoints"])
    assert "arena soak: --at no_such_fn: GDB finds no such place in the program" in text, text
    assert text.count("--timeout inf: give the seconds one inference may take") == 1, text
    assert "--timeout nan: give the seconds" in text, text
    assert "No breakpoints or watchpoints." in text, text
