"""`arena version`: arenascope's version and its formats' versions."""
import gdb  # pylint: disable=import-error

from arenascope_plugin import version
from arenascope_plugin.acquire import planner
from arenascope_plugin.acquire.gdbtarget import GdbSymbols
from arenascope_plugin.decode import abi, tflm, tflm_profile
from arenascope_plugin.errors import TargetError
from arenascope_plugin.gdb import framework
from arenascope_plugin.gdb.framework import Sub, write
from arenascope_plugin.ports.cortex_m import faultrecord
from arenascope_plugin.present import jsonout, snapshot
from arenascope_plugin.serve import viewerlink


class VersionCommand(Sub):
    """Print arenascope's version and the versions of the formats this plugin reads and writes.
No target needed. The version is the VERSION file beside gdbplugin/ ("unknown" without it), the
same every tool's --version prints. It also lists the TFLM layouts (eras) agentless mode reads:
each one's id (the planner's `--tflm` revision), what tells it apart, the upstream commits it
spans and the commit it was checked on; with an ELF loaded, which one that firmware links; and
the layouts measured on real builds per ABI, read for a TFLM library built without -g.

Usage: arena version [--json]
--json: the same versions as one JSON document (docs/command-json-schema.json)."""
    sub = "version"
    json_doc = True

    def run(self, args):
        found = firmware_era()
        if args.json:
            framework.emit(dict(schema=jsonout.SCHEMA, version=jsonout.VERSION, command="version", **versions(),
                                firmware_tflm_layout=tflm_profile.era_json(found) if found else None))
        else:
            write(version_lines() + ([f"  this firmware:    {found.describe()}"] if found else []))


def firmware_era():
    """The TFLM era of the loaded ELF (decode/tflm_profile.py), or None: no ELF, no TFLM, or one
    no era describes (the other commands say which)."""
    try:
        symbols = GdbSymbols()
        return tflm.era_of(symbols) if symbols.elf_path else None
    except (TargetError, gdb.error):
        return None


def versions():
    """The product's version and each contract's (CHANGELOG.md lists them)."""
    return {"arenascope": version.VERSION, "agent_abi": {"major": abi.ABI_MAJOR, "minor": abi.ABI_MINOR},
            "fault_record": faultrecord.RECORD_VERSION,
            "snapshot": {"schema": snapshot.SCHEMA, "version": snapshot.VERSION},
            "planner_schema": planner.SCHEMA, "live_link": viewerlink.MESSAGE_VERSION,
            "tflm_layouts": [tflm_profile.era_json(e) for e in tflm_profile.ERAS],
            "tflm_measured_layouts": [{k: m[k] for k in ("era", "abi", "measured_on")} for m in tflm_profile.MEASURED]}


def version_lines():
    """`arena version`: versions() as text."""
    v = versions()
    return [f"arenascope {v['arenascope']}",
            f"  agent ABI:        {v['agent_abi']['major']}.x (this plugin knows up to {v['agent_abi']['major']}."
            f"{v['agent_abi']['minor']})",
            f"  fault record:     version {v['fault_record']}",
            f"  snapshot:         \"{v['snapshot']['schema']}\" version {v['snapshot']['version']}",
            f"  planner JSON:     \"{v['planner_schema']}\"",
            f"  live link:        message version {v['live_link']}",
            "  TFLM layouts read without the agent (decode/tflm_profile.py; `arena info` says which one "
            "the firmware has):"] + [f"    {e['id']}  {e['title']}: upstream {e['span']}, checked on {e['checked']}"
                                     for e in v["tflm_layouts"]] + \
        ["  measured layouts, for TFLM built without -g (decode/tflm_layouts.py):"] + \
        [f"    {m['era']}  on {m['abi']}: {m['measured_on']}" for m in v["tflm_measured_layouts"]]
