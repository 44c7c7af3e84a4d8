"""`arena soak N`: N inferences without a person, every rule checked after each (analyse/soak.py)."""
import math
import os
import signal
import threading
import time

import gdb  # pylint: disable=import-error

from arenascope_plugin import pipeline, ports
from arenascope_plugin.acquire import elfcode
from arenascope_plugin.acquire.gdbtarget import GdbSymbols, batch_mode
from arenascope_plugin.analyse import figures
from arenascope_plugin.analyse.soak import Soak
from arenascope_plugin.decode import abi, tflm_profile
from arenascope_plugin.errors import ArenascopeError, TargetError
from arenascope_plugin.gdb import framework
from arenascope_plugin.gdb.framework import Sub, write
from arenascope_plugin.present import soak as soak_text

TIMEOUT_S = 30.0  # seconds one inference may take before the run is stopped (--timeout)
MAX_TIMEOUT_S = 86400.0


class _Watchdog:
    """Interrupts the target as Ctrl-C does (a SIGINT to GDB) when `continue` has not come back
    within the timeout: a hang must not hold the command forever. fired: it did."""

    def __init__(self, seconds: float) -> None:
        self.seconds, self.fired, self.timer = seconds, False, None

    def __enter__(self):
        self.fired = False
        self.timer = threading.Timer(self.seconds, self._fire)
        self.timer.daemon = True
        self.timer.start()
        return self

    def _fire(self) -> None:
        self.fired = True
        os.kill(os.getpid(), signal.SIGINT)

    def __exit__(self, *_exc) -> None:
        self.timer.cancel()


class SoakCommand(Sub):
    """Run N inferences on the target without a person, and report the worst of each rule.
After each inference the target stops at a breakpoint and every rule `arena check` judges is
checked (canary, guard band, stack high-water mark, TFLM's objects, fault); the report gives the
worst verdict of each, with the inference where it first happened, and the highest arena and
stack peaks. Where it stops: with the agent, at arenascope_invoke_mark when an inference ends;
without it, at each call of tflite::MicroInterpreter::Invoke (the previous one has returned);
--at LOCATION names another place the firmware passes once an inference. The run stops early
when the target enters a fault handler (Cortex-M: the vector table's HardFault, MemManage,
BusFault, UsageFault, SecureFault), when no inference ends within --timeout seconds (a hang, or a
fault the handler loops in), when it stops anywhere else, or on Ctrl-C; the report covers what
ran. The breakpoints are removed. GDB's breakpoints are the only thing it sets; it writes no
memory itself. With the agent, a stop that comes again for the same inference (an interrupt taken
while GDB steps off the breakpoint, as on QEMU) is not counted twice; without it, it may be.

Usage: arena soak N [--at LOCATION] [--timeout S] [--stop-on-fail]
In batch mode (gdb -batch) a FAIL ends the command with an error, as `arena check` does."""
    sub = "soak"

    def add_arguments(self, parser):
        parser.add_argument("count", type=int, metavar="N", help="how many inferences to run")
        parser.add_argument("--at", metavar="LOCATION", help="where the firmware passes once an inference")
        parser.add_argument("--timeout", type=float, default=TIMEOUT_S, metavar="S",
                            help=f"an inference that does not end within S seconds stops the run "
                                 f"(default {TIMEOUT_S:g})")
        parser.add_argument("--stop-on-fail", action="store_true", help="stop at the first FAIL")

    def run(self, args):
        if args.count < 1:
            raise TargetError(f"give how many inferences to run (a whole number from 1), not {args.count}")
        if not (math.isfinite(args.timeout) and 0 < args.timeout <= MAX_TIMEOUT_S):
            raise TargetError(f"--timeout {args.timeout:g}: give the seconds one inference may take, above 0 and at "
                              f"most {MAX_TIMEOUT_S:g}")
        framework.check_readable()
        location, condition, how = _where(args.at)
        run = _Run(args, framework.gather(verify=False))
        stops: list = []
        on_stop = stops.append  # one callable: disconnect must get the very one connected
        breakpoints: list = []
        start = time.monotonic()
        try:  # from here a Ctrl-C, wherever it lands, ends the run with its report
            bp = _breakpoint(location, condition, args.at)
            breakpoints.append(bp)
            faults = {_breakpoint(f"*{addr:#x}", "", None): name for name, addr in _fault_handlers()}
            breakpoints += list(faults)
            gdb.events.stop.connect(on_stop)
            gdb.write(f"arena soak: {args.count} inferences, {how}; Ctrl-C stops it\n")
            gdb.flush()
            run.loop(bp, faults, stops)
        except KeyboardInterrupt:
            run.soak.stop(f"Ctrl-C after {run.after()}", False)
        finally:
            _remove(breakpoints, on_stop if breakpoints else None)
        write(soak_text.lines(run.soak, how, time.monotonic() - start))
        failed = sorted(r for r, w in run.soak.rules.items() if w.verdict == figures.FAIL)
        if run.soak.verdict == figures.FAIL and batch_mode():
            raise gdb.GdbError(f"arena soak: FAIL: {', '.join(failed) or run.soak.stopped}")


class _Run:
    """One soak's state: the inferences counted, the agent's count to number them by (and to see a
    reset by: it goes back), and what a stop means."""

    def __init__(self, args, ctx) -> None:
        self.args, self.soak = args, Soak(args.count)
        self.agent = _agent(ctx)
        self.phase = ctx.desc.invoke_phase if self.agent else None
        # TFLM's Invoke entry (no agent, no --at): the first stop only starts the run.
        self.baseline = not self.agent and not args.at
        self.done = 0
        self.watchdog = _Watchdog(args.timeout)

    def after(self) -> str:
        """'inference N' (the last one that ended), for the reasons a run stops."""
        if self.soak.inferences:
            return f"inference {self.soak.last}"
        if self.agent:
            return f"inference {self.phase // 2}, the last before the soak began"
        return "no inference of the run"

    def loop(self, bp, faults: dict, stops: list) -> None:
        args, soak = self.args, self.soak
        counted_at = time.monotonic()
        while self.done < args.count:
            hits, stops[:] = bp.hit_count, []
            fault_hits = {b: b.hit_count for b in faults}
            try:
                with self.watchdog:
                    gdb.execute("continue", to_string=True)
            except KeyboardInterrupt:
                if not self.watchdog.fired:
                    raise
            hit_fault = next((name for b, name in faults.items() if b.hit_count > fault_hits[b]), None)
            if bp.hit_count == hits and hit_fault is None:
                self._stopped_elsewhere(stops)
                return
            ctx = framework.gather(verify=True)
            phase = ctx.desc.invoke_phase if self.agent and _agent(ctx) else None
            if phase is not None and self.phase is not None and phase < self.phase:
                self._look(ctx, phase // 2 + (phase & 1))
                soak.stop(f"the target reset after {self.after()}: the agent's inference count went back from "
                          f"{self.phase // 2} to {phase // 2}", True)
                return
            repeat = hit_fault is None and phase is not None and phase == self.phase and not args.at
            self.phase = phase if phase is not None else self.phase
            if repeat or self.baseline:  # the same stop again (an interrupt while GDB stepped off it), or the start
                self.baseline = False
                if time.monotonic() - counted_at > args.timeout:
                    soak.stop(f"no inference ended within {args.timeout:g} s after {self.after()}", True)
                    return
                continue
            if hit_fault is not None:
                d = ctx.desc
                number = (d.invokes + (1 if d.in_invoke else 0)) if self.agent else self.done + 1
                self._look(ctx, number)
                when = (f"during inference {number}" if d.in_invoke else f"after inference {number}") \
                    if self.agent else f"during inference {number} of the run"
                soak.stop(f"the target took a fault ({hit_fault}) {when}: `arena fault` says what and where", True)
                return
            self.done += 1
            counted_at = time.monotonic()
            at = _inference(ctx, self.done) if self.agent else self.done
            soak.observe(at, pipeline.checks_of(ctx), {k: f.peak for k, f in ctx.figs.items()},
                         ctx.stack.peak if ctx.stack is not None else None)
            if soak.faulted:
                soak.stop(f"the target took a fault (recorded) by inference {at}: `arena fault` says what and where",
                          True)
                return
            _progress(soak, self.done)
            if args.stop_on_fail and soak.verdict == figures.FAIL:
                soak.stop(f"a FAIL at inference {at} (--stop-on-fail)", False)
                return

    def _look(self, ctx, at: int) -> None:
        """The rules once more, where no inference ended (a fault during inference `at`, a reset, a
        hang): what the agent's fault record and the bands say now goes into the report."""
        self.soak.look(pipeline.checks_of(ctx), at)

    def _stopped_elsewhere(self, stops: list) -> None:
        soak = self.soak
        if self.watchdog.fired:
            try:
                ctx = framework.gather(verify=True)
                self._look(ctx, _inference(ctx, self.done + 1) if self.agent and _agent(ctx) else self.done + 1)
            except ArenascopeError:
                pass
            soak.stop(f"no inference ended within {self.args.timeout:g} s after {self.after()}: the target hangs, "
                      "loops in a fault handler, or runs no more inferences (`arena fault`, `bt`)", True)
        elif stops and isinstance(stops[-1], gdb.SignalEvent) and stops[-1].stop_signal == "SIGINT":
            soak.stop(f"Ctrl-C after {self.after()}", False)
        else:
            soak.stop(f"the target stopped elsewhere after {self.after()}: {_why(stops)}", False)


def _where(at: str | None) -> tuple[str, str, str]:
    """(breakpoint location, its condition, how the report says it) for --at, the agent, or TFLM."""
    if at:
        return at, "", f"stopping at {at} once an inference"
    if gdb.lookup_global_symbol(abi.INVOKE_MARK) is not None or _has_function(abi.INVOKE_MARK):
        return abi.INVOKE_MARK, abi.INVOKE_MARK_END, f"stopping at the agent's {abi.INVOKE_MARK} as each ends"
    if _has_function(tflm_profile.INVOKE):
        return tflm_profile.INVOKE, "", f"stopping at each {tflm_profile.INVOKE}: the previous one has returned"
    raise TargetError(f"the ELF has neither the agent's {abi.INVOKE_MARK} nor {tflm_profile.INVOKE}: give --at "
                      "FUNCTION, a function the firmware calls once an inference")


def _agent(ctx) -> bool:
    """Whether the agent's descriptor was read (agentless mode builds one from TFLM's objects, with
    no invoke count)."""
    return ctx.desc is not None and ctx.tflm is None


def _remove(breakpoints: list, on_stop) -> None:
    """Deletes the soak's breakpoints and its stop handler, even when a second Ctrl-C lands here."""
    for attempt in range(3):
        try:
            for b in breakpoints:
                if b.is_valid():
                    b.delete()
            if on_stop is not None:
                gdb.events.stop.disconnect(on_stop)
                on_stop = None
            return
        except KeyboardInterrupt:
            if attempt == 2:
                raise


def _inference(ctx, run_count: int) -> int:
    """Which inference this stop ends: the agent's count (invoke_phase: odd while one runs, so the
    one running is the completed ones + 1), else the run's own count."""
    d = ctx.desc
    if not _agent(ctx) or (not d.invokes and not d.in_invoke):
        return run_count
    return d.invokes + (1 if d.in_invoke else 0)


def _breakpoint(location: str, condition: str, given: str | None):
    """An internal, silent breakpoint (no stop message a thousand times over); TargetError when
    GDB finds no such place (given: the user's --at, named in the error)."""
    try:
        b = gdb.Breakpoint(location, internal=True)
    except gdb.error as exc:
        raise TargetError(f"--at {given or location}: {exc}") from None
    if b.pending:
        b.delete()
        raise TargetError(f"--at {given or location}: GDB finds no such place in the program (a function, "
                          "FILE:LINE or *ADDRESS the firmware has)")
    b.silent = True
    if condition:
        b.condition = condition
    return b


def _fault_handlers() -> list[tuple[str, int]]:
    """The port's fault handlers in the ELF on disk ([] without it)."""
    symbols = GdbSymbols()
    if not symbols.elf_path or not os.path.exists(symbols.elf_path):
        return []
    try:
        return ports.of(symbols).fault_handlers(elfcode.read(symbols.elf_path))
    except elfcode.ElfCodeError:
        return []


def _has_function(name: str) -> bool:
    try:
        return gdb.parse_and_eval(f"&'{name}'") is not None
    except gdb.error:
        return False


def _why(stops: list) -> str:
    if not stops:
        return "the program is no longer running" if not gdb.selected_inferior().pid else "no stop was seen"
    last = stops[-1]
    if isinstance(last, gdb.SignalEvent):
        return f"signal {last.stop_signal}"
    if isinstance(last, gdb.BreakpointEvent):
        yours = [str(b.number) for b in last.breakpoints if b.number > 0]  # the soak's own are internal (< 0)
        return f"your breakpoint {', '.join(yours)}" if yours else "the soak's breakpoint, its condition false"
    return "a stop that was not the soak's"


def _progress(soak: Soak, done: int) -> None:
    """A line every tenth of the run (and the last), so a long soak shows it is running."""
    step = max(1, soak.wanted // 10)
    if done % step == 0 or done == soak.wanted:
        gdb.write(f"arena soak: {done}/{soak.wanted} inferences, worst so far: {soak.verdict}\n")
        gdb.flush()
