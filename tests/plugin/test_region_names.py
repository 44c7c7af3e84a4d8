"""Region names from the ELF (ARENASCOPE_REGION_NAMES, target_agent/include/arenascope/region_names.h;
the plugin's decode/regionnames.py): the macro compiled by real compilers into a real ELF, the
section read back with pyelftools, and hostile section bytes that must give clear text, never a
crash. Expected names are the C source's strings, written here."""
import shutil
import struct
import subprocess

import pytest

from arenascope_plugin.acquire import elfinfo
from arenascope_plugin.decode import regionnames
from arenascope_plugin.decode.descriptor import Arena, Band, Region
from conftest import ROOT

INCLUDE = ROOT / "target_agent" / "include"
SOURCE = r'''
#include "arenascope/agent.h"
#include "arenascope/region_names.h"
ARENASCOPE_REGION_NAMES(0, ARENASCOPE_KIND_METADATA, "mfcc_frames", "", "dma \"pool\", 2");
ARENASCOPE_REGION_NAMES(1, 3u, "audio_ring");
int main(void) { return 0; }
'''
EXPECTED = {(0, "metadata", 0): "mfcc_frames", (0, "metadata", 2): 'dma "pool", 2', (1, "persistent", 0): "audio_ring"}


def _compile(tmp_path, compiler, flags):
    src = tmp_path / "names.c"
    src.write_text(SOURCE)
    elf = tmp_path / f"names-{compiler}.elf"
    subprocess.run([compiler, *flags, "-Wall", "-Wextra", "-Werror", "-pedantic", "-Os", f"-I{INCLUDE}",
                    "-ffunction-sections", "-fdata-sections", "-Wl,--gc-sections", str(src), "-o", str(elf)],
                   check=True, capture_output=True, timeout=120)
    return elf


@pytest.mark.parametrize("compiler,flags", [
    ("arm-none-eabi-gcc", ["-std=c99", "-mcpu=cortex-m4", "-mthumb", "--specs=nosys.specs"]),
    ("gcc", ["-std=c99"]), ("g++", ["-x", "c++", "-std=c++11"])])
def test_the_macro_puts_the_names_in_a_section_the_firmware_does_not_load(tmp_path, compiler, flags):
    if not shutil.which(compiler):
        pytest.skip(f"{compiler} missing (bash tools/setup-deps.sh)")
    elf = _compile(tmp_path, compiler, flags)
    data, size, why = elfinfo.section_bytes(str(elf), regionnames.SECTION, regionnames.SECTION_CAP)
    assert why == "" and size == len(data) > 0
    names, warnings = regionnames.parse(data, size)
    assert names == EXPECTED and warnings == []
    # No target bytes: the section is not allocated (readelf's flags column is empty: no A).
    readelf = shutil.which("arm-none-eabi-readelf") or shutil.which("readelf")
    table = subprocess.run([readelf, "-SW", str(elf)], capture_output=True, text=True, check=True).stdout
    line = next(x for x in table.splitlines() if regionnames.SECTION in x)
    assert "PROGBITS" in line and " A" not in line.split("PROGBITS")[1], line


def record(arena, kind, *names, length=None):
    """A record as docs/agent-abi.md "Region names" lays it out (length: a false one to claim)."""
    body = arena + b"\0" + kind + b"\0" + b"".join(n + b"\0" for n in names)
    return b"ASN1" + struct.pack("<I", len(body) if length is None else length) + body


def test_non_utf8_control_characters_and_long_names_come_out_as_clear_bounded_text():
    names, warnings = regionnames.parse(record(b"0", b"4", b"caf\xc3\xa9\xff\xfe", b"line\nbreak", b"x" * 100) +
                                        record(b"1", b"4", b"\xff\xffASN1"))
    assert names[(0, "metadata", 0)] == "caf\u00e9\\xff\\xfe"
    assert names[(1, "metadata", 0)] == "\\xff\\xffASN1"  # any byte but NUL: the length ends a record
    assert names[(0, "metadata", 1)] == "line\\nbreak"
    assert names[(0, "metadata", 2)] == "x" * 47 + "..."
    assert warnings == ["ELF section .arenascope.region_names: the name of arena 0 metadata id 2 is 100 bytes: "
                        "shown cut to 47"]


def test_a_10_mb_unterminated_name_is_cut_and_said():
    data = record(b"0", b"4", b"ok") + record(b"0", b"4", b"y" * (10 * 1024 * 1024))[:-1]  # no NUL
    names, warnings = regionnames.parse(data[:regionnames.SECTION_CAP], len(data))
    assert names == {(0, "metadata", 0): "y" * 47 + "..."}  # the second record's id 0 wins, cut
    assert any(w.endswith(f"is {len(data)} bytes: only its first {regionnames.SECTION_CAP} are read") for w in warnings)
    assert any("record 2 (10485765 bytes) is cut short or not terminated" in w for w in warnings)
    assert any("is named twice ('ok', then" in w for w in warnings)


@pytest.mark.parametrize("data,needle", [
    (b"\x00garbage", "no record starts at byte 0"),
    (record(b"zero", b"4", b"a"), "arena 'zero' and kind '4' are not an arena index"),
    (record(b"0", b"9", b"a"), "and kind '9' are not"),
    (b"ASN1" + struct.pack("<I", 2) + b"0\0", "record 1 has no arena index and kind"),
    (b"ASN1\0\0", "no record starts at byte 0 (expected \"ASN1\" and a length)"),
])
def test_bad_records_are_skipped_with_one_line(data, needle):
    names, warnings = regionnames.parse(data)
    assert names == {}
    assert any(needle in w for w in warnings), warnings
    assert all("\n" not in w for w in warnings)


def test_a_record_claiming_more_bytes_than_there_are_uses_what_is_there():
    names, warnings = regionnames.parse(record(b"0", b"4", b"a", length=0xFFFFFFFF))
    assert names == {(0, "metadata", 0): "a"}
    assert warnings == ["ELF section .arenascope.region_names: record 1 (4294967295 bytes) is cut short or not "
                        "terminated: its names are used as far as they go"]


def test_apply_names_by_arena_kind_and_id_and_wins_over_a_found_name():
    band = Band(0, 0, 0, 0)
    regions = [Region(0, 0, 64, 0, "metadata", 0, -1, -1), Region(1, 64, 64, 0, "tensor", 0, 0, 1, name="input"),
               Region(2, 128, 64, 2, "metadata", 0, -1, -1, name="from model")]
    arena = Arena(0, 0x20000000, 0, 0, 1024, 0, 0, 1024, 0, band, 16, 3, 3, 0, regions)
    assert regionnames.apply([arena], EXPECTED) == 2
    assert [r.name for r in regions] == ["mfcc_frames", "input", 'dma "pool", 2']


def test_each_problem_is_its_own_warning_key_so_a_stop_says_them_all():
    """The front ends say a warning key once a stop (gdb/framework.say_warning): two problems in
    the section must be two keys, or the second is never said."""
    from arenascope_plugin import pipeline

    data = record(b"0", b"4", b"x" * 100) + record(b"0", b"9", b"a")  # a cut name, then a bad kind
    band = Band(0, 0, 0, 0)
    arena = Arena(0, 0x20000000, 0, 0, 1024, 0, 0, 1024, 0, band, 16, 0, 0, 0, [])
    said = []

    class Symbols:
        def section_bytes(self, _name, _cap):
            return data, len(data), None

    class Ctx:
        symbols, desc = Symbols(), type("Desc", (), {"arenas": [arena]})()

        def warn(self, key, text):
            said.append((key, text))

    pipeline._names_from_elf(Ctx())  # pylint: disable=protected-access
    assert len(said) == 2 and len({key for key, _ in said}) == 2, said
    assert "is 100 bytes: shown cut to 47" in said[0][1] and "kind '9' are not" in said[1][1], said
