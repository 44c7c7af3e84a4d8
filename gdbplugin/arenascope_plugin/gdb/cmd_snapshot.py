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
        try:
            summary = snapshot.save(pipeline.snapshot(ctx), args.file)
        except snapshot.SnapshotError as exc:
            raise TargetError(str(exc)) from None
        except OSError as exc:
            raise TargetError(f"cannot write {os.path.expanduser(args.file)}: {exc.strerror}") from None
        gdb.write(f"arena snapshot: {summary}\n")
