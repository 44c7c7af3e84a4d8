"""`arena snapshot FILE`: every figure and verdict as JSON."""
import os

import gdb  # pylint: disable=import-error

from arenascope_plugin import pipeline
from arenascope_plugin.errors import TargetError
from arenascope_plugin.gdb import framework
from arenascope_plugin.gdb.framework import Sub
from arenascope_plugin.present import snapshot


class SnapshotCommand(Sub):
    """Write every figure and verdict to FILE as JSON (docs/snapshot-schema.md).

Usage: arena snapshot FILE"""
    sub = "snapshot"

    def complete(self, text, word):
        return gdb.COMPLETE_FILENAME

    def add_arguments(self, parser):
        parser.add_argument("file")

    def run(self, args):
        ctx = framework.gather(verify=True)
        snap = pipeline.snapshot(ctx)
        path = os.path.expanduser(args.file)
        if os.path.exists(path) and not os.path.isfile(path):
            raise TargetError(f"{path} is not a regular file: give a file name for the snapshot")
        try:
            snapshot.write_snapshot_file(snap, path)
        except OSError as exc:
            raise TargetError(f"cannot write {path}: {exc.strerror}") from None
        gdb.write(f"arena snapshot: wrote {path} ({len(ctx.desc.arenas)} arena(s), "
                  f"{sum(len(a.regions) for a in ctx.desc.arenas)} regions, verdict {snap['verdict']})\n")
