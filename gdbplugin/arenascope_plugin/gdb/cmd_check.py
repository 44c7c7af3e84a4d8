"""`arena check`: PASS/WARN/FAIL rules; a FAIL fails `gdb -batch`."""
import gdb  # pylint: disable=import-error

from arenascope_plugin import pipeline
from arenascope_plugin.acquire.gdbtarget import batch_mode
from arenascope_plugin.analyse import figures
from arenascope_plugin.gdb import framework
from arenascope_plugin.gdb.framework import Sub, write
from arenascope_plugin.present import reports


class CheckCommand(Sub):
    __doc__ = f"""Check the arena's rules and print PASS, WARN or FAIL with a reason for each.
Rules: canary intact (free band and guard band), stack room >= {figures.rule_text()} x stack peak, arena
16-byte aligned, no two regions with overlapping lifetimes share bytes, headroom in the
10-20 % band, used <= size. Bands, stack and region table are re-read from memory.

Usage: arena check [--strict]
In batch mode (gdb -batch) a FAIL ends the command with an error, so GDB exits non-zero when
the check is its last command (CI can gate on it). --strict does that in any mode; otherwise
an interactive session or a sourced script just prints the verdicts and goes on."""
    sub = "check"
    options = ("--strict",)

    def add_arguments(self, parser):
        parser.add_argument("--strict", action="store_true", help="a FAIL is an error, also outside batch mode")

    def run(self, args):
        ctx = framework.gather(verify=True)
        result = pipeline.checks_of(ctx)
        write(reports.check_report(ctx, result))
        failed = [c.rule for c in result if c.verdict == figures.FAIL]
        if failed and (args.strict or batch_mode()):
            raise gdb.GdbError(f"arena check: failed rules: {', '.join(failed)}")
