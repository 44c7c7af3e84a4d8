"""`arena check`: PASS/WARN/FAIL rules; a FAIL fails `gdb -batch`."""
import os

import gdb  # pylint: disable=import-error

from arenascope_plugin import pipeline
from arenascope_plugin.acquire.gdbtarget import batch_mode
from arenascope_plugin.analyse import figures
from arenascope_plugin.errors import TargetError
from arenascope_plugin.gdb import framework
from arenascope_plugin.gdb.framework import Sub, write
from arenascope_plugin.present import jsonout, junit, snapshot, textreports


class CheckCommand(Sub):
    __doc__ = f"""Check the arena's rules and print PASS, WARN or FAIL with a reason for each.
Rules: canary intact (free band and guard band), stack room >= {figures.rule_text()} x stack peak, arena
16-byte aligned, no two regions with overlapping lifetimes share bytes, headroom in the
10-20 % band, used <= size. Bands, stack and region table are re-read from memory.

Usage: arena check [--strict] [--json] [--junit FILE] [--budget]
--budget also judges the stack rule with the stack's worst case worked out from the ELF (`arena
budget`) in place of the measured peak: the gate before flashing and on the board at once.
In batch mode (gdb -batch) a FAIL ends the command with an error, so GDB exits non-zero when
the check is its last command (CI can gate on it). --strict does that in any mode; otherwise
an interactive session or a sourced script just prints the verdicts and goes on.
--json prints {{"ok", "verdict", "checks": [{{rule, verdict, reason}}]}} instead
(docs/command-json-schema.json); --junit FILE also writes the checks as a JUnit XML report
(testsuite "arenascope", one testcase a rule, a FAIL as its failure)."""
    sub = "check"
    json_doc = True

    def add_arguments(self, parser):
        parser.add_argument("--strict", action="store_true", help="a FAIL is an error, also outside batch mode")
        parser.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report of the checks")
        parser.add_argument("--budget", action="store_true",
                            help="also the stack rule with the worst case from the ELF (arena budget)")

    def run(self, args):
        ctx = framework.gather(verify=True)
        result = pipeline.checks_of(ctx, with_budget=args.budget)
        if args.junit:  # before the report, so "wrote FILE" is among --json's messages
            try:
                framework.say(f"arena check: {junit.write(snapshot.checks_json(result), args.junit)}\n")
            except junit.JunitError as exc:
                raise TargetError(str(exc)) from None
            except OSError as exc:
                raise TargetError(f"cannot write {os.path.expanduser(args.junit)}: {exc.strerror}") from None
        if args.json:
            framework.emit(jsonout.check(result))
        else:
            write(textreports.check_report(ctx, result))
        failed = [c.rule for c in result if c.verdict == figures.FAIL]
        if failed and (args.strict or batch_mode()):
            raise gdb.GdbError(f"arena check: failed rules: {', '.join(failed)}")
