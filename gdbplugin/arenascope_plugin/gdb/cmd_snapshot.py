"""`arena snapshot FILE|-`: every figure and verdict as JSON (- : to standard output)."""
import os

import gdb  # pylint: disable=import-error

from arenascope_plugin import pipeline
from arenascope_plugin.errors import TargetError
from arenascope_plugin.gdb import framework
from arenascope_plugin.gdb.framework import Sub
from arenascope_plugin.present import snapshot


class SnapshotCommand(Sub):
    """Write every figure and verdict to FILE as JSON (docs/snapshot-schema.md).

Usage: arena snapshot FILE
       arena snapshot -       the snapshot to GDB's standard output instead (one JSON document:
                              `pipe arena snapshot - | jq .verdict`); the snapshot's "messages" hold
                              what the command says besides"""
    sub = "snapshot"

    def add_arguments(self, parser):
        parser.add_argument("file", metavar="FILE")

    def prints_json(self, args):
        return args.file == "-"

    def run(self, args):
        ctx = framework.gather(verify=True)
        if args.file == "-":
            framework.emit(pipeline.snapshot(ctx))
            return
        try:
            summary = snapshot.save(pipeline.snapshot(ctx), args.file)
        except snapshot.SnapshotError as exc:
            raise TargetError(str(exc)) from None
        except OSError as exc:
            raise TargetError(f"cannot write {os.path.expanduser(args.file)}: {exc.strerror}") from None
        gdb.write(f"arena snapshot: {summary}\n")
