"""`arena view`: the live arena map window, fed a snapshot at every stop."""
import gdb  # pylint: disable=import-error

from arenascope_plugin.errors import ArenascopeError
from arenascope_plugin.gdb import events
from arenascope_plugin.gdb.framework import Sub


class ViewCommand(Sub):
    """Open the live arena map window, fed a snapshot at every stop.
Serves snapshots on a loopback port and starts the viewer.
The viewer gets a snapshot now, on every stop and on `arena refresh`; it keeps the last one
when the link drops and reconnects when GDB serves again on the same port.

Usage: arena view [--port N] [--no-launch] [--wait SECONDS] [--stop]
  --port N       port on 127.0.0.1 (default: `show arena view-port`, 47800)
  --no-launch    serve only; start the viewer yourself: arenascope-viewer --connect 127.0.0.1:PORT
  --wait S       wait up to S seconds for a viewer to connect before going on
  --stop         stop serving (the viewer keeps its last snapshot)"""
    sub = "view"

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=None, metavar="N")
        parser.add_argument("--no-launch", action="store_true")
        parser.add_argument("--wait", type=float, default=0.0, metavar="SECONDS")
        parser.add_argument("--stop", action="store_true")

    def run(self, args):
        if args.stop:
            events.stop_serving()
            gdb.write("arena view: stopped serving snapshots\n")
            return
        events.serve(args.port, args.no_launch, args.wait)
        try:
            sent, verdict = events.push()
            gdb.write(f"arena view: snapshot sent to {sent} viewer(s), verdict {verdict}\n")
        except ArenascopeError as exc:
            gdb.write(f"arena view: nothing to send yet ({exc}); snapshots follow at the next stop\n")
