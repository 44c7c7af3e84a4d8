"""RAM dump files (acquire/dump.py) and registers files (acquire/dumpcore.py): the parsers and
their refusals. The Intel HEX records are written out here by hand: the data record is the
format's own example (Intel HEX specification rev. A, 1988, and the Wikipedia article's
":0B0010006164647265737320676170A7": 11 bytes "address gap" at 0x0010), the extended linear
address record ":020000042000DA" (upper address 0x2000: 0x02+0x04+0x20 = 0x26, checksum
0x100-0x26 = 0xDA), the end-of-file record ":00000001FF". The registers text is what
gdb-multiarch 13 printed for `info registers` on QEMU mps2-an386 at the demo's fault hook."""
import json
import os

import pytest

from arenascope_plugin.acquire import dump, dumpcore
from arenascope_plugin.acquire.dumped import open_dump
from arenascope_plugin.acquire.reader import MemoryReadError
from arenascope_plugin.acquire.symbols import TableSymbols

ELA = ":020000042000DA"
DATA = ":0B0010006164647265737320676170A7"
EOF = ":00000001FF"
pytest.importorskip("intelhex", reason="Intel HEX needs Debian's python3-intelhex")


def write(tmp_path, name, content):
    path = tmp_path / name
    (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
    return path


def test_intel_hex_places_bytes_at_the_records_addresses(tmp_path):
    path = write(tmp_path, "ram.hex", "\n".join([ELA, DATA, EOF]) + "\n")
    reader = dump.load([str(path)])
    assert reader.ranges() == [(0x20000010, 0x2000001B)]
    assert reader.read(0x20000010, 11) == b"address gap"
    assert reader.read(0x20000018, 3) == b"gap"


def test_a_bad_checksum_names_the_file_and_the_line(tmp_path):
    path = write(tmp_path, "ram.hex", "\n".join([ELA, DATA[:-2] + "A8", EOF]) + "\n")
    with pytest.raises(dump.DumpError, match=r"ram\.hex: not valid Intel HEX: Record at line 2 has invalid checksum"):
        dump.load([str(path)])


def test_a_truncated_hex_is_refused(tmp_path):
    without_eof = write(tmp_path, "a.hex", "\n".join([ELA, DATA]) + "\n")
    with pytest.raises(dump.DumpError, match="does not end with Intel HEX's end-of-file record.*truncated"):
        dump.load([str(without_eof)])
    cut_record = write(tmp_path, "b.hex", "\n".join([ELA, DATA[:20], EOF]) + "\n")
    with pytest.raises(dump.DumpError, match=r"b\.hex: not valid Intel HEX: .*invalid record at line 2"):
        dump.load([str(cut_record)])
    with pytest.raises(dump.DumpError, match="c.hex is empty"):
        dump.load([str(write(tmp_path, "c.hex", ""))])
    with pytest.raises(dump.DumpError, match="holds its own addresses"):
        dump.load([f"{write(tmp_path, 'd.hex', EOF)}@0x20000000"])


def test_raw_files_at_addresses_and_a_read_across_two_files(tmp_path):
    a = write(tmp_path, "a.bin", bytes(range(16)))
    b = write(tmp_path, "b.bin", bytes(range(16, 32)))
    reader = dump.load([f"{b}@0x20000010", f"{a}@536870912"])  # any order; decimal too
    assert reader.ranges() == [(0x20000000, 0x20000020)]
    assert reader.read(0x2000000E, 4) == bytes([14, 15, 16, 17])
    assert reader.describe() == "a.bin 0x20000000..0x20000010 (16 B), b.bin 0x20000010..0x20000020 (16 B)"


def test_a_read_across_a_range_end_raises(tmp_path):
    a = write(tmp_path, "a.bin", bytes(16))
    reader = dump.load([f"{a}@0x20000000", f"{a}@0x20000020"])  # a gap at 0x20000010..0x20000020
    assert reader.read(0x2000000C, 4) == bytes(4)
    for addr, length in ((0x2000000E, 4), (0x20000010, 1), (0x1FFFFFFF, 2), (0x2000002F, 2)):
        with pytest.raises(MemoryReadError, match=r"outside the RAM dump \(it holds 0x20000000\.\.0x20000010, "
                                                  r"0x20000020\.\.0x20000030\)") as exc:
            reader.read(addr, length)
        assert (exc.value.addr, exc.value.length) == (addr, length)


def test_flash_from_the_elf_fills_in_what_the_dump_lacks_but_never_overrides_it(tmp_path):
    a = write(tmp_path, "a.bin", b"\x11" * 8)
    reader = dump.load([f"{a}@0x100"], flash=[(0x0, b"\x22" * 8, ".text"), (0x104, b"\x33" * 8, ".rodata")])
    assert reader.read(0x4, 4) == b"\x22" * 4 and reader.read(0x100, 8) == b"\x11" * 8
    with pytest.raises(MemoryReadError):
        reader.read(0x10C, 4)  # the overlapping .rodata was dropped: the dump's bytes are the board's


@pytest.mark.parametrize("spec,message", [
    ("{a}", r"a raw dump holds no addresses: give the address of its first byte, .*a\.bin@0x20000000"),
    ("{a}@", r"'' is not an address"),
    ("{a}@0x1_0000_0000", r"0x1_0000_0000 is outside 32-bit addresses"),
    ("{a}@-4", r"-4 is outside 32-bit addresses"),
    ("{a}@0xfffffffc", r"16 B at 0xfffffffc run past 0xffffffff"),
    ("{a}@ram", r"'ram' is not an address"),
    ("@0x0", r"no file before '@'"),
    ("{e}@0x20000000", r"e\.bin is empty \(0 bytes\)"),
    ("{tmp}/none.bin@0x0", r"none\.bin: no such file"),
    # Issue 37: a directory, a FIFO or a device was said to be "no such file".
    ("{tmp}@0x0", r": a directory, not a dump file"),
    ("{tmp}/fifo@0x0", r"fifo: not a regular file \(a FIFO, a device or a socket\)"),
    ("/dev/zero@0x0", r"/dev/zero: not a regular file"),
])
def test_bad_arguments_say_what_to_give(tmp_path, spec, message):
    a, e = write(tmp_path, "a.bin", bytes(16)), write(tmp_path, "e.bin", b"")
    os.mkfifo(tmp_path / "fifo")
    text = spec.format(a=a, e=e, tmp=tmp_path)
    with pytest.raises(dump.DumpError, match=message) as exc:
        dump.load([text])
    assert str(exc.value).startswith(text + ":") and "\n" not in str(exc.value)


def test_overlapping_ranges_are_refused(tmp_path):
    a = write(tmp_path, "a.bin", bytes(16))
    b = write(tmp_path, "b.bin", bytes(4))
    with pytest.raises(dump.DumpError, match=r"0x2000000c\.\.0x20000010 overlaps a\.bin 0x20000000\.\.0x20000010"):
        dump.load([f"{a}@0x20000000", f"{b}@0x2000000c"])
    dump.load([f"{a}@0x20000000", f"{b}@0x20000010"])  # touching is not overlapping


def test_a_dump_must_cover_the_elfs_ram(tmp_path):
    a = write(tmp_path, "a.bin", bytes(16))
    ram = [(0x20000000, 0x20000010, ".data"), (0x20000010, 0x20000100, ".bss")]
    with pytest.raises(dump.DumpError,
                       match=r"covers none of fw\.elf's RAM sections \(\.data 0x20000000\.\.0x20000010"):
        open_dump([f"{a}@0x10000000"], None, TableSymbols(ram=ram, elf_path="/x/fw.elf"))
    found = open_dump([f"{a}@0x20000000"], None, TableSymbols(ram=ram, elf_path="/x/fw.elf"))
    assert found.warnings == ["the dump does not hold all of .bss 0x20000010..0x20000100: what lives there reads as "
                              "unreadable"]
    assert found.core.state == "halted" and found.core.register("pc") is None and found.core.frames() == []
    assert found.banner == ("reading a RAM dump, not a live target: a.bin 0x20000000..0x20000010 (16 B); registers "
                            "unknown (none given)")


GDB_REGISTERS = """\
r0             0x200006b4          536872628
r12            0x1f1               497
sp             0x20008de0          0x20008de0
lr             0xac7               2759
pc             0x16c               0x16c <arenascope_fault_hook>
xpsr           0x61000005          1627389957
fpscr          0x0                 0
"""


def test_gdb_info_registers_text(tmp_path):
    path = write(tmp_path, "regs.txt", "(gdb) info registers\n" + GDB_REGISTERS + "xPSR 0x61000005 x\n")
    regs = dumpcore.parse_registers(str(path))
    assert regs == {"r0": 0x200006B4, "r12": 0x1F1, "sp": 0x20008DE0, "lr": 0xAC7, "pc": 0x16C,
                    "xpsr": 0x61000005, "fpscr": 0}
    core = dumpcore.DumpCore(regs, TableSymbols(), str(path))
    assert core.register("xpsr") & 0x1FF == 5 and core.register("psp") is None  # QEMU gives no psp


def test_json_registers(tmp_path):
    path = write(tmp_path, "regs.json", json.dumps({"pc": "0x16c", "SP": 536907232, "r14": "2759"}))
    assert dumpcore.parse_registers(str(path)) == {"pc": 0x16C, "sp": 0x20008DE0, "lr": 2759}


@pytest.mark.parametrize("content,message", [
    ("{\"pc\": ", r"not valid JSON"),
    ("[1, 2]", r"not an object"),
    ("{\"pc\": \"pc\"}", r"JSON: pc is 'pc', not a number"),
    ("{\"pc\": true}", r"JSON: pc is True, not a number"),
    ("{\"pc\": 4294967296}", r"pc = 0x100000000 is not a 32-bit register value"),
    ("sp 0x20008de0 x\npc 364 <f>\n", r"line 2: pc's value '364' is not GDB's 0x\.\.\. form"),
    ("pc 0xzz\n", r"line 1: pc is '0xzz', not a number"),
    ("hello\n(gdb)\n", r"no registers found"),
    ("{\"r0\": 1}", r"no registers found \(none of sp, lr, pc, xpsr, msp, psp, ra, mcause"),
])
def test_bad_registers_files_say_where(tmp_path, content, message):
    path = write(tmp_path, "regs", content)
    with pytest.raises(dump.DumpError, match=message) as exc:
        dumpcore.parse_registers(str(path))
    assert str(exc.value).startswith(str(path)) and "\n" not in str(exc.value)
    with pytest.raises(dump.DumpError, match=r"--registers .*nothere: cannot read it"):
        dumpcore.parse_registers(str(tmp_path / "nothere"))


def test_a_read_partly_outside_the_dump_names_the_missing_bytes():
    """Issue 33 (a trial): a dump 16 B short said "cannot read 4096 B at X: outside the RAM dump"
    though X was inside it; the error names the bytes that are missing."""
    from arenascope_plugin.acquire.dump import DumpReader, Piece
    from arenascope_plugin.acquire.reader import MemoryReadError
    r = DumpReader([Piece("ram.bin", 0x20000000, 0x20000ff0)], [(0x20000000, bytes(0xff0))])
    with pytest.raises(MemoryReadError) as err:
        r.read(0x20000f00, 0x100)
    assert "0x20000ff0..0x20001000 (16 B) of it is outside the RAM dump (it holds 0x20000000..0x20000ff0)" in \
        str(err.value)
