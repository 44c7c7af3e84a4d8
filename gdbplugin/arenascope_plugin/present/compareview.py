"""`arena diff A B --view` and `arenascope diff A B --view`: the two snapshots in the viewer, A's
maps above B's, with the regions the diff names striped in both (`arenascope-viewer B --before A
--diff D`, viewer/src/diffdoc.h). The viewer draws; which regions changed is this plugin's answer
(analyse/diff.py), handed over as the diff JSON (docs/diff-schema.json)."""
import json
import os
import subprocess
import tempfile

from arenascope_plugin import paths
from arenascope_plugin.errors import ArenascopeError
from arenascope_plugin.present import snapshot


class ViewError(ArenascopeError):
    """The viewer cannot be started; the message says why and what to do instead."""


def start(viewer: str | None, a_path: str, b_path: str | None, b_doc: dict, diff_doc: dict) -> str:
    """Writes the diff (and B, when it is the target now: b_path None) into a new folder under the
    system's temporary folder and starts the viewer on them, detached. Returns what it started."""
    if not paths.has_display():
        raise ViewError("no display (DISPLAY is not set): not starting the viewer; the text above is the diff, "
                        "and `arena report` writes a picture of each snapshot")
    if viewer is None:
        raise ViewError("cannot find the viewer: build it (bash tools/build.sh) or put arenascope-viewer on PATH")
    folder = tempfile.mkdtemp(prefix="arenascope-diff-")  # kept: the viewer reads the files as it starts
    diff_path = os.path.join(folder, "diff.json")
    with open(diff_path, "w", encoding="utf-8") as f:
        json.dump(diff_doc, f)
    if b_path is None:
        b_path = os.path.join(folder, "target-now.json")
        snapshot.write_snapshot_file(b_doc, b_path)
    cmd = [viewer, os.path.expanduser(b_path), "--before", os.path.expanduser(a_path), "--diff", diff_path]
    try:
        subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    except OSError as exc:
        raise ViewError(f"cannot run {viewer}: {exc.strerror or exc}") from None
    return " ".join(cmd)
