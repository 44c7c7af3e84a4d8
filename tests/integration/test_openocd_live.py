"""The plugin through a real OpenOCD (0.12, Debian) in front of QEMU's Cortex-M4 (the rig in
tests/rig/openocd_qemu: OpenOCD -> remote_bitbang JTAG -> jtag_dp_bridge.py -> QEMU gdbstub).

- GDB attached through OpenOCD runs every `arena` command on the demo firmware;
- the live view polls through OpenOCD's Tcl port while the firmware runs (`arena live` in GDB,
  the standalone `arenascope live`, and the poller itself);
- a torn read is forced by holding the firmware inside an agent update (a breakpoint in
  seq_end, where the descriptor's seq is odd), never through an `arena` command;
- OpenOCD going away mid-poll is reported and recovered;
- a long read is chunked and stops within one chunk when interrupted.
Expected figures come from the planner's JSON for the demo's model and the ELF's symbols."""
import json
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from harness import FIRMWARE, PLANNER, ROOT, demo_plan, elf_symbols, fault_register

RIG = ROOT / "tests" / "rig" / "openocd_qemu"
sys.path.insert(0, str(RIG))
sys.path.insert(0, str(ROOT / "gdbplugin"))
from arenascope_plugin import pipeline  # noqa: E402
from arenascope_plugin.acquire import openocd  # noqa: E402
from arenascope_plugin.acquire.elfsymbols import ElfSymbols  # noqa: E402
from arenascope_plugin.acquire.reader import MemoryReadError  # noqa: E402
from arenascope_plugin.serve import livepoll  # noqa: E402
from chain import Chain, free_ports  # noqa: E402

PLUGIN = ROOT / "gdbplugin" / "arenascope.py"
CLI = ROOT / "gdbplugin" / "arenascope"
pytestmark = [pytest.mark.skipif(not FIRMWARE.exists(), reason=f"{FIRMWARE} not built"),
              pytest.mark.skipif(not shutil.which("openocd"), reason="openocd not installed")]
PLAN = demo_plan() if PLANNER.exists() else None
# OpenOCD halts the core when GDB attaches, at whatever point it had reached: start from reset
# (and drop the registers GDB cached before it; GDB learns nothing from monitor commands).
RESET = ["-ex", "monitor reset halt", "-ex", "maintenance flush register-cache"]


def poller_for(ch, **kw):
    """The live poller as `arena live` and `arenascope live` build it: the pipeline on the ELF."""
    link = openocd.TclLink("127.0.0.1", ch.tport)
    symbols = ElfSymbols(str(FIRMWARE))
    target = pipeline.Target(openocd.TclReader(link), symbols, openocd.CoreOverTcl(link, symbols))
    return livepoll.LivePoller(target, pipeline.Settings(planner=str(PLANNER)), **kw)


def wait_for(condition, seconds=30):
    """Waits until condition() holds (a loaded CI machine can take seconds for a first refresh):
    returns whether it did. Fixed sleeps made these tests fail under load."""
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


def run_poller(poller, seconds, hz=20):
    """Polls for `seconds` on a thread; returns (snapshots published, messages reported)."""
    snaps, messages, stop = [], [], threading.Event()
    t = threading.Thread(target=livepoll.run, args=(poller, snaps.append, hz, stop, messages.append), daemon=True)
    t.start()
    return t, stop, snaps, messages


def test_every_arena_command_through_openocd(tmp_path):
    snap_path = tmp_path / "s.json"
    with Chain(str(FIRMWARE)) as ch:
        res = ch.gdb(["-ex", f"source {PLUGIN}", "-ex", "set arena colour off", *RESET,
                      "-ex", "break demo_invoke_done if invokes == 2", "-ex", "continue",
                      *[x for c in ("arena info", "arena map", "arena regions", "arena plan", "arena stack",
                                    "arena check", "arena whereis tensor_arena", f"arena snapshot {snap_path}",
                                    "arena fault", "arena view --no-launch --port 0", "arena refresh")
                        for x in ("-ex", c)]])
    text = res.stdout
    assert "Traceback" not in text and "internal error" not in text, text
    assert "Breakpoint 1, demo_invoke_done (invokes=invokes@entry=2)" in text, text
    head = PLAN["plans"]["tflm-greedy"]["head_bytes"]
    assert "inferences completed:   2" in text
    assert f"head (planned):         {head} B" in text, text
    assert "arena check: PASS" in text and "legend:" in text and "is in arena 0 at +0" in text
    assert "arena fault: no fault" in text
    assert "arena view: snapshot sent to 0 viewer(s), verdict PASS" in text, text
    snap = json.loads(snap_path.read_text())
    assert snap["arenas"][0]["head_bytes"] == head and snap["state"]["invokes"] == 2
    assert snap["arenas"][0]["tail_bytes"] == PLAN["tail"]["bytes"]


def test_live_polling_while_the_firmware_runs():
    with Chain(str(FIRMWARE)) as ch:
        poller = poller_for(ch)
        log_before = len(ch.log("openocd"))
        t, stop, snaps, messages = run_poller(poller, 0)
        # until every band has been re-read by the host, slice by slice (checked below)
        wait_for(lambda: len(snaps) >= 10 and snaps[-1]["state"]["invokes"] > snaps[0]["state"]["invokes"] and
                 snaps[-1]["state"]["measured_by"] == "host scan of target memory")
        stop.set()
        t.join(10)
        logged = ch.log("openocd")[log_before:]
        calls, n = poller.reader.calls, poller.refreshes
        for _ in range(5):
            poller.refresh()
        per_refresh = (poller.reader.calls - calls) / (poller.refreshes - n)
    assert len(snaps) >= 10, messages
    # OpenOCD logs every Tcl reply (and forwards its log to GDB while the target runs): the reads
    # travel on the side channel, so nothing of them reaches OpenOCD's log.
    assert poller.reader.link.quiet_why is None and "0x" not in logged, logged[:400]
    invokes = [s["state"]["invokes"] for s in snaps]
    assert invokes == sorted(invokes) and invokes[-1] > invokes[0], invokes  # the counter moves
    assert all(s["state"]["seq"] % 2 == 0 for s in snaps)  # never a torn (odd) descriptor
    last = snaps[-1]
    a = last["arenas"][0]
    assert a["head_bytes"] == PLAN["plans"]["tflm-greedy"]["head_bytes"] and a["tail_bytes"] == PLAN["tail"]["bytes"]
    # By the end every band was re-read by the host, slice by slice: the canary is whole, the
    # stack's high-water mark measured (the firmware's frames sit in the top of its stack).
    assert last["state"]["measured_by"] == "host scan of target memory", last["state"]
    assert a["free_band"]["intact_bytes"] == a["free_band"]["size_bytes"]
    syms = elf_symbols(FIRMWARE)
    assert last["stack"]["high_addr"] == syms["__StackTop"] and 0 < last["stack"]["peak_bytes"] < 2048
    import jsonschema  # the contract with the viewer (docs/snapshot-schema.json, "live" included)
    jsonschema.validate(last, json.loads((ROOT / "docs" / "snapshot-schema.json").read_text()))
    live = last["live"]
    assert live["link"] == "ok" and live["refresh_index"] == len(snaps) and live["refresh_hz"] > 0
    # the descriptor, one band slice, the fault record and ICSR; no region table
    assert 0 < live["bytes_last_refresh"] <= 1536, live
    # ... in one request a refresh in steady state (acquire/batch.py): a stage that reads a word of
    # its own on every refresh (issue 33's dump work did, twice) adds a round trip and halves the rate.
    assert per_refresh <= 1.0, per_refresh
    assert last["fault"] is None
    assert [h["used_bytes"] for h in live["history"]] == [s["arenas"][0]["used_bytes"] for s in snaps][-600:]
    gap = last["stack"]["hwm_addr"] - last["stack"]["arena_end_addr"]
    assert live["history"][-1]["gap_bytes"] == gap and live["history"][-1]["stack_peak_bytes"] == \
        last["stack"]["peak_bytes"]


def test_a_torn_read_is_detected_and_never_published():
    """The firmware is held inside an agent update (seq odd: seq_end, which ends every update, is
    entered with it odd) by a breakpoint GDB sets through OpenOCD; the poller must discard every
    read then, and recover when the core runs on. GDB holds the core until the poller has said
    so (a marker file), not for a fixed time."""
    import tempfile
    marker = pathlib.Path(tempfile.mkdtemp()) / "torn-seen"
    with Chain(str(FIRMWARE)) as ch:
        poller = poller_for(ch)
        t, stop, snaps, messages = run_poller(poller, 0)

        def mark():
            wait_for(lambda: any(m.startswith("torn read discarded") for m in messages), 120)
            marker.touch()
        threading.Thread(target=mark, daemon=True).start()
        res = ch.gdb([*RESET, "-ex", "break seq_end if arenascope_descriptor.seq % 2 == 1", "-ex", "continue",
                      "-ex", "print arenascope_descriptor.seq",
                      "-ex", f"shell timeout 120 sh -c 'until [ -e {marker} ]; do sleep 0.05; done'"])
        held = len(snaps)
        assert "Breakpoint 1, seq_end" in res.stdout, res.stdout
        ch.tcl.call("resume")  # OpenOCD leaves the core halted when GDB detaches
        wait_for(lambda: len(snaps) > held and any(m.startswith("live reads work again") for m in messages))
        stop.set()
        t.join(10)
    seq = int(res.stdout.split("$1 = ")[1].split()[0])
    assert seq % 2 == 1, res.stdout
    assert any(m.startswith("torn read discarded: the descriptor's seq stays odd") for m in messages), messages
    assert poller.torn >= 1
    assert all(s["state"]["seq"] % 2 == 0 for s in snaps)
    assert len(snaps) > held and any(m.startswith("live reads work again") for m in messages), messages


def test_openocd_going_away_is_reported_and_recovered():
    # The bridge (the probe) serves the next OpenOCD when one quits: OpenOCD restarts in front of
    # the same running target, as on a bench.
    with Chain(str(FIRMWARE), bridge_args=["--serve-again"]) as ch:
        poller = poller_for(ch)
        t, stop, snaps, messages = run_poller(poller, 0)
        wait_for(lambda: len(snaps) > 0)
        before = len(snaps)
        ch.stop_openocd()
        wait_for(lambda: any(s["live"]["link"] == "lost" for s in snaps))
        ch.start_openocd()  # (a second failure, OpenOCD refusing rather than closing, may come first)

        def recovered():
            lost = [s for s in snaps if s["live"]["link"] == "lost"]
            return any(m.startswith("live reads work again") for m in messages) and any(
                s["live"]["link"] == "ok" and s["state"]["invokes"] > lost[0]["state"]["invokes"]
                for s in snaps[snaps.index(lost[0]) + 1:])
        wait_for(recovered)
        stop.set()
        t.join(10)
    lost = [s for s in snaps if s["live"]["link"] == "lost"]
    assert before > 0
    assert any(m.startswith("live read failed: ") and "OpenOCD" in m for m in messages), messages
    # The viewer is told, with why, once per distinct failure (OpenOCD closing, then refusing), not
    # at every retry; each "lost" snapshot is the last good data.
    fails = [m for m in messages if m.startswith("live read failed: ")]
    assert 1 <= len(lost) <= len(fails) <= 3 and len(set(fails)) == len(fails), fails
    assert all(x["live"]["link_error"] and x["live"]["refresh_index"] == lost[0]["live"]["refresh_index"] for x in lost)
    assert any(m.startswith("live reads work again") for m in messages), messages
    ok_after = [s for s in snaps[snaps.index(lost[0]) + 1:] if s["live"]["link"] == "ok"]
    assert ok_after and ok_after[-1]["state"]["invokes"] > lost[0]["state"]["invokes"]
    assert poller.reader.link.connects >= 2


def test_a_long_read_is_chunked_and_stops_within_one_chunk():
    with Chain(str(FIRMWARE)) as ch:
        cancel = threading.Event()
        link = openocd.TclLink("127.0.0.1", ch.tport)
        reader = openocd.TclReader(link, chunk=256, cancel=cancel)
        later = link.call_many_later

        def counting_later(lines):
            collect = later(lines)

            def results():
                out = collect()
                if reader.calls == 2:  # two chunks done (the third is being counted): interrupt now
                    cancel.set()
                return out
            return results
        link.call_many_later = counting_later
        with pytest.raises(MemoryReadError, match="interrupted between chunks"):
            reader.read(0x20000000, 32 * 1024)
        assert reader.calls == 3 and reader.bytes == 3 * 256  # 128 chunks asked for, stopped after one more
        cancel.clear()
        # Whole and in pieces, the same bytes (the agent's ABI magic at the descriptor).
        addr = elf_symbols(FIRMWARE)["arenascope_descriptor"]
        assert reader.read(addr, 8) == b"ARENASCP" and reader.read(addr + 3, 3) == b"NAS"
        with pytest.raises(MemoryReadError, match="OpenOCD: "):
            reader.read(0xF0000000, 8)  # nothing there: OpenOCD's own error text, wrapped by catch


def viewer_stand_in(vport):
    """A stand-in for the viewer's end of the link, on a thread: the JSON lines it is sent."""
    got = []

    def viewer():
        for _ in range(600):
            try:
                s = socket.create_connection(("127.0.0.1", vport))
                break
            except OSError:
                time.sleep(0.05)
        else:
            return
        with s, s.makefile("rb") as f:
            for line in f:
                got.append(json.loads(line))
    threading.Thread(target=viewer, daemon=True).start()
    return got


def gdb_wait_refreshes(n, seconds=90):
    """A GDB command that returns once `arena live` has made n refreshes (or after `seconds`):
    what the test checks, not a fixed window (a loaded machine refreshes slower)."""
    return ("python import sys, time; m = sys.modules['arenascope_plugin.gdb.cmd_live']; "
            f"d = time.monotonic() + {seconds}; "
            f"[time.sleep(0.05) for _ in iter(lambda: m._STATE['poller'].refreshes >= {n} or "
            "time.monotonic() > d, True)]")


def test_arena_live_in_gdb_and_the_standalone_command(tmp_path):
    vport = free_ports(1)[0]
    got = viewer_stand_in(vport)
    out = tmp_path / "last.json"
    with Chain(str(FIRMWARE)) as ch:
        res = ch.gdb(["-ex", f"source {PLUGIN}", "-ex", f"arena live --no-launch --port {vport}",
                      "-ex", "continue &", "-ex", gdb_wait_refreshes(8), "-ex", "arena live status",
                      "-ex", "arena live stop", "-ex", "interrupt", "-ex", "shell sleep 0.3",
                      # the standalone tool below polls a running core: halted by the interrupt
                      # inside an agent update (seq odd), it would see only torn reads
                      "-ex", "monitor resume"])
        cli = subprocess.run([str(CLI), "live", "--openocd", f"127.0.0.1:{ch.tport}", "--elf", str(FIRMWARE),
                              "--refreshes", "6", "--duration", "90", "--no-viewer", "--snapshot-out", str(out)],
                             capture_output=True, text=True, timeout=120)
    text = res.stdout
    assert "Traceback" not in text, text
    assert "0x4e455241" not in text and "{0x" not in text, text  # no read of the poller echoed into GDB
    assert f"through OpenOCD's Tcl port 127.0.0.1:{ch.tport} (from the command line of the OpenOCD" in text, text
    assert "arena live: running" in text and "torn discarded:" in text and "arena live: stopped" in text
    live_snaps = [g["snapshot"] for g in got if g.get("type") == "snapshot" and g["snapshot"].get("live")]
    assert len(live_snaps) >= 5 and live_snaps[-1]["state"]["invokes"] > live_snaps[0]["state"]["invokes"]
    assert cli.returncode == 0, cli.stderr
    last = json.loads(out.read_text())
    assert last["live"]["refresh_index"] == 6 and last["source"]["located_by"] == "symbol arenascope_descriptor"
    assert "torn reads discarded" in cli.stderr


def test_the_standalone_command_says_what_is_wrong():
    r = subprocess.run([str(CLI), "live", "--elf", str(FIRMWARE), "--openocd", f"127.0.0.1:{free_ports(1)[0]}"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "cannot connect to OpenOCD's Tcl port" in r.stderr, r.stderr
    r = subprocess.run([str(CLI), "live", "--elf", "/nonexistent.elf"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 2 and "cannot read /nonexistent.elf" in r.stderr, r.stderr
    r = subprocess.run([str(CLI), "live", "--elf", str(FIRMWARE), "--openocd", "host:port"], capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 2 and "the port is not a number" in r.stderr, r.stderr


def test_a_corrupt_descriptor_is_said_untrusted_with_a_failing_verdict():
    """The descriptor's magic is overwritten (by the test, through OpenOCD, as a stray write in the
    firmware would) while polling: the viewer is sent the last good data marked untrusted with a
    failing `descriptor` check, then fresh data again once the magic is back."""
    address = elf_symbols(FIRMWARE)["arenascope_descriptor"]
    with Chain(str(FIRMWARE)) as ch:
        poller = poller_for(ch)
        t, stop, snaps, messages = run_poller(poller, 0)
        wait_for(lambda: len(snaps) > 0)
        magic = ch.tcl.call(f"read_memory {address:#x} 32 1")
        ch.tcl.call(f"mww {address:#x} 0")
        wait_for(lambda: any(s["live"]["link"] == "untrusted" for s in snaps))
        ch.tcl.call(f"mww {address:#x} {magic}")
        wait_for(lambda: snaps[-1]["live"]["link"] == "ok" and snaps[-1]["verdict"] == "PASS" and any(
            s["live"]["link"] == "untrusted" for s in snaps))
        good = len(snaps)
        wait_for(lambda: len(snaps) >= good + 3)  # a few more good refreshes
        stop.set()
        t.join(10)
    bad = [s for s in snaps if s["live"]["link"] == "untrusted"]
    assert len(bad) == 1 and "magic" in bad[0]["live"]["link_error"], [s["live"]["link"] for s in snaps]
    assert bad[0]["verdict"] == "FAIL" and bad[0]["checks"][0]["rule"] == "descriptor"
    assert any(m.startswith("the descriptor read is corrupt: ") for m in messages), messages
    after = snaps[snaps.index(bad[0]) + 1:]
    assert after and all(s["live"]["link"] == "ok" for s in after) and after[-1]["verdict"] == "PASS"


def test_arena_live_through_a_second_gdb_connection_while_gdb_holds_the_first(tmp_path):
    """OpenOCD's GDB port, configured for two connections (docs/hardware.md): GDB holds the first
    and runs the core; the live view reads through the second (acquire/rsp.py), in GDB and in the
    standalone tool, and says which server it reads."""
    vport = free_ports(1)[0]
    got = viewer_stand_in(vport)
    out = tmp_path / "last.json"
    with Chain(str(FIRMWARE), openocd_args=["-c", "qemu.cpu configure -gdb-max-connections 3"]) as ch:
        gdb_port = f"127.0.0.1:{ch.gport}"
        res = ch.gdb(["-ex", f"source {PLUGIN}", *RESET,
                      "-ex", f"arena live --no-launch --port {vport} --via gdb:{gdb_port}",
                      "-ex", "continue &", "-ex", gdb_wait_refreshes(8), "-ex", "arena live status",
                      "-ex", "arena live stop", "-ex", "interrupt", "-ex", "shell sleep 0.3", "-ex", "monitor resume"])
        cli = subprocess.run([str(CLI), "live", "--via", f"gdb:{gdb_port}", "--elf", str(FIRMWARE), "--refreshes",
                              "4", "--duration", "90", "--no-viewer", "--snapshot-out", str(out)],
                             capture_output=True, text=True, timeout=120)
        openocd_log = ch.log("openocd")
    text = res.stdout
    assert "Traceback" not in text, text
    assert f"through a second GDB connection to OpenOCD {gdb_port} (from --via)" in text, text
    assert f"arena live: running, a second GDB connection to OpenOCD {gdb_port}" in text, text
    # the server is named from the process that owns the port, and what it does on connect is said
    assert "warning: OpenOCD, unless configured otherwise, halts the core and drops GDB's breakpoints" in text, text
    assert openocd_log.count("accepting 'gdb' connection") >= 3, openocd_log[-2000:]
    live_snaps = [g["snapshot"] for g in got if g.get("type") == "snapshot" and g["snapshot"].get("live")]
    assert len(live_snaps) >= 8, [g.get("type") for g in got]
    assert live_snaps[-1]["state"]["invokes"] > live_snaps[0]["state"]["invokes"]  # the core ran meanwhile
    assert all(s["state"]["seq"] % 2 == 0 for s in live_snaps)
    head = PLAN["plans"]["tflm-greedy"]["head_bytes"]
    assert live_snaps[-1]["arenas"][0]["head_bytes"] == head
    assert live_snaps[-1]["live"]["reader"].startswith(f"OpenOCD {gdb_port} (GDB remote protocol")
    assert cli.returncode == 0, cli.stderr
    assert f"reading {FIRMWARE} through a second GDB connection to OpenOCD {gdb_port}" in cli.stderr, cli.stderr
    last = json.loads(out.read_text())
    assert last["live"]["refresh_index"] == 4 and last["arenas"][0]["head_bytes"] == head


def test_the_same_bytes_through_the_tcl_port_and_the_gdb_port():
    addr = elf_symbols(FIRMWARE)["arenascope_descriptor"]
    from arenascope_plugin.acquire import rsp
    # OpenOCD answers a failed read on its GDB port with zeros unless gdb_report_data_abort is
    # enabled (gdb_server.c, gdb_read_memory_packet): docs/hardware.md says to enable it.
    with Chain(str(FIRMWARE), openocd_args=["-c", "qemu.cpu configure -gdb-max-connections 2",
                                            "-c", "gdb_report_data_abort enable"]) as ch:
        tcl = openocd.TclReader(openocd.TclLink("127.0.0.1", ch.tport))
        # Halted where the firmware has published its descriptor: halting at once raced its boot on
        # a loaded machine (CI read zeros once); waited for with a deadline, never a fixed time.
        deadline = time.monotonic() + 60
        while True:
            ch.tcl.call("halt")
            if tcl.read(addr, 8) == b"ARENASCP" or time.monotonic() > deadline:
                break
            ch.tcl.call("resume")
            time.sleep(0.05)
        gdb = rsp.RspReader(rsp.RspLink("127.0.0.1", ch.gport, server="OpenOCD"))
        a, b = tcl.read(addr, 4096), gdb.read(addr, 4096)
        assert a == b and a[:8] == b"ARENASCP"
        assert gdb.link.packet_size == 0x4000 and gdb.link.no_ack  # OpenOCD 0.12's qSupported
        with pytest.raises(MemoryReadError, match="OpenOCD answered E"):
            gdb.read(0xF0000000, 8)
        tcl.link.close()
        gdb.link.close()


def test_arena_live_on_qemus_own_gdbstub_says_it_cannot_and_names_qemu():
    from harness import gdb_batch, qemu
    with qemu() as (qport, _):
        _, text = gdb_batch(FIRMWARE, [f"source {PLUGIN}", "arena live --no-launch --port 0",
                                       f"arena live --no-launch --port 0 --via gdb:127.0.0.1:{qport}"],
                            remote_port=qport)
    assert f"arena live: GDB is attached to QEMU's gdbstub on 127.0.0.1:{qport}" in text, text
    assert "reads memory only while the guest is stopped" in text and "OpenOCD serving" not in text, text
    assert "Traceback" not in text


@pytest.mark.parametrize("link", ["tcl", "gdb"])
def test_a_firmware_that_updates_its_descriptor_with_no_idle_time_still_reads_clean(link):
    """Demo scenario 9 (DEMO_BUSY): invoke and arenascope_measure back to back, no idle time, so
    the descriptor changes all the time. ABI 1.1's one-read seqlock (seq_check) and the agent's
    short update window give clean refreshes anyway: nearly none torn, the invoke counter racing."""
    from arenascope_plugin.acquire import rsp
    syms = elf_symbols(FIRMWARE)
    # docs/hardware.md's OpenOCD setup for a GDB-port live link: two connections, and no halt when
    # one opens (the default gdb-attach event halts the core; emptied after init, here by Tcl)
    with Chain(str(FIRMWARE), openocd_args=["-c", "qemu.cpu configure -gdb-max-connections 2"]) as ch:
        ch.tcl.call("qemu.cpu configure -event gdb-attach {}")
        ch.tcl.call(f"mww {syms['demo_scenario']:#x} 9")  # the test writes it (a user would from GDB)
        if link == "tcl":
            poller = poller_for(ch)
        else:
            rl = rsp.RspLink("127.0.0.1", ch.gport, server="OpenOCD")
            symbols = ElfSymbols(str(FIRMWARE))
            poller = livepoll.LivePoller(pipeline.Target(rsp.RspReader(rl), symbols, rsp.CoreOverRsp(rl)),
                                         pipeline.Settings(planner=str(PLANNER)))
        t, stop, snaps, messages = run_poller(poller, 0, hz=200)
        wait_for(lambda: len(snaps) >= 40, 120)
        stop.set()
        t.join(10)
    assert len(snaps) >= 40, messages
    assert poller.torn * 4 <= len(snaps), (poller.torn, len(snaps), messages)
    assert all(s["state"]["seq"] % 2 == 0 for s in snaps)
    invokes = [s["state"]["invokes"] for s in snaps]
    assert invokes == sorted(invokes) and invokes[-1] - invokes[0] >= 40, invokes  # busier than one a refresh
    head = PLAN["plans"]["tflm-greedy"]["head_bytes"]
    assert all(s["arenas"][0]["head_bytes"] == head for s in snaps)


def test_a_fault_while_live_is_in_the_next_snapshot_and_the_windows_fault_panel(tmp_path):
    """The firmware BusFaults while the poller runs (demo scenario 3: a store to 0xF0000000, the
    BusFault handler enabled; the agent records it and the handler sleeps in WFI, the core still
    running): the refresh after the record shows it carries the fault, decoded, with no refresh
    discarded in between; the viewer, sent that first snapshot, draws its fault panel."""
    from arenascope_plugin.serve import viewerlink
    from harness import BUILD, xvfb
    viewer_bin = BUILD / "viewer" / "arenascope-viewer"
    if not viewer_bin.exists() or not shutil.which("Xvfb"):
        pytest.skip("the viewer or Xvfb is missing")
    syms = elf_symbols(FIRMWARE)
    layout = tmp_path / "layout.json"
    with xvfb() as env, Chain(str(FIRMWARE)) as ch:
        server = viewerlink.SnapshotServer(0)
        viewer = subprocess.Popen([str(viewer_bin), "--connect", f"127.0.0.1:{server.port}", "--wait-snapshot", "120",
                                   "--snapshots", "1", "--screenshot", str(tmp_path / "fault.png"), "--layout-out",
                                   str(layout)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        assert server.connected.wait(60), "the viewer never connected"
        poller = poller_for(ch)
        snaps, messages, stop = [], [], threading.Event()

        def publish(snap):
            snaps.append(snap)
            if snap.get("fault") and sum(1 for s in snaps if s.get("fault")) == 1:
                server.broadcast(viewerlink.message(snap))  # the first snapshot that carries it
        t = threading.Thread(target=livepoll.run, args=(poller, publish, 20, stop, messages.append), daemon=True)
        t.start()
        wait_for(lambda: len(snaps) >= 3)
        ch.tcl.call(f"mww {syms['demo_scenario']:#x} 3")  # the test writes it, as a user would from GDB
        wait_for(lambda: sum(1 for s in snaps if s.get("fault")) >= 3)
        stop.set()
        t.join(10)
        out, err = viewer.communicate(timeout=120)
        server.close()
    faulted = [i for i, s in enumerate(snaps) if s.get("fault")]
    assert len(faulted) >= 3, messages
    first = faulted[0]
    assert faulted == list(range(first, len(snaps)))  # from then on, every refresh carries it
    f = snaps[first]["fault"]
    # ARMv7-M ARM B3.2.15: BFARVALID (bit 15) and PRECISERR (bit 9) of CFSR; BFAR the address stored to
    assert f["exception"] == "BusFault" and fault_register(f, "CFSR") & 0x8200 == 0x8200, f
    assert fault_register(f, "BFAR") == 0xF0000000 and f["fault_address"] == {"register": "BFAR", "value": 0xF0000000}
    assert snaps[first]["live"]["refresh_index"] == snaps[first - 1]["live"]["refresh_index"] + 1
    assert snaps[first - 1]["fault"] is None and not poller.torn
    # A snapshot at a fault fails (the `fault` check), and the poller said the fault once.
    assert snaps[first]["verdict"] == "FAIL" and snaps[first - 1]["verdict"] != "FAIL"
    assert any(c["rule"] == "fault" and c["verdict"] == "FAIL" and c["reason"].startswith("BusFault this boot: ")
               for c in snaps[first]["checks"]), snaps[first]["checks"]
    said = [m for m in messages if m.startswith("fault seen while polling: BusFault at ")]
    assert len(said) == 1 and "(halt and run `arena fault` for the evidence)" in said[0], messages
    assert viewer.returncode == 0, err
    drawn = json.loads(layout.read_text())
    assert drawn["fault"]["h"] > 0, drawn
    assert any("BusFault" in line for line in drawn["fault_lines"]), drawn["fault_lines"]


def _run_until(cmd, trigger, timeout=120):
    """Runs cmd on a pseudo-terminal (GDB and the tool write their progress line there at once),
    sends SIGINT as soon as `trigger` (bytes) is in the output; returns (output, output at the last
    SIGINT). A SIGINT that lands while GDB itself waits on the remote link can be taken by GDB's
    remote layer and never reach Python (seen once in CI): when nothing says "interrupted" 1.5 s
    later, it is sent again, as a user presses Ctrl-C again, and the output at that one is returned."""
    import os
    import pty
    import select
    import signal
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    buf, at_signal, sent = b"", None, None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.05)
        if ready:
            try:
                data = os.read(master, 4096)
            except OSError:
                break
            if not data:
                break
            buf += data
        again = sent is not None and time.monotonic() - sent > 1.5 and b"interrupted" not in buf
        if (at_signal is None and trigger in buf) or (again and proc.poll() is None):
            at_signal, sent = buf, time.monotonic()
            proc.send_signal(signal.SIGINT)
        if proc.poll() is not None and not ready:
            break
    proc.kill()
    proc.wait()
    os.close(master)
    return buf.decode(errors="replace"), (at_signal or b"").decode(errors="replace")


def _kib_so_far(text):
    import re
    return [float(x) for x in re.findall(r"([\d.]+) KiB so far", text)]


@pytest.mark.parametrize("front", ["gdb", "tool"])
def test_a_long_read_shows_progress_and_ctrl_c_stops_it_within_one_chunk(front):
    """A 256 KiB stack range scanned through the rig's probe (about 30-50 KiB/s: several seconds):
    after a second the command shows one updating line; Ctrl-C then stops it before the next
    chunk (4 KiB through GDB, 1 KiB through the Tcl port) is done, and says how much it read.
    In GDB the next command runs."""
    import re
    with Chain(str(FIRMWARE)) as ch:
        ch.tcl.call("halt")
        if front == "gdb":
            cmd = ["gdb-multiarch", "-q", "-nx", "-batch", str(FIRMWARE), "-ex",
                   f"target extended-remote 127.0.0.1:{ch.gport}", "-ex", f"source {PLUGIN}",
                   "-ex", "set arena stack-range 0x20000000 0x20040000", "-ex", "arena stack", "-ex", "print 42"]
            chunk = 4
        else:
            cmd = [str(CLI), "check", "--via", f"tcl:127.0.0.1:{ch.tport}", "--elf", str(FIRMWARE),
                   "--stack-range", "0x20000000", "0x20040000"]
            chunk = 1
        out, at_signal = _run_until(cmd, b"KiB so far")
    assert at_signal, out
    before = _kib_so_far(at_signal)[-1]
    name = "arena stack" if front == "gdb" else "arenascope check"
    m = re.search(name + r": interrupted \(Ctrl-C\) after reading ([\d.]+) KiB of target memory", out)
    assert m, out
    # the progress line redraws at most every 0.1 s: a few KiB may have been read since it was drawn
    assert before <= float(m.group(1)) <= before + 2 * chunk + 0.1 * 64, (before, m.group(1))
    assert float(m.group(1)) < 256
    assert "Traceback" not in out
    if front == "gdb":
        assert "$1 = 42" in out, out


def test_live_that_ends_with_the_link_down_says_so():
    """OpenOCD frozen (SIGSTOP) after a few good refreshes of `arenascope live`: the summary must
    not read as a live view to the end. It says the link was down when it ended, since which
    refresh and for how long (a new user's trial found only "34 refreshes" and exit 0)."""
    vport = free_ports(1)[0]
    got = viewer_stand_in(vport)
    with Chain(str(FIRMWARE)) as ch:
        def freeze(sig):  # OpenOCD itself: the chain's process is the `timeout` wrapper around it
            subprocess.run(["pkill", f"-{sig.name.removeprefix('SIG')}", "-P", str(ch.procs["openocd"].pid)],
                           check=False)
        ch.gdb(RESET + ["-ex", "monitor resume"])
        proc = subprocess.Popen([str(CLI), "live", "--openocd", f"127.0.0.1:{ch.tport}", "--elf", str(FIRMWARE),
                                 "--port", str(vport), "--no-viewer", "--link-timeout", "0.5", "--duration", "300"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            def snaps(link):
                return [g for g in got if g.get("type") == "snapshot" and (g["snapshot"].get("live") or {}).get(
                    "link") == link]
            assert wait_for(lambda: len(snaps("ok")) >= 3, 120)
            freeze(signal.SIGSTOP)
            assert wait_for(lambda: snaps("lost"), 60)  # the tool saw the link fail and told the viewer
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=60)
        finally:
            freeze(signal.SIGCONT)
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 143, err
    assert "live read failed: " in err, err
    last_ok = max(s["snapshot"]["live"]["refresh_index"] for s in snaps("ok"))
    assert "arenascope live: it ended with the link down (" in err and f"after refresh {last_ok}" in err, err


def test_the_tools_soak_checks_the_running_firmware_through_openocd():
    """`arenascope soak 40` through OpenOCD's Tcl port while the demo runs: the agent's count says
    how many inferences passed (from the first refresh's to the last's), every rule is checked at
    each refresh, and the JSON carries the worst of each; the run ends once 40 inferences passed."""
    with Chain(str(FIRMWARE)) as ch:
        ch.gdb(RESET + ["-ex", "monitor resume"])
        r = subprocess.run([str(CLI), "soak", "40", "--openocd", f"127.0.0.1:{ch.tport}", "--elf", str(FIRMWARE),
                            "--planner", str(PLANNER), "--json"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["verdict"] == "PASS" and doc["stopped"] is None, doc
    assert doc["inferences"] == doc["last_inference"] - doc["first_inference"] + 1 >= 40, doc
    assert 1 <= doc["checked"] <= doc["inferences"]
    assert {"canary", "guard", "stack", "used"} <= set(doc["rules"]), doc
    assert all(w["verdict"] == "PASS" and w["times"] == doc["checked"] for w in doc["rules"].values()), doc
    assert doc["arena_peaks"][0]["bytes"] == PLAN["arena"]["arena_used_bytes"] + 64  # + the demo's temp bytes
    assert "arenascope soak: 40 inferences of" in r.stderr
