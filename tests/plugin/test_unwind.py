"""The pieces a core without GDB's unwinder relies on (issue 33): the BL target decode, the
short names call chains share, the exception frame an EXC_RETURN stands for, and the unwinder
over the stand-in firmware's real call frame information (skipped when it is not built).
Expected values come from arm-none-eabi-objdump's disassembly and the ARM ARM's layouts."""
import pathlib
import struct

import pytest

from arenascope_plugin.acquire.reader import ImageReader, MemoryReadError
from arenascope_plugin.acquire.symbols import TableSymbols, short_name
from arenascope_plugin.ports.cortex_m import faultrecord, unwind

ROOT = pathlib.Path(__file__).resolve().parents[2]
STANDIN = ROOT / "build" / "firmware" / "tflm_standin" / "tflm_standin_fw.elf"


@pytest.mark.parametrize("at,hw1,hw2,target", [
    (0x1A6, 0xF001, 0xFA79, 0x169C),   # objdump: "1a6: f001 fa79  bl 169c" (forward)
    (0x146C, 0xF7FF, 0xFFD4, 0x1418),  # objdump: "146c: f7ff ffd4  bl 1418" (backward)
    (0xD04, 0xF7FF, 0xFD20, 0x748),    # objdump: "d04: f7ff fd20  bl 748"
])
def test_a_bl_target_is_decoded_as_objdump_gives_it(at, hw1, hw2, target):
    reader = ImageReader([(at, struct.pack("<HH", hw1, hw2))])
    assert faultrecord.call_target(reader, at + 4 + 1) == target


def test_no_target_for_a_blx_through_a_register_or_no_call():
    blx_r3 = ImageReader([(0x9D0, struct.pack("<HH", 0x68DB, 0x4798))])  # ldr r3, [r3, #12]; blx r3
    assert faultrecord.call_before(blx_r3, 0x9D5) == "BLX r3"
    assert faultrecord.call_target(blx_r3, 0x9D5) is None
    nop = ImageReader([(0x100, b"\x00\xbf\x00\xbf")])
    assert faultrecord.call_target(nop, 0x105) is None


@pytest.mark.parametrize("name,short", [
    ("AbortImpl()", "AbortImpl"),
    ("tflite::standin_follow_null(unsigned char const*) [clone .constprop.0]", "tflite::standin_follow_null"),
    ("tflite::MicroInterpreter::Invoke()", "tflite::MicroInterpreter::Invoke"),
    ("X::f(int) const", "X::f"),
    ("operator()", "operator()"),
    ("A::operator()(int) const", "A::operator()"),
    ("main", "main"),
])
def test_short_names_are_gdbs_frame_names(name, short):
    assert short_name(name) == short


def test_an_exception_frame_is_read_where_exc_return_says():
    """EXC_RETURN 0xFFFFFFF9 (MSP, basic frame): r0-r3, r12, lr, pc, xPSR at SP; SP before it is 32
    B above, 4 more when xPSR bit 9 (the core aligned the frame)."""
    frame = [1, 2, 3, 4, 12, 0x201, 0x300, 0x01000200]   # xPSR bit 9 set
    mem = {0x20000100 + 4 * i: v for i, v in enumerate(frame)}
    regs = dict.fromkeys(range(16))
    regs[unwind.SP] = 0x20000100
    got, at = unwind._exception_frame(regs, 0xFFFFFFF9, None, lambda a: mem[a])  # pylint: disable=protected-access
    assert at == 0x20000100 and got[unwind.PC] == 0x300 and got[unwind.LR] == 0x201 and got[12] == 12
    assert got[unwind.SP] == 0x20000100 + 32 + 4
    # On PSP with an unknown PSP: said, not guessed.
    none, why = unwind._exception_frame(regs, 0xFFFFFFFD, None, lambda a: mem[a])  # pylint: disable=protected-access
    assert none is None and "PSP" in why


def test_without_call_frame_information_the_walk_says_why():
    syms = TableSymbols({"f": 0x100})
    got = unwind.unwind(syms, lambda a, n: b"\0" * n, {"pc": 0x100, "sp": 0x20000000})
    assert got.frames and not got.complete and "no ELF file" in got.why


@pytest.mark.skipif(not STANDIN.exists(), reason=f"{STANDIN} not built (bash tools/build.sh)")
def test_a_frame_layout_is_the_prologues_from_the_elf():
    """standin_recurse: `push {r4, lr}; sub sp, #32` (objdump): a 40 B frame, LR at CFA - 4."""
    from arenascope_plugin.acquire.elfsymbols import ElfSymbols
    syms = ElfSymbols(str(STANDIN))
    recurse = next(a for n, (a, _, k) in syms._table.items()  # pylint: disable=protected-access
                   if "standin_recurse" in n and k == "STT_FUNC")
    assert unwind.frame_layout(syms, recurse) == (40, -4)


@pytest.mark.skipif(not STANDIN.exists(), reason=f"{STANDIN} not built (bash tools/build.sh)")
def test_an_unreadable_stack_stops_the_walk_with_the_reason():
    from arenascope_plugin.acquire.elfsymbols import ElfSymbols
    syms = ElfSymbols(str(STANDIN))
    main = syms.address("main")

    def read(addr, n):
        raise MemoryReadError(addr, n, "outside the dump")
    got = unwind.unwind(syms, read, {"pc": main + 8, "sp": 0x20014000, "lr": 0x101})
    assert got.frames == ["main"] and not got.complete and "unreadable" in got.why
