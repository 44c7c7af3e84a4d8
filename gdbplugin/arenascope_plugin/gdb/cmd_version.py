"""`arena version`: arenascope's version and its formats' versions."""
from arenascope_plugin import version
from arenascope_plugin.acquire import planner
from arenascope_plugin.decode import abi, faultrecord
from arenascope_plugin.gdb.framework import Sub, write
from arenascope_plugin.present import snapshot
from arenascope_plugin.serve import viewerlink


class VersionCommand(Sub):
    """Print arenascope's version and the versions of the formats this plugin reads and writes.
No target needed. The version is the VERSION file beside gdbplugin/ ("unknown" without it), the
same every tool's --version prints.

Usage: arena version"""
    sub = "version"

    def run(self, args):
        write(version_lines())


def version_lines():
    """`arena version`: the product's version, then each contract's (CHANGELOG.md lists them)."""
    return [f"arenascope {version.VERSION}",
            f"  agent ABI:        {abi.ABI_MAJOR}.x (this plugin knows up to {abi.ABI_MAJOR}.{abi.ABI_MINOR})",
            f"  fault record:     version {faultrecord.RECORD_VERSION}",
            f"  snapshot:         \"{snapshot.SCHEMA}\" version {snapshot.VERSION}",
            f"  planner JSON:     \"{planner.SCHEMA}\"",
            f"  live link:        message version {viewerlink.MESSAGE_VERSION}"]
