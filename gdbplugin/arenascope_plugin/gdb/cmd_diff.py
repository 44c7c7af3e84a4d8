"""`arena diff A.json [B.json]`: what changed between two snapshots, or from A to the target now."""
from arenascope_plugin import pipeline
from arenascope_plugin.analyse import diff
from arenascope_plugin.errors import TargetError
from arenascope_plugin.gdb import framework, settings
from arenascope_plugin.gdb.framework import Sub, write
from arenascope_plugin.present import compareview, snapshot
from arenascope_plugin.present import diff as diff_text

LIVE = "the target now"


class DiffCommand(Sub):
    """Compare two snapshots: figures, regions (moved, grew, shrank, appeared, vanished, lifetime) and checks.

Usage: arena diff A.json B.json [--json] [--all] [--view]
       arena diff A.json [--json] [--all] [--view]
           A against the target now (the snapshot `arena snapshot` would write)
A and B are files `arena snapshot`, `arenascope snapshot` or `arenascope-plan --snapshot` wrote
(a prediction against a target, two builds, two stops). What changed comes first, one line per
region; two equal snapshots give one line, "identical: ...". --json: the object
docs/diff-schema.json describes; --all: list the unchanged figures and regions too; --view: also
open both in the viewer, A's maps above B's, what changed striped in both.
How regions are matched (tensor id, name, place): docs/diff.md."""
    sub = "diff"

    def add_arguments(self, parser):
        parser.add_argument("a", metavar="A.json")
        parser.add_argument("b", nargs="?", metavar="B.json")
        parser.add_argument("--json", action="store_true")
        parser.add_argument("--all", action="store_true")
        parser.add_argument("--view", action="store_true")

    def prints_json(self, args):
        return args.json

    def run(self, args):
        try:
            doc_a, arenas_a = snapshot.read_for_diff(args.a)
            if args.b is not None:
                doc_b, arenas_b = snapshot.read_for_diff(args.b)
            else:
                doc_b = pipeline.snapshot(framework.gather(verify=True))
                arenas_b = snapshot.check_for_diff(doc_b)
        except snapshot.SnapshotError as exc:
            raise TargetError(str(exc)) from None
        d = diff.compare(doc_a, arenas_a, doc_b, arenas_b)
        name_b = args.b if args.b is not None else LIVE
        if not args.json:
            write(diff_text.text_lines(d, args.a, doc_a, name_b, doc_b, args.all))
        if args.view:
            try:
                started = compareview.start(settings.value("viewer-path"), args.a, args.b, doc_b,
                                            diff_text.json_doc(d, args.a, doc_a, args.b, doc_b, False))
            except compareview.ViewError as exc:
                raise TargetError(str(exc)) from None
            framework.say(f"arena diff: started {started}\n")
        if args.json:  # last: with --json what it said besides (the gather's warnings, --view) is in "messages"
            framework.emit(diff_text.json_doc(d, args.a, doc_a, args.b, doc_b, args.all))
