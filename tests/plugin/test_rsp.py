"""The GDB remote protocol reader (acquire/rsp.py) against a scripted server on a loopback socket:
a stand-in for a GDB server's bad days (the real ones, QEMU's gdbstub and OpenOCD's GDB port,
are in tests/integration/test_openocd_live.py). Expected bytes are written out here by hand
from the GDB manual's rules (Appendix E.1: checksum, `}` escapes, `*` run-length)."""
import socket
import threading

import pytest

from arenascope_plugin.acquire import rsp
from arenascope_plugin.acquire.reader import MemoryReadError


def packet(payload: bytes) -> bytes:
    return b"$" + payload + b"#" + b"%02x" % (sum(payload) % 256)


class Scripted:
    """Answers each packet it receives with replies(payload) -> raw bytes (or None: say nothing;
    "close": hang up; an iterator of byte strings: each sent in turn, as slowly as it yields them,
    until it ends or the client hangs up: floods and drips, tests/plugin/test_hostile_servers.py)."""

    def __init__(self, replies, ack=True):
        self.replies, self.ack = replies, ack
        self.got = []
        self.last = None
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._conn, args=(conn,), daemon=True).start()

    def _conn(self, conn):
        buf = b""
        with conn:
            while True:
                try:
                    data = conn.recv(4096)
                except OSError:
                    return
                if not data:
                    return
                buf += data
                if b"-" in buf.split(b"$")[0] and self.last is not None:
                    conn.sendall(self.last)     # '-': the last reply failed its checksum, resend
                    buf = buf.replace(b"-", b"", 1)
                while b"#" in buf and b"$" in buf:
                    start = buf.index(b"$")
                    end = buf.index(b"#", start)
                    if len(buf) < end + 3:
                        break
                    payload, buf = buf[start + 1:end], buf[end + 3:]
                    self.got.append(payload)
                    if self.ack:
                        conn.sendall(b"+")
                    out = self.replies(payload)
                    if out == "close":
                        return
                    if out is not None and not isinstance(out, bytes):
                        try:
                            for chunk in out:
                                conn.sendall(chunk)
                        except OSError:
                            return
                    elif out is not None:
                        self.last = out if not out.endswith(b"#00") else packet(out[1:-3])
                        conn.sendall(out)

    def close(self):
        self.sock.close()


def server(table, ack=True, supported=b"PacketSize=40;QStartNoAckMode+"):
    def replies(p):
        if p.startswith(b"qSupported"):
            return packet(supported)
        if p == b"QStartNoAckMode":
            return packet(b"OK")
        for key, value in table.items():
            if p.startswith(key):
                return value(p) if callable(value) else value
        return packet(b"")
    return Scripted(replies, ack)


def test_frame_escapes_and_checksums_as_the_manual_says():
    assert rsp.frame(b"m0,4") == b"$m0,4#fd"           # 0x6d+0x30+0x2c+0x34 = 0xfd
    assert rsp.frame(b"a#b") == b"$a}\x03b#" + b"%02x" % ((0x61 + 0x7D + 0x03 + 0x62) % 256)


def test_decode_undoes_escapes_and_run_length():
    assert rsp.decode(b"0* ") == b"0" * 4              # ' ' is 32: 32 - 29 = 3 more
    assert rsp.decode(b"ab}\x03c") == b"ab#c"
    assert rsp.decode(b"x*\"") == b"xxxxxx"            # '"' is 34: 5 more
    with pytest.raises(rsp.RspError, match="run-length"):
        rsp.decode(b"a*\x01")


def test_reads_are_chunked_to_the_packet_size_and_run_length_replies_decoded():
    memory = bytes(range(64))

    def m(p):
        addr, n = (int(x, 16) for x in p[1:].split(b","))
        text = memory[addr:addr + n].hex().encode()
        if addr == 0:
            text = b"00*!" + text[6:]                  # run-length: "00" then 4 more '0' = "000000"
        return packet(text)
    s = server({b"m": m}, supported=b"PacketSize=28;QStartNoAckMode+")
    memory = bytes(3) + bytes(range(3, 64))
    link = rsp.RspLink("127.0.0.1", s.port)
    r = rsp.RspReader(link)
    assert r.read(0, 64) == memory
    assert link.packet_size == 0x28 and link.no_ack
    # (0x28 - 4) / 2 = 18 bytes, whole words: 16 a packet
    sizes = [int(p.split(b",")[1], 16) for p in s.got if p.startswith(b"m")]
    assert sizes == [16, 16, 16, 16] and r.calls == 4 and r.bytes == 64
    s.close()


def test_a_bad_checksum_is_asked_again_in_ack_mode():
    tries = []

    def m(p):
        tries.append(p)
        return b"$01020304#00" if len(tries) == 1 else packet(b"01020304")
    s = server({b"m": m}, supported=b"PacketSize=400")  # no QStartNoAckMode: acks stay on
    link = rsp.RspLink("127.0.0.1", s.port)
    assert rsp.RspReader(link).read(0x100, 4) == b"\x01\x02\x03\x04" and not link.no_ack
    s.close()


def test_server_errors_and_hostile_replies_are_read_errors_with_the_servers_words():
    s = server({b"m100": packet(b"E14"), b"m200": packet(b"zz"), b"m300": packet(b"E.no memory here")})
    r = rsp.RspReader(rsp.RspLink("127.0.0.1", s.port, server="pyOCD"))
    with pytest.raises(MemoryReadError, match="pyOCD answered E14"):
        r.read(0x100, 4)
    with pytest.raises(MemoryReadError, match="not hex"):
        r.read(0x200, 4)
    with pytest.raises(MemoryReadError, match="E.no memory here"):
        r.read(0x300, 4)
    assert r.link_failures == 0  # the link works: the memory does not
    s.close()


def test_a_silent_server_times_out_and_a_closing_one_is_said_and_reconnected():
    s = server({b"m100": None, b"m200": "close", b"m300": packet(b"aabbccdd")})
    link = rsp.RspLink("127.0.0.1", s.port, timeout=0.5, server="the J-Link GDB server")
    r = rsp.RspReader(link)
    with pytest.raises(MemoryReadError, match="no reply from the J-Link GDB server 127.0.0.1:.* within 0.5 s: it "
                                              "acknowledged the request"):
        r.read(0x100, 4)
    link.rearm()  # a new command: the server is asked again (tests/plugin/test_hostile_servers.py: until then not)
    with pytest.raises(MemoryReadError, match="closed the connection"):
        r.read(0x200, 4)
    assert r.read(0x300, 4) == b"\xaa\xbb\xcc\xdd"     # reconnected by itself
    assert r.link_failures == 2 and link.connects == 3
    s.close()


def test_a_reply_without_end_and_an_absurd_packet_size_are_not_believed():
    s = server({b"m": lambda p: b"$" + b"0" * (rsp.MAX_REPLY_BYTES + 10)},
               supported=b"PacketSize=ffffffffff;QStartNoAckMode+")
    link = rsp.RspLink("127.0.0.1", s.port, timeout=5)
    r = rsp.RspReader(link)
    with pytest.raises(MemoryReadError, match="without its end"):
        r.read(0, 4)
    assert link.packet_size == rsp.MAX_PACKET_SIZE or link._sock is None
    s.close()


def test_nothing_listening_says_what_to_do():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(MemoryReadError, match="cannot connect to OpenOCD 127.0.0.1:.*docs/hardware.md"):
        rsp.RspReader(rsp.RspLink("127.0.0.1", port, server="OpenOCD")).read(0, 4)


def test_a_long_read_stops_between_chunks_and_reports_progress():
    s = server({b"m": lambda p: packet(b"00" * int(p.split(b",")[1], 16))}, supported=b"PacketSize=1000")
    cancel, seen = threading.Event(), []

    class Progress:
        def add(self, n, done, total):
            seen.append((done, total))
            if len(seen) == 3:
                cancel.set()
    r = rsp.RspReader(rsp.RspLink("127.0.0.1", s.port), chunk=256, cancel=cancel, progress=Progress())
    with pytest.raises(MemoryReadError, match="interrupted between chunks"):
        r.read(0, 16384)
    assert seen == [(256, 16384), (512, 16384), (768, 16384)] and r.calls == 3
    s.close()


def test_read_many_pipelines_the_packets_and_merges_adjacent_pieces():
    # The server answers nothing until it holds all three `m` packets (then all three replies at
    # once): a reader that waited for each reply before sending the next would hit its deadline.
    memory = {0x100: bytes(range(16)), 0x200: bytes(range(100, 108)), 0x300: b"\xaa\xbb\xcc\xdd"}
    held = []

    def m(p):
        held.append(p)
        if len(held) < 3:
            return None
        out = b""
        for q in held:
            addr, n = (int(x, 16) for x in q[1:].split(b","))
            base = max(b for b in memory if b <= addr)
            out += packet(memory[base][addr - base:addr - base + n].hex().encode())
        return out
    s = server({b"m": m}, ack=False, supported=b"PacketSize=400;QStartNoAckMode+")
    link = rsp.RspLink("127.0.0.1", s.port, timeout=2.0)
    r = rsp.RspReader(link)
    got = r.read_many([(0x100, 4), (0x104, 12), (0x200, 8), (0x300, 4)])
    assert got == [bytes(range(4)), bytes(range(4, 16)), bytes(range(100, 108)), b"\xaa\xbb\xcc\xdd"]
    # the two adjacent pieces were one packet of 16 bytes; three packets in all, in order
    assert [p for p in s.got if p.startswith(b"m")] == [b"m100,10", b"m200,8", b"m300,4"]
    assert r.calls == 3 and r.bytes == 28
    s.close()


def test_read_many_goes_packet_by_packet_when_the_server_keeps_acknowledging():
    # No QStartNoAckMode: the server waits for each reply's `+` (OpenOCD's gdb_put_packet does), so
    # the packets are not pipelined; the answers are the same.
    def m(p):
        addr, n = (int(x, 16) for x in p[1:].split(b","))
        return packet(bytes((addr + i) & 0xFF for i in range(n)).hex().encode())
    s = server({b"m": m}, supported=b"PacketSize=400")
    link = rsp.RspLink("127.0.0.1", s.port, timeout=2.0)
    got = rsp.RspReader(link).read_many([(0x10, 4), (0x40, 4)])
    assert not link.no_ack
    assert got == [bytes([0x10, 0x11, 0x12, 0x13]), bytes([0x40, 0x41, 0x42, 0x43])]
    s.close()


def test_a_server_that_closes_a_second_connection_is_told_how_to_take_two():
    # OpenOCD with its default -gdb-max-connections 1 accepts a second connection, then closes it:
    # the client's next send fails with a broken pipe (or a reset), which is how it is told apart
    link = rsp.RspLink("127.0.0.1", 3333, server="OpenOCD")
    for exc in (BrokenPipeError(32, "Broken pipe"), ConnectionResetError(104, "Connection reset by peer")):
        text = link._failed_text(exc)
        assert text.startswith(f"the connection to OpenOCD 127.0.0.1:3333 failed: {exc.strerror} (it closed the "
                               "connection: a server that takes one GDB connection at a time closes a second"), text
        assert "-gdb-max-connections 2" in text and "--via tcl:HOST:PORT" in text
    assert link._failed_text(OSError(113, "No route to host")) == \
        "the connection to OpenOCD 127.0.0.1:3333 failed: No route to host"
