"""OpenOCD's Tcl RPC port as a MemoryReader: reads target memory while the core runs.

On Cortex-M the debug probe reads memory through the MEM-AP without halting the core; OpenOCD
offers that on its Tcl RPC port (default 6666): a command is sent terminated by byte 0x1a and
its result comes back up to the next 0x1a (OpenOCD user guide, "Tcl RPC server"). OpenOCD does
not flag errors in replies, so every command is wrapped in `catch` here. `read_memory ADDR WIDTH
COUNT` (OpenOCD 0.12, "read_memory") returns a Tcl list of numbers.

No GDB here: the standalone `arenascope live` uses it as the GDB plugin does. Reads only:
nothing here writes target memory or resumes/halts the core.
"""
import re
import socket
import struct
import time

from arenascope_plugin import ports
from arenascope_plugin.acquire.reader import (
    MemoryReader,
    MemoryReadError,
    connect_timeout_cause,
    merge_adjacent,
    split_merged,
    still_sending,
)
from arenascope_plugin.acquire.symbols import Core, pc_frames
from arenascope_plugin.errors import ArenascopeError

TERM = b"\x1a"
DEFAULT_PORT = 6666       # OpenOCD's default `tcl port` (OpenOCD user guide, "Server Configuration")
CHUNK_BYTES = 1024        # one read_memory per chunk: a long scan can be interrupted within one
TIMEOUT_S = 3.0           # a command's deadline unless set (--link-timeout, `set arena link-timeout`)
SLICE_S = 0.25            # a wait for bytes is cut into slices this long: a cancel is seen within one
MAX_REPLY_BYTES = 1 << 20
FLOOD_BYTES = 1 << 16     # more than this in one wait, still coming at the deadline: a flood, not a drip


class TclError(ArenascopeError):
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


class _Pending:
    """Commands sent by TclLink.call_many_later: how many, whether their results come on the side
    channel, their deadline; then their results or error."""

    def __init__(self, count, side, deadline):
        self.count, self.side, self.deadline = count, side, deadline
        self.results, self.error = None, None


class TclLink:
    """One connection to OpenOCD's Tcl RPC server; reconnects on the next call after a failure.

    OpenOCD 0.12 writes every Tcl RPC result to its log (command_run_line prints it), and while
    the target runs its GDB server forwards that log to GDB's console: polled reads would flood
    it. So results travel on a side channel when OpenOCD can open one (quiet=True, the default):
    OpenOCD's Jim Tcl connects back to a loopback (or this host's) socket with `socket stream`,
    each command writes its result there and returns nothing, and nothing is logged. If OpenOCD
    cannot connect back (no `socket` command, a firewall), results come in the replies, and
    `quiet_why` says why (then OpenOCD's log and GDB's console show the reads).

    Each command() or call() has one deadline (`timeout`) for all of it: connecting, the side
    channel, the reply however slowly it drips. When it passes the error says what OpenOCD did
    (answered nothing, stalled mid-reply, sent too slowly), and every later command fails at once
    with that message (`failed`) until rearm(): the next command, the live poller's next refresh.
    `cancel` (a threading.Event or None): when set, a wait ends within SLICE_S."""

    def __init__(self, host="127.0.0.1", port=DEFAULT_PORT, timeout=TIMEOUT_S, quiet=True, cancel=None):
        self.host, self.port, self.timeout = host, port, timeout
        self.cancel = cancel
        self._sock: socket.socket | None = None
        self._buf = b""
        self.connects = 0
        self.quiet = quiet
        self.quiet_why = None       # why the side channel is not used (None: it is, or quiet=False)
        self._side: list | None = None  # [socket, buffer] of the side channel
        self._chan = None           # its Tcl variable in OpenOCD
        self.failed = None          # the passed deadline's message, repeated until rearm()
        self._deadline = 0.0
        self._pending: _Pending | None = None  # commands sent by call_many_later whose results are not read yet

    @property
    def endpoint(self):
        return f"{self.host}:{self.port}"

    def rearm(self):
        """A new command or live refresh starts: after a deadline passed, OpenOCD is asked again."""
        self.failed = None

    def _start(self):
        """One deadline from now, for the command or call that starts (TclError at once after a
        deadline passed, until rearm()); the results of commands still pending are read first."""
        if self._pending is not None:
            self._collect()
        if self.failed is not None:
            raise TclError(self.failed)
        self._deadline = time.monotonic() + self.timeout

    def _left(self):
        return max(0.01, self._deadline - time.monotonic())

    def _connect(self):
        try:
            self._sock = socket.create_connection((self.host, self.port), timeout=self._left())
        except TimeoutError:
            self.failed = (f"cannot connect to OpenOCD's Tcl port {self.endpoint}: no answer to the connection within "
                           f"{self.timeout:g} s ({connect_timeout_cause(self.host)})")
            raise TclError(self.failed) from None
        except OSError as exc:
            raise TclError(f"cannot connect to OpenOCD's Tcl port {self.endpoint}: {exc.strerror or exc} (is OpenOCD "
                           "running, with `tcl_port` at this port? --via tcl:HOST:PORT names another, "
                           "--via gdb:HOST:PORT reads a GDB server's port)") from None
        self._buf = b""
        self.connects += 1
        if self.quiet:
            self._open_side()

    def _open_side(self):
        """Asks OpenOCD to connect back to a listening socket here; on success results use it."""
        assert self._sock is not None  # _connect opened it
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            here = self._sock.getsockname()[0]  # the address OpenOCD reached us from
            listener.bind((here, 0))
            listener.listen(1)
            port = listener.getsockname()[1]
            chan = f"::arenascope_side_{port}"
            reply = self._round_trip(f"set __as_rc [catch {{set {chan} [socket stream {here}:{port}]}} __as_r]; "
                                     f"if {{$__as_rc}} {{set __as_r}} else {{list}}")
            if reply.strip():
                self.quiet_why = f"OpenOCD could not open the side channel ({reply.strip()[:120]})"
                return
            listener.settimeout(self._left())
            conn, _ = listener.accept()
            self._side, self._chan, self.quiet_why = [conn, b""], chan, None
        except (TimeoutError, OSError) as exc:
            self.quiet_why = f"OpenOCD could not connect back to this host ({exc})"
        finally:
            listener.close()

    def close(self):
        """Closes the connection (the next command reconnects); commands sent by call_many_later
        and not read yet fail with a TclError saying so."""
        if self._pending is not None:
            self._pending.error = TclError(f"the Tcl connection to OpenOCD {self.endpoint} was closed before "
                                           "its reply was read")
            self._pending = None
        for sock in (self._sock, self._side[0] if self._side else None):
            if sock is not None:
                try:
                    sock.close()
                except OSError:
                    pass
        self._sock, self._side, self._chan = None, None, None
        self._buf = b""

    def _overdue(self, where, partial, got, last, sock=None):
        """The error of a passed deadline (kept in `failed`): what OpenOCD sent meanwhile on `where`
        (`partial` bytes of the reply, `got` of them in this wait, the last at monotonic `last`;
        still sending when more wait on `sock`, or the last came a moment ago)."""
        still, quiet = still_sending(sock, last, self.timeout)
        if not partial:
            what = "it answered nothing (probe or target stuck? is this port OpenOCD's Tcl port?)"
        elif still and got > FLOOD_BYTES:
            what = f"it flooded the link: {partial} B and no 0x1a ending a reply, still coming"
        elif still:
            what = f"its reply came too slowly: {partial} B of it and no 0x1a ending it, still arriving (a drip)"
        else:
            what = f"it stalled: {partial} B of a reply and no 0x1a ending it, then nothing for {quiet:.1f} s"
        self.failed = f"no reply from OpenOCD {where} within {self.timeout:g} s: {what}"
        return TclError(self.failed)

    def _recv_until_term(self, sock, buf, where=None):
        """(reply text, the bytes after its 0x1a) read from sock within the deadline, checked at
        every byte that arrives (a drip moves it no further); TclError once it passed."""
        where = where or f"on its Tcl port {self.endpoint}"
        got, last = 0, None
        while TERM not in buf:
            left = self._deadline - time.monotonic()
            if left <= 0:
                raise self._overdue(where, len(buf), got, last, sock)
            if self.cancel is not None and self.cancel.is_set():
                raise TclError(f"stopped while waiting for OpenOCD {where}")
            sock.settimeout(min(SLICE_S, left))
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            if not chunk:
                raise TclError(f"OpenOCD closed the Tcl connection {self.endpoint} (OpenOCD quit or restarted)")
            buf += chunk
            got, last = got + len(chunk), time.monotonic()
            if len(buf) > MAX_REPLY_BYTES:
                raise TclError(f"OpenOCD's reply on {self.endpoint} is longer than {MAX_REPLY_BYTES} B without "
                               "its 0x1a terminator: not OpenOCD's Tcl port?")
        reply, _, rest = buf.partition(TERM)
        return reply.decode("ascii", errors="replace"), rest

    def _round_trip(self, line):
        return self._round_trips([line])[0]

    def _round_trips(self, lines):
        """The reply texts of lines sent back to back (one sendall), read in order."""
        self._send(lines)
        return self._replies(len(lines))

    def _send(self, lines):
        assert self._sock is not None  # connected first (_commands, call_many_later)
        self._sock.settimeout(self._left())
        self._sock.sendall(b"".join(line.encode() + TERM for line in lines))

    def _replies(self, count):
        replies = []
        for _ in range(count):
            reply, self._buf = self._recv_until_term(self._sock, self._buf)
            replies.append(reply)
        return replies

    def command(self, line):
        """The reply text of one Tcl command, within one deadline; TclError (and a closed link) on
        any failure."""
        self._start()
        return self._command(line)

    def _command(self, line):
        return self._commands([line])[0]

    def _commands(self, lines):
        """The reply texts of lines sent back to back, read in order; TclError (and a closed
        link) on any failure."""
        def connect_and_send():
            if self._sock is None:
                self._connect()
            return self._round_trips(lines)
        return self._guarded(connect_and_send)

    def _guarded(self, work):
        """work() on the main connection; any failure is a TclError, and the link is closed."""
        try:
            return work()
        except TimeoutError:  # a send OpenOCD does not take
            error = self._overdue(f"on its Tcl port {self.endpoint}", len(self._buf), 0, None)
            self.close()
            raise error from None
        except OSError as exc:
            self.close()
            raise TclError(f"the Tcl connection to OpenOCD {self.endpoint} failed: {exc.strerror or exc}") from None
        except TclError:
            self.close()
            raise

    def call(self, line):
        """(ok, result text) of `line` run under `catch`: OpenOCD's own error text when not ok.
        One deadline for all of it (connecting, the command, its result on the side channel)."""
        return self.call_many([line])[0]

    def call_many(self, lines):
        """[(ok, result text)] of each line, as call() gives it, the commands sent back to back
        (pipelined: one round trip for all; OpenOCD's Tcl server runs them in order) within one
        deadline."""
        return self.call_many_later(lines)()

    def call_many_later(self, lines):
        """Sends `lines` as call_many() does and returns at once a function that reads their
        results ([(ok, text)] or TclError), under the deadline that started here: the caller
        works while OpenOCD answers (the live poller's next refresh, BatchedReader.ahead). A
        command before that function is called reads these results first (they are kept for it):
        the replies stay in order."""
        try:
            self._start()
            if self._sock is None:
                self._command("list")  # connects (and opens the side channel)
            side = self._side is not None
            wrapped = [self._wrapped(line, side) for line in lines]
            self._guarded(lambda: self._send(wrapped))
        except TclError as exc:
            def failed(error=exc):
                raise error
            return failed
        pending = self._pending = _Pending(len(lines), side, self._deadline)

        def collect():
            if pending is self._pending:
                self._collect()
            if pending.error is not None:
                raise pending.error
            return pending.results
        return collect

    def _wrapped(self, line, side):
        """`line` under `catch`, its result sent on the side channel when there is one."""
        if side:
            return (f"set __as_rc [catch {{{line}}} __as_r]; "
                    f"${self._chan} puts -nonewline \"$__as_rc [list $__as_r]\\x1a\"; ${self._chan} flush")
        return f"set __as_rc [catch {{{line}}} __as_r]; list $__as_rc $__as_r"

    def _collect(self):
        """Reads the results of the commands call_many_later() sent into its _Pending."""
        p, self._pending = self._pending, None
        assert p is not None  # called only while one is pending
        self._deadline = p.deadline
        try:
            replies = self._guarded(lambda: self._replies(p.count))
            p.results = [self._result(text) for text in (self._side_results(replies) if p.side else replies)]
        except TclError as exc:
            p.error = exc

    def _side_results(self, replies):
        """The texts of `replies`' commands from the side channel (their replies on the main
        connection are empty when all went well)."""
        if any(r.strip() for r in replies):  # the side channel failed inside OpenOCD: reconnect next time
            self.close()
            bad = next(r for r in replies if r.strip())
            raise TclError(f"the side channel to OpenOCD {self.endpoint} failed: {bad.strip()[:120]}")
        texts = []
        side = self._side
        assert side is not None  # the commands were sent for the side channel, and nothing closed it since
        try:
            for _ in replies:
                text, side[1] = self._recv_until_term(side[0], side[1], f"on the side channel from {self.endpoint}")
                texts.append(text)
        except (OSError, TclError) as exc:
            self.close()
            if self.failed is not None:  # the deadline passed: its message says it all
                raise TclError(self.failed) from None
            raise TclError(f"the side channel to OpenOCD {self.endpoint} failed: {exc}") from None
        return texts

    def _result(self, text):
        rc, _, result = text.partition(" ")
        if result.startswith("{") and result.endswith("}"):
            result = result[1:-1]
        if rc not in ("0", "1", "2", "3", "4"):
            self.close()
            raise TclError(f"unexpected reply from {self.endpoint}: {text[:80]!r} (not OpenOCD's Tcl port?)")
        return rc in ("0", "2"), result


_NUMBER = re.compile(r"^(0x[0-9a-fA-F]+|[0-9]+)$")


def word(text: str) -> int | None:
    """A 32-bit value OpenOCD printed: 0x-prefixed hex or decimal (a leading zero is still
    decimal: Tcl's `format %d` never writes octal), or None when it is not a number or does not
    fit in 32 bits (a reply that is not OpenOCD's, or a corrupted one)."""
    if not _NUMBER.match(text) or len(text) > 12:
        return None
    value = int(text, 16) if text[:2] in ("0x", "0X") else int(text, 10)
    return value if value <= 0xFFFFFFFF else None


_HEX_WORDS = re.compile(r"\s*(?:0x[0-9a-fA-F]{1,8}\s+)*(?:0x[0-9a-fA-F]{1,8}\s*)?")


def words_bytes(text: str, count: int) -> bytes | None:
    """The little-endian bytes of `count` 32-bit words OpenOCD printed as a list (`read_memory`:
    0x-prefixed hex, as OpenOCD 0.12 prints them; decimal is taken too, as word() reads it), or
    None when the text is not exactly that. The hex list of every live refresh is checked by one
    regular expression and converted by one struct.pack: word() a word cost a quarter of a
    refresh's host work."""
    words = text.split()
    if len(words) != count:
        return None
    if _HEX_WORDS.fullmatch(text):
        return struct.pack(f"<{count}I", *[int(w, 16) for w in words])
    values = [word(w) for w in words]
    if None in values:
        return None
    return struct.pack(f"<{count}I", *values)


def _read_script(spans):
    """The Tcl command reading word-aligned [lo, hi) spans: a `list` of one `read_memory ADDR 32
    COUNT` each (OpenOCD 0.12)."""
    return "list " + " ".join(f"[read_memory {lo:#x} 32 {(hi - lo) // 4}]" for lo, hi in spans)


class TclReader(MemoryReader):
    """Target memory through OpenOCD's Tcl RPC, while the core runs. Reads are split into
    chunks of at most `chunk` bytes (one `read_memory` each), word-aligned (32-bit accesses, as
    a MEM-AP does best) and trimmed. `cancel` (a threading.Event or None) stops a long read
    between chunks; `progress.add(bytes, done, total)` (present/progress.py) is told after each
    chunk. Counts calls and bytes for the benchmark."""

    def __init__(self, link, chunk=CHUNK_BYTES, cancel=None, progress=None):
        self.link, self.chunk, self.cancel, self.progress = link, max(4, chunk // 4 * 4), cancel, progress
        self.also_result = None
        self.name = f"OpenOCD Tcl RPC {link.endpoint}"
        self.calls = self.bytes = 0
        self.link_failures, self.last_link_error = 0, ""

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
            out += self._spans([(at, at + n)])[0][0]
            at += n
            if self.progress is not None:
                self.progress.add(n, min(at, addr + length) - addr, length)
        return bytes(out[addr - lo:addr - lo + length])

    def read_many(self, pieces, also=None):
        """[bytes] for [(addr, length), ...], read in order in one Tcl command (one round trip):
        what a seqlock read wants (the block, then its counter again, as close together as the
        link allows). Adjacent pieces are one `read_memory` (reader.merge_adjacent). Pieces longer
        than a chunk are read one by one. also: a Tcl command sent in the same round trip, after
        the reads (the live poller's core state, CoreOverTcl.script); its (ok, text) is kept in
        `also_result` (None when it was not sent)."""
        if any(n <= 0 or n > self.chunk for _, n in pieces):
            self.also_result = None
            return [self.read(a, n) for a, n in pieces]
        got, self.also_result = self.read_many_later(pieces, also)()
        return got

    def read_many_later(self, pieces, also=None):
        """read_many(pieces, also) sent now (each piece at most a chunk): returns at once a
        function that reads the reply, ([bytes], also's (ok, text) or None), or raises
        MemoryReadError (TclLink.call_many_later: the caller works while OpenOCD answers)."""
        spans = [(a & ~3, ((a + n + 3) & ~3)) for a, n in pieces]
        merged, where = merge_adjacent(spans)  # adjacent pieces (a fault's SCB words): one read_memory
        results = self.link.call_many_later([_read_script(merged), also] if also else [_read_script(merged)])

        def collect():
            data, also_result = self._spans(merged, results)
            data = split_merged(data, where)
            return [d[a - lo:a - lo + n] for (a, n), (lo, _), d in zip(pieces, spans, data, strict=True)], also_result
        return collect

    def _spans(self, spans, results=None):
        """([bytes] of word-aligned [lo, hi) spans, the (ok, text) of a second command or None),
        read in order by one Tcl command (`list` of one `read_memory ADDR 32 COUNT` each), or from
        `results` (call_many_later's, whose first command was that one); MemoryReadError with
        OpenOCD's own words on error."""
        where, total = (spans[0][0] if spans else 0), sum(hi - lo for lo, hi in spans)
        try:
            if results is None:
                results = self.link.call_many_later([_read_script(spans)])
            got = results()
            ok, text = got[0]
        except TclError as exc:
            self.link_failures += 1  # the poller tells a lost link from unreadable memory by it
            self.last_link_error = str(exc)
            raise MemoryReadError(where, total, str(exc)) from None
        self.calls += 1
        self.bytes += total
        if not ok:
            raise MemoryReadError(where, total, f"OpenOCD: {' '.join(text.split())[:200]}")
        groups = [g or w for g, w in re.findall(r"\{([^{}]*)\}|(\S+)", text)]
        if len(groups) != len(spans):
            raise MemoryReadError(where, total, f"OpenOCD's reply is not {len(spans)} lists: {text[:80]!r}")
        out = []
        for (lo, hi), g in zip(spans, groups, strict=True):
            data = words_bytes(g, (hi - lo) // 4)
            if data is None:
                raise MemoryReadError(lo, hi - lo, f"OpenOCD's reply is not {(hi - lo) // 4} 32-bit numbers: "
                                      f"{g[:80]!r}")
            out.append(data)
        return out, (got[1] if len(got) > 1 else None)


class CoreOverTcl(Core):
    """The core's registers through OpenOCD, read only while the core is halted (OpenOCD's
    register cache is stale while it runs). One Tcl round trip a refresh: refresh() reads the
    state and, halted, every register the pipeline asks for (`$target get_reg`, OpenOCD 0.12).
    frames(): only the PC's function (no unwinder without GDB).
    While the core runs, the state is asked again only every POLL_S: OpenOCD learns it by polling
    the target every 100 ms (TARGET_DEFAULT_POLLING_INTERVAL, src/target/target.h), so asking
    more often (a live view at 50 refreshes a second) only costs round trips."""
    POLL_S = 0.1

    def __init__(self, link, symbols=None):
        self.link, self.symbols = link, symbols
        # The registers the pipeline asks for, as OpenOCD's register list spells them (the port's
        # for the ELF's architecture; OpenOCD's Cortex-M target says "xPSR").
        port = ports.of(symbols) if symbols is not None else ports.all_ports()[0]
        self.NAMES = {r: port.register_aliases.get(r, (r,))[-1] for r in port.core_registers}
        self.regs = {}
        self.state = None
        self._asked = None  # monotonic time of the last state query

    def due(self):
        """Whether the state must be asked now: always while halted or unknown; while running,
        once OpenOCD has polled the target again (POLL_S)."""
        return not (self.state == "running" and self._asked is not None
                    and time.monotonic() - self._asked < self.POLL_S)

    def script(self):
        """The Tcl command that reads the state and, halted, the registers (the live poller sends
        it with its memory reads: TclReader.read_many's `also`)."""
        return ("set __as_t [target current]; list [$__as_t curstate] [catch {$__as_t get_reg {"
                + " ".join(self.NAMES.values()) + "}} __as_g] $__as_g")

    def refresh(self):
        """Reads the core's state (and its registers when halted) when due(); a failed read
        leaves none."""
        if not self.due():
            return  # OpenOCD has not polled the target since: the same answer
        try:
            self.take(*self.link.call(self.script()))
        except TclError:
            self.take(False, "")

    def take(self, ok, text):
        """The state and registers from script()'s result (ok, text); none when not ok."""
        self._asked = time.monotonic()
        self.regs, self.state = {}, None
        if not ok:
            return
        state, _, rest = text.partition(" ")
        self.state = state
        rc, _, regs = rest.partition(" ")
        if state != "halted" or rc != "0":
            return
        words = regs.strip("{}").split()
        by_name = {v: k for k, v in self.NAMES.items()}
        for name, value in zip(words[0::2], words[1::2], strict=False):
            if name in by_name and (number := word(value)) is not None:
                self.regs[by_name[name]] = number

    def register(self, name):
        return self.regs.get(name)

    def frames(self):
        return pc_frames(self.symbols, self.regs.get("pc"))

    def frames_complete(self):
        return False  # the PC's function alone
