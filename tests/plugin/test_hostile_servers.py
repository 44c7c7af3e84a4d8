"""Hostile servers on the live link (issue 37, "Hangs"): the GDB remote protocol reader waited
forever while a server kept sending (`%Stop` notifications, `O` console packets, bytes that are not
a packet, a reply dripping in), a silent server cost one deadline per read (28 s a command), and
`arena fault` then said "no fault" having read nothing. Now every request has one deadline for all
of it, the error names what the server did, the link fails at once until the next command or
refresh, and the tool ends at --duration and on SIGTERM.

The fake servers are test_rsp.py's Scripted (GDB remote protocol) and test_live_exit.py's fake
OpenOCD (Tcl). Deadlines here are 0.3 s; each bound is an upper bound on the time taken (no sleep
decides anything), generous for a loaded machine and far below "never"."""
import itertools
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from arenascope_plugin.acquire import openocd, rsp
from arenascope_plugin.acquire.reader import MemoryReadError
from arenascope_plugin.serve import livepoll
from test_live_exit import ELF, TOOL, fake_openocd
from test_rsp import packet, server

DEADLINE = 0.3
BOUND = 5.0          # seconds a request may take at most here: the deadline, and room for a loaded machine


def forever(chunk: bytes, pause: float = 0.0, backstop: float = 30.0):
    """The same bytes again and again (a flood), or one a `pause` apart (a drip); `backstop`
    seconds at most, so that a reader that waits for ever fails its test instead of hanging it."""
    end = time.monotonic() + backstop
    while time.monotonic() < end:
        yield chunk
        if pause:
            time.sleep(pause)


def timed(call):
    """(the exception call raised, seconds it took)."""
    start = time.monotonic()
    with pytest.raises((MemoryReadError, rsp.RspError, openocd.TclError)) as got:
        call()
    return got.value, time.monotonic() - start


NOTIFICATION = b"%Stop:T05thread:01;#" + b"%02x" % (sum(b"Stop:T05thread:01;") % 256)
CONSOLE = packet(b"O" + b"flash erased\n".hex().encode())


@pytest.mark.parametrize("ack", [False, True], ids=["no-ack", "ack-mode"])
def test_a_flood_of_stop_notifications_is_named_within_the_deadline(ack):
    # ack mode: the notifications arrive while the reader waits for the `+`, and no ack ever comes
    s = server({b"m": lambda p: forever(NOTIFICATION * 200)}, ack=False,
               supported=b"PacketSize=400" if ack else b"PacketSize=400;QStartNoAckMode+")
    link = rsp.RspLink("127.0.0.1", s.port, timeout=DEADLINE, server="pyOCD")
    link.ensure()
    error, took = timed(lambda: rsp.RspReader(link).read(0x20000000, 4))
    assert took < BOUND
    assert re.search(r"no reply from pyOCD 127\.0\.0\.1:\d+ within 0\.3 s: it flooded the link with \d+ "
                     r"notifications \(`%\.\.\.`\) and no reply", str(error)), error
    s.close()


def test_endless_console_output_is_named_within_the_deadline():
    s = server({b"m": lambda p: forever(CONSOLE * 200)})
    link = rsp.RspLink("127.0.0.1", s.port, timeout=DEADLINE)
    error, took = timed(lambda: link.read_memory(0x20000000, 4))
    assert took < BOUND
    assert re.search(r"it flooded the link with \d+ console output packets \(`O`, \d+ B of text\) and no reply",
                     str(error)), error
    s.close()


def test_bytes_that_are_no_packet_are_named_within_the_deadline():
    s = server({b"m": lambda p: forever(b"garbage, no packet start " * 100)})
    link = rsp.RspLink("127.0.0.1", s.port, timeout=DEADLINE)
    error, took = timed(lambda: link.read_memory(0x20000000, 4))
    assert took < BOUND
    assert re.search(r"it sent \d+ B that are not the GDB remote protocol \(no `\$` starting a packet, and it is "
                     r"still sending\): is this port a GDB server's\?", str(error)), error
    s.close()


def test_a_reply_dripping_in_and_a_reply_that_stops_are_told_apart():
    # (a deadline of 1 s: a drip's byte 5 ms apart is "still arriving" even on a loaded machine)
    s = server({b"m1": lambda p: itertools.chain([b"$"], forever(b"0", pause=0.005)),  # a byte every 5 ms
                b"m2": packet(b"00" * 256)[:9]})              # part of a reply, then nothing
    link = rsp.RspLink("127.0.0.1", s.port, timeout=1.0)
    error, took = timed(lambda: link.read_memory(0x1000, 256))
    assert took < BOUND
    assert re.search(r"its reply came too slowly: \d+ B of it, still arriving \(a drip\)", str(error)), error
    link.rearm()
    error, took = timed(lambda: link.read_memory(0x2000, 256))
    assert took < BOUND
    assert re.search(r"it stalled: 9 B of a reply, then nothing for \d+\.\d s", str(error)), error
    s.close()


def test_a_server_that_accepts_and_answers_nothing_costs_one_deadline_then_none():
    s = server({}, ack=False)
    s.replies = lambda p: None                                # not even qSupported is answered
    link = rsp.RspLink("127.0.0.1", s.port, timeout=DEADLINE, server="the J-Link GDB server")
    reader = rsp.RspReader(link)
    error, took = timed(lambda: reader.read(0x20000000, 4))
    assert took < BOUND
    assert re.search(r"no reply from the J-Link GDB server 127\.0\.0\.1:\d+ within 0\.3 s: it answered nothing: the "
                     "connection is open but silent", str(error)), error
    # The same command's next reads fail at once, with the same words: nothing is sent, no reconnection.
    asked, connects = len(s.got), s.accepted
    for addr in (0x20000100, 0xE000ED04, 0x20001000):
        again, _ = timed(lambda addr=addr: reader.read(addr, 4))
        assert again.why == error.why
    assert (len(s.got), s.accepted) == (asked, connects)
    # The next command (or live refresh) asks again.
    link.rearm()
    again, took = timed(lambda: reader.read(0x20000000, 4))
    assert took < BOUND and again.why == error.why and s.accepted == connects + 1
    s.close()


def test_a_flood_at_every_refresh_is_said_once_and_each_refresh_asks_again():
    s = server({b"m": lambda p: forever(CONSOLE * 200)})
    link = rsp.RspLink("127.0.0.1", s.port, timeout=DEADLINE)
    reader = rsp.RspReader(link)

    class Poller:  # what livepoll.run uses of a LivePoller, whose refresh rearms the link first (below)
        last, trouble, trouble_link, refreshes = None, None, "lost", 0

        def refresh(self):
            link.rearm()
            reader.read(0x20000000, 4)

        def lost(self, why, how):
            return None

        def settle(self):
            pass
    said, stop = [], threading.Event()

    def three_asked():
        end = time.monotonic() + 30
        while s.got.count(b"m20000000,4") < 3 and time.monotonic() < end:
            time.sleep(0.01)
        stop.set()
    threading.Thread(target=three_asked, daemon=True).start()
    start = time.monotonic()
    livepoll.run(Poller(), lambda snap: None, 20, stop, said.append, interval_errors=0.01)
    assert time.monotonic() - start < 3 * BOUND
    assert s.got.count(b"m20000000,4") >= 3          # each refresh asked the server again
    assert len(said) == 1 and "flooded the link" in said[0], said  # once, though the counts differ
    s.close()


def test_the_poller_rearms_the_link_before_each_refresh():
    class Link:
        rearmed = 0

        def rearm(self):
            Link.rearmed += 1

    class Reader:
        name, link, bytes, calls, link_failures = "fake", Link(), 0, 0, 0

        def read(self, addr, length):
            raise MemoryReadError(addr, length, "nothing here")
    from arenascope_plugin import pipeline
    poller = livepoll.LivePoller(pipeline.Target(Reader(), None, None), pipeline.Settings())
    with pytest.raises(Exception):  # noqa: B017 (what the refresh raises is not the point here)
        poller.refresh()
    assert Link.rearmed == 1


# --- OpenOCD's Tcl port

def test_a_tcl_reply_dripping_in_is_named_within_the_deadline():
    def answer(cmd):
        if b"read_memory" in cmd:
            return forever(b"0", pause=0.005)               # a byte every 5 ms, never the 0x1a
        return b"0 {Open On-Chip Debugger 0.12.0}\x1a" if b"version" in cmd else b"\x1a"
    srv = fake_openocd(answer)
    link = openocd.TclLink("127.0.0.1", srv.getsockname()[1], timeout=1.0, quiet=False)
    assert link.call("version")[0]
    error, took = timed(lambda: link.call("read_memory 0x20000000 32 1"))
    assert took < BOUND
    assert re.search(r"no reply from OpenOCD on its Tcl port 127\.0\.0\.1:\d+ within 1 s: its reply came too "
                     r"slowly: \d+ B of it and no 0x1a ending it, still arriving \(a drip\)", str(error)), error
    again, _ = timed(lambda: link.call("version"))    # the same command's next call: at once, the same words
    assert str(again) == str(error)
    srv.close()


def test_a_tcl_side_channel_that_stalls_is_named_within_the_deadline():
    """OpenOCD connects back (the side channel) and answers on the main port, but the result on
    the side channel stops half way."""
    side = []

    def answer(cmd):
        if b"socket stream" in cmd:
            host, port = re.search(rb"socket stream ([\d.]+):(\d+)", cmd).groups()
            side.append(socket.create_connection((host.decode(), int(port))))
            return b"\x1a"
        if b"puts" in cmd:
            side[-1].sendall(b"0 {0x0000")                  # half a result, never its 0x1a
            return b"\x1a"
        return b"0 {}\x1a"
    srv = fake_openocd(answer)
    link = openocd.TclLink("127.0.0.1", srv.getsockname()[1], timeout=DEADLINE)
    error, took = timed(lambda: link.call("read_memory 0x20000000 32 1"))
    assert link.quiet_why is None and side          # the side channel was in use
    assert took < BOUND
    assert re.search(r"no reply from OpenOCD on the side channel from 127\.0\.0\.1:\d+ within 0\.3 s: it stalled: "
                     r"9 B of a reply and no 0x1a ending it, then nothing for \d+\.\d s", str(error)), error
    srv.close()


def test_a_silent_tcl_port_costs_one_deadline():
    srv = fake_openocd(lambda cmd: None)
    reader = openocd.TclReader(openocd.TclLink("127.0.0.1", srv.getsockname()[1], timeout=DEADLINE, quiet=False))
    error, took = timed(lambda: reader.read(0x20000000, 4))
    assert took < BOUND and "within 0.3 s: it answered nothing" in str(error), error
    start = time.monotonic()
    for addr in range(0x20000000, 0x20000040, 4):
        with pytest.raises(MemoryReadError, match="it answered nothing"):
            reader.read(addr, 4)
    assert time.monotonic() - start < DEADLINE        # 16 reads, none of them waited
    srv.close()


# --- the standalone tool

needs_elf = pytest.mark.skipif(not ELF.exists(), reason="the demo firmware is not built (bash tools/build.sh)")


def gdb_port(flood):
    """A GDB server that answers the handshake and then, to every read, floods or says nothing.
    first_read[0]: when the first read came (the tool's start-up, seconds on a loaded machine, is
    not what is measured)."""
    first_read = []

    def read(p):
        first_read.append(time.monotonic())
        return forever(flood) if flood else None
    s = server({b"m": read}, ack=False)
    s.first_read = first_read
    return s


def tool(*args, **kw):
    return subprocess.Popen([sys.executable, str(TOOL), *map(str, args)], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


@needs_elf
def test_the_tool_on_a_silent_server_ends_within_the_deadline_and_says_the_fault_state_is_unread():
    for command in ("info", "fault"):
        s = gdb_port(None)
        proc = tool(command, "--via", f"gdb:127.0.0.1:{s.port}", "--elf", ELF, "--link-timeout", 1)
        out, err = proc.communicate(timeout=120)
        took = time.monotonic() - s.first_read[0]
        assert took < 1 + BOUND, (command, took)      # the deadline once, not once a read (28 s before)
        assert len(s.first_read) == 1, (command, s.got)  # asked once: after it, every read failed at once
        s.close()
        assert "within 1 s: it answered nothing" in out + err, (command, out, err)
        if command == "fault":
            assert "no fault: the core is not in a fault handler" not in out, out
            assert "could not read the fault state" in out, out


@needs_elf
def test_live_duration_ends_against_a_flooding_server():
    s = gdb_port(CONSOLE * 200)
    proc = tool("live", "--via", f"gdb:127.0.0.1:{s.port}", "--elf", ELF, "--duration", 1, "--no-viewer",
                "--link-timeout", DEADLINE)
    out, err = proc.communicate(timeout=120)
    assert time.monotonic() - s.first_read[0] < 1 + DEADLINE + BOUND  # --duration and one deadline
    assert proc.returncode == 1, err                    # no refresh succeeded (docs/hardware.md)
    assert "flooded the link with" in err and "console output packets" in err, err
    assert err.count("live read failed") == 1, err     # said once, not every refresh
    s.close()


def read_until(stream, text, seconds=60):
    """Lines of `stream` up to the one holding `text` (a backstop of `seconds` on the whole)."""
    lines, timer = [], threading.Timer(seconds, stream.close)
    timer.start()
    try:
        for line in stream:
            lines.append(line)
            if text in line:
                return lines
    except ValueError:  # closed by the backstop
        pass
    finally:
        timer.cancel()
    pytest.fail(f"{text!r} never came: {''.join(lines)}")


@needs_elf
def test_sigterm_ends_live_against_a_flooding_server_with_a_message(tmp_path):
    s = gdb_port(NOTIFICATION * 200)
    out = tmp_path / "last.json"
    proc = tool("live", "--via", f"gdb:127.0.0.1:{s.port}", "--elf", ELF, "--no-viewer", "--link-timeout", 60,
                "--snapshot-out", out)
    try:
        read_until(proc.stderr, "arenascope live: reading")
        start = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        rest = proc.stderr.read()
        proc.wait(timeout=60)
        assert time.monotonic() - start < BOUND         # promptly, though the read's deadline is a minute away
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, rest
    assert "arenascope live: terminated (SIGTERM): exit status 143" in rest, rest
    assert not out.exists() and not [p for p in os.listdir(tmp_path) if p.startswith(".arenascope-")]
    s.close()


@needs_elf
def test_sigterm_ends_info_on_a_silent_server_with_a_message():
    asked = threading.Event()
    s = server({b"m": lambda p: asked.set()})           # reads are asked, never answered
    proc = tool("info", "--via", f"gdb:127.0.0.1:{s.port}", "--elf", ELF, "--link-timeout", 60)
    try:
        assert asked.wait(60), "the tool never read"
        start = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        assert time.monotonic() - start < BOUND
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert re.search(r"arenascope info: terminated \(SIGTERM\)", err), err
    assert "Traceback" not in err, err
    s.close()


def test_a_local_server_that_takes_no_connection_is_said_stopped_or_hung():
    """A server on this machine that stopped accepting (frozen with SIGSTOP: its listen backlog
    fills and the kernel drops the next connection's SYN) is not "the host is down, or a
    firewall": a new user's trial of a frozen OpenOCD got that. The backlog is filled here."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(0)
    port = srv.getsockname()[1]
    fillers = []
    try:
        for _ in range(8):  # until a connection is no longer completed by the kernel
            s = socket.socket()
            s.settimeout(0.2)
            try:
                s.connect(("127.0.0.1", port))
            except (TimeoutError, OSError):
                s.close()
                break
            fillers.append(s)
        else:
            pytest.skip("the kernel completed every connection: no full backlog to test")
        for link in (rsp.RspLink("127.0.0.1", port, timeout=0.3), openocd.TclLink("127.0.0.1", port, timeout=0.3)):
            with pytest.raises((rsp.RspError, openocd.TclError)) as err:
                link.ensure() if isinstance(link, rsp.RspLink) else link.command("version")
            assert "no answer to the connection within 0.3 s (the server on this machine takes no connection: it " \
                "is stopped or hung" in str(err.value), str(err.value)
    finally:
        for s in fillers:
            s.close()
        srv.close()
