"""The live link: how `arena live` and the standalone tool read a running target.

    tcl:HOST:PORT   OpenOCD's Tcl RPC port (acquire/openocd.py); HOST:PORT alone means this too
    gdb:HOST:PORT   a second GDB remote connection to any GDB server (acquire/rsp.py)

open_link() connects, checks that the other end is what was asked for, and returns the reader,
the core and what to call it; docs/hardware.md says per server how to allow the connection.

Every request on the link has one deadline, `timeout` seconds (TIMEOUT_S unless set: the tool's
--link-timeout, GDB's `set arena link-timeout`), whatever the server sends meanwhile; once one
passed, the link fails at once with the same message until Link.rearm() (the live poller calls it
at each refresh; a one-shot command opens its own link): a dead server holds a command about one
deadline, not one per read."""
from dataclasses import dataclass, field

from arenascope_plugin.acquire import openocd, rsp, servers
from arenascope_plugin.acquire.reader import MemoryReader
from arenascope_plugin.acquire.symbols import Core
from arenascope_plugin.errors import ArenascopeError

KINDS = ("tcl", "gdb")
TIMEOUT_S = rsp.TIMEOUT_S     # a request's deadline unless set (the same for both kinds)
MIN_TIMEOUT_S, MAX_TIMEOUT_S = 0.1, 600.0


def check_timeout(value) -> str | None:
    """Why `value` (seconds) is not a link deadline, or None."""
    try:
        seconds = float(value)
    except (TypeError, ValueError):
        return f"{value!r} is not a number of seconds"
    if not MIN_TIMEOUT_S <= seconds <= MAX_TIMEOUT_S:  # (NaN fails too)
        return f"{value} s: give {MIN_TIMEOUT_S:g} to {MAX_TIMEOUT_S:g} seconds"
    return None


class LinkError(ArenascopeError):
    """The live link cannot be opened; the message says why and what to do."""


@dataclass
class Via:
    kind: str          # "tcl" or "gdb"
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.kind}:{self.host}:{self.port}"


def parse_via(text: str) -> Via:
    """Via from "tcl:HOST:PORT", "gdb:HOST:PORT", "tcl:PORT", or "HOST:PORT" (Tcl); ValueError."""
    text = text.strip()
    kind, sep, rest = text.partition(":")
    if sep and kind in KINDS:
        default = servers.TCL_DEFAULT_PORT if kind == "tcl" else rsp.DEFAULT_PORT
    else:
        kind, rest, default = "tcl", text, servers.TCL_DEFAULT_PORT
    if not rest:
        raise ValueError(f"{text!r}: give {kind}:HOST:PORT, e.g. {kind}:127.0.0.1:{default}")
    host, port = openocd.parse_endpoint(rest, default)
    return Via(kind, host, port)


@dataclass
class Link:
    """An open live link: read through `reader`, the core's state through `core`."""
    via: Via
    reader: MemoryReader
    core: Core
    link: openocd.TclLink | rsp.RspLink  # close(), connects
    server: str                        # what messages call the other end
    warnings: list[str] = field(default_factory=list)

    @property
    def described(self) -> str:
        if self.via.kind == "tcl":
            return f"OpenOCD's Tcl port {self.link.endpoint}"
        return f"a second GDB connection to {self.server} {self.link.endpoint}"

    def close(self) -> None:
        self.link.close()

    def rearm(self) -> None:
        """A new command or refresh starts: after a deadline passed, the server is asked again."""
        self.link.rearm()


def server_name(host: str, port: int) -> str:
    found = servers.local_server(host, port)
    return found.name if found else "the GDB server"


def open_link(via: Via, symbols=None, cancel=None, progress=None, timeout: float = TIMEOUT_S) -> Link:
    """Connects and checks the other end, within `timeout` seconds (each request after too);
    LinkError says what is wrong and what to do. cancel (a threading.Event or None), once set,
    stops a read within a fraction of a second."""
    if via.kind == "tcl":
        link = openocd.TclLink(via.host, via.port, timeout=timeout, cancel=cancel)
        try:
            ok, _ = link.call("version")
        except openocd.TclError as exc:
            raise LinkError(str(exc)) from None
        if not ok:
            link.close()
            raise LinkError(f"{link.endpoint} answered but `version` failed: not OpenOCD's Tcl port?")
        warnings = [f"{link.quiet_why}: OpenOCD will echo every read into its log, and into GDB's console while "
                    "the target runs"] if link.quiet_why else []
        return Link(via, openocd.TclReader(link, cancel=cancel, progress=progress),
                    openocd.CoreOverTcl(link, symbols), link, "OpenOCD", warnings)
    found = servers.local_server(via.host, via.port)
    name = found.name if found else "the GDB server"
    if found is not None and found.live is None:
        raise LinkError(f"{found.name} (pid {found.pid}) serves {via.host}:{via.port}: it takes one GDB connection at "
                        "a time and reads memory only while the guest is stopped, so nothing can read the running "
                        "core there: arenascope reads a target through a debug probe's GDB server or OpenOCD's Tcl "
                        "port (docs/hardware.md); under QEMU, dump the RAM from GDB (`dump binary memory ram.bin "
                        "...`) and give it with --ram ram.bin@ADDR (docs/hardfault.md)")
    rsp_link = rsp.RspLink(via.host, via.port, timeout=timeout, server=name, cancel=cancel)
    try:
        rsp_link.ensure()
    except rsp.RspError as exc:
        raise LinkError(str(exc)) from None
    warnings = []
    if found is not None and found.live == "tcl":
        warnings.append(f"{found.name}, unless configured otherwise, halts the core and drops GDB's breakpoints when "
                        "a GDB connection opens (its gdb-attach event; docs/hardware.md says how to turn that off): "
                        "start the live view while halted, or read through its Tcl port instead "
                        f"(--via tcl:{via.host}:{found.tcl_port})")
    return Link(via, rsp.RspReader(rsp_link, cancel=cancel, progress=progress), rsp.CoreOverRsp(rsp_link, symbols),
                rsp_link, name, warnings)
