"""The product's version: the one line of VERSION at the repository root. Two places hold it:
the copy a pip install ships inside the package (arenascope_plugin/VERSION, written from the root's
file at build time by gdbplugin/setup.py; a checkout has none), else the root's own file beside
gdbplugin/ (gdbplugin/arenascope_plugin/../../VERSION), the file CMake, every tool's --version
and each snapshot read. "unknown" when neither is there or holds a version (a copied plugin):
never an error. No GDB import: the plugin, `arenascope`, setup.py and the tests all use it."""
import os
import re

_PACKAGE = os.path.dirname(os.path.abspath(__file__))
PATH = os.path.join(os.path.dirname(os.path.dirname(_PACKAGE)), "VERSION")
INSTALLED = os.path.join(_PACKAGE, "VERSION")  # only in an installed package (setup.py's build_py)
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


def find():
    """The installed copy's version when this package was installed by pip, else the checkout's."""
    installed = read(INSTALLED)
    return installed if installed != UNKNOWN else read(PATH)


VERSION = find()
