"""Where the project's own executables are: in a build tree of this checkout (build/ first, then
any folder directly in the checkout that CMake configured from it: `cmake -B out`), else
EXECUTABLE on PATH. No GDB: the plugin and `arenascope` both use it."""
import os
import shutil
import signal

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _build_trees():
    """build/, then the checkout's other folders holding a CMakeCache.txt whose source is ROOT."""
    yield os.path.join(ROOT, "build")
    try:
        names = sorted(os.listdir(ROOT))
    except OSError:
        return
    for name in names:
        cache = os.path.join(ROOT, name, "CMakeCache.txt")
        if name == "build" or not os.path.isfile(cache):
            continue
        try:
            with open(cache, encoding="utf-8", errors="replace") as f:
                home = next((line.split("=", 1)[1].strip() for line in f
                             if line.startswith("CMAKE_HOME_DIRECTORY:")), None)
        except OSError:
            continue
        if home and os.path.realpath(home) == os.path.realpath(ROOT):
            yield os.path.join(ROOT, name)


def has_display():
    """Whether a window can open here: an X11 (DISPLAY) or Wayland (WAYLAND_DISPLAY) display is set."""
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def built_tool(folder, executable):
    """The path of the executable, or None when neither a build tree nor PATH has it."""
    for tree in _build_trees():
        built = os.path.join(tree, folder, executable)
        if os.path.isfile(built) and os.access(built, os.X_OK):
            return built
    return shutil.which(executable)


def ended(returncode: int) -> str:
    """How one of the project's tools ended, from its exit status (subprocess's returncode, negative
    for a signal): "crashed (SIGSEGV)" or "exited with status 3"."""
    if returncode < 0:
        try:
            return f"crashed ({signal.Signals(-returncode).name})"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with status {returncode}"
