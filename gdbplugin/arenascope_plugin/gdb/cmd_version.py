"""`arena version`: arenascope's version and its formats' versions."""
from arenascope_plugin.gdb.framework import Sub, write
from arenascope_plugin.present import reports


class VersionCommand(Sub):
    """Print arenascope's version and the versions of the formats this plugin reads and writes.
No target needed. The version is the VERSION file beside gdbplugin/ ("unknown" without it), the
same every tool's --version prints.

Usage: arena version"""
    sub = "version"

    def run(self, args):
        write(reports.version_lines())
