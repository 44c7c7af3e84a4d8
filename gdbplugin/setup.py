"""The package's build-time half of pyproject.toml: its version, and the copy of it the installed
package carries. Both come from the repository's VERSION file (one line MAJOR.MINOR.PATCH) as
arenascope_plugin/version.py reads it - loaded here by path, since the package is not importable
while it is being built. build_py writes the version into the built package as
arenascope_plugin/VERSION (version.INSTALLED), which an installed copy reads instead of the
checkout's file it no longer sits beside. sdist writes the same file into the source archive,
whose tree has no VERSION above it: a wheel built from the archive reads it there. A tree without
either (gdbplugin/ copied alone) cannot be built: the error says so."""
import importlib.util
import os

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

_HERE = os.path.dirname(os.path.abspath(__file__))
_SPEC = importlib.util.spec_from_file_location("_arenascope_version",
                                               os.path.join(_HERE, "arenascope_plugin", "version.py"))
version = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(version)

if version.VERSION == version.UNKNOWN:
    raise SystemExit(f"gdbplugin/setup.py: {version.PATH} is missing or not one line MAJOR.MINOR.PATCH: build the "
                     "package from a clone of the whole repository (pip install ./gdbplugin)")


def _write_version(tree):
    """arenascope_plugin/VERSION under tree (a built package, or the sdist's release tree)."""
    target = os.path.join(tree, "arenascope_plugin", "VERSION")
    if os.path.lexists(target):
        os.unlink(target)  # sdist hard-links the tree's files: never write through a link
    with open(target, "w", encoding="ascii") as f:
        f.write(version.VERSION + "\n")


class BuildPyWithVersion(build_py):
    """build_py, then arenascope_plugin/VERSION in the built package: the installed copy's version."""

    def run(self):
        super().run()
        if not self.dry_run:
            _write_version(self.build_lib)


class SdistWithVersion(sdist):
    """sdist with arenascope_plugin/VERSION in the archive, which holds gdbplugin/ only."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        if not self.dry_run:
            _write_version(base_dir)


setup(version=version.VERSION, cmdclass={"build_py": BuildPyWithVersion, "sdist": SdistWithVersion})
