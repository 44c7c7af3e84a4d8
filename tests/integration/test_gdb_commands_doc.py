"""docs/gdb-commands.md shows real output: regenerating it from the demo firmware must give
the committed file, byte for byte except the stack depth, which depends on where the SysTick
interrupt happened to land (its 32-byte exception frame on top of the deepest call), and so
whether `arena diff` across two stops sees the stack's peak change."""
import re
import subprocess
import sys
import tempfile

import pytest

from harness import FIRMWARE, ROOT

pytestmark = pytest.mark.skipif(not FIRMWARE.exists(), reason=f"{FIRMWARE} not built")

# Lines with the stack's measured peak, which depends on where an interrupt landed.
TIMING = re.compile(r"^(paint:|high-water mark:|peak depth:|stack rule:|measured against it:|  PASS  stack|"
                    r"  FAIL  stack|soak: |stack peak: ).*$", re.M)
# arena diff across two stops: the stack's high-water mark may have gone deeper in between (or not).
DIFF_STACK = re.compile(r"^(stack and guard band:|  stack peak: .*)\n", re.M)
DIFF_COUNT = re.compile(r"^differences: \d+ figure", re.M)


def normal(text):
    text = DIFF_COUNT.sub("differences: N figure", DIFF_STACK.sub("", text))
    return TIMING.sub(lambda m: re.sub(r"0x[0-9a-f]+|\d+", "N", m.group(0)), text)


def test_gdb_commands_doc_is_current():
    with tempfile.NamedTemporaryFile(suffix=".md") as out:
        subprocess.run([sys.executable, str(ROOT / "tools" / "gen_gdb_commands_doc.py"), out.name], check=True,
                       capture_output=True, timeout=600)
        fresh = open(out.name, encoding="utf-8").read()
    committed = (ROOT / "docs" / "gdb-commands.md").read_text()
    assert normal(fresh) == normal(committed), "docs/gdb-commands.md is stale: run tools/gen_gdb_commands_doc.py"
    for command in ("info", "map", "regions", "plan", "stack", "check", "whereis", "snapshot", "view", "refresh",
                    "fault", "diff"):
        assert f"(gdb) help arena {command}" in committed and f"(gdb) arena {command}" in committed
