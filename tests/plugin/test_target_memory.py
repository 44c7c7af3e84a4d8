"""Memory the target has beyond the ELF's sections (issue 35, item 1; acquire/targetmemory.py) and
the typed pointers the ELF's globals hold (item 2; acquire/dwarfpointers.py).

GDB's `info mem` texts are GDB 13's own output: with regions the server gives (OpenOCD's
qXfer:memory-map: its flash banks and the rw address space around them) and with the user's `mem`
regions. The pointer paths are checked on the TFLM stand-in's external-RAM build (NOT TensorFlow
Lite Micro: examples/tflm_standin, STANDIN_EXTRAM), against its symbol table and C's layout of
`struct StandinApp { uint32_t flags; struct { uint32_t frames; MicroInterpreter *interpreter; }
slots[2]; }`: slots[i].interpreter at +4 + 8 i + 4."""
import os
import pathlib

import pytest

from arenascope_plugin.acquire import dwarfpointers, targetmemory
from arenascope_plugin.acquire.elfsymbols import ElfSymbols

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("ARENASCOPE_BUILD_DIR", ROOT / "build"))
EXTRAM = BUILD / "firmware" / "tflm_standin" / "tflm_standin_extram_fw.elf"
HEAP = BUILD / "firmware" / "tflm_standin" / "tflm_standin_heap_fw.elf"

def gdb_lines(*lines):
    """GDB 13's `info mem` text: a tab before the addresses, a space after each line's last word."""
    return "".join(line.replace("| ", "\t") + " \n" for line in lines)


OPENOCD_INFO_MEM = gdb_lines("Using memory regions provided by the target.", "Num Enb Low Addr   High Addr  Attrs",
                             "0   y  | 0x00000000 0x08000000 rw nocache",
                             "1   y  | 0x08000000 0x08100000 flash blocksize 0x800 nocache",
                             "2   y  | 0x08100000 0x20000000 rw nocache", "3   y  | 0x20000000 0x20050000 rw nocache",
                             "4   y  | 0x20050000 0x00000000 rw nocache")
USER_INFO_MEM = gdb_lines("Using user-defined memory regions.", "Num Enb Low Addr   High Addr  Attrs",
                          "1   y  | 0x21000000 0x22000000 rw nocache", "2   n  | 0x60000000 0x60800000 rw nocache",
                          "3   y  | 0x00000000 0x00400000 ro nocache")


def test_named_memory_is_parsed_and_a_bad_one_says_why():
    assert targetmemory.parse("psram 0x21000000 0x22000000; sdram 0x60000000 0x60800000") == \
        [(0x21000000, 0x22000000, "psram"), (0x60000000, 0x60800000, "sdram")]
    assert targetmemory.parse("none") == [] and targetmemory.parse("") == []
    for bad, why in (("psram 0x21000000", "expected NAME START END"), ("psram x 0x2", "are numbers"),
                     ("psram 0x22000000 0x21000000", "must be above START")):
        with pytest.raises(ValueError, match=why):
            targetmemory.parse(bad)


def test_gdbs_memory_map_gives_its_rw_regions_but_not_a_servers_fillers():
    """OpenOCD lists everything that is not flash as rw: regions of 512 MiB and more are its filler
    (0x00000000-0x08000000 is 128 MiB and stays: a map cannot tell it from a memory)."""
    got = targetmemory.from_info_mem(OPENOCD_INFO_MEM)
    assert [(lo, hi) for lo, hi, _ in got] == [(0x00000000, 0x08000000), (0x08100000, 0x20000000),
                                               (0x20000000, 0x20050000)]
    assert got[2][2] == "the target's memory map, 0x20000000-0x20050000"
    assert targetmemory.from_info_mem(USER_INFO_MEM) == [(0x21000000, 0x22000000,
                                                          "GDB's `mem` regions, 0x21000000-0x22000000")]
    assert targetmemory.from_info_mem("There are no memory regions defined.\n") == []


@pytest.mark.skipif(not EXTRAM.exists(), reason=f"{EXTRAM} not built (bash tools/build.sh)")
def test_typed_pointers_through_struct_members_arrays_and_a_pointer_to_a_struct():
    symbols = ElfSymbols(str(EXTRAM))
    app, app_ptr = symbols.address("standin_app"), symbols.address("standin_app_ptr")
    assert dwarfpointers.pointer_paths(str(EXTRAM), "tflite::MicroInterpreter") == [
        ("standin_app.slots[0].interpreter", app + 8, []), ("standin_app.slots[1].interpreter", app + 16, []),
        ("standin_app_ptr->slots[0].interpreter", app_ptr, [8]),
        ("standin_app_ptr->slots[1].interpreter", app_ptr, [16])]
    assert dwarfpointers.pointer_paths(str(EXTRAM), "tflite::NoSuchClass") == []


@pytest.mark.skipif(not HEAP.exists(), reason=f"{HEAP} not built (bash tools/build.sh)")
def test_a_global_pointer_and_the_memory_each_address_is_in():
    symbols = ElfSymbols(str(HEAP))
    assert symbols.pointer_paths("tflite::MicroInterpreter") == [("g_interpreter", symbols.address("g_interpreter"),
                                                                  [])]
    heap_lo = symbols.address("__HeapBase")
    assert symbols.memory_of(heap_lo) == "the heap (__HeapBase/__HeapLimit)"
    assert symbols.memory_of(symbols.address("g_interpreter")).startswith("RAM (.")
    assert symbols.memory_of(0x21000010) is None
    symbols.declared_memory = ((0x21000000, 0x22000000, "psram"),)
    symbols.memo.clear()
    assert symbols.memory_of(0x21000010) == "psram (named by the user)"
    assert (0x21000000, 0x22000000) in symbols.memory_map()["ram"]
    symbols.infer_memory(0x30000000, 0x30001000, "memory found")
    assert symbols.memory_of(0x30000800) == "memory found"


def test_picolibcs_stack_is_its_top_minus_its_size():
    """picolibc's picolibc.ld gives `__stack` (the end of RAM) and `__stack_size` (an absolute
    symbol: the size). Values from a picolibc 1.8 firmware linked with --defsym=__stack_size=0x2000
    (arm-none-eabi-nm: 20400000 D __stack, 00002000 A __stack_size), on Arm and RISC-V alike. A
    script's explicit limit symbols still come first."""
    from arenascope_plugin.acquire.symbols import TableSymbols
    pico = TableSymbols({"__stack": 0x20400000, "__stack_size": 0x2000})
    assert pico.stack_bounds() == (0x203FE000, 0x20400000, "__stack - __stack_size")
    both = TableSymbols({"__stack": 0x20400000, "__stack_size": 0x2000, "__StackLimit": 0x203FF000,
                         "__StackTop": 0x20400000})
    assert both.stack_bounds() == (0x203FF000, 0x20400000, "__StackLimit/__StackTop")
    assert TableSymbols({"__stack": 0x1000, "__stack_size": 0x2000}).stack_bounds() is None  # size above the top
