"""The STM32CubeIDE recipe (examples/stm32cubeide/): built with its CubeIDE-style Makefile
(arm-none-eabi-gcc), booted on QEMU's netduinoplus2 (an STM32F405: flash 0x08000000, SRAM
0x20000000, 128 KiB), read by gdb-multiarch with the plugin. Expected values come from nm, from
the linker script's own text, from objdump and from the stack memory read raw, not from the
plugin:

- `arena info`: bounds and size of the arena are nm's tensor_arena (address, size).
- `arena stack`: bounds are the linker script's _estack = ORIGIN(RAM) + LENGTH(RAM) and
  _sstack = _estack - _Min_Stack_Size (computed here from STM32F405RGTX_FLASH.ld), and the
  paint figure is the count of 0xCCCCCCCC words from _sstack up in the memory read raw: the
  startup's ARENASCOPE_STACK_PAINT line painted it before SystemInit.
- A HardFault (`udf` in main once app_fault_request is set): the startup's weak
  HardFault_Handler branches to the agent's capture; `arena fault` decodes UNDEFINSTR with
  HFSR.FORCED (ARMv7-M ARM B3.2.15, B3.2.16) and the stacked PC is objdump's udf in main.
"""
import re
import shutil
import subprocess

import pytest

from harness import ROOT, gdb_batch, qemu
from test_fault_cores import faulting_instruction, symbol

RECIPE = ROOT / "examples" / "stm32cubeide"
PLUGIN = ROOT / "gdbplugin" / "arenascope.py"
pytestmark = pytest.mark.skipif(not all(shutil.which(t) for t in ("arm-none-eabi-gcc", "qemu-system-arm", "make",
                                                                    "gdb-multiarch")),
                                reason="arm-none-eabi-gcc, qemu-system-arm, make or gdb-multiarch missing "
                                       "(bash tools/setup-deps.sh)")


@pytest.fixture(scope="module")
def elf(tmp_path_factory):
    out = tmp_path_factory.mktemp("cubeide")
    r = subprocess.run(["make", "-C", str(RECIPE), f"BUILD={out}", "EXTRA_CFLAGS=-Wextra -Werror"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return out / "arenascope_cubeide.elf"


def linker_script_stack():
    """(_sstack, _estack) from the linker script's text: RAM's ORIGIN + LENGTH, _Min_Stack_Size."""
    text = (RECIPE / "STM32F405RGTX_FLASH.ld").read_text()
    origin, length = re.search(r"^\s*RAM\s+\(xrw\)\s*:\s*ORIGIN\s*=\s*(0x[0-9A-Fa-f]+),\s*LENGTH\s*=\s*(\d+)K",
                               text, re.M).groups()
    top = int(origin, 16) + int(length) * 1024
    size = int(re.search(r"^_Min_Stack_Size\s*=\s*(0x[0-9A-Fa-f]+);", text, re.M).group(1), 16)
    return top - size, top


def test_machine_is_there():
    out = subprocess.run(["qemu-system-arm", "-M", "help"], capture_output=True, text=True, timeout=60).stdout
    assert re.search(r"^netduinoplus2\s", out, re.M), "this QEMU has no netduinoplus2 machine"


def test_vector_table_and_stack_symbols(elf):
    low, high = linker_script_stack()
    assert (symbol(elf, "_sstack"), symbol(elf, "_estack")) == (low, high) == (0x2001F000, 0x20020000)
    words = subprocess.run(["arm-none-eabi-objdump", "-s", "-j", ".isr_vector", str(elf)], capture_output=True,
                           text=True, check=True).stdout
    first = re.search(r"^ 8000000 ([0-9a-f]{8}) ([0-9a-f]{8}) [0-9a-f]{8} ([0-9a-f]{8})", words, re.M).groups()
    le = [int.from_bytes(bytes.fromhex(w), "little") for w in first]
    assert le == [high, symbol(elf, "Reset_Handler") | 1, symbol(elf, "HardFault_Handler") | 1]
    # ARENASCOPE_FAULT_HANDLER_NAMES: the fault port's strong names beat the startup's weak aliases of
    # Default_Handler, so all four are the capture entry itself ("T": global and strong, nm(1)).
    nm = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True).stdout
    kinds = {line.split()[2]: line.split()[1] for line in nm.splitlines() if len(line.split()) == 3}
    entry = symbol(elf, "arenascope_fault_handler")
    for name in ("HardFault_Handler", "MemManage_Handler", "BusFault_Handler", "UsageFault_Handler"):
        assert (symbol(elf, name), kinds[name]) == (entry, "T"), name
    assert symbol(elf, "Default_Handler") != entry


def test_arena_info_stack_and_hardfault(elf):
    low, high = linker_script_stack()
    arena = symbol(elf, "tensor_arena")
    nm = subprocess.run(["arm-none-eabi-nm", "-S", str(elf)], capture_output=True, text=True, check=True).stdout
    arena_size = int(next(line.split()[1] for line in nm.splitlines() if line.endswith(" tensor_arena")), 16)
    with qemu(elf, machine="netduinoplus2") as (port, _log):
        dump, text = gdb_batch(elf, [f"source {PLUGIN}", "break app_inference_done", "continue", "continue",
                                     "arena info", "arena stack", "set var app_fault_request = 1", "delete",
                                     "break arenascope_fault_hook", "continue", "arena fault"],
                               reads=[("stack", f"(char *){low:#x}", high - low)], remote_port=port, timeout=180)
    assert f"bounds:                 {arena:#010x}-{arena + arena_size:#010x}, size {arena_size} B" in text, text
    assert f"stack:                    {low:#010x}-{high:#010x}, size {high - low} B" in text, text
    # The paint, counted here from the raw stack bytes (read at the fault: the fault's frame is
    # near the top, far above the deepest inference frame).
    stack = bytes.fromhex(dump["mem"]["stack"])
    painted = 0
    while painted < len(stack) and stack[painted:painted + 4] == b"\xcc" * 4:
        painted += 4
    assert 0 < painted < high - low
    assert f"paint:                    {painted} B at the bottom still painted" in text, text
    assert f"high-water mark:          {low + painted:#010x}" in text, text
    assert "CFSR.UFSR.UNDEFINSTR (bit 16)" in text and "CFSR 0x00010000  HFSR 0x40000000" in text, text
    udf = faulting_instruction(elf, "udf", "main")
    assert re.search(rf"faulting PC: {udf:#x} in main", text), text

