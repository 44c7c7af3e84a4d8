"""The one file writer of the plugin and the standalone tool (snapshots, JUnit reports); the C++
parts' twin is common/include/arenascope/write_whole.h, with the same rules: the file is written
whole or not at all, into a new temporary file in its folder (mkstemp: created exclusively under a
name no one can plant), then renamed over it; a link to a regular file is written through (its
target replaced); the file keeps its mode (a 0600 file stays 0600), a new one gets what a plain
create would (0666 less the umask); the temporary file is removed when anything fails."""
import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from typing import BinaryIO


def write_whole(path: str | os.PathLike[str], fill: Callable[[BinaryIO], object]) -> None:
    """Writes `path` with fill(binary file). OSError (or fill's exception) on failure, the old
    file then left as it was."""
    path = os.fspath(path)
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
