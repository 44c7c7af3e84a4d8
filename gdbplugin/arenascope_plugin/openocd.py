"""OpenOCD's Tcl RPC port as a MemoryReader: reads target memory while the core runs.

On Cortex-M the debug probe reads memory through the MEM-AP without halting the core; OpenOCD
offers that on its Tcl RPC port (default 6666): a command is sent terminated by byte 0x1a and
its result comes back up to the next 0x1a (OpenOCD user guide, "Tcl RPC server"). OpenOCD does
not flag errors in replies, so every command is wrapped in `catch` here. `read_memory ADDR WIDTH
COUNT` (OpenOCD 0.12, "read_memory") returns a Tcl list of numbers.

No GDB here: the standalone `arenascope live` uses it as the GDB plugin does. Reads only:
nothing here writes target memory or resumes/halts the core.
"""
import os
import re
import socket
import time

from .reader import MemoryReader, MemoryReadError

TERM = b"\x1a"
DEFAULT_PORT = 6666
CHUNK_BYTES = 1024        # one read_memory per chunk: a long scan can be interrupted within one
TIMEOUT_S = 3.0
MAX_REPLY_BYTES = 1 << 20


class TclError(Exception):
    """The Tcl link failed (connection, timeout, protocol); the message says what to do."""


def parse_endpoint(text, default_port=DEFAULT_PORT):
    """(host, port) from "HOST:PORT", "HOST", ":PORT" or "PORT"."""
    text = text.strip()
    host, port = "127.0.0.1", default_port
    if text.isdigit():
        port = int(text)
    elif ":" in text:
        h, _, p = text.rpartition(":")
        host = h or host
        if not p.isdigit():
            raise ValueError(f"{text!r}: the port is not a number (give HOST:PORT, e.g. 127.0.0.1:6666)")
        port = int(p)
    elif text:
        host = text
    if not 0 < port < 65536:
        raise ValueError(f"{text!r}: port {port} is not 1..65535")
    return host, port


class TclLink:
    """One connection to OpenOCD's Tcl RPC server; reconnects on the next call after a failure."""

    def __init__(self, host="127.0.0.1", port=DEFAULT_PORT, timeout=TIMEOUT_S):
        self.host, self.port, self.timeout = host, port, timeout
        self._sock = None
        self._buf = b""
        self.connects = 0

    @property
    def endpoint(self):
        return f"{self.host}:{self.port}"

    def _connect(self):
        try:
            self._sock = socket.create_connection((self.host, self.port), timeout=self.timeout)
        except OSError as exc:
            raise TclError(f"cannot connect to OpenOCD's Tcl port {self.endpoint}: {exc.strerror or exc} (is OpenOCD "
                           "running, with `tcl_port` at this port? `set arena openocd HOST:PORT` or "
                           "--openocd HOST:PORT names another)") from None
        self._buf = b""
        self.connects += 1

    def close(self):
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
        self._sock = None
        self._buf = b""

    def command(self, line):
        """The reply text of one Tcl command; TclError (and a closed link) on any failure."""
        if self._sock is None:
            self._connect()
        try:
            self._sock.sendall(line.encode() + TERM)
            deadline = time.monotonic() + self.timeout
            while TERM not in self._buf:
                self._sock.settimeout(max(0.01, deadline - time.monotonic()))
                chunk = self._sock.recv(65536)
                if not chunk:
                    raise TclError(f"OpenOCD closed the Tcl connection {self.endpoint} (OpenOCD quit or restarted)")
                self._buf += chunk
                if len(self._buf) > MAX_REPLY_BYTES:
                    raise TclError(f"OpenOCD's reply on {self.endpoint} is longer than {MAX_REPLY_BYTES} B without "
                                   "its 0x1a terminator: not OpenOCD's Tcl port?")
        except socket.timeout:
            self.close()
            raise TclError(f"OpenOCD did not answer within {self.timeout:.1f} s on {self.endpoint} (probe or target "
                           "stuck? is this port OpenOCD's Tcl port?)") from None
        except OSError as exc:
            self.close()
            raise TclError(f"the Tcl connection to OpenOCD {self.endpoint} failed: {exc.strerror or exc}") from None
        except TclError:
            self.close()
            raise
        reply, _, self._buf = self._buf.partition(TERM)
        return reply.decode("ascii", errors="replace")

    def call(self, line):
        """(ok, result text) of `line` run under `catch`: OpenOCD's own error text when not ok."""
        reply = self.command("set __as_rc [catch {%s} __as_r]; list $__as_rc $__as_r" % line)
        rc, _, result = reply.partition(" ")
        if result.startswith("{") and result.endswith("}"):
            result = result[1:-1]
        if rc not in ("0", "1", "2", "3", "4"):
            self.close()
            raise TclError(f"unexpected reply from {self.endpoint}: {reply[:80]!r} (not OpenOCD's Tcl port?)")
        return rc in ("0", "2"), result


_NUMBER = re.compile(r"^(0x[0-9a-fA-F]+|[0-9]+)$")


class TclReader(MemoryReader):
    """Target memory through OpenOCD's Tcl RPC, while the core runs. Reads are split into
    chunks of at most `chunk` bytes (one `read_memory` each), word-aligned (32-bit accesses, as
    a MEM-AP does best) and trimmed. `cancel` (a threading.Event or None) stops a long read
    between chunks. Counts calls and bytes for the benchmark."""

    def __init__(self, link, chunk=CHUNK_BYTES, cancel=None):
        self.link, self.chunk, self.cancel = link, max(4, chunk // 4 * 4), cancel
        self.name = f"OpenOCD Tcl RPC {link.endpoint}"
        self.calls = self.bytes = 0

    def read(self, addr, length):
        if length <= 0:
            return b""
        lo, hi = addr & ~3, (addr + length + 3) & ~3
        out = bytearray()
        at = lo
        while at < hi:
            if self.cancel is not None and self.cancel.is_set():
                raise MemoryReadError(addr, length, "stopped (interrupted between chunks)")
            n = min(self.chunk, hi - at)
            out += self._words(at, n // 4)
            at += n
        return bytes(out[addr - lo:addr - lo + length])

    def read_many(self, pieces):
        """[bytes] for [(addr, length), ...], read in order in one Tcl command (one round trip):
        what a seqlock read wants (the block, then its counter again, as close together as the
        link allows). Pieces longer than a chunk are read one by one."""
        if any(n <= 0 or n > self.chunk for _, n in pieces):
            return [self.read(a, n) for a, n in pieces]
        spans = [(a & ~3, ((a + n + 3) & ~3)) for a, n in pieces]
        script = "list " + " ".join(f"[read_memory {lo:#x} 32 {(hi - lo) // 4}]" for lo, hi in spans)
        where, total = pieces[0][0], sum(hi - lo for lo, hi in spans)
        try:
            ok, text = self.link.call(script)
        except TclError as exc:
            raise MemoryReadError(where, total, str(exc)) from None
        self.calls += 1
        self.bytes += total
        if not ok:
            raise MemoryReadError(where, total, f"OpenOCD: {' '.join(text.split())[:200]}")
        groups = [g or w for g, w in re.findall(r"\{([^{}]*)\}|(\S+)", text)]
        if len(groups) != len(pieces):
            raise MemoryReadError(where, total, f"OpenOCD's reply is not {len(pieces)} lists: {text[:80]!r}")
        out = []
        for (a, n), (lo, hi), g in zip(pieces, spans, groups):
            words = g.split()
            if len(words) != (hi - lo) // 4 or not all(_NUMBER.match(w) for w in words):
                raise MemoryReadError(a, n, f"OpenOCD's reply is not {(hi - lo) // 4} numbers: {g[:80]!r}")
            data = b"".join(int(w, 0).to_bytes(4, "little") for w in words)
            out.append(data[a - lo:a - lo + n])
        return out

    def _words(self, addr, count):
        try:
            ok, text = self.link.call(f"read_memory {addr:#x} 32 {count}")
        except TclError as exc:
            raise MemoryReadError(addr, count * 4, str(exc)) from None
        self.calls += 1
        self.bytes += count * 4
        if not ok:
            raise MemoryReadError(addr, count * 4, f"OpenOCD: {' '.join(text.split())[:200]}")
        words = text.split()
        if len(words) != count or not all(_NUMBER.match(w) for w in words):
            raise MemoryReadError(addr, count * 4, f"OpenOCD's reply is not {count} numbers: {text[:80]!r}")
        return b"".join(int(w, 0).to_bytes(4, "little") for w in words)


def tcl_port_of_gdb_server(host, gdb_port):
    """The Tcl port of the OpenOCD that serves GDB on host:gdb_port, when that OpenOCD runs on
    this machine and its command line says (`-c "tcl_port N"`, `-c "tcl port N"`); else None.
    (OpenOCD refuses `tcl_port` queries after init, so GDB's `monitor` cannot ask it.)"""
    if host not in ("127.0.0.1", "localhost", "::1", ""):
        return None
    inode = _listening_inode(gdb_port)
    if inode is None:
        return None
    needle = f"socket:[{inode}]"
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
            if not any(os.readlink(f"/proc/{pid}/fd/{fd}") == needle for fd in fds):
                continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().decode(errors="replace").split("\0")
        except OSError:
            continue
        m = re.search(r"\btcl[_ ]port\s+(\d+)", " ".join(argv))
        return int(m.group(1)) if m else DEFAULT_PORT
    return None


def _listening_inode(port):
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    parts = line.split()
                    if parts[3] == "0A" and int(parts[1].rsplit(":", 1)[1], 16) == port:  # 0A: LISTEN
                        return parts[9]
        except (OSError, StopIteration, IndexError, ValueError):
            continue
    return None
