"""The one file writer of the plugin and the standalone tool (snapshots, JUnit reports); the C++
parts' twin is common/include/arenascope/write_whole.h, with the same rules: the file is written
whole or not at all, into a new temporary file in its folder (mkstemp: created exclusively under a
name no one can plant), then renamed over it; a link to a regular file is written through (its
target replaced), except a link someone else planted in a shared sticky folder such as /tmp
(planted_link: the kernel's protected_symlinks rule, which a writer resolving the link itself
would otherwise bypass); the file keeps its mode (a 0600 file stays 0600), a new one gets what a plain
create would (0666 less the umask); the temporary file is removed when anything fails."""
import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Callable
from typing import BinaryIO


def planted_link(path: str) -> str | None:
    """Why the symbolic link `path` is not followed, or None when it may be. The rule is the
    kernel's fs.protected_symlinks (Documentation/admin-guide/sysctl/fs.rst): in a sticky,
    world-writable folder, a link is followed only when its owner is the follower or the
    folder's owner; otherwise anyone could make a user's output overwrite a file of theirs."""
    try:
        link = os.lstat(path)
        folder = os.stat(os.path.dirname(os.path.abspath(path)))
    except OSError:
        return None
    shared = folder.st_mode & stat.S_ISVTX and folder.st_mode & stat.S_IWOTH
    if not stat.S_ISLNK(link.st_mode) or not shared or link.st_uid in (os.geteuid(), folder.st_uid):
        return None
    return (f"it is a symbolic link another user (uid {link.st_uid}) made in a shared folder anyone can write to: "
            "not followed (the kernel's protected_symlinks rule); remove it or give another file name")


def target_problem(path: str, what: str) -> str | None:
    """Why `path` (~ expanded) cannot take a new file named for `what` ("report", "JUnit
    report"), checked before any work: it is not a regular file (a FIFO would hang the writer) or
    its folder does not exist; None when it can."""
    path = os.path.expanduser(path)
    if os.path.exists(path) and not os.path.isfile(path):
        return f"{path} is not a regular file: give a file name for the {what}"
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        return f"cannot write {path}: the folder {folder} does not exist"
    return None


def write_whole(path: str | os.PathLike[str], fill: Callable[[BinaryIO], object]) -> None:
    """Writes `path` with fill(binary file). OSError (or fill's exception) on failure, the old
    file then left as it was; PermissionError for a link planted_link() refuses."""
    path = os.fspath(path)
    why = planted_link(path)
    if why:
        raise PermissionError(errno.EACCES, why, path)
    real = os.path.realpath(path) if os.path.islink(path) and os.path.isfile(path) else path
    try:
        mode = stat.S_IMODE(os.stat(real).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=".arenascope-", dir=os.path.dirname(os.path.abspath(real)))
    try:
        with os.fdopen(fd, "wb") as f:
            fill(f)
        os.chmod(tmp, mode)
        os.replace(tmp, real)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
