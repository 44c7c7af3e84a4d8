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
to stop it.)"""
import re
import socket
import time

from arenascope_plugin.acquire.reader import MemoryReader, MemoryReadError
from arenascope_plugin.acquire.symbols import Core

TIMEOUT_S = 3.0
DEFAULT_PORT = 3333          # OpenOCD's and pyOCD's default GDB port (`gdb:HOST` alone means it)
DEFAULT_PACKET_SIZE = 400    # GDB's own assumption when the server does not say (remote.c)
MAX_PACKET_SIZE = 1 << 17    # a PacketSize above this is not believed (a hostile or broken server)
MAX_REPLY_BYTES = 1 << 20    # a reply longer than this without its '#' is not RSP
CHUNK_BYTES = 1024           # bytes an `m` asks for at most: a long read stops within one chunk


class RspError(Exception):
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


class RspLink:
    """One connection to a GDB server; reconnects on the next request after a failure.
    `features`: what qSupported answered; `packet_size`: the largest packet the server takes;
    `no_ack`: whether QStartNoAckMode was accepted."""

    def __init__(self, host: str = "127.0.0.1", port: int = DEFAULT_PORT, timeout: float = TIMEOUT_S,
                 server: str = "the GDB server") -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self.server = server            # how messages name it (acquire/servers.py)
        self._sock = None
        self._buf = b""
        self.connects = 0
        self.features: dict[str, str] = {}
        self.packet_size = DEFAULT_PACKET_SIZE
        self.no_ack = False
        self.quiet_why = None           # the Tcl link's side-channel note; RSP reads are never logged

    @property
    def endpoint(self) -> str:
        return f"{self.host}:{self.port}"

    def _where(self) -> str:
        return f"{self.server} {self.endpoint}"

    # --- connection
    def _connect(self) -> None:
        try:
            self._sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
            self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError as exc:
            self._sock = None
            raise RspError(f"cannot connect to {self._where()}: {exc.strerror or exc} (is it running, and does it "
                           "take a second connection? docs/hardware.md says how per server)") from None
        self._buf, self.no_ack = b"", False
        self.connects += 1
        try:
            self._sock.sendall(b"+")      # as GDB does: ack anything the server sent first
            reply = self._request(b"qSupported:multiprocess-;swbreak+;hwbreak+;no-resumed+")
            self.features = {}
            for item in reply.split(b";"):
                name, eq, value = item.decode("ascii", "replace").partition("=")
                self.features[name.rstrip("+-?")] = value if eq else name[-1:]
            size = self.features.get("PacketSize", "")
            try:
                self.packet_size = max(16, min(int(size, 16), MAX_PACKET_SIZE)) if size else DEFAULT_PACKET_SIZE
            except ValueError:
                self.packet_size = DEFAULT_PACKET_SIZE
            if self.features.get("QStartNoAckMode") == "+" and self._request(b"QStartNoAckMode") == b"OK":
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
        self._sock, self._buf = None, b""

    # --- packets
    def _recv(self, deadline: float) -> None:
        self._sock.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = self._sock.recv(65536)
        if not chunk:
            raise RspError(f"{self._where()} closed the connection (it quit, restarted, or takes one connection "
                           "at a time: docs/hardware.md)")
        self._buf += chunk

    def _read_packet(self, deadline: float) -> bytes:
        """The next packet's raw payload (acks, and notifications `%...#cc`, skipped)."""
        while True:
            start = self._buf.find(b"$")
            if start >= 0:
                self._buf = self._buf[start:]
                end = self._buf.find(b"#")
                if end >= 0 and len(self._buf) >= end + 3:
                    body, cc = self._buf[1:end], self._buf[end + 1:end + 3]
                    self._buf = self._buf[end + 3:]
                    if cc.lower() != checksum(body):
                        if self.no_ack:
                            raise RspError(f"a reply from {self._where()} failed its checksum (a noisy link?)")
                        self._sock.sendall(b"-")   # ask again
                        continue
                    if not self.no_ack:
                        self._sock.sendall(b"+")
                    return body
            else:
                self._buf = b""       # acks and stray bytes
            if len(self._buf) > MAX_REPLY_BYTES:
                raise RspError(f"a reply from {self._where()} is longer than {MAX_REPLY_BYTES} B without its end: "
                               "not a GDB server?")
            self._recv(deadline)

    def _request(self, payload: bytes) -> bytes:
        deadline = time.monotonic() + self.timeout
        packet = frame(payload)
        for _ in range(3):
            self._sock.sendall(packet)
            if self.no_ack:
                break
            while True:               # wait for the ack: '+' done, '-' resend
                while not self._buf:
                    self._recv(deadline)
                c, self._buf = self._buf[:1], self._buf[1:]
                if c in b"+-":
                    break
                if c == b"$":         # a reply before the ack (some servers): keep it
                    self._buf = c + self._buf
                    c = b"+"
                    break
            if c == b"+":
                break
        while True:
            body = decode(self._read_packet(deadline))
            if body[:1] == b"O" and body != b"OK" and re.fullmatch(rb"O([0-9a-fA-F]{2})+", body):
                continue              # console output (a monitor command's): not the reply
            return body

    def ensure(self) -> None:
        """Connects if not connected; RspError says why it cannot."""
        self.request(None)

    def request(self, payload: bytes | None) -> bytes:
        """The decoded reply to one packet (None: only connect); RspError (and a closed link)
        on any failure."""
        try:
            if self._sock is None:
                self._connect()
            return self._request(payload) if payload is not None else b""
        except TimeoutError:
            self.close()
            raise RspError(f"{self._where()} did not answer within {self.timeout:.1f} s (probe or target stuck? "
                           "is this port a GDB server's?)") from None
        except OSError as exc:
            self.close()
            raise RspError(f"the connection to {self._where()} failed: {exc.strerror or exc}") from None
        except RspError:
            self.close()
            raise

    def read_memory(self, addr: int, length: int) -> bytes:
        """length bytes at addr in one `m` packet (the caller keeps it within max_read());
        MemoryReadError with the server's own error for memory it cannot read."""
        reply = self.request(b"m%x,%x" % (addr, length))
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
        """[bytes] for [(addr, length), ...], one `m` packet after the other, in order (the
        protocol has no batch; a packet waits for its reply)."""
        return [self.read(a, n) for a, n in pieces]


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
