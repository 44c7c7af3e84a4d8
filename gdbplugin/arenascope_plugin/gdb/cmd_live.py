"""`arena live`: the live view while the core runs, through OpenOCD's Tcl RPC port.

GDB in all-stop mode cannot read memory while the target runs; OpenOCD can, through the debug
probe's MEM-AP, on its Tcl port. This command starts a poller thread (livepoll.py, no GDB calls)
that reads through openocd.TclReader and streams snapshots to the viewer over `arena view`'s
link. GDB stays usable meanwhile; what the thread has to say is printed at the next prompt.
"""
import queue
import threading

import gdb  # pylint: disable=import-error

from arenascope_plugin.decode import abi, tflm
from arenascope_plugin.analyse import agentless
from arenascope_plugin.serve import viewerlink, livepoll
from arenascope_plugin.acquire import openocd
from arenascope_plugin.gdb.commands import _LIVE, _Sub, _range_setting, _tool_path, _word_setting, serve, setting, stop_serving
from arenascope_plugin.decode.descriptor import Band
from arenascope_plugin.acquire.gdbtarget import TargetError, elf_ram_ranges, parse_address, stack_symbols, symbol_address

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


def _agentless_reader(reader):
    """A read_descriptor for agentless mode: the layout and the plan from GDB now (DWARF, the ELF's
    model, the planner tool), the walk through `reader` at each refresh."""
    lay = agentless.layout()
    interpreter, _how = agentless.find_interpreter(reader, lay)
    model_addr, allocated = tflm.read_header(reader, lay, interpreter)
    if not allocated:
        raise TargetError(f"the MicroInterpreter at {interpreter:#x} has no tensors allocated yet: start `arena live` "
                          "after AllocateTensors()")
    doc = agentless.plan_for(reader, lay, model_addr, _tool_path("planner-path", "planner", "arenascope-plan"),
                             str(setting("model")).strip())
    found = stack_symbols()
    stack = Band(low_addr=found[0], high_addr=found[1], touched_lo=abi.NONE, touched_hi=abi.NONE) if found else None
    return livepoll.agentless_reader(reader, lay, interpreter, doc, stack), interpreter


class LiveCommand(_Sub):
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
                stop_serving()
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
        address = symbol_address("arenascope_descriptor")
        text = str(setting("descriptor-address")).strip()
        if text not in ("", "auto"):
            address = parse_address(text)
        read_descriptor, located = None, None
        if address is None:
            if not agentless.tflm_in_elf():
                raise TargetError("no arenascope_descriptor symbol in the ELF (and no TFLM interpreter for agentless "
                                  "mode): load the firmware's ELF, or `set arena descriptor-address ADDR`")
            try:
                read_descriptor, interpreter = _agentless_reader(reader)
            except openocd.TclError as exc:
                raise TargetError(str(exc)) from None
            located = f"agentless: the MicroInterpreter at {interpreter:#x}, live through {link.endpoint}"
        else:
            located = f"the descriptor at {address:#x}, live through {link.endpoint}"
        progspace = gdb.current_progspace()
        source = {"elf": progspace.filename if progspace else None, "located_by": located}
        ram = [(lo, hi) for lo, hi, _ in elf_ram_ranges()[0]] or None
        canary, paint = _word_setting("canary-pattern", None), _word_setting("stack-paint-pattern", None)
        poller = livepoll.LivePoller(reader, address or 0, source, ram_ranges=ram, scan_budget=args.scan_budget,
                                     canary_pattern=canary, stack_pattern=paint, stack_range=_range_setting("stack-range"),
                                     read_descriptor=read_descriptor)
        stop_live()  # the new link works: replace a running poller
        if _LIVE["server"] is None:
            _STATE["own_server"] = True
        server = serve(args.port, args.no_launch, 0.0, who="arena live")
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
        gdb.write(f"arena live: polling {located.split(', live')[0]} through OpenOCD's Tcl port {link.endpoint} "
                  f"(from {how}) at up to {args.hz:g} refreshes/s; `arena live status`, `arena live stop`\n")

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
                  f"  side channel:     {'in use (reads are not echoed into logs)' if not p.reader.link.quiet_why else p.reader.link.quiet_why}\n"
                  f"  last message:     {_STATE['last_message'] or 'none'}\n")


def register():
    LiveCommand()
