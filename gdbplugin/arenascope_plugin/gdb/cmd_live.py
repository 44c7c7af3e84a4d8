"""`arena live`: the live view while the core runs, through OpenOCD's Tcl RPC port or a second
GDB remote connection to the probe's GDB server (acquire/via.py).

GDB in all-stop mode cannot read memory while the target runs; the probe can, through its
MEM-AP: OpenOCD on its Tcl port, and OpenOCD, the J-Link GDB server, ST-LINK_gdbserver and pyOCD
on a second connection to their GDB port. This command starts a poller thread (livepoll.py, no
GDB calls) that reads through that link and streams snapshots to the viewer over `arena view`'s
link. GDB stays usable meanwhile; what the thread has to say is printed at the next prompt.
"""
import queue
import threading

import gdb  # pylint: disable=import-error

from arenascope_plugin import pipeline
from arenascope_plugin.acquire import servers, via
from arenascope_plugin.acquire.elfsymbols import ElfSymbols
from arenascope_plugin.errors import TargetError
from arenascope_plugin.gdb import events, framework, settings
from arenascope_plugin.gdb.framework import Sub
from arenascope_plugin.gdb.settings import resolved, setting
from arenascope_plugin.serve import livepoll, viewerlink

# The running (or last) `arena live`. endpoint: (the link, how it was found), kept after a stop
# for `arena live status`; link: the same link while it is still open, None once stop_live()
# closed it (so it is closed once, after the poller thread no longer reads through it).
_STATE = {"thread": None, "stop": None, "poller": None, "messages": queue.Queue(), "hooked": False,
          "endpoint": None, "last_message": None, "link": None, "own_server": False}


def _print_pending(*_):
    q = _STATE["messages"]
    while True:
        try:
            text = q.get_nowait()
        except queue.Empty:
            return
        _STATE["last_message"] = text
        gdb.write(f"arena live: {text}\n")


def _gdb_remote():
    """(host, port) of the GDB server GDB is attached to, or None."""
    conn = getattr(gdb.selected_inferior(), "connection", None)
    details = getattr(conn, "details", None) or ""
    if conn is None or getattr(conn, "type", "") not in ("remote", "extended-remote") or ":" not in details:
        return None
    host, _, port = details.rpartition(":")
    return (host.strip("[]") or "127.0.0.1", int(port)) if port.isdigit() else None


def _candidates():
    """[(Via, how it was chosen)] to try in order: the setting, else by the server GDB is attached to."""
    text = str(setting("live-via")).strip()
    if text and text != "auto":
        try:
            return [(via.parse_via(text), "`set arena live-via`")]
        except ValueError as exc:
            raise TargetError(f"`set arena live-via`: {exc}") from None
    remote = _gdb_remote()
    if remote is None:
        return [(via.Via("tcl", "127.0.0.1", servers.TCL_DEFAULT_PORT),
                 "the default (GDB is not attached to a remote GDB server here; --via names the probe's)")]
    host, port = remote
    found = servers.local_server(host, port)
    where = f"{host}:{port}"
    if found is None:
        return [(via.Via("tcl", host, servers.TCL_DEFAULT_PORT),
                 f"OpenOCD's default Tcl port on GDB's remote host (the server on {where} is not on this machine)"),
                (via.Via("gdb", host, port), f"a second connection to the GDB server GDB is attached to on {where}")]
    if found.live is None:
        raise TargetError(f"GDB is attached to {found.name} on {where} (pid {found.pid}): it takes one GDB connection "
                          "at a time and reads memory only while the guest is stopped, so nothing can read the "
                          "running core; the live view needs a debug probe's GDB server or OpenOCD's Tcl port "
                          "(docs/hardware.md), or use `arena view` at each stop")
    if found.live == "tcl":
        return [(via.Via("tcl", host, found.tcl_port),
                 f"the command line of the {found.name} serving GDB on {where} (pid {found.pid})")]
    return [(via.Via("gdb", host, port), f"{found.name} serving GDB on {where} (pid {found.pid})")]


def stop_live(wait=True):
    """Stops the poller thread and closes its OpenOCD link (idempotent)."""
    if _STATE["stop"] is not None:
        _STATE["stop"].set()
    t = _STATE["thread"]
    if wait and t is not None:
        t.join(timeout=5)
    _STATE["thread"] = None
    if _STATE["link"] is not None and (t is None or not t.is_alive()):
        _STATE["link"].close()
        _STATE["link"] = None


class LiveCommand(Sub):
    """Stream snapshots of the running target to the viewer, read through the debug probe.
GDB cannot read memory while the core runs (all-stop); the probe reads it without halting the
core: through OpenOCD's Tcl port, or through a second connection to the GDB server (OpenOCD,
the J-Link GDB server, ST-LINK_gdbserver, pyOCD; docs/hardware.md says how each allows it). A
thread polls the descriptor (and its sequence counter: a read torn by an update is retried, never
shown), re-reads the region tables only when their layout generation changes, and scans the
guard band, the free band's canary and the stack paint a slice per refresh. GDB stays usable;
messages appear at the next prompt. Without the agent (agentless mode) TFLM's objects are walked
again only when its allocator's state moves; the agent-only figures are unavailable.

Usage: arena live [--hz N] [--via tcl:HOST:PORT|gdb:HOST:PORT] [--port N] [--no-launch]
                  [--scan-budget BYTES]
       arena live stop       stop polling (the viewer keeps its last snapshot)
       arena live status     refreshes, rate, bytes a refresh, torn reads discarded, last error
  --hz N          refreshes a second at most (default 20)
  --via LINK      tcl:HOST:PORT: OpenOCD's Tcl RPC port; gdb:HOST:PORT: a second GDB connection
                  (default: `show arena live-via`; auto: by the server GDB is attached to:
                  OpenOCD's Tcl port from its command line, the GDB port of J-Link, ST-LINK or
                  pyOCD; on another host, OpenOCD's Tcl port 6666, else the GDB port)
  --openocd H:P   the same as --via tcl:H:P
  --port N        the viewer link's port (as `arena view --port`)
  --no-launch     do not start the viewer
  --scan-budget B band bytes scanned a refresh (default 256)"""
    sub = "live"

    def add_arguments(self, parser):
        parser.add_argument("action", nargs="?", choices=("start", "stop", "status"), default="start")
        parser.add_argument("--hz", type=float, default=20.0)
        parser.add_argument("--via", default=None)
        parser.add_argument("--openocd", default=None)
        parser.add_argument("--port", type=int, default=None)
        parser.add_argument("--no-launch", action="store_true")
        parser.add_argument("--scan-budget", type=int, default=livepoll.DEFAULT_SCAN_BUDGET)

    def run(self, args):
        _print_pending()
        if args.action == "stop":
            self._stop()
            return
        if args.action == "status":
            self._status()
            return
        _check_options(args)
        candidates = _given_link(args) or _candidates()
        elf, symbols = _loaded_elf()
        stop = threading.Event()
        live, how = _open_first(candidates, symbols, stop)
        for text in live.warnings:
            gdb.write(f"arena live: warning: {text}\n")
        # Everything GDB knows is resolved here, in GDB's thread: the poller thread makes no GDB call.
        target = pipeline.Target(live.reader, symbols, live.core)
        poller = livepoll.LivePoller(target, resolved(framework.attached(), with_fault_sp=False),
                                     scan_budget=args.scan_budget)
        stop_live()  # the new link works: replace a running poller
        if events.LIVE["server"] is None:
            _STATE["own_server"] = True
        server = events.serve(args.port, args.no_launch, 0.0, who="arena live")
        thread = threading.Thread(target=livepoll.run, name="arenascope-live-poll", daemon=True,
                                  args=(poller, _publisher(server), args.hz, stop, _STATE["messages"].put))
        _STATE.update(thread=thread, stop=stop, poller=poller, endpoint=(live, how), link=live,
                      last_message=None)
        _hook_events()
        thread.start()
        gdb.write(f"arena live: polling {elf} through {live.described} (from {how}) at up to {args.hz:g} "
                  "refreshes/s; `arena live status`, `arena live stop`\n")

    @staticmethod
    def _stop():
        running = _STATE["thread"] is not None
        stop_live()
        if _STATE["own_server"]:  # started by `arena live`, not `arena view`: stop-time snapshots end too
            events.stop_serving()
            _STATE["own_server"] = False
        gdb.write("arena live: stopped\n" if running else "arena live: not running\n")

    @staticmethod
    def _status():
        p, t = _STATE["poller"], _STATE["thread"]
        if p is None:
            gdb.write("arena live: not started (`arena live`)\n")
            return
        live, how = _STATE["endpoint"]
        last = p.last["live"] if p.last else None
        side = (f"  side channel:     {live.link.quiet_why or 'in use (reads are not echoed into logs)'}\n"
                if live.via.kind == "tcl" else "")
        gdb.write(f"arena live: {'running' if t is not None and t.is_alive() else 'stopped'}, {live.described} "
                  f"(from {how})\n"
                  f"  refreshes:        {p.refreshes}, {p.rate():.1f}/s now\n"
                  f"  torn discarded:   {p.torn}\n"
                  f"  bytes a refresh:  {last['bytes_last_refresh'] if last else '-'} (reads so far: "
                  f"{p.reader.calls} requests, {p.reader.bytes} B)\n"
                  f"  reconnects:       {max(0, live.link.connects - 1)}\n"
                  + side +
                  f"  last message:     {_STATE['last_message'] or 'none'}\n")


def _check_options(args):
    """TargetError when an option is out of range, or a RAM dump is loaded (nothing to stream)."""
    if not 0.1 <= args.hz <= 200:
        raise TargetError(f"--hz {args.hz:g}: give 0.1 to 200 refreshes a second")
    if not 16 <= args.scan_budget <= 65536:
        raise TargetError(f"--scan-budget {args.scan_budget}: give 16 to 65536 bytes")
    if args.port is not None and not 0 <= args.port <= 65535:
        raise TargetError(f"--port {args.port}: give 0 (any free port) to 65535")
    if framework.loaded_dump() is not None:
        raise TargetError("a RAM dump is loaded and does not change: nothing to stream (`arena dump forget` "
                          "to read the target again)")


def _given_link(args):
    """[(Via, the option)] for --via or --openocd, or None when neither is given."""
    given = args.via or (f"tcl:{args.openocd}" if args.openocd else None)
    if not given:
        return None
    try:
        return [(via.parse_via(given), "--via" if args.via else "--openocd")]
    except ValueError as exc:
        raise TargetError(f"{'--via' if args.via else '--openocd'}: {exc}") from None


def _loaded_elf():
    """(path, ElfSymbols) of the ELF GDB has loaded; TargetError when there is none to read."""
    progspace = gdb.current_progspace()
    elf = progspace.filename if progspace else None
    if not elf:
        raise TargetError("no ELF loaded: load the firmware's ELF (`file fw.elf`): the live view reads its symbols")
    try:
        return elf, ElfSymbols(elf)
    except (OSError, ValueError) as exc:
        raise TargetError(f"cannot read the ELF {elf}: {exc}") from None


def _open_first(candidates, symbols, stop):
    """(the link, how it was chosen) of the first candidate that opens; TargetError saying why
    each failed when none does."""
    failures = []
    timeout = settings.value("link-timeout")  # each link tried holds GDB one deadline at most
    for choice, how in candidates:
        try:
            return via.open_link(choice, symbols, cancel=stop, timeout=timeout), how
        except via.LinkError as exc:
            failures.append(f"{exc} (the link came from {how})")
    raise TargetError("; then ".join(failures) + ("; the running `arena live` goes on" if _STATE["thread"]
                                                  else ""))


def _publisher(server):
    """The poller thread's publish: each snapshot to the viewer link, a failure to the messages."""
    messages = _STATE["messages"]

    def publish(snap):
        try:
            server.broadcast(viewerlink.message(snap))
        except viewerlink.LiveError as exc:
            messages.put(str(exc))

    return publish


def _hook_events():
    """Once: the thread's messages printed at each prompt, the thread stopped when GDB exits."""
    if not _STATE["hooked"]:
        gdb.events.before_prompt.connect(_print_pending)
        if hasattr(gdb.events, "gdb_exiting"):
            gdb.events.gdb_exiting.connect(lambda _e: stop_live())
        _STATE["hooked"] = True
