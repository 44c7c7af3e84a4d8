"""`arena refresh`: a fresh snapshot to the live viewer now."""
import gdb  # pylint: disable=import-error

from arenascope_plugin.errors import TargetError
from arenascope_plugin.gdb import events
from arenascope_plugin.gdb.framework import Sub


class RefreshCommand(Sub):
    """Send a fresh snapshot to the live viewer now.
`arena view` sends one at every stop too.

Usage: arena refresh"""
    sub = "refresh"

    def run(self, args):
        if events.LIVE["server"] is None:
            raise TargetError("no live view: start it with `arena view`")
        sent, verdict = events.push()
        gdb.write(f"arena refresh: snapshot sent to {sent} viewer(s), verdict {verdict}\n")
