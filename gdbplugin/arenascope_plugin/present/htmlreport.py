"""`arena report FILE.html` and `arenascope report`: the static report of a snapshot, drawn by the
viewer (`arenascope-viewer SNAPSHOT --report FILE.html [--svg FILE.svg]`, viewer/src/report.h),
so the plugin draws nothing itself. The report is one self-contained HTML file (inline SVG: the
map, the plan, the RAM column; the summary and the fault verdict in full; every region in a
filterable table); the SVG is the pictures and the text in one image. Neither needs a display."""
import os
import shutil
import subprocess
import tempfile

from arenascope_plugin import paths
from arenascope_plugin.errors import ArenascopeError
from arenascope_plugin.present import files, snapshot
from arenascope_plugin.remedy import Remedy

TIMEOUT_S = 120  # the viewer writes a 10,000-region report in well under a second


class ReportError(ArenascopeError):
    """The report cannot be written; the message says why and what to do."""


def _check_target(path: str, what: str) -> str:
    problem = files.target_problem(path, what)
    if problem:
        raise ReportError(problem)
    return os.path.expanduser(path)


def name(snap: dict) -> str:
    """What the report calls its snapshot (the file given to the viewer is a temporary one): the
    firmware and where its bytes came from."""
    src = snap.get("source", {})
    where = f"RAM dump {src['dump']}" if src.get("dump") else "the target"
    return f"{src.get('elf') or 'firmware'}, read from {where}"


def _run_viewer(viewer: str, cmd: list[str]) -> subprocess.CompletedProcess:
    """The viewer run on the report's command line; ReportError when it cannot run, takes too
    long, or fails (its last line of stderr, or how it ended: a crash named by its signal)."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, stdin=subprocess.DEVNULL,
                              check=False)
    except subprocess.TimeoutExpired:
        raise ReportError(f"{viewer} did not finish the report within {TIMEOUT_S} s") from None
    except OSError as exc:
        raise ReportError(f"cannot run {viewer}: {exc.strerror or exc}") from None
    if proc.returncode < 0:
        last = (proc.stderr.strip().splitlines() or [""])[-1]
        raise ReportError(f"{viewer} {paths.ended(proc.returncode)} while drawing the report"
                          + (f" ({last})" if last else "") + ": a bug of the viewer; the snapshot itself "
                          "(`arena snapshot FILE`, `arenascope snapshot`) keeps the figures, and the viewer "
                          "run on it by hand shows the crash")
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or [f"it {paths.ended(proc.returncode)}"])[-1]
        raise ReportError(why.removeprefix("arenascope-viewer: "))
    return proc


def write_report(snap: dict, html: str | None, svg: str | None = None, viewer: str | None = None) -> str:
    """Writes the report of `snap` (a snapshot dict, docs/snapshot-schema.md) to html and/or svg
    through the viewer; returns a one-line summary. ReportError when the viewer is missing, fails
    or a path cannot be written."""
    if not html and not svg:
        raise ReportError("give the report's file name (FILE.html), or --svg FILE.svg")
    targets = [_check_target(p, what) for p, what in ((html, "report"), (svg, "SVG")) if p]
    viewer = viewer or paths.built_tool("viewer", "arenascope-viewer")
    if viewer is None:
        raise ReportError("the viewer (arenascope-viewer) draws the report and is not built: run bash tools/build.sh "
                          "(or put arenascope-viewer on PATH), then try again; `arena snapshot FILE` writes the "
                          "figures without it")
    with tempfile.TemporaryDirectory(prefix="arenascope-report-") as tmp:
        source = os.path.join(tmp, "snapshot.json")
        snapshot.write_snapshot_file(snap, source)
        # The viewer writes beside the snapshot, and each file is then written into place by the
        # plugin's one writer (files.write_whole: whole or not at all, no planted link followed):
        # a viewer that says nothing and writes nothing is caught, and an old report is kept
        # when a new one fails.
        drafts = [os.path.join(tmp, f"draft-{k}{os.path.splitext(t)[1]}") for k, t in enumerate(targets)]
        cmd = [viewer, source, "--name", name(snap)]
        if html:
            cmd += ["--report", drafts[0]]
        if svg:
            cmd += ["--svg", drafts[-1]]
        proc = _run_viewer(viewer, cmd)
        for draft, target in zip(drafts, targets, strict=True):
            if not os.path.isfile(draft):
                raise ReportError(f"{viewer} {paths.ended(proc.returncode)} but wrote no {target}: is it "
                                  f"arenascope-viewer? ({Remedy('viewer-path', 'auto'):q})")
            try:
                with open(draft, "rb") as src:
                    files.write_whole(target, lambda f, src=src: shutil.copyfileobj(src, f))
            except OSError as exc:
                raise ReportError(f"cannot write {target}: {exc.strerror or exc}") from None
    regions = sum(len(a["regions"]) for a in snap["arenas"])
    return (f"wrote {' and '.join(targets)} ({len(snap['arenas'])} arena(s), {regions} regions, "
            f"verdict {snap['verdict']}): open it in a browser")
