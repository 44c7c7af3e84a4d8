#!/usr/bin/python3
"""Assembles the arenascope agent as an Arduino library (format 1.5) from target_agent/.

An Arduino library needs its sources under src/ at its own root, and the Arduino builder
compiles every .c/.cpp/.S below src/ with src/ on the include path. This copies the agent's
files there (examples/arduino/README.md says which and why) with examples/arduino/
library.properties beside them:

    /usr/bin/python3 tools/arduino_library.py ~/Arduino/libraries

makes ~/Arduino/libraries/arenascope/. The version in library.properties must be the VERSION
file's (one version source): a mismatch is refused. Exit 0 on success, 1 with one line on error.
"""
import pathlib
import shutil
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
AGENT = ROOT / "target_agent"
RECIPE = ROOT / "examples" / "arduino"

# target_agent file -> path under the library's src/. The Cortex-M reset-handler painter
# (arenascope_stack_paint.S) is left out: the Arduino cores own Reset_Handler; the portable
# thread-stack painter (the host port's, plain C) paints from setup() instead.
FILES = {
    "include/arenascope/agent.h": "arenascope/agent.h",
    "include/arenascope/agent_config.h": "arenascope/agent_config.h",
    "include/arenascope/fault.h": "arenascope/fault.h",
    "include/arenascope/region_names.h": "arenascope/region_names.h",
    "include/arenascope/gdb_autoload.h": "arenascope/gdb_autoload.h",
    "adapters/tflm/arenascope_tflm.h": "arenascope_tflm.h",
    "adapters/tflm/arenascope_tflm_recorder.h": "arenascope_tflm_recorder.h",
    "adapters/tflm/arenascope_tflm_recorder.c": "arenascope_tflm_recorder.c",
    "src/arenascope_agent.c": "arenascope_agent.c",
    "src/arenascope_fault.c": "arenascope_fault.c",
    "ports/cortex_m/arenascope_fault_port.c": "arenascope_fault_port.c",
    "ports/cortex_m/arenascope_fault_hook.c": "arenascope_fault_hook.c",
    "ports/host/arenascope_port.h": "arenascope_port.h",
    "ports/host/arenascope_stack_paint_host.c": "arenascope_stack_paint_host.c",
}


def properties(path):
    """key -> value of a .properties file (Arduino's: one key=value a line, # comments)."""
    out = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if "=" not in line:
            raise ValueError(f"{path}:{n}: not key=value: {line!r}")
        key, value = line.split("=", 1)
        out[key.strip()] = value.strip()
    return out


def assemble(dest_parent):
    """Writes dest_parent/arenascope/ (replacing it); returns its path."""
    props = properties(RECIPE / "library.properties")
    version = (ROOT / "VERSION").read_text(encoding="utf-8").strip()
    if props.get("version") != version:
        raise ValueError(f"{RECIPE / 'library.properties'}: version={props.get('version')} but VERSION says "
                         f"{version}: set the same version in both")
    lib = pathlib.Path(dest_parent) / props["name"]
    if lib.exists():
        shutil.rmtree(lib)
    (lib / "src").mkdir(parents=True)
    shutil.copy2(RECIPE / "library.properties", lib / "library.properties")
    shutil.copy2(RECIPE / "README.md", lib / "README.md")
    shutil.copy2(ROOT / "LICENSE", lib / "LICENSE")
    for src, dst in FILES.items():
        (lib / "src" / dst).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(AGENT / src, lib / "src" / dst)
    return lib


def main(argv):
    if len(argv) != 2:
        print("usage: arduino_library.py DIR   (makes DIR/arenascope/, e.g. DIR = ~/Arduino/libraries)",
              file=sys.stderr)
        return 1
    try:
        print(assemble(argv[1]))
    except (OSError, ValueError, KeyError) as exc:
        print(f"arduino_library.py: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
