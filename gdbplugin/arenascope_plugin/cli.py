"""arenascope without GDB: the pipeline (pipeline.py) on the firmware's ELF (acquire/elfsymbols.py)
and a target read through the probe (acquire/via.py), running or halted: OpenOCD's Tcl port
(--via tcl:HOST:PORT, the default tcl:127.0.0.1:6666; --openocd HOST:PORT is the same) or a GDB
server's GDB port (--via gdb:HOST:PORT: OpenOCD, J-Link, ST-LINK, pyOCD; docs/hardware.md).

    arenascope info     --elf fw.elf [--via LINK] [--json]   the arena's figures (as `arena info`)
    arenascope check    --elf fw.elf [--via LINK] [--json] [--junit FILE] [--budget]   PASS/WARN/FAIL
                        rules; exit 1 on a FAIL; --junit: also the checks as a JUnit XML report;
                        --budget: also the stack rule on the worst case from the ELF (arena budget)
    arenascope snapshot --elf fw.elf [--via LINK] FILE|-   the snapshot JSON (as `arena snapshot`;
                        -: to standard output)
    arenascope fault    --elf fw.elf [--via LINK] [--json]   the fault and its verdict (as `arena fault`)
--json: one JSON document on stdout (docs/command-json-schema.json); messages stay on stderr.
    arenascope report   --elf fw.elf [--via LINK] FILE.html [--svg FILE.svg]   the self-contained
                        HTML report (as `arena report`: drawn by arenascope-viewer, no display)
    arenascope live     --elf fw.elf [--via LINK] [--hz N] [--port N] [--no-viewer]
                        [--duration S] [--refreshes N] [--once] [--snapshot-out FILE]
                        [--scan-budget BYTES]
    arenascope diff A.json B.json [--json] [--all]   what changed between two snapshots (no ELF,
                        no target); exit 0 identical, 1 different, 2 a file that is not a snapshot
    arenascope budget   --elf fw.elf [--model M.tflite | --arena-bytes N] [--su FILE.su ...]
                        [--arena SYMBOL] [--calls CALLER=CALLEE,...] [--bound FUNCTION=LEVELS]
                        [--json]   before flashing, no target: the stack's worst
                        case from the code, the RAM map and the 1.5 x stack rule (as `arena
                        budget`); exit 0 it holds, 4 the arena does not fit the model, 5 TFLM
                        would crash or hang, 6 the stack can reach the arena (docs/stack-budget.md)
    arenascope soak N   --elf fw.elf [--via LINK] [--hz N] [--timeout S] [--json]   N inferences
                        without a person, every rule checked at each live refresh (the agent's
                        count): the worst of each with where it happened; exit 1 on a FAIL
    arenascope --version

Post-mortem from a RAM dump instead of a target (docs/hardfault.md, "From a RAM dump"):
    arenascope info|check|fault|snapshot|report --elf fw.elf --ram FILE@ADDR [--ram ...] [--registers FILE]
--ram FILE@ADDR: a raw binary (OpenOCD dump_image, GDB dump binary memory, J-Link savebin) whose
first byte was at ADDR; --ram FILE.hex: Intel HEX (python3-intelhex). Repeat it for several
ranges (not overlapping); not with --via. --registers FILE: GDB's `info registers` output at the
crash, or JSON {"pc": "0x...", ...}; without it the registers are unknown and the fault comes
from the agent's record in the dump. Code and constants are read from the ELF. The first line
printed says it reads a dump.

Common options: every setting of GDB's `set arena` is an option (listed below, from the one
settings table: settings_table.py), checked with the same words: --planner PATH
(arenascope-plan; default build/planner beside this), --model FILE.tflite (agentless: the model
when the ELF has no array of it), --descriptor-address ADDR, --stack-range LOW HIGH,
--scan-range START END, --canary-pattern WORD, ... Addresses are numbers or the ELF's symbols.
Registers are read when the core is halted (OpenOCD's `get_reg`, Tcl only); while it runs, and
through a GDB port, SP is unknown. The call chain GDB's unwinder gives is not available here:
only the PC's function. --link-timeout S: each request to the server is answered within S
seconds (default 3), whatever it sends meanwhile, or the link fails with what the server did
(docs/hardware.md, "What a bad server gets"). Exit status: 0; 1 a failed
check, an unwritable file, or a live run with no refresh; 2 bad arguments or a target or firmware
it cannot read; 130 Ctrl-C, 143 SIGTERM (live too: the last snapshot is written first). Debian's
/usr/bin/python3 with python3-pyelftools (and python3-intelhex for .hex dumps); nothing else.
"""
import argparse
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
import traceback

from arenascope_plugin import paths, pipeline, remedy, settings_table, stackbudget_job, version
from arenascope_plugin.acquire import dumped, elfinfo, targetmemory, via
from arenascope_plugin.acquire.dump import DumpError
from arenascope_plugin.acquire.elfsymbols import ElfSymbols
from arenascope_plugin.acquire.planner import PlannerError
from arenascope_plugin.acquire.reader import MemoryReadError
from arenascope_plugin.analyse import diagnosis, diff, figures
from arenascope_plugin.analyse.soak import Soak
from arenascope_plugin.errors import ArenascopeError, TargetError
from arenascope_plugin.present import compareview, htmlreport, jsonout, jsontext, junit, snapshot, style, textreports
from arenascope_plugin.present import diff as diff_text
from arenascope_plugin.present import soak as soak_text
from arenascope_plugin.present.progress import Progress
from arenascope_plugin.serve import livepoll, viewerlink


class UsageError(ArenascopeError):
    """Bad arguments, or a target or firmware that cannot be read: exit status 2."""


def _number(text):
    try:
        return int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


# A boolean setting's words, as GDB's `set` takes them (and refuses others with GDB's words)
_ON, _OFF = ("on", "1", "yes", "enable"), ("off", "0", "no", "disable")


def typed(setting, text):
    """The option's text as the setting's type holds it (as GDB's `set arena` makes it: a string
    stripped, empty for auto; on/off; on/off/auto as None). ValueError saying what is wrong."""
    text = text.strip()
    if setting.type == "string":
        return text or "auto"
    if setting.type == "uint":
        try:
            return int(text, 0)
        except ValueError:
            raise ValueError(f"{text!r} is not a number") from None
    word = text.lower()
    if setting.type == "auto-bool" and word == "auto":
        return None
    if word in _ON or word in _OFF:
        return word in _ON
    raise ValueError('"on", "off" or "auto" expected.' if setting.type == "auto-bool" else '"on" or "off" expected.')


class _SettingOption(argparse.Action):
    """The tool's option of one settings_table.Setting: its text made the setting's type and
    checked by the table's check as it is parsed (refused with the check's words: `argument
    --NAME: WORDS`, exit status 2). A pair is two words ('START END'); a repeated option is joined
    with '; '. Records the names given in namespace.given_settings."""

    def __init__(self, option_strings, dest, setting=None, **kwargs):
        self.setting = setting
        super().__init__(option_strings, dest, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        s = self.setting
        text = " ".join(values) if isinstance(values, list) else "on" if values is None else values
        given = getattr(namespace, "given_settings", set())
        if s.form == "repeat" and s.name in given:
            text = f"{getattr(namespace, self.dest)}; {text}"
        try:
            value = typed(s, text)
        except ValueError as exc:
            raise argparse.ArgumentError(self, str(exc)) from None
        problem = s.check(s.name, value) if s.check else None
        if problem:
            raise argparse.ArgumentError(self, problem)
        setattr(namespace, self.dest, value)
        namespace.given_settings = given | {s.name}


def shown_default(setting):
    """A setting's default as `show arena` shows it (on, off, auto, "" for the empty model)."""
    value = setting.default
    if isinstance(value, bool) or value is None:
        return "auto" if value is None else "on" if value else "off"
    return str(value)


def add_setting_options(ap, table=None):
    """The tool's option of each setting of table (settings_table.TABLE by default): its flag,
    the table's default (args.NAME_WITH_UNDERSCORES holds the value as set), its doc as help."""
    for s in settings_table.TABLE if table is None else table:
        nargs = 2 if s.form == "pair" else "?" if s.type in ("bool", "auto-bool") else None
        metavar = tuple(s.metavar.split()) if s.form == "pair" else s.metavar
        default = shown_default(s) or "empty"
        ap.add_argument(s.flag, action=_SettingOption, setting=s, dest=s.name.replace("-", "_"), default=s.default,
                        nargs=nargs, metavar=metavar,
                        help=f"{(s.tool_doc or s.doc).replace('%', '%%')} (default: {default}; GDB: "
                             f"`set arena {s.name}`)")


def settings_help(table=None):
    """The tool's settings for its --help: one line each, option and default."""
    rows = [(f"{s.flag} {s.metavar}", shown_default(s) or '""')
            for s in (settings_table.TABLE if table is None else table)]
    width = max(len(r[0]) for r in rows)
    return "\n".join(f"    {flag:<{width}}  default {default}" for flag, default in rows)


def tool_words(r):
    """remedy.Remedy in the tool's syntax: `--FLAG VALUE`, or the --FLAG option for a `show`;
    (words, it is a command). A setting the table does not have is worded as GDB's."""
    s = settings_table.BY_NAME.get(r.setting)
    if s is None:
        return remedy.gdb_words(r)
    if r.show:
        return f"the {s.flag} option", False
    return f"{s.flag}{' ' + r.value if r.value else ''}", True


class ToolEvaluator:
    """settings_table.Evaluator for the tool: numbers, and the names of the ELF's symbols."""

    def __init__(self, symbols, reader):
        self.symbols, self.reader = symbols, reader

    def address(self, text):
        """text as a number, or the address of the ELF's symbol text. TargetError otherwise."""
        try:
            return int(text, 0)
        except ValueError:
            pass
        address = self.symbols.address(text)
        if address is None:
            raise TargetError(f"{text!r}: the tool takes a number or the name of a symbol of the ELF (GDB evaluates "
                              "expressions)")
        return address

    def value(self, text):
        """text as a number, or the 32-bit word the ELF's symbol text holds now."""
        try:
            return int(text, 0)
        except ValueError:
            pass
        address = self.address(text)
        try:
            return int.from_bytes(self.reader.read(address, 4), "little")
        except MemoryReadError as exc:
            raise TargetError(f"{text} is not readable ({exc.why})") from None


def _common(ap):
    ap.add_argument("--version", action="version", version=f"arenascope {version.VERSION}")
    ap.add_argument("--elf", required=True, help="the firmware's ELF (symbols, DWARF, the model's bytes)")
    ap.add_argument("--openocd", default=None,
                    help="OpenOCD's Tcl RPC port, HOST:PORT: the same as --via tcl:HOST:PORT")
    ap.add_argument("--ram", action="append", metavar="FILE@ADDR", help="read a RAM dump instead of a target: a raw "
                    "binary whose first byte was at ADDR, or FILE.hex (Intel HEX); repeat it for several ranges")
    ap.add_argument("--registers", metavar="FILE", help="with --ram: the core's registers at the crash (GDB's `info "
                    "registers` output, or a JSON object {\"pc\": \"0x...\", ...})")
    add_setting_options(ap)


def _parsed(args, name):
    """The setting's option as the table's parse makes it (for a setting with no expression)."""
    s = settings_table.BY_NAME[name]
    return settings_table.parsed(s, getattr(args, s.name.replace("-", "_")), None)


RUN = {"debug": False}  # --debug: an error also shows its traceback
PROGRESS = {"now": None}  # the one-shot command's Progress (present/progress.py), for main's Ctrl-C message


def _connect(args, stop=None, progress=None):
    """(pipeline.Target, Settings, link) for the options (link: None for a dump); UsageError says
    what is wrong."""
    given_via = args.live_via != "auto"
    if given_via and args.openocd:
        raise UsageError("give --via or --openocd, not both")
    if args.ram and (given_via or args.openocd):
        raise UsageError(f"give --ram (read a dump) or {'--via' if given_via else '--openocd'} (read a live target), "
                         "not both")
    if args.registers and not args.ram:
        raise UsageError("--registers goes with --ram (a dump): a live target's registers are read from the core")
    try:
        where = via.parse_via(args.live_via if given_via else f"tcl:{args.openocd or '127.0.0.1:6666'}")
    except ValueError as exc:
        raise UsageError(f"{'--via' if given_via else '--openocd'}: {exc}") from None
    if not os.path.isfile(args.elf):
        raise UsageError(f"cannot read {args.elf}: not a file (give the firmware's ELF)")
    try:
        symbols = ElfSymbols(args.elf)
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {args.elf}: {getattr(exc, 'strerror', None) or exc}") from None
    if symbols.stripped:
        print(f"arenascope: warning: {args.elf} has no symbol table (stripped): the descriptor is found by scanning "
              "its RAM sections (or --descriptor-address), and functions and lines are not named; give the "
              "unstripped ELF for names", file=sys.stderr)
    symbols.declared_memory = tuple(targetmemory.parse(args.memory))  # checked as the option was parsed
    if args.ram:
        try:
            found = dumped.open_dump(args.ram, args.registers, symbols)
        except DumpError as exc:
            raise UsageError(str(exc)) from None
        link, reader, core, warnings = None, found.reader, found.core, found.warnings
        # the first line says it reads a dump; on stderr when stdout is one JSON document
        machine = getattr(args, "json", False) or getattr(args, "file", None) == "-"
        print(f"arenascope: {found.banner}", flush=True, file=sys.stderr if machine else sys.stdout)
    else:
        try:
            link = via.open_link(where, symbols, cancel=stop, progress=progress, timeout=_parsed(args, "link-timeout"))
        except via.LinkError as exc:
            raise UsageError(str(exc)) from None
        reader, core, warnings = link.reader, link.core, link.warnings
    for text in warnings:
        print(f"arenascope: warning: {text}", file=sys.stderr)
    target = pipeline.Target(reader, symbols, core)
    values = {s.name: getattr(args, s.name.replace("-", "_")) for s in settings_table.TABLE}
    try:
        settings = pipeline.Settings(**settings_table.pipeline_fields(values, ToolEvaluator(symbols, reader)))
    except TargetError as exc:
        if link is not None:
            link.close()
        raise UsageError(str(exc)) from None
    if args.colour is not None:  # auto: main's rule (a terminal, no NO_COLOR, not TERM=dumb)
        style.enabled = args.colour
    RUN["debug"] = args.debug
    return target, settings, link


def _warn(key, text):
    print(f"arenascope: warning: {text}", file=sys.stderr)


def _gather(args, need_descriptor=True, verify=True):
    # on a terminal only: in a pipe or a log the line's appearance would depend on the machine's speed
    PROGRESS["now"] = Progress(sys.stderr.write if sys.stderr.isatty() else lambda _text: None,
                               f"arenascope {args.command}")
    target, settings, link = _connect(args, progress=PROGRESS["now"])
    target.core.refresh()
    try:
        return pipeline.gather(target, settings, {}, need_descriptor=need_descriptor, verify=verify, on_warn=_warn)
    except ArenascopeError as exc:
        if need_descriptor:
            raise UsageError(str(exc)) from None
        # `fault` goes on without the arena, as `arena fault` does: the fault itself may still be read.
        ctx = pipeline.Context(target=target, settings=settings, cache={}, on_warn=_warn)
        ctx.note = str(exc)
        return ctx
    finally:
        PROGRESS["now"].done()


def _emit(doc):
    """Prints a --json document (docs/command-json-schema.json) on stdout; the tool's messages
    are on its stderr, so "messages" is empty here."""
    print(jsontext.dumps(dict(doc, messages=[])))


def info_main(ctx, args):
    if args.json:
        _emit(jsonout.info(pipeline.snapshot(ctx, with_fault=False)))
    else:
        print("\n".join(textreports.info_report(ctx)))
    return 0


def check_main(ctx, args):
    result = pipeline.checks_of(ctx, with_budget=args.budget)
    if args.junit:
        try:
            print(f"arenascope check: {junit.write(snapshot.checks_json(result), args.junit)}", file=sys.stderr)
        except junit.JunitError as exc:
            raise UsageError(str(exc)) from None
        except OSError as exc:
            print(f"arenascope check: cannot write {os.path.expanduser(args.junit)}: {exc.strerror}",
                  file=sys.stderr)
            return 1
    if args.json:
        _emit(jsonout.check(result))
    else:
        print("\n".join(textreports.check_report(ctx, result)))
    failed = [c.rule for c in result if c.verdict == figures.FAIL]
    if failed:
        print(f"arenascope check: failed rules: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


def snapshot_main(ctx, args):
    if args.file == "-":  # the snapshot on stdout; messages are on stderr
        print(jsontext.dumps(pipeline.snapshot(ctx)))
        return 0
    try:
        summary = snapshot.save(pipeline.snapshot(ctx), args.file)
    except snapshot.SnapshotError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        print(f"arenascope snapshot: cannot write {os.path.expanduser(args.file)}: {exc.strerror}", file=sys.stderr)
        return 1
    print(f"arenascope snapshot: {summary}")
    return 0


def report_main(ctx, args):
    try:
        summary = htmlreport.write_report(pipeline.snapshot(ctx), args.file, args.svg,
                                          viewer=_parsed(args, "viewer-path"))
    except htmlreport.ReportError as exc:
        print(f"arenascope report: {exc}", file=sys.stderr)
        return 1
    print(f"arenascope report: {summary}")
    return 0


def fault_main(ctx, args):
    d = diagnosis.diagnose(ctx)
    if args.json:
        _emit(jsonout.fault(d))
        return 0
    print("\n".join(textreports.fault_report(d)))
    return 0


def _live_args(argv):
    """`arenascope live`'s arguments, checked (--port made the port to serve on); UsageError says
    what is wrong."""
    ap = argparse.ArgumentParser(prog="arenascope live", description="Stream snapshots of the running target to the "
                                 "viewer, read through the probe while the core runs (--via).")
    _common(ap)
    ap.add_argument("--hz", type=float, default=20.0, help="refreshes a second at most (default 20)")
    ap.add_argument("--port", type=int, default=None, help="viewer link port on 127.0.0.1 (default: --view-port when "
                    "given, else a free one)")
    ap.add_argument("--no-viewer", action="store_true", help="do not start the viewer (connect one yourself)")
    ap.add_argument("--duration", type=float, default=0.0, help="stop after this many seconds (default: Ctrl-C)")
    ap.add_argument("--refreshes", type=int, default=0, help="stop after this many good refreshes (default: none)")
    ap.add_argument("--snapshot-out", help="write the last snapshot to this file at the end")
    ap.add_argument("--once", action="store_true", help="stop after the first snapshot whose every band and stack "
                    "figure is the host's (each band read whole once); --duration caps the wait")
    ap.add_argument("--scan-budget", type=int, default=livepoll.DEFAULT_SCAN_BUDGET,
                    help="band bytes scanned a refresh (default %(default)s)")
    args = ap.parse_args(argv)
    if args.ram:
        raise UsageError("--ram: a dump does not change, so there is nothing to stream: use `arenascope info`, "
                         "`check`, `fault` or `snapshot` on it")
    if not 0.1 <= args.hz <= 200:
        raise UsageError(f"--hz {args.hz:g}: give 0.1 to 200")
    if args.port is None:
        args.port = args.view_port if "view-port" in getattr(args, "given_settings", ()) else 0
    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port}: give 0 (any free port) to 65535")
    if not 16 <= args.scan_budget <= 65536:
        raise UsageError(f"--scan-budget {args.scan_budget}: give 16 to 65536 bytes")
    if args.refreshes < 0:
        raise UsageError(f"--refreshes {args.refreshes}: give a count (0: no limit)")
    return args


def _start_viewer(args, where):
    """The viewer started on the link at where (a Popen), or None, said why, when it cannot be."""
    path = _parsed(args, "viewer-path")
    if path is None:
        print("arenascope live: no viewer found (build it: bash tools/build.sh); serving only", file=sys.stderr)
        return None
    if not paths.has_display():
        print("arenascope live: no display (DISPLAY is not set): serving only", file=sys.stderr)
        return None
    return subprocess.Popen([path, "--connect", where], stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _end_viewer(viewer):
    """Ends the viewer live_main started (None: none), if it still runs: killed after 5 s."""
    if viewer is not None and viewer.poll() is None:
        viewer.terminate()
        try:
            viewer.wait(5)
        except subprocess.TimeoutExpired:
            viewer.kill()


def _stop_after(seconds, stop):
    """Sets stop after seconds (--duration)."""
    # A read in progress sees `stop` within a fraction of a second (acquire/rsp.py SLICE_S), and
    # never outlives its deadline: the run ends within --duration and one --link-timeout.
    timer = threading.Timer(seconds, stop.set)
    timer.daemon = True  # Ctrl-C before it fires must not wait for it
    timer.start()


def _live_publisher(args, server, poller, stop):
    """livepoll.run's publish for `arenascope live`: each snapshot to the viewer link; stop set at
    --once's complete snapshot and at --refreshes."""

    def publish(snap):
        try:
            server.broadcast(viewerlink.message(snap))
        except viewerlink.LiveError as exc:
            print(f"arenascope live: {exc}", file=sys.stderr, flush=True)
        if args.once and poller.scanner.complete and snap["live"]["link"] == "ok":
            stop.set()
        if args.refreshes and poller.refreshes >= args.refreshes:
            stop.set()

    return publish


def _live_report(text):
    print(f"arenascope live: {text}", file=sys.stderr, flush=True)


def _stream_live(args, link, poller, stop):
    """Serves the poller's snapshots on the viewer link (and starts the viewer) until stop, then
    closes the link, the server and the viewer: the KeyboardInterrupt (or Terminated) that ended
    it, or None."""
    server = viewer = None
    try:
        try:
            server = viewerlink.SnapshotServer(args.port)
        except viewerlink.LiveError as exc:
            raise UsageError(str(exc)) from None
        where = f"127.0.0.1:{server.port}"
        print(f"arenascope live: reading {args.elf} through {link.described}; viewer link on {where}",
              file=sys.stderr, flush=True)
        if not args.no_viewer:
            viewer = _start_viewer(args, where)
        if args.duration > 0:
            _stop_after(args.duration, stop)
        livepoll.run(poller, _live_publisher(args, server, poller, stop), args.hz, stop, _live_report)
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (Terminated): the end below still runs
        stop.set()
        return exc
    finally:
        if server is not None:
            server.close()
        link.close()
        _end_viewer(viewer)
    return None


def _write_last_snapshot(args, poller):
    """Writes --snapshot-out: 0, or 1 said why when there is none or it cannot be written."""
    if poller.last is None:
        print(f"arenascope live: no refresh succeeded: {args.snapshot_out} not written", file=sys.stderr)
        return 1
    # Ended while the link was lost: the last good data, marked so (as the viewer was sent).
    last = poller.lost(poller.trouble, poller.trouble_link) if poller.trouble not in (None, "torn") else \
        poller.last
    try:
        snapshot.write_snapshot_file(last, args.snapshot_out)
    except OSError as exc:
        print(f"arenascope live: cannot write {args.snapshot_out}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    return 0


def _live_outcome(args, poller, ended_by):
    """The live run's exit status unless a signal ended it: 1 when --snapshot-out was not written,
    no refresh succeeded or it ended with the link down (each said), else 0."""
    rc = _write_last_snapshot(args, poller) if args.snapshot_out else 0
    if poller.refreshes == 0 and rc == 0 and ended_by is None:
        # Nothing was read whole: a script must not take that for a live view that worked.
        print("arenascope live: no refresh succeeded (the messages above say why): exit status 1", file=sys.stderr)
        rc = 1
    if poller.trouble not in (None, "torn") and poller.refreshes:
        # It ended while the link was down: the count above must not read as a live view to the end.
        print(f"arenascope live: it ended with the link down ({poller.trouble}): no refresh for the last "
              f"{poller.since_last_refresh():.1f} s, after refresh {poller.refreshes}", file=sys.stderr)
        rc = rc or 1
    return rc


def live_main(argv):
    args = _live_args(argv)
    stop = threading.Event()
    target, settings, link = _connect(args, stop)
    poller = livepoll.LivePoller(target, settings, scan_budget=args.scan_budget)
    ended_by = _stream_live(args, link, poller, stop)
    rc = _live_outcome(args, poller, ended_by)
    last = poller.last["live"] if poller.last else None
    print(f"arenascope live: {poller.refreshes} refreshes ({poller.torn} torn reads discarded), "
          f"{target.reader.calls} requests, {target.reader.bytes} B read"
          + (f", last refresh {last['bytes_last_refresh']} B" if last else ""), file=sys.stderr)
    if ended_by is not None:
        code = exit_status(ended_by)
        print(f"arenascope live: {signal_words(ended_by)}: exit status {code}", file=sys.stderr)
        return code
    return rc


def _soak_args(argv):
    """`arenascope soak`'s arguments, checked; UsageError says what is wrong."""
    ap = argparse.ArgumentParser(prog="arenascope soak", description="Run N inferences on the target without a "
                                 "person, the rules checked through the live link, and report the worst of each.")
    _common(ap)
    ap.add_argument("count", type=int, metavar="N", help="how many inferences (the agent's own count)")
    ap.add_argument("--hz", type=float, default=20.0, help="refreshes a second at most (default 20)")
    ap.add_argument("--timeout", type=float, default=30.0, metavar="S",
                    help="no new inference within S seconds stops the run (default 30)")
    ap.add_argument("--json", action="store_true", help="one JSON document (docs/stack-budget.md, \"Soak\")")
    args = ap.parse_args(argv)
    if args.ram:
        raise UsageError("--ram: a dump runs no inference; soak a running target (--via)")
    if args.count < 1 or not 0.1 <= args.hz <= 200 or not (math.isfinite(args.timeout) and 0 < args.timeout <= 86400):
        raise UsageError("give N from 1, --hz 0.1 to 200 and --timeout above 0 and at most 86400 seconds")
    return args


def _soak_publisher(args, soak, stop, clock):
    """livepoll.run's publish for `arenascope soak`: each snapshot's checks to soak at each new
    inference (the agent's count); stop set, and soak stopped saying why, at the end: N
    inferences, a reset, no inference within --timeout, a fault, or no agent."""
    seen = {"start": None, "at": None, "when": clock()}

    def publish(snap):
        state = snap.get("state") or {}
        invokes = state.get("invokes")
        if invokes is None or "tflm" in snap:  # agentless: TFLM counts no inference
            soak.stop("the tool counts inferences by the agent's invoke_phase; without the agent use GDB's "
                      "`arena soak`, which stops at each Invoke", False)
            stop.set()
            return
        at = invokes + (1 if state.get("in_invoke") else 0)
        if seen["start"] is None:
            seen["start"] = at
        if seen["at"] is not None and at < seen["at"]:
            soak.stop(f"the target reset after inference {soak.last or seen['at']}: the agent's inference count "
                      f"went back from {seen['at']} to {at}", True)
            stop.set()
            return
        if at == seen["at"]:
            if clock() - seen["when"] > args.timeout:
                soak.stop(f"no inference ended within {args.timeout:g} s after inference {soak.last}: the target "
                          "hangs or loops in a fault handler (`arenascope fault`)", True)
                stop.set()
            return
        seen["at"], seen["when"] = at, clock()
        checks = [figures.Check(c["rule"], c["verdict"], c["reason"]) for c in snap.get("checks", [])]
        soak.observe(at, checks, {a["index"]: a["peak_bytes"] for a in snap.get("arenas", [])},
                     (snap.get("stack") or {}).get("peak_bytes"))
        if soak.faulted:
            soak.stop(f"the target took a fault by inference {at}: `arenascope fault` says what and where", True)
            stop.set()
        elif at - seen["start"] + 1 >= args.count:
            stop.set()

    return publish


def _soak_report(text):
    print(f"arenascope soak: {text}", file=sys.stderr, flush=True)


def soak_main(argv):
    """`arenascope soak N`: the live link's refreshes while the target runs N inferences (the agent's
    count), every rule checked at each (analyse/soak.py, as GDB's `arena soak` with no breakpoint)."""
    args = _soak_args(argv)
    stop = threading.Event()
    target, settings, link = _connect(args, stop)
    poller = livepoll.LivePoller(target, settings)
    soak, clock = Soak(args.count), time.monotonic
    publish = _soak_publisher(args, soak, stop, clock)
    start, ended_by = clock(), None
    print(f"arenascope soak: {args.count} inferences of {args.elf} through {link.described}, checked at each "
          "refresh; Ctrl-C stops it", file=sys.stderr, flush=True)
    try:
        livepoll.run(poller, publish, args.hz, stop, _soak_report)
    except KeyboardInterrupt as exc:
        stop.set()
        ended_by = exc
        soak.stop(f"{signal_words(exc)} after {soak.ran} inferences", False)
    finally:
        link.close()
    if not soak.stopped and poller.trouble not in (None, "torn"):
        soak.stop(f"the link went down ({poller.trouble}) after inference {soak.last}", True)
    how = f"the live link through {link.described}, {args.hz:g} refreshes a second at most"
    if args.json:
        _emit(soak_text.json_doc(soak, how, clock() - start))
    else:
        print("\n".join(soak_text.lines(soak, how, clock() - start)))
    if ended_by is not None:
        return exit_status(ended_by)
    return 1 if soak.verdict == figures.FAIL or not soak.inferences else 0


def budget_main(argv):
    """`arenascope budget`: the ELF alone, no target (stackbudget_job)."""
    ap = argparse.ArgumentParser(prog="arenascope budget", description="The stack's worst case from the ELF's code, "
                                 "the RAM map and the 1.5 x stack rule, before flashing (docs/stack-budget.md).")
    ap.add_argument("--elf", required=True, help="the firmware's ELF (unstripped: its symbols and .debug_frame)")
    ap.add_argument("--model", help="the .tflite it runs: the planner's minimum arena, and its verdict on the arena's "
                    "size in the ELF")
    ap.add_argument("--arena-bytes", type=_number, metavar="N",
                    help="the arena the model needs (instead of --model)")
    ap.add_argument("--su", action="append", default=[], metavar="FILE.su",
                    help="GCC's -fstack-usage files: their frames come first; repeat it, or give a directory")
    ap.add_argument("--arena", metavar="SYMBOL", help="the arena's array, when its name does not hold \"arena\"")
    ap.add_argument("--calls", action="append", default=[], metavar="CALLER=CALLEE[,CALLEE]",
                    help="the targets of CALLER's calls through pointers, when you know them; repeat it")
    ap.add_argument("--bound", action="append", default=[], metavar="FUNCTION=LEVELS",
                    help="a recursion through FUNCTION goes at most LEVELS deep; repeat it")
    add_setting_options(ap, [settings_table.BY_NAME["planner-path"]])
    ap.add_argument("--json", action="store_true", help="one JSON document (docs/stack-budget.md)")
    args = ap.parse_args(argv)
    problem = elfinfo.not_an_elf(args.elf)
    if problem:
        raise UsageError(problem)
    try:
        su = stackbudget_job.su_files(args.su)
        answer = stackbudget_job.run(args.elf, ElfSymbols(args.elf), su, args.arena, args.model,
                                     _parsed(args, "planner-path"), args.arena_bytes,
                                     stackbudget_job.parse_calls(args.calls), stackbudget_job.parse_bounds(args.bound))
    except (ValueError, PlannerError) as exc:
        raise UsageError(str(exc)) from None
    if args.arena and answer.budget.arena is None:
        raise UsageError(answer.budget.reason)
    if answer.depth.problem:  # not a firmware it can read: no symbols, another architecture
        raise UsageError(f"{args.elf}: {answer.depth.problem}")
    if args.json:
        _emit(answer.json())
    else:
        print("\n".join(answer.lines()))
    return answer.exit_status


def diff_main(argv):
    """`arenascope diff A.json B.json`: as `arena diff` (docs/diff.md), from files alone. Exit status
    as diff(1)'s: 0 identical, 1 different, 2 bad arguments or a file that is not a snapshot."""
    ap = argparse.ArgumentParser(prog="arenascope diff", description="Compare two snapshots (arena snapshot, "
                                 "arenascope snapshot, arenascope-plan --snapshot): figures, regions, checks.")
    ap.add_argument("a", help="snapshot A (before: e.g. the planner's prediction, the old build, the first stop)")
    ap.add_argument("b", help="snapshot B (after)")
    ap.add_argument("--json", action="store_true", help="the JSON docs/diff-schema.json describes")
    ap.add_argument("--all", action="store_true", help="list the unchanged figures and regions too")
    ap.add_argument("--view", action="store_true", help="also open both in the viewer: A's maps above B's, what "
                    "changed striped in both")
    args = ap.parse_args(argv)
    try:
        doc_a, arenas_a = snapshot.read_for_diff(args.a)
        doc_b, arenas_b = snapshot.read_for_diff(args.b)
    except snapshot.SnapshotError as exc:
        raise UsageError(str(exc)) from None
    d = diff.compare(doc_a, arenas_a, doc_b, arenas_b)
    status = 0 if d.identical else 1
    try:
        if args.json:
            print(json.dumps(diff_text.json_doc(d, args.a, doc_a, args.b, doc_b, args.all), indent=1))
        else:
            print("\n".join(diff_text.text_lines(d, args.a, doc_a, args.b, doc_b, args.all)))
        sys.stdout.flush()
    except BrokenPipeError:  # `arenascope diff A B | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    if args.view:
        try:
            started = compareview.start(paths.built_tool("viewer", "arenascope-viewer"), args.a, args.b, doc_b,
                                        diff_text.json_doc(d, args.a, doc_a, args.b, doc_b, False))
        except compareview.ViewError as exc:
            raise UsageError(str(exc)) from None
        print(f"arenascope diff: started {started}", file=sys.stderr)
    return status


# command: (its main, needs the descriptor, verifies the agent's band measurements: as `arena ...` does)
ONE_SHOT = {"info": (info_main, True, False), "check": (check_main, True, True),
            "snapshot": (snapshot_main, True, True), "fault": (fault_main, False, True),
            "report": (report_main, True, True)}


def main(argv):
    """The tool on argv (the command line's arguments after `arenascope`): its exit status. The
    pipeline's advice is worded in the tool's syntax meanwhile (tool_words)."""
    with remedy.use(tool_words):
        return _main(argv)


# command: its main on the arguments after the command's name (it parses them itself)
OWN_MAIN = {"live": live_main,
            "diff": diff_main,  # files only: no ELF, no target
            "budget": budget_main,  # the ELF only: no target
            "soak": soak_main}


def _one_shot_parser(command):
    """The parser of a ONE_SHOT command's arguments: the common options and its own."""
    ap = argparse.ArgumentParser(prog=f"arenascope {command}")
    _common(ap)
    if command in ("info", "check", "fault"):
        ap.add_argument("--json", action="store_true", help="one JSON document (docs/command-json-schema.json)")
    if command == "check":
        ap.add_argument("--junit", metavar="FILE", help="also write the checks as a JUnit XML report")
        ap.add_argument("--budget", action="store_true",
                        help="also the stack rule with the worst case from the ELF (as `arena budget`)")
    if command == "snapshot":
        ap.add_argument("file", help="the snapshot file to write (-: to standard output)")
    if command == "report":
        ap.add_argument("file", nargs="?", help="the HTML report to write")
        ap.add_argument("--svg", help="also (or only) the SVG picture")
    return ap


def _json_asked(argv):
    """A command that answers with a JSON document was asked for one (--json)."""
    return argv[0] in ("info", "check", "fault") and "--json" in argv[1:]


def _main(argv):
    # Colour only on a terminal, and never with NO_COLOR (https://no-color.org) or TERM=dumb; --colour decides too.
    style.enabled = sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
    RUN["debug"] = False
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip())
        print(f"\nSettings (GDB's `set arena NAME`; each command's --help says what they mean):\n{settings_help()}")
        return 0 if argv else 2
    if argv[0] == "--version":
        print(f"arenascope {version.VERSION}")
        return 0
    try:
        if argv[0] in OWN_MAIN:
            return OWN_MAIN[argv[0]](argv[1:])
        if argv[0] not in ONE_SHOT:
            raise UsageError(f"unknown command {argv[0]!r}: one of info, check, snapshot, fault, report, live, diff, "
                             "budget, soak (`arenascope --help`)")
        run, need, verify = ONE_SHOT[argv[0]]
        args = _one_shot_parser(argv[0]).parse_args(argv[1:])
        args.command = argv[0]
        ctx = _gather(args, need_descriptor=need, verify=verify)
        return run(ctx, args)
    except ArenascopeError as exc:  # UsageError among them
        if RUN["debug"]:
            traceback.print_exc()
        message = f"arenascope {argv[0]}: {exc}"
        if _json_asked(argv):
            _emit(jsonout.error(argv[0], message))  # a script reading stdout reads JSON, failed or not
        print(message, file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        p = PROGRESS["now"]
        message = f"arenascope {argv[0]}: {p.interrupted(signal_words(exc)) if p is not None else signal_words(exc)}"
        if _json_asked(argv):
            _emit(jsonout.error(argv[0], message))
        print(f"\n{message}", file=sys.stderr)
        return exit_status(exc)


class Terminated(KeyboardInterrupt):
    """SIGTERM (or SIGHUP) arrived: the command ends as at Ctrl-C (`finally` blocks run, a file
    being written is removed: present/files.write_whole), with exit status 128 + the signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _terminate(signum, _frame):
    raise Terminated(signum)


def signal_words(exc: BaseException) -> str:
    """How a KeyboardInterrupt (or Terminated) ended a command, for its last message."""
    if isinstance(exc, Terminated):
        return f"terminated ({signal.Signals(exc.signum).name})"
    return "interrupted (Ctrl-C)"


def exit_status(exc: BaseException) -> int:
    """128 + the signal's number, as a shell reports a command a signal ended: 130 Ctrl-C, 143 SIGTERM."""
    return 128 + (exc.signum if isinstance(exc, Terminated) else signal.SIGINT)


def run():
    """The `arenascope` command (pip's console script and gdbplugin/arenascope): main on the
    command line's arguments. SIGTERM and SIGHUP end it as Ctrl-C does (Terminated), with a message
    and exit status 143 or 129 (Ctrl-C: 130), also before a command starts, with no traceback; a
    reader that goes away (`| head`) ends it quietly with 141, as SIGPIPE ends a shell command."""
    for signum in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(signum) == signal.SIG_DFL:  # not one that nohup or the caller ignores
            signal.signal(signum, _terminate)
    try:
        return main(sys.argv[1:])
    except KeyboardInterrupt as exc:
        return exit_status(exc)
    except BrokenPipeError:  # the reader went away (`| head`): as a shell command ends on SIGPIPE
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes
        return 128 + signal.SIGPIPE
