"""Docs that compile: every ```c block of docs/agent.md (and of target_agent/README.md, when it has
any) built as written with arm-none-eabi-gcc for Cortex-M4, against target_agent/include and the
Cortex-M port, with -Wall -Wextra -Werror -pedantic.

A marker in an HTML comment on the line before a block says how (none: compile only):
  <!-- snippet: program -->   also link it: a whole program, with a CMSIS-style startup
                              (tests/firmware/user_regions/startup.c), the agent and its fault port
                              (built with -DARENASCOPE_FAULT_HANDLER_NAMES, as the doc suggests for
                              CMSIS startups) and a linker script that defines __StackLimit,
                              __StackTop, __guard_start, __guard_end (tests/firmware/fault_cores/mps2.ld)
  <!-- snippet: fragment -->  an excerpt: not compiled (say why next to it)
  add `gnu11` to the marker for a block the doc says needs GNU C11 (default: -std=c99).
"""
import re
import shutil
import subprocess

import pytest

from harness import AGENT, AGENT_SOURCES, ROOT

DOCS = [ROOT / "docs" / "agent.md", AGENT / "README.md"]
BLOCK = re.compile(r"(?:<!-- snippet: ([^>]*?) -->\n)?```c\n(.*?)^```", re.M | re.S)
STARTUP = ROOT / "tests" / "firmware" / "user_regions" / "startup.c"
SCRIPT = ROOT / "tests" / "firmware" / "fault_cores" / "mps2.ld"
CFLAGS = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=soft", "-Os", "-Wall", "-Wextra", "-Werror", "-pedantic",
          "-ffunction-sections", "-fdata-sections", f"-I{AGENT / 'include'}", f"-I{AGENT / 'ports' / 'cortex_m'}"]
pytestmark = pytest.mark.skipif(not shutil.which("arm-none-eabi-gcc"),
                                reason="arm-none-eabi-gcc missing (bash tools/setup-deps.sh)")


def blocks():
    """[(doc file name, line, marker words, code)] of every ```c block."""
    out = []
    for doc in DOCS:
        if not doc.exists():
            continue
        text = doc.read_text()
        for m in BLOCK.finditer(text):
            out.append((f"{doc.relative_to(ROOT)}:{text.count(chr(10), 0, m.start(2))}",
                        (m.group(1) or "").split(), m.group(2)))
    return out


def test_the_agent_docs_have_c_blocks_and_every_marker_is_known():
    found = blocks()
    assert len(found) >= 3, found  # the calls, the region names, the fault capture
    for where, words, _ in found:
        assert set(words) <= {"program", "fragment", "gnu11"}, f"{where}: unknown snippet marker {words}"
    # Every ```c fence is one the extractor sees (a marker typo would hide a block from the test).
    for doc in DOCS:
        if doc.exists():
            assert doc.read_text().count("```c\n") == sum(w.startswith(str(doc.relative_to(ROOT)))
                                                          for w, _, _ in found)


@pytest.mark.parametrize("where,words,code", blocks(), ids=lambda v: v if isinstance(v, str) and ":" in v else "")
def test_every_c_block_compiles_as_written(where, words, code, tmp_path):
    if "fragment" in words:
        pytest.skip(f"{where}: marked as a fragment")
    # Descriptor structs are set up by field name: a positional initializer breaks silently when a
    # minor version reorders nothing but a reader cannot tell which number is which.
    assert not re.search(r"arenascope_\w+_t\s+\w+\s*=\s*\{\s*[^.\s}]", code), f"{where}: positional initializer"
    src = tmp_path / "snippet.c"
    src.write_text(code)
    std = "-std=gnu11" if "gnu11" in words else "-std=c99"
    obj = tmp_path / "snippet.o"
    r = subprocess.run(["arm-none-eabi-gcc", *CFLAGS, std, "-c", str(src), "-o", str(obj)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"{where}: the block does not compile:\n{r.stderr}"
    if "program" not in words:
        return
    # The agent's own files as its CMake builds them (the port: gnu99); the startup's weak names.
    objs = [obj]
    for i, s in enumerate([*AGENT_SOURCES, STARTUP]):
        o = tmp_path / f"{i}.o"
        port = "ports" in str(s) or s == STARTUP
        flags = ["-std=gnu99", "-DARENASCOPE_FAULT_HANDLER_NAMES"] if port else ["-std=c99"]
        subprocess.run(["arm-none-eabi-gcc", *CFLAGS, *flags, "-c", str(s), "-o", str(o)], check=True,
                       capture_output=True, timeout=120)
        objs.append(o)
    r = subprocess.run(["arm-none-eabi-gcc", "-mcpu=cortex-m4", "-mthumb", "-nostartfiles", "--specs=nano.specs",
                        "-Wl,--gc-sections", "-T", str(SCRIPT), *map(str, objs), "-o", str(tmp_path / "snippet.elf")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"{where}: the block compiles but does not link as a whole program:\n{r.stderr}"
