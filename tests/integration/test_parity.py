"""One pipeline behind every front end (issue 15): on the same halted target the snapshot built at
a stop through GDB (`arena snapshot`, GDB's reader, symbols and registers), by the live poller
(`arenascope live`: OpenOCD's Tcl reads, the ELF read with pyelftools, incremental band scans)
and by the standalone tool (`arenascope snapshot`: Tcl, the ELF) is the same, time stamps and the
live object aside. The target: the demo firmware on QEMU behind a real OpenOCD (tests/rig),
halted by GDB; the other two run from GDB's `shell` while it holds the core.

Cases: healthy (after two inferences), and the agent's fault hook after the stack ran into the
arena (a fault recorded, tail regions overwritten): the live snapshot carries the fault too."""
import json
import shutil
import sys

import pytest

from harness import FIRMWARE, PLANNER, ROOT, fault_register

RIG = ROOT / "tests" / "rig" / "openocd_qemu"
sys.path.insert(0, str(RIG))
from chain import Chain  # noqa: E402

PLUGIN = ROOT / "gdbplugin" / "arenascope.py"
CLI = ROOT / "gdbplugin" / "arenascope"
pytestmark = [pytest.mark.skipif(not FIRMWARE.exists(), reason=f"{FIRMWARE} not built"),
              pytest.mark.skipif(not PLANNER.exists(), reason=f"{PLANNER} not built"),
              pytest.mark.skipif(not shutil.which("openocd"), reason="openocd not installed")]
RESET = ["-ex", "monitor reset halt", "-ex", "maintenance flush register-cache"]


def comparable(snap):
    """The snapshot without what differs by nature: the time it was taken and the live object."""
    out = json.loads(json.dumps(snap))
    out["source"].pop("time", None)
    out.pop("live", None)
    return out


def three_snapshots(tmp_path, stop, elf=FIRMWARE):
    paths = {k: tmp_path / f"{k}.json" for k in ("gdb", "live", "cli")}
    elf = str(elf.resolve())
    with Chain(elf) as ch:
        tcl = f"127.0.0.1:{ch.tport}"
        common = f"--openocd {tcl} --elf {elf} --planner {PLANNER}"
        res = ch.gdb(["-ex", f"source {PLUGIN}", "-ex", "set arena colour off", "-ex", f"file {elf}", *RESET, *stop,
                      "-ex", f"arena snapshot {paths['gdb']}",
                      "-ex", f"shell {CLI} snapshot {common} {paths['cli']}",
                      "-ex", f"shell {CLI} live {common} --once --duration 300 --no-viewer "
                             f"--snapshot-out {paths['live']}"])
    assert "Traceback" not in res.stdout and "internal error" not in res.stdout, res.stdout
    for k, p in paths.items():
        assert p.exists(), (k, res.stdout, res.stderr)
    return {k: json.loads(p.read_text()) for k, p in paths.items()}


def assert_same(snaps):
    gdb, live, cli = (comparable(snaps[k]) for k in ("gdb", "live", "cli"))
    for name, other in (("arenascope snapshot", cli), ("arenascope live", live)):
        for key in gdb:
            assert other.get(key) == gdb[key], f"{name}: '{key}' differs from the stop's:\n{other.get(key)}\n{gdb[key]}"
        assert set(other) == set(gdb), name


def test_the_same_figures_at_a_stop_live_and_standalone(tmp_path):
    snaps = three_snapshots(tmp_path, ["-ex", "break demo_invoke_done if invokes == 2", "-ex", "continue"])
    assert_same(snaps)
    gdb = snaps["gdb"]
    assert gdb["state"]["invokes"] == 2 and gdb["state"]["measured_by"] == "host scan of target memory"
    assert gdb["stack"]["sp"] is not None and gdb["fault"] is None and gdb["verdict"] == "PASS"
    assert snaps["live"]["live"]["refresh_index"] >= 2


def test_the_same_fault_and_verdict_at_a_stop_live_and_standalone(tmp_path):
    snaps = three_snapshots(tmp_path, ["-ex", "break demo_invoke_done if invokes == 1", "-ex", "continue",
                                       "-ex", "delete", "-ex", "break arenascope_fault_hook",
                                       "-ex", "set var demo_scenario = 1", "-ex", "continue"])
    assert_same(snaps)
    f = snaps["live"]["fault"]
    assert f is not None and f["exception"] == "BusFault" and fault_register(f, "BFAR") == 0x5A5A5A58 and \
        f["damaged_regions"]
    assert [v["kind"] for v in f["verdicts"]] == ["stack-into-arena"]


STANDIN = FIRMWARE.parent / "tflm_standin" / "tflm_standin_fw.elf"


@pytest.mark.skipif(not STANDIN.exists(), reason=f"{STANDIN} not built")
def test_agentless_the_same_figures_at_a_stop_live_and_standalone(tmp_path):
    """Agentless (the TFLM stand-in: TFLM's class names, NOT TFLM): TFLM's layout from GDB's types
    and from the DWARF read with pyelftools, the interpreter found by a RAM scan both ways."""
    snaps = three_snapshots(tmp_path, ["-ex", "break standin_boot", "-ex", "continue",
                                       "-ex", "set var standin_scenario = 0", "-ex", "break inference_done",
                                       "-ex", "continue"], elf=STANDIN)
    assert_same(snaps)
    assert snaps["gdb"]["tflm"]["condition"] == "allocated" and snaps["gdb"]["source"]["located_by"].startswith(
        "agentless: the MicroInterpreter at")


@pytest.mark.skipif(not STANDIN.exists(), reason=f"{STANDIN} not built")
def test_agentless_the_same_post_mortem_at_a_stop_live_and_standalone(tmp_path):
    """The stand-in's stack ran into its arena (scenario 3), halted at HardFault_Handler's entry:
    the fault from the core's registers (EXC_RETURN in LR), the verdict from TFLM's objects."""
    snaps = three_snapshots(tmp_path, ["-ex", "break standin_boot", "-ex", "continue",
                                       "-ex", "set var standin_scenario = 3", "-ex", "hbreak HardFault_Handler",
                                       "-ex", "continue"], elf=STANDIN)
    assert_same(snaps)
    kinds = [v["kind"] for v in snaps["live"]["tflm"]["verdicts"]]
    assert "stack-into-arena" in kinds and snaps["live"]["fault"]["exception"], kinds
