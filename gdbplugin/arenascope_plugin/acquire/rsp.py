"""A GDB server's remote serial protocol (RSP) as a MemoryReader: a second connection to the
GDB port of OpenOCD, the J-Link GDB server, ST-LINK_gdbserver or pyOCD, reading memory while
GDB holds the first connection and the core runs (the probe reads through the MEM-AP without
halting it). No GDB process here: the standalone `arenascope live` uses it as the plugin does.

The protocol, from GDB's manual (Appendix E "GDB Remote Serial Protocol"):
- a packet is `$payload#cc`, cc the two hex digits of the payload's byte sum mod 256; until no-ack
  mode, each packet is acknowledged with `+` (or `-`: resend) (E.1 "Overview");
- in a reply, `}` escapes the next byte (XOR 0x20) and `X*n` repeats X n-29 times (run-length
  encoding, E.1);
- `qSupported` tells the server's `PacketSize` (the largest packet it takes, hex), and
  `QStartNoAckMode` ends the acknowledgements (E.4 "General Query Packets");
- `m addr,length` reads memory: hex bytes, or `Enn` / `E.text` on error (E.2 "Packets").

Reads only: `m` and queries; nothing here writes memory, sets registers, or resumes or halts the
core. (Some servers halt the core when a connection opens: docs/hardware.md says which and how
to stop it.)

Every request has one deadline (`timeout`, 3 s unless set: `--link-timeout`, `set arena
link-timeout`), for all of it: connecting, the acknowledgement, and the reply, whatever arrives
meanwhile (console output `O` packets, `%Stop` notifications, bytes that are not a packet, a reply
dripping in). When it passes, the error says what the server did (answered nothing, flooded the
link, stalled mid-reply, sent no packet), and the link fails every later request at once with
that message until rearm() (the next command, the live poller's next refresh): a dead server
costs one deadline, not one per read. docs/hardware.md, "What a bad server gets"."""
import re
import socket
import time

from arenascope_plugin.acquire.reader import (
    MemoryReader,
    MemoryReadError,
    connect_timeout_cause,
    merge_adjacent,
    split_merged,
    still_sending,
)
from arenascope_plugin.acquire.symbols import Core
from arenascope_plugin.errors import ArenascopeError

TIMEOUT_S = 3.0             # a request's deadline unless set (--link-timeout, `set arena link-timeout`)
SLICE_S = 0.25              # a wait for bytes is cut into slices this long: a cancel is seen within one
DEFAULT_PORT = 3333          # OpenOCD's and pyOCD's default GDB port (`gdb:HOST` alone means it)
DEFAULT_PACKET_SIZE = 400    # GDB's own assumption when the server does not say (remote.c)
MAX_PACKET_SIZE = 1 << 17    # a PacketSize above this is not believed (a hostile or broken server)
MAX_REPLY_BYTES = 1 << 20    # a reply longer than this without its '#' is not RSP
CHUNK_BYTES = 1024           # bytes an `m` asks for at most: a long read stops within one chunk


class RspError(ArenascopeError):
    """The RSP link failed (connection, timeout, protocol); the message says what to do."""


def checksum(payload: bytes) -> bytes:
    return b"%02x" % (sum(payload) & 0xFF)


def frame(payload: bytes) -> bytes:
    """`$payload#cc`, with `$ # } *` in the payload escaped (GDB manual E.1)."""
    escaped = re.sub(rb"[$#}*]", lambda m: b"}" + bytes([m.group(0)[0] ^ 0x20]), payload)
    return b"$" + escaped + b"#" + checksum(escaped)


def decode(body: bytes) -> bytes:
    """A reply's payload with its escapes and run-length encoding undone (GDB manual E.1)."""
    out = bytearray()
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c == 0x7D and i + 1 < n:        # '}': the next byte XOR 0x20
            out.append(body[i + 1] ^ 0x20)
            i += 2
        elif c == 0x2A and out and i + 1 < n:  # '*': repeat the previous byte (count - 29) times
            count = body[i + 1] - 29
            if count < 0:
                raise RspError(f"bad run-length count {body[i + 1]!r} in a reply")
            out += bytes([out[-1]]) * count
            i += 2
        else:
            out.append(c)
            i += 1
    return bytes(out)


class _Traffic:
    """What the server sent while one exchange waited for its reply: what the error names when
    the deadline passes."""

    def __init__(self) -> None:
        self.acks = self.console = self.console_bytes = self.notes = self.garbage = self.bad = 0
        self.last: float | None = None  # monotonic time of the last byte


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else many or one + 's'}"


_NOTIFICATION = re.compile(rb"%[^%$#]*#[0-9a-fA-F]{2}")   # `%name:data#cc` (GDB manual E.9)
_ACK_OR_START = re.compile(rb"[-+$%]")


class RspLink:
    """One connection to a GDB server; reconnects on the next request after a failure.
    `features`: what qSupported answered; `packet_size`: the largest packet the server takes;
    `no_ack`: whether QStartNoAckMode was accepted. `timeout`: each request's deadline, for the
    whole of it; `failed`: the message of the deadline that passed, which every request repeats
    at once until rearm(); `cancel` (a threading.Event or None): when set, a wait ends within
    SLICE_S."""

    def __init__(self, host: str = "127.0.0.1", port: int = DEFAULT_PORT, timeout: float = TIMEOUT_S,
                 server: str = "the GDB server", cancel=None) -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self.server = server            # how messages name it (acquire/servers.py)
        self.cancel = cancel
        self._sock: socket.socket | None = None   # None: not connected
        self._buf = bytearray()         # bytes received and not yet taken (taken from the front: O(1))
        self.connects = 0
        self.features: dict[str, str] = {}
        self.packet_size = DEFAULT_PACKET_SIZE
        self.no_ack = False
        self.quiet_why = None           # the Tcl link's side-channel note; RSP reads are never logged
        self.failed: str | None = None
        self._deadline = 0.0
        self._traffic = _Traffic()

    @property
    def endpoint(self) -> str:
        return f"{self.host}:{self.port}"

    def _failed_text(self, exc: OSError) -> str:
        """What a failed connection says; a server that closed it (a reset or broken pipe) is most
        often one that takes one GDB connection at a time, and GDB holds it."""
        text = f"the connection to {self._where()} failed: {exc.strerror or exc}"
        if isinstance(exc, (BrokenPipeError, ConnectionResetError)):
            text += (" (it closed the connection: a server that takes one GDB connection at a time closes a second; "
                     "let it take two, e.g. OpenOCD's `$_TARGETNAME configure -gdb-max-connections 2` "
                     "(docs/hardware.md says how per server), or read through OpenOCD's Tcl port: --via tcl:HOST:PORT)")
        return text

    def _where(self) -> str:
        return f"{self.server} {self.endpoint}"

    def rearm(self) -> None:
        """A new command or live refresh starts: after a deadline passed, the server is asked again."""
        self.failed = None

    # --- connection
    def _connect(self) -> None:
        try:
            self._sock = sock = socket.create_connection((self.host, self.port), timeout=self._left())
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except TimeoutError:
            self._sock = None
            self.failed = (f"cannot connect to {self._where()}: no answer to the connection within {self.timeout:g} s "
                           f"({connect_timeout_cause(self.host)})")
            raise RspError(self.failed) from None
        except OSError as exc:
            self._sock = None
            raise RspError(f"cannot connect to {self._where()}: {exc.strerror or exc} (is it running, and does it "
                           "take a second connection? docs/hardware.md says how per server)") from None
        self._buf, self.no_ack = bytearray(), False
        self.connects += 1
        try:
            self._send(b"+")              # as GDB does: ack anything the server sent first
            reply = self._exchange(b"qSupported:multiprocess-;swbreak+;hwbreak+;no-resumed+")
            self.features = {}
            for item in reply.split(b";"):
                name, eq, value = item.decode("ascii", "replace").partition("=")
                self.features[name.rstrip("+-?")] = value if eq else name[-1:]
            size = self.features.get("PacketSize", "")
            try:
                self.packet_size = max(16, min(int(size, 16), MAX_PACKET_SIZE)) if size else DEFAULT_PACKET_SIZE
            except ValueError:
                self.packet_size = DEFAULT_PACKET_SIZE
            if self.features.get("QStartNoAckMode") == "+" and self._exchange(b"QStartNoAckMode") == b"OK":
                self.no_ack = True
        except RspError:
            self.close()
            raise

    def close(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
        self._sock, self._buf = None, bytearray()

    # --- the deadline
    def _left(self) -> float:
        """Seconds to the deadline; RspError naming what the server did once it passed."""
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise self._overdue()
        return left

    def _overdue(self) -> RspError:
        """The error of a passed deadline, naming what the server sent meanwhile; kept in `failed`."""
        t, buf = self._traffic, self._buf
        still, quiet = still_sending(self._sock, t.last, self.timeout)
        console = t.console + (buf[:2] == b"$O")   # one not whole yet counts too
        notes = t.notes + (buf[:1] == b"%")
        if buf[:1] == b"$" and not buf[:2] == b"$O":
            what = (f"its reply came too slowly: {len(buf)} B of it, still arriving (a drip)" if still else
                    f"it stalled: {len(buf)} B of a reply, then nothing for {quiet:.1f} s")
        elif console or notes:
            sent = " and ".join(([f"{_count(console, 'console output packet')} (`O`, {t.console_bytes} B of text)"]
                                 if console else []) +
                                ([f"{_count(notes, 'notification')} (`%...`)"] if notes else []))
            what = (f"it flooded the link with {sent} and no reply" if still else
                    f"it sent {sent}, then nothing for {quiet:.1f} s, and no reply")
        elif t.garbage:
            what = (f"it sent {t.garbage} B that are not the GDB remote protocol (no `$` starting a packet"
                    f"{', and it is still sending' if still else ''}): is this port a GDB server's?")
        elif t.bad:
            what = f"its {_count(t.bad, 'reply', 'replies')} all failed their checksum (a noisy link?)"
        elif t.acks:
            what = "it acknowledged the request (`+`) and then answered nothing (probe or target stuck?)"
        else:
            what = ("it answered nothing: the connection is open but silent (probe or target stuck? is this port a "
                    "GDB server's?)")
        self.failed = f"no reply from {self._where()} within {self.timeout:g} s: {what}"
        return RspError(self.failed)

    # --- packets
    def _send(self, data: bytes) -> None:
        sock = self._sock
        assert sock is not None  # only inside an exchange: _within_deadline connected first
        sock.settimeout(self._left())
        sock.sendall(data)

    def _recv(self) -> None:
        """Waits for bytes, SLICE_S at most, within the deadline (RspError once it passed, or when
        cancelled); the bytes, if any, are added to the buffer."""
        left = self._left()
        if self.cancel is not None and self.cancel.is_set():
            raise RspError(f"stopped while waiting for {self._where()}")
        sock = self._sock
        assert sock is not None  # only inside an exchange: _within_deadline connected first
        sock.settimeout(min(SLICE_S, left))
        try:
            chunk = sock.recv(65536)
        except TimeoutError:
            return
        if not chunk:
            raise RspError(f"{self._where()} closed the connection (it quit, restarted, or takes one connection "
                           "at a time: docs/hardware.md)")
        self._traffic.last = time.monotonic()
        self._buf += chunk

    def _skip(self, junk: bytes) -> None:
        """Counts what is dropped before a packet: notifications, acks, anything else."""
        if not junk:
            return
        t = self._traffic
        rest, t_notes = _NOTIFICATION.subn(b"", junk)
        t.notes += t_notes
        acks = rest.count(b"+") + rest.count(b"-")
        t.acks += acks
        t.garbage += len(rest) - acks

    def _check_size(self) -> None:
        if len(self._buf) > MAX_REPLY_BYTES:
            raise RspError(f"a reply from {self._where()} is longer than {MAX_REPLY_BYTES} B without its end: "
                           "not a GDB server?")

    def _read_packet(self) -> bytes:
        """The next packet's raw payload (acks, notifications `%...#cc` and stray bytes skipped)."""
        while True:
            start = self._buf.find(b"$")
            if start < 0:
                # all of it is skipped but a notification not yet whole (its end is counted with it)
                keep = self._buf.rfind(b"%")
                if keep < 0 or _NOTIFICATION.match(self._buf, keep):
                    keep = len(self._buf)
                self._skip(self._buf[:keep])
                del self._buf[:keep]
            else:
                self._skip(self._buf[:start])
                del self._buf[:start]
                end = self._buf.find(b"#")
                if end >= 0 and len(self._buf) >= end + 3:
                    body, cc = bytes(self._buf[1:end]), bytes(self._buf[end + 1:end + 3])
                    del self._buf[:end + 3]
                    if cc.lower() != checksum(body):
                        if self.no_ack:
                            raise RspError(f"a reply from {self._where()} failed its checksum (a noisy link?)")
                        self._traffic.bad += 1
                        self._send(b"-")   # ask again
                        continue
                    if not self.no_ack:
                        self._send(b"+")
                    return body
            self._check_size()
            self._recv()

    def _ack(self) -> bytes:
        """The server's acknowledgement: b"+" (also for a reply that came first) or b"-" (resend)."""
        while True:
            m = _ACK_OR_START.search(self._buf)
            if m is None:
                self._skip(self._buf)
                self._buf.clear()
                self._recv()
                continue
            self._skip(self._buf[:m.start()])
            del self._buf[:m.start()]
            c = bytes(self._buf[:1])
            if c == b"$":             # a reply before the ack (some servers): keep it
                return b"+"
            if c == b"%":             # a notification: skipped whole
                note = _NOTIFICATION.match(self._buf)
                if note is None:
                    self._check_size()
                    self._recv()
                    continue
                self._skip(note.group(0))
                del self._buf[:note.end()]
                continue
            del self._buf[:1]
            self._traffic.acks += 1
            return c

    def _exchange(self, payload: bytes) -> bytes:
        """One packet and its decoded reply (console output skipped), within the request's deadline."""
        self._traffic = _Traffic()
        packet = frame(payload)
        for _ in range(3):
            self._send(packet)
            if self.no_ack or self._ack() == b"+":
                break
        return self._reply()

    def _reply(self) -> bytes:
        """The next decoded reply, console output (`O` packets) skipped."""
        while True:
            body = decode(self._read_packet())
            if body[:1] == b"O" and body != b"OK" and re.fullmatch(rb"O([0-9a-fA-F]{2})+", body):
                self._traffic.console += 1    # console output (a monitor command's): not the reply
                self._traffic.console_bytes += (len(body) - 1) // 2
                self._left()  # the deadline holds while packets already received keep coming
                continue
            return body

    def ensure(self) -> None:
        """Connects if not connected; RspError says why it cannot."""
        self.request(None)

    def request(self, payload: bytes | None) -> bytes:
        """The decoded reply to one packet (None: only connect), within one deadline for all of
        it; RspError (and a closed link) on any failure. After a deadline passed, RspError with
        its message at once, until rearm()."""
        return self._within_deadline(lambda: self._exchange(payload) if payload is not None else b"")

    def request_many(self, payloads: list[bytes]) -> list[bytes]:
        """The decoded replies to packets sent back to back, in order (pipelined: one round trip
        for all of them, not one each), within one deadline; as request() on failure. Only in
        no-ack mode: with acknowledgements a server waits for the `+` of each reply before it reads
        the next packet (OpenOCD's gdb_put_packet does), so then they go one by one."""
        if len(payloads) < 2:
            return [self.request(p) for p in payloads]

        def exchanges():
            if not self.no_ack:  # the server refused no-ack mode when this connection opened
                return [self._exchange(p) for p in payloads]
            self._send(b"".join(frame(p) for p in payloads))
            return [self._reply() for _ in payloads]
        return self._within_deadline(exchanges)

    def _within_deadline(self, work):
        """work() (the exchanges of one request) after connecting if need be, within one deadline
        for all of it; RspError (and a closed link) on any failure, at once after a deadline
        passed, until rearm()."""
        if self.failed is not None:
            raise RspError(self.failed)
        self._deadline = time.monotonic() + self.timeout
        self._traffic = _Traffic()
        try:
            if self._sock is None:
                self._connect()
            return work()
        except TimeoutError:          # a send the server does not take
            error = self._overdue()
            self.close()
            raise error from None
        except OSError as exc:
            self.close()
            raise RspError(self._failed_text(exc)) from None
        except RspError:
            self.close()
            raise

    def read_memory(self, addr: int, length: int) -> bytes:
        """length bytes at addr in one `m` packet (the caller keeps it within max_read());
        MemoryReadError with the server's own error for memory it cannot read."""
        return self.memory_reply(addr, length, self.request(b"m%x,%x" % (addr, length)))

    def memory_reply(self, addr: int, length: int, reply: bytes) -> bytes:
        """The bytes of an `m addr,length` reply; MemoryReadError with the server's own error."""
        if reply[:1] == b"E" and (len(reply) == 3 or reply[1:2] == b"."):
            raise MemoryReadError(addr, length, f"{self.server} answered {reply.decode('ascii', 'replace')[:80]}")
        if not reply:
            raise MemoryReadError(addr, length, f"{self.server} does not read memory (empty reply to `m`)")
        try:
            data = bytes.fromhex(reply.decode("ascii"))
        except ValueError:
            raise MemoryReadError(addr, length, f"{self.server}'s reply is not hex: {reply[:40]!r}") from None
        if not data:
            raise MemoryReadError(addr, length, f"{self.server} read nothing there")
        return data

    def max_read(self) -> int:
        """Bytes one `m` reply can carry: two hex digits a byte, in a packet of packet_size
        (the `$`, `#` and checksum take 4)."""
        return max(4, (self.packet_size - 4) // 2 // 4 * 4)


class RspReader(MemoryReader):
    """Target memory through a GDB server's RSP, while the core runs. Reads are split into `m`
    packets of at most `chunk` bytes (and what the server's PacketSize allows); a short reply
    (the server read less, e.g. up to the end of a region) is continued. `cancel` (a
    threading.Event or None) stops a long read between chunks; `progress.add(bytes, done, total)`
    (present/progress.py) is told after each chunk. Counts calls and bytes for the benchmark."""

    def __init__(self, link: RspLink, chunk: int = CHUNK_BYTES, cancel=None, progress=None) -> None:
        self.link, self.chunk, self.cancel, self.progress = link, max(4, chunk // 4 * 4), cancel, progress
        self.name = f"{link.server} {link.endpoint} (GDB remote protocol, a second connection)"
        self.calls = self.bytes = 0
        self.link_failures, self.last_link_error = 0, ""

    def read(self, addr: int, length: int) -> bytes:
        if length <= 0:
            return b""
        out = bytearray()
        while len(out) < length:
            if self.cancel is not None and self.cancel.is_set():
                raise MemoryReadError(addr, length, "stopped (interrupted between chunks)")
            at = addr + len(out)
            try:
                self.link.ensure()     # PacketSize is known once connected
                n = min(self.chunk, self.link.max_read(), length - len(out))
                data = self.link.read_memory(at, n)[:n]
            except RspError as exc:
                self.link_failures += 1  # the poller tells a lost link from unreadable memory by it
                self.last_link_error = str(exc)
                raise MemoryReadError(at, length - len(out), str(exc)) from None
            self.calls += 1
            self.bytes += len(data)
            out += data
            if self.progress is not None:
                self.progress.add(len(data), len(out), length)
        return bytes(out)


    def read_many(self, pieces):
        """[bytes] for [(addr, length), ...], in order: adjacent pieces as one `m` packet
        (reader.merge_adjacent), and the packets pipelined (RspLink.request_many: one round trip
        in no-ack mode, which OpenOCD, pyOCD and the J-Link GDB server accept). A piece the
        server answers short is finished by read()."""
        try:
            self.link.ensure()
        except RspError as exc:
            self.link_failures += 1
            self.last_link_error = str(exc)
            raise MemoryReadError(pieces[0][0] if pieces else 0, 0, str(exc)) from None
        limit = min(self.chunk, self.link.max_read())
        merged, where = merge_adjacent([(a, a + n) for a, n in pieces])
        if not pieces or any(n <= 0 for _, n in pieces) or any(hi - lo > limit for lo, hi in merged):
            return [self.read(a, n) for a, n in pieces]
        if self.cancel is not None and self.cancel.is_set():
            raise MemoryReadError(pieces[0][0], 0, "stopped (interrupted between chunks)")
        try:
            replies = self.link.request_many([b"m%x,%x" % (lo, hi - lo) for lo, hi in merged])
        except RspError as exc:
            self.link_failures += 1
            self.last_link_error = str(exc)
            raise MemoryReadError(merged[0][0], sum(hi - lo for lo, hi in merged), str(exc)) from None
        data = []
        for (lo, hi), reply in zip(merged, replies, strict=True):
            got = self.link.memory_reply(lo, hi - lo, reply)[:hi - lo]
            self.calls += 1
            self.bytes += len(got)
            data.append(got if len(got) == hi - lo else got + self.read(lo + len(got), hi - lo - len(got)))
        return split_merged(data, where)


class CoreOverRsp(Core):
    """The core through a second RSP connection: no registers and no run state. The server
    believes this connection's target halted (it never resumed it), so its register replies are
    not the running core's; and DHCSR, which says halted or running, is not read: reading it
    clears S_RESET_ST, which the first connection's server watches to see resets (ARMv7-M ARM
    C1.6.2). So the pipeline sees a running core (faults from ICSR and the agent's record)."""
    state = None

    def __init__(self, link: RspLink, symbols=None) -> None:
        self.link, self.symbols = link, symbols

    def refresh(self) -> None:
        return None

    def register(self, name):
        return None

    def frames(self):
        return []

    def frames_complete(self):
        return False  # no registers: nothing unwound
