"""The product's version: the one line of VERSION at the repository root, beside gdbplugin/
(gdbplugin/arenascope_plugin/../../VERSION), the file CMake, every tool's --version and each
snapshot read. "unknown" when it is missing or not a version (a copied plugin): never an error.
No GDB import: the plugin, `arenascope` and the tests all use it."""
import os
import re

PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "VERSION")
UNKNOWN = "unknown"
_SHAPE = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+")  # as CMakeLists.txt checks it


def read(path=PATH):
    """The version in the file at `path`, or UNKNOWN when it cannot be read or is not MAJOR.MINOR.PATCH."""
    try:
        with open(path, "rb") as f:
            first = f.read(256).split(b"\n", 1)[0].strip().decode("ascii")
    except (OSError, UnicodeDecodeError):
        return UNKNOWN
    return first if _SHAPE.fullmatch(first) else UNKNOWN


VERSION = read()
