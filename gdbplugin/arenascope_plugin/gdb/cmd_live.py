"""`arena live`: the live view while the core runs, through OpenOCD's Tcl RPC port.

GDB in all-stop mode cannot read memory while the target runs; OpenOCD can, through the debug
probe's MEM-AP, on its Tcl port. This command starts a poller thread (livepoll.py, no GDB calls)
that reads through openocd.TclReader and streams snapshots to the viewer over `arena view`'s
link. GDB stays usable meanwhile; what the thread has to say is printed at the next prompt.
"""
import queue
import threading

import gdb  # pylint: disable=import-error

from arenascope_plugin import pipeline
from arenascope_plugin.acquire import openocd
from arenascope_plugin.acquire.elfsymbols import ElfSymbols
from arenascope_plugin.errors import TargetError
from arenascope_plugin.gdb import events, framework
from arenascope_plugin.gdb.framework import Sub
from arenascope_plugin.gdb.settings import Spec, resolved, setting
from arenascope_plugin.serve import livepoll, viewerlink


def check_endpoint(name, value):
    """`set arena openocd`: auto, or a HOST:PORT openocd.parse_endpoint takes."""
    if not isinstance(value, str) or value.strip() in ("", "auto"):
        return None
    try:
        openocd.parse_endpoint(value)
    except ValueError as exc:
        return str(exc)
    return None


SETTINGS = [
    Spec("openocd", gdb.PARAM_STRING, "auto",
         "OpenOCD's Tcl RPC port for `arena live`, HOST:PORT: 'auto' takes the OpenOCD GDB is attached to (its "
         "command line's tcl_port when it runs on this machine), else port 6666 on GDB's remote host.",
         "OpenOCD's Tcl port for the live view", check_endpoint),
]

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


def _endpoint():
    """(host, port, how) of OpenOCD's Tcl port: the setting, else the OpenOCD GDB is attached to."""
    text = str(setting("openocd")).strip()
    if text and text != "auto":
        try:
            host, port = openocd.parse_endpoint(text)
        except ValueError as exc:
            raise TargetError(f"`set arena openocd`: {exc}") from None
        return host, port, "`set arena openocd`"
    conn = getattr(gdb.selected_inferior(), "connection", None)
    details = getattr(conn, "details", None) or ""
    if conn is not None and getattr(conn, "type", "") in ("remote", "extended-remote") and ":" in details:
        host, _, gport = details.rpartition(":")
        host = host.strip("[]") or "127.0.0.1"
        if gport.isdigit():
            tcl = openocd.tcl_port_of_gdb_server(host, int(gport))
            if tcl is not None:
                return host, tcl, f"the command line of the OpenOCD serving GDB on {details}"
            return host, openocd.DEFAULT_PORT, f"GDB's remote host {host}, OpenOCD's default Tcl port"
    return "127.0.0.1", openocd.DEFAULT_PORT, "the default (GDB is not attached to a remote OpenOCD here)"


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
    """Stream snapshots of the running target to the viewer, read through OpenOCD's Tcl port.
GDB cannot read memory while the core runs (all-stop); OpenOCD reads it through the probe
without halting the core. A thread polls the descriptor (and its sequence counter: a read torn
by an update is retried, never shown), re-reads the region tables only when their layout
generation changes, and scans the guard band, the free band's canary and the stack paint a slice
per refresh. GDB stays usable; messages appear at the next prompt. Without the agent (agentless
mode) TFLM's objects are walked again only when its allocator's state moves; the agent-only
figures are unavailable.

Usage: arena live [--hz N] [--openocd HOST:PORT] [--port N] [--no-launch] [--scan-budget BYTES]
       arena live stop       stop polling (the viewer keeps its last snapshot)
       arena live status     refreshes, rate, bytes a refresh, torn reads discarded, last error
  --hz N          refreshes a second at most (default 20)
  --openocd H:P   OpenOCD's Tcl RPC port (default: `show arena openocd`; auto: the OpenOCD GDB is
                  attached to, found by its command line, else port 6666 on GDB's remote host)
  --port N        the viewer link's port (as `arena view --port`)
  --no-launch     do not start the viewer
  --scan-budget B band bytes scanned a refresh (default 512)"""
    sub = "live"
    options = ("--hz", "--openocd", "--port", "--no-launch", "--scan-budget", "stop", "status")

    def add_arguments(self, parser):
        parser.add_argument("action", nargs="?", choices=("start", "stop", "status"), default="start")
        parser.add_argument("--hz", type=float, default=20.0)
        parser.add_argument("--openocd", default=None)
        parser.add_argument("--port", type=int, default=None)
        parser.add_argument("--no-launch", action="store_true")
        parser.add_argument("--scan-budget", type=int, default=livepoll.DEFAULT_SCAN_BUDGET)

    def run(self, args):
        _print_pending()
        if args.action == "stop":
            running = _STATE["thread"] is not None
            stop_live()
            if _STATE["own_server"]:  # started by `arena live`, not `arena view`: stop-time snapshots end too
                events.stop_serving()
                _STATE["own_server"] = False
            gdb.write("arena live: stopped\n" if running else "arena live: not running\n")
            return
        if args.action == "status":
            self._status()
            return
        if not 0.1 <= args.hz <= 200:
            raise TargetError(f"--hz {args.hz:g}: give 0.1 to 200 refreshes a second")
        if not 16 <= args.scan_budget <= 65536:
            raise TargetError(f"--scan-budget {args.scan_budget}: give 16 to 65536 bytes")
        if args.port is not None and not 0 <= args.port <= 65535:
            raise TargetError(f"--port {args.port}: give 0 (any free port) to 65535")
        if args.openocd:
            try:
                host, port = openocd.parse_endpoint(args.openocd)
            except ValueError as exc:
                raise TargetError(f"--openocd: {exc}") from None
            how = "--openocd"
        else:
            host, port, how = _endpoint()
        link = openocd.TclLink(host, port)
        stop = threading.Event()
        reader = openocd.TclReader(link, cancel=stop)
        try:
            ok, _ = link.call("version")
        except openocd.TclError as exc:
            raise TargetError(f"{exc}; the Tcl port came from {how}"
                              + ("; the running `arena live` goes on" if _STATE["thread"] else "")) from None
        if not ok:
            link.close()
            raise TargetError(f"{link.endpoint} answered but `version` failed: not OpenOCD's Tcl port?")
        if link.quiet_why:
            gdb.write(f"arena live: warning: {link.quiet_why}: OpenOCD will echo every read into its log, and into "
                      "GDB's console while the target runs\n")
        progspace = gdb.current_progspace()
        elf = progspace.filename if progspace else None
        if not elf:
            link.close()
            raise TargetError("no ELF loaded: load the firmware's ELF (`file fw.elf`): the live view reads its symbols")
        try:
            symbols = ElfSymbols(elf)
        except (OSError, ValueError) as exc:
            link.close()
            raise TargetError(f"cannot read the ELF {elf}: {exc}") from None
        # Everything GDB knows is resolved here, in GDB's thread: the poller thread makes no GDB call.
        target = pipeline.Target(reader, symbols, openocd.CoreOverTcl(link, symbols))
        poller = livepoll.LivePoller(target, resolved(framework.attached()), scan_budget=args.scan_budget)
        located = f"{elf} through OpenOCD's Tcl port {link.endpoint}"
        stop_live()  # the new link works: replace a running poller
        if events.LIVE["server"] is None:
            _STATE["own_server"] = True
        server = events.serve(args.port, args.no_launch, 0.0, who="arena live")
        messages = _STATE["messages"]

        def publish(snap):
            try:
                server.broadcast(viewerlink.message(snap))
            except viewerlink.LiveError as exc:
                messages.put(str(exc))

        thread = threading.Thread(target=livepoll.run, name="arenascope-live-poll", daemon=True,
                                  args=(poller, publish, args.hz, stop, messages.put))
        _STATE.update(thread=thread, stop=stop, poller=poller, endpoint=(link.endpoint, how), link=link,
                      last_message=None)
        if not _STATE["hooked"]:
            gdb.events.before_prompt.connect(_print_pending)
            if hasattr(gdb.events, "gdb_exiting"):
                gdb.events.gdb_exiting.connect(lambda _e: stop_live())
            _STATE["hooked"] = True
        thread.start()
        gdb.write(f"arena live: polling {located} (from {how}) at up to {args.hz:g} refreshes/s; `arena live status`, "
                  "`arena live stop`\n")

    @staticmethod
    def _status():
        p, t = _STATE["poller"], _STATE["thread"]
        if p is None:
            gdb.write("arena live: not started (`arena live`)\n")
            return
        endpoint, how = _STATE["endpoint"]
        last = p.last["live"] if p.last else None
        gdb.write(f"arena live: {'running' if t is not None and t.is_alive() else 'stopped'}, OpenOCD {endpoint} "
                  f"(from {how})\n"
                  f"  refreshes:        {p.refreshes}, {p.rate():.1f}/s now\n"
                  f"  torn discarded:   {p.torn}\n"
                  f"  bytes a refresh:  {last['bytes_last_refresh'] if last else '-'} (reads so far: "
                  f"{p.reader.calls} requests, {p.reader.bytes} B)\n"
                  f"  reconnects:       {max(0, p.reader.link.connects - 1)}\n"
                  f"  side channel:     {p.reader.link.quiet_why or 'in use (reads are not echoed into logs)'}\n"
                  f"  last message:     {_STATE['last_message'] or 'none'}\n")


