"""`arena report FILE.html [--svg FILE.svg]`: the static report (present/htmlreport.py)."""
import gdb  # pylint: disable=import-error

from arenascope_plugin import pipeline
from arenascope_plugin.errors import TargetError
from arenascope_plugin.gdb import framework, settings
from arenascope_plugin.gdb.framework import Sub
from arenascope_plugin.present import htmlreport


class ReportCommand(Sub):
    """Write a self-contained HTML report of the arena (docs/user-guide.md, "Reports").

One HTML file, no external files: the arena map with every region, the memory plan, the RAM
column, the summary and the fault verdict in full, and every region in a filterable table. The
viewer draws it (no display needed; the one `set arena viewer-path` names, else the built one);
--svg also writes the pictures and text as one SVG.

Usage: arena report FILE.html [--svg FILE.svg]
       arena report --svg FILE.svg"""
    sub = "report"

    def add_arguments(self, parser):
        parser.add_argument("file", nargs="?", metavar="FILE.html")
        parser.add_argument("--svg", metavar="FILE.svg")

    def run(self, args):
        ctx = framework.gather(verify=True)
        try:
            # The viewer `set arena viewer-path` names (as `arena view` uses), else the built one.
            summary = htmlreport.write_report(pipeline.snapshot(ctx), args.file, args.svg,
                                          viewer=settings.value("viewer-path"))
        except htmlreport.ReportError as exc:
            raise TargetError(str(exc)) from None
        gdb.write(f"arena report: {summary}\n")
