"""The one file writer (issue 37, "a planted file is overwritten"): present/files.write_whole and its
C++ twin common/include/arenascope/write_whole.h, used by the planner (--snapshot) and the viewer
(--report, --svg, --png). Each writes through a unique temporary file, never a planted name; keeps
the file's mode; leaves no temporary file and the old content when it fails, is interrupted
(KeyboardInterrupt, SystemExit) or is killed by a signal in the middle of the write (the C++ one: a
handler removes the temporary file, then the process dies of the signal; tests/common has the
forked-child cases of each signal)."""
import os
import resource
import signal
import stat
import subprocess

import pytest

from arenascope_plugin.present import files, snapshot
from conftest import ROOT
from prediction import BUILD, DSCNN, NOT_BUILT, PLANNER

VIEWER = BUILD / "viewer" / "arenascope-viewer"


def leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".arenascope-") or p.name.endswith(".tmp"))


def test_a_0600_file_stays_0600_and_a_new_one_gets_the_umask(tmp_path, monkeypatch):
    monkeypatch.delenv(snapshot.VALIDATE_ENV)  # the writer's modes, on documents that are no snapshots
    private = tmp_path / "s.json"
    private.write_text("old")
    private.chmod(0o600)
    snapshot.write_snapshot_file({"a": 1}, private)
    assert stat.S_IMODE(private.stat().st_mode) == 0o600 and private.read_text() == '{\n "a": 1\n}'
    umask = os.umask(0o022)
    try:
        snapshot.write_snapshot_file({}, tmp_path / "new.json")
    finally:
        os.umask(umask)
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o644
    assert leftovers(tmp_path) == []


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "out.json"
    target.write_text("old")

    def boom(_f):
        raise OSError("disk full")
    with pytest.raises(OSError, match="disk full"):
        files.write_whole(target, boom)
    assert target.read_text() == "old" and leftovers(tmp_path) == []


@pytest.mark.parametrize("stop", [KeyboardInterrupt, SystemExit])
def test_ctrl_c_or_an_exit_in_the_middle_of_a_write_leaves_the_old_file_and_no_temporary(tmp_path, stop):
    target = tmp_path / "out.json"
    target.write_text("old")

    def interrupted(f):
        f.write(b"new, half")
        f.flush()
        assert len(leftovers(tmp_path)) == 1    # the temporary file is there when the write stops
        raise stop()
    with pytest.raises(stop):
        files.write_whole(target, interrupted)
    assert target.read_text() == "old" and leftovers(tmp_path) == []


def small_file_limit():
    """In the child: its files may not grow past 4 KiB, so the write of the output is stopped by
    the kernel's SIGXFSZ in its middle (the default action: the process dies of it), on cue and
    without a sleep."""
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


def a_private_old_file(folder, name):
    out = folder / name
    out.write_text("old")
    out.chmod(0o600)
    return out


@pytest.mark.skipif(not PLANNER.exists() or not DSCNN.exists(), reason=NOT_BUILT)
def test_the_planner_killed_in_the_middle_of_its_snapshot_leaves_the_old_file_and_no_temporary(tmp_path):
    out = a_private_old_file(tmp_path, "plan.json")
    r = subprocess.run([str(PLANNER), "--snapshot", str(out), str(DSCNN)], capture_output=True, timeout=60,
                       preexec_fn=small_file_limit)
    assert r.returncode == -signal.SIGXFSZ, r.stderr
    assert out.read_text() == "old" and stat.S_IMODE(out.stat().st_mode) == 0o600
    assert leftovers(tmp_path) == []


@pytest.mark.skipif(not VIEWER.exists(), reason="viewer not built (cmake --build build)")
def test_the_viewer_killed_in_the_middle_of_its_report_leaves_the_old_file_and_no_temporary(tmp_path):
    out = a_private_old_file(tmp_path, "report.html")
    fixture = ROOT / "tests" / "fixtures" / "demo_overrun_snapshot.json"
    r = subprocess.run([str(VIEWER), "--report", str(out), str(fixture)], capture_output=True, timeout=60,
                       preexec_fn=small_file_limit)
    assert r.returncode == -signal.SIGXFSZ, r.stderr
    assert out.read_text() == "old" and stat.S_IMODE(out.stat().st_mode) == 0o600
    assert leftovers(tmp_path) == []


def test_a_link_to_a_file_is_written_through_and_a_planted_tmp_is_never_followed(tmp_path):
    real, victim = tmp_path / "real.json", tmp_path / "victim"
    real.write_text("old")
    victim.write_text("precious")
    (tmp_path / "link.json").symlink_to(real)
    (tmp_path / "link.json.tmp").symlink_to(victim)     # the old fixed temporary name, planted
    files.write_whole(tmp_path / "link.json", lambda f: f.write(b"new"))
    assert real.read_text() == "new" and (tmp_path / "link.json").is_symlink()
    assert victim.read_text() == "precious"


@pytest.mark.skipif(not PLANNER.exists() or not DSCNN.exists(), reason=NOT_BUILT)
def test_the_planners_snapshot_keeps_a_0600_file_private(tmp_path):
    out = tmp_path / "plan.json"
    out.write_text("old")
    out.chmod(0o600)
    r = subprocess.run([str(PLANNER), "--snapshot", str(out), str(DSCNN)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o600 and out.read_text().startswith("{")
    assert leftovers(tmp_path) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="lchown to another uid needs root")
def test_a_link_another_user_planted_in_a_sticky_shared_folder_is_not_followed(tmp_path):
    """As the kernel's fs.protected_symlinks rule: in a sticky, world-writable folder (/tmp) a link
    is followed only when the writer or the folder's owner made it. A link a user made is."""
    victim = tmp_path / "victim"
    victim.write_text("theirs")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    planted = shared / "out.json"
    planted.symlink_to(victim)
    os.lchown(planted, 12345, 12345)
    with pytest.raises(PermissionError) as err:
        files.write_whole(planted, lambda f: f.write(b"new"))
    assert "a symbolic link another user (uid 12345) made in a shared folder" in err.value.strerror
    assert victim.read_text() == "theirs" and planted.is_symlink() and leftovers(shared) == []
    os.lchown(planted, 0, 0)  # the writer's own link is written through
    files.write_whole(planted, lambda f: f.write(b"mine"))
    assert victim.read_text() == "mine"
