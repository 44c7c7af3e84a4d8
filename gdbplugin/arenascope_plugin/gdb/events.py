"""The live view's GDB side: the snapshot server `arena view` starts, fed at every stop (GDB's
stop/cont/exit events), and the viewer process it launches."""
import subprocess
import time

import gdb  # pylint: disable=import-error

from arenascope_plugin import paths, pipeline
from arenascope_plugin.errors import ArenascopeError, TargetError
from arenascope_plugin.gdb import framework, settings
from arenascope_plugin.serve import viewerlink

LIVE = {"server": None, "hooked": False}


def push(verify=True):
    """Builds a snapshot and sends it to the connected viewers. Returns (viewers, verdict)."""
    server = LIVE["server"]
    snap = pipeline.snapshot(framework.gather(verify=verify))
    return server.broadcast(viewerlink.message(snap)), snap["verdict"]


def _on_stop(_event):
    # A snapshot at every stop, watched or not: a viewer that connects later gets this stop's
    # (building it on demand would mean gdb.post_event from the server thread, which GDB runs
    # only when idle and which crashed GDB 13 at exit when still pending).
    if LIVE["server"] is None:
        return
    try:
        push()
    except ArenascopeError as exc:
        gdb.write(f"arena view: no snapshot at this stop: {exc}\n")
    except Exception as exc:  # pylint: disable=broad-except
        gdb.write(f"arena view: internal error {exc!r} while sending a snapshot\n")


def _on_cont(_event):
    server = LIVE["server"]
    if server is not None and server.clients:
        server.broadcast(viewerlink.state_message(True), keep=False)


def _on_exit(_event):
    stop_serving()  # stop the accept thread before Python shuts down




def _viewer_path():
    return settings.value("viewer-path")


def stop_serving():
    """Stops serving snapshots (the viewer keeps its last one). Returns whether it was serving."""
    server = LIVE["server"]
    if server is not None:
        server.close()
        LIVE["server"] = None
    return server is not None


def serve(port=None, no_launch=False, wait=0.0, who="arena view"):
    """The snapshot server on 127.0.0.1:port (default: the view-port setting), started once, with
    the stop hooks; starts the viewer unless no_launch or one is connected. Returns the server."""
    port = port if port is not None else int(settings.setting("view-port"))
    server = LIVE["server"]
    if server is None or server.port != port:
        fresh = viewerlink.SnapshotServer(port)  # a port that fails leaves the running view as it was
        if server is not None:
            stop_serving()
        server = LIVE["server"] = fresh
    if not LIVE["hooked"]:
        gdb.events.stop.connect(_on_stop)
        gdb.events.cont.connect(_on_cont)
        if hasattr(gdb.events, "gdb_exiting"):
            gdb.events.gdb_exiting.connect(_on_exit)
        LIVE["hooked"] = True
    where = f"127.0.0.1:{server.port}"
    gdb.write(f"{who}: serving snapshots on {where} (every stop, and `arena refresh`)\n")
    if not no_launch and server.clients == 0:
        server.connected.wait(1.5)  # a viewer from an earlier session reconnects within a second
        if server.clients:
            gdb.write(f"{who}: a viewer reconnected\n")
        elif not paths.has_display():
            gdb.write(f"{who}: no display (DISPLAY is not set): not starting the viewer. Write a picture "
                      "instead: `arena snapshot s.json`, then `xvfb-run arenascope-viewer s.json --screenshot "
                      "s.png`\n")
        else:
            path = _viewer_path()
            if path is None:
                raise TargetError("cannot find the viewer: build it (bash tools/build.sh) or `set arena "
                                  "viewer-path /path/to/arenascope-viewer`")
            subprocess.Popen([path, "--connect", where], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
            gdb.write(f"{who}: started {path}\n")
    if wait > 0 and server.clients == 0:
        deadline = time.time() + wait
        while server.clients == 0 and time.time() < deadline:
            server.connected.wait(0.1)
        if server.clients == 0:
            gdb.write(f"{who}: no viewer connected within {wait:.0f} s\n")
    return server
