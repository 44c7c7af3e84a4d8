"""A firmware's own regions, named (ARENASCOPE_REGION_NAMES), and the CMSIS fault handler names
(ARENASCOPE_FAULT_HANDLER_NAMES), on QEMU through gdb-multiarch: tests/firmware/user_regions,
built here with arm-none-eabi-gcc, with a CMSIS-style startup whose vectors are weak aliases of
Default_Handler and the agent's fault port built with -DARENASCOPE_FAULT_HANDLER_NAMES.

Expected values come from the C source (its names and its layout table, read here with a regex),
arm-none-eabi-nm and the architecture manuals, not from the plugin:
- `arena regions`, `arena whereis` and the snapshot say the source's names; the name that is not
  UTF-8 and too long is shown as \\xNN escapes, cut to 47 bytes with "...".
- The Cortex-M4 (mps2-an386) enables BusFault in SHCSR (ARMv7-M ARM B3.2.13), so the store to
  0xF0000000 is taken as BusFault (exception 5) through the vector BusFault_Handler; the M0
  (microbit) faults a word load from 0x20000001 through HardFault_Handler, its only fault vector.
  Either way `arena fault` decodes the agent's record, which only arenascope_fault_handler writes.
- The wild write into hann_window (immutable, checksummed) is named in the verdict.
"""
import json
import re
import shutil
import subprocess

import pytest

from harness import ROOT, cortex_m_elf, gdb_batch, qemu

PLUGIN = ROOT / "gdbplugin" / "arenascope.py"
SRC = ROOT / "tests" / "firmware" / "user_regions"
SCRIPTS = ROOT / "tests" / "firmware" / "fault_cores"
pytestmark = pytest.mark.skipif(not shutil.which("arm-none-eabi-gcc") or not shutil.which("qemu-system-arm"),
                                reason="arm-none-eabi-gcc or qemu-system-arm missing (bash tools/setup-deps.sh)")

CORES = {"m4": ("cortex-m4", "mps2-an386", "mps2.ld"), "m0": ("cortex-m0", "microbit", "microbit.ld")}


def source_names():
    """{(kind word, id): the C string} from main.c's ARENASCOPE_REGION_NAMES lines."""
    text = (SRC / "main.c").read_text()
    out = {}
    for kind, body in re.findall(r"^ARENASCOPE_REGION_NAMES\(0, ARENASCOPE_KIND_(\w+),(.*?)\);", text, re.M | re.S):
        for i, s in enumerate(re.findall(r'"((?:[^"\\]|\\.)*)"', body)):
            out[(kind.lower(), i)] = s.encode().decode("unicode_escape").encode("latin-1")
    return out


def nm(elf):
    lines = subprocess.run(["arm-none-eabi-nm", str(elf)], capture_output=True, text=True, check=True).stdout
    return {parts[2]: (int(parts[0], 16), parts[1]) for parts in (x.split() for x in lines.splitlines())
            if len(parts) == 3}


@pytest.mark.parametrize("core", CORES)
def test_cmsis_names_take_the_faults_and_the_regions_have_the_sources_names(core, tmp_path):
    cpu, machine, script = CORES[core]
    elf = cortex_m_elf(tmp_path / f"user_regions_{core}.elf", cpu, SCRIPTS / script,
                       [SRC / "main.c", SRC / "startup.c"], ["-DARENASCOPE_FAULT_HANDLER_NAMES"])
    syms = nm(elf)
    handler = syms["arenascope_fault_handler"][0]
    aliased = ["HardFault_Handler"] + (["MemManage_Handler", "BusFault_Handler", "UsageFault_Handler"]
                                       if core == "m4" else [])
    for name in aliased:  # strong (T), at the handler: the startup's weak aliases lost
        assert syms[name] == (handler, "T"), name
    if core == "m0":
        assert "BusFault_Handler" not in syms
    snap = tmp_path / "snap.json"
    with qemu(elf, machine=machine) as (port, _uart):
        _dump, text = gdb_batch(elf, [
            "set pagination off", "set confirm off", "break arenascope_fault_hook", "continue", f"source {PLUGIN}",
            "set arena colour off", "echo =regions=\\n", "arena regions", "echo =whereis=\\n",
            "arena whereis &user_arena[3072 + 100]", "echo =fault=\\n", "arena fault", "echo =end=\\n",
            f"arena snapshot {snap}"], remote_port=port, timeout=120)
    regions, rest = text.split("=regions=")[1].split("=whereis=")
    whereis, rest = rest.split("=fault=")
    fault = rest.split("=end=")[0]
    names = source_names()
    plain = {k: v.decode() for k, v in names.items() if v.isascii() and len(v) <= 47}
    assert len(plain) == 3, names
    for name in plain.values():
        assert name in regions, regions
    hostile = names[("metadata", 2)]
    shown = hostile[:47].decode("utf-8", "backslashreplace") + "..."
    assert shown.startswith("\\xff\\xfe-not-utf8") and shown in regions, regions
    assert "hann_window" in whereis, whereis
    # The fault: the agent's record, through the CMSIS vector.
    assert "from the agent's fault record" in fault, fault
    if core == "m4":
        assert "BusFault" in fault and "CFSR.BFSR.PRECISERR (bit 9)" in fault, fault
        assert "BFAR  0xf0000000 (valid)" in fault, fault
    else:
        assert "HardFault: from the agent's fault record" in fault, fault
    assert "hann_window (+3072..+3584)" in fault, fault
    doc = json.loads(snap.read_text())
    by_offset = {r["offset"]: r for r in doc["arenas"][0]["regions"]}
    assert by_offset[0]["name"] == "mfcc_frames" and by_offset[3840]["name"] == "dma_pool"
    assert by_offset[3072]["label"] == "hann_window" and by_offset[3584]["name"] == shown
