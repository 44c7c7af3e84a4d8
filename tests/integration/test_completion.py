"""Every `arena` command's completer, in real gdb-multiarch (`complete ...`), against lists
written here by hand from each command's usage; and a walk over `help arena` so a new command
without a case here fails."""
import re
import subprocess

import pytest

from harness import FIRMWARE, ROOT

PLUGIN = ROOT / "gdbplugin" / "arenascope.py"

# line typed -> what `complete LINE` must print (exactly, in GDB's sorted order)
CASES = {
    "arena regions --": ["arena regions --json", "arena regions --sort"],
    "arena regions --s": ["arena regions --sort"],
    "arena regions --sort ": ["arena regions --sort address", "arena regions --sort lifetime",
                              "arena regions --sort size"],
    "arena regions --sort size --": ["arena regions --sort size --json"],
    "arena map --w": ["arena map --width"],
    "arena budget --a": ["arena budget --arena", "arena budget --arena-bytes"],
    "arena budget --model tools/check-f": ["arena budget --model tools/check-format.sh"],
    "arena soak 10 --": ["arena soak 10 --at", "arena soak 10 --stop-on-fail", "arena soak 10 --timeout"],
    # as argparse reads them: --opt=value holds its value, a unique prefix is the option
    "arena regions --sort=size --": ["arena regions --sort=size --json"],
    "arena regions --sort=": ["arena regions --sort=address", "arena regions --sort=lifetime",
                              "arena regions --sort=size"],
    "arena regions --sort=s": ["arena regions --sort=size"],
    "arena plan --kern=c": ["arena plan --kern=cmsis-nn"],
    "arena check --str --": ["arena check --str --budget", "arena check --str --json", "arena check --str --junit"],
    "arena check --ju r.xml --": ["arena check --ju r.xml --budget", "arena check --ju r.xml --json",
                                  "arena check --ju r.xml --strict"],
    "arena diff --json a.json tools/check-f": ["arena diff --json a.json tools/check-format.sh"],
    "arena map --width 32 --": ["arena map --width 32 --json"],
    "arena info --": ["arena info --json"],
    "arena check --": ["arena check --budget", "arena check --json", "arena check --junit", "arena check --strict"],
    "arena check --strict --j": ["arena check --strict --json", "arena check --strict --junit"],
    "arena stack --": ["arena stack --json"],
    "arena fault --": ["arena fault --json"],
    "arena version --": ["arena version --json"],
    "arena interpreters --": ["arena interpreters --json"],
    "arena plan --k": ["arena plan --kernels"],
    "arena plan --kernels ": ["arena plan --kernels cmsis-nn", "arena plan --kernels reference"],
    "arena plan --target h": ["arena plan --target host"],
    "arena live ": ["arena live --hz", "arena live --no-launch", "arena live --openocd", "arena live --port",
                    "arena live --scan-budget", "arena live --via", "arena live status", "arena live stop"],
    "arena live st": ["arena live status", "arena live stop"],
    "arena dump ": ["arena dump --registers", "arena dump forget", "arena dump load"],
    "arena dump f": ["arena dump forget"],
    "arena view --n": ["arena view --no-launch"],
    "arena view --stop --": ["arena view --stop --no-launch", "arena view --stop --port", "arena view --stop --wait"],
    "arena diff a.json --": ["arena diff a.json --all", "arena diff a.json --json", "arena diff a.json --view"],
    "arena attach --": ["arena attach --clear", "arena attach --interpreter"],
    "arena report --": ["arena report --svg"],
    "arena refresh --": [],
    "arena snapshot tools/check-f": ["arena snapshot tools/check-format.sh"],
    "arena report tools/check-f": ["arena report tools/check-format.sh"],
    "arena diff tools/check-f": ["arena diff tools/check-format.sh"],
    "arena diff a.json tools/check-f": ["arena diff a.json tools/check-format.sh"],
    "arena check --junit tools/check-f": ["arena check --junit tools/check-format.sh"],
    "arena report --svg tools/check-f": ["arena report --svg tools/check-format.sh"],
    "arena whereis --": ["arena whereis --json"],
    "arena map --": ["arena map --json", "arena map --width"],
    "arena dump load tools/check-f": ["arena dump load tools/check-format.sh"],
    "arena plan --model tools/check-f": ["arena plan --model tools/check-format.sh"],
    "arena whereis tensor_are": ["arena whereis tensor_arena"],
}


def complete_all(lines):
    cmd = ["gdb-multiarch", "-q", "-nx", "-batch", "-ex", f"source {PLUGIN}"]
    for line in lines:
        cmd += ["-ex", "echo @@\\n", "-ex", f"complete {line}"]
    cmd += ["-ex", "echo @@\\n", "-ex", "help arena", str(FIRMWARE)]
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    parts = out.stdout.split("@@\n")[1:]
    return [p.splitlines() for p in parts[:-1]], parts[-1]


@pytest.fixture(scope="module")
def answers():
    return complete_all(list(CASES))


@pytest.mark.parametrize("line", list(CASES))
def test_completer(answers, line):
    got = answers[0][list(CASES).index(line)]
    if line.startswith("arena whereis") and not got:
        pytest.skip(f"{FIRMWARE} not built: no symbols to complete")
    assert got == CASES[line]


def test_every_arena_command_has_a_completion_case(answers):
    commands = set(re.findall(r"^arena (\w+) -- ", answers[1], re.M))
    assert len(commands) >= 18, answers[1]
    tested = {line.split()[1] for line in CASES}
    assert commands - tested == set(), f"arena commands without a completion case here: {commands - tested}"
