"""Fault decoding without GDB: the bit combinations QEMU cannot produce, frame sizes and the
alignment pad, and fault records (valid, stale, corrupt). Bit numbers: ARMv7-M ARM B3.2.15-16."""
import struct

import pytest

from arenascope_plugin.decode import faultrecord


def record(**over):
    v = dict(magic=0x544C4641, version=1, size=100, boot_count=3, fault_count=1, fault_boot=3, flags=1,
             exc_return=0xFFFFFFF9, sp=0x20005500, cfsr=0x8200, hfsr=0, mmfar=0, bfar=0xF0000000, shcsr=0x70000,
             icsr=5, frame=[0, 1, 2, 3, 12, 0x1F3, 0x10C, 0x41000000], checksums_addr=0, checksum_count=0)
    v.update(over)
    data = bytearray(100)
    struct.pack_into("<IHHIIIIIIIIIIII", data, 0, v["magic"], v["version"], v["size"], v["boot_count"],
                     v["fault_count"], v["fault_boot"], v["flags"], v["exc_return"], v["sp"], v["cfsr"], v["hfsr"],
                     v["mmfar"], v["bfar"], v["shcsr"], v["icsr"])
    struct.pack_into("<8I", data, 56, *v["frame"])
    struct.pack_into("<IHH", data, 88, v["checksums_addr"], v["checksum_count"], 0)
    struct.pack_into("<I", data, 96, v.get("checksum", faultrecord.fnv1a(data[4:96])))
    return bytes(data)


def test_every_bit_has_a_name_and_the_groups_are_right():
    lines = faultrecord.cfsr_lines(0xFFFFFFFF)
    assert len(lines) == len(faultrecord.CFSR_BITS) == 19
    assert lines[0].startswith("CFSR.MMFSR.IACCVIOL (bit 0)")
    assert any(l.startswith("CFSR.BFSR.LSPERR (bit 13)") for l in lines)
    assert lines[-1].startswith("CFSR.UFSR.DIVBYZERO (bit 25)")
    assert [l.split(" ")[0] for l in faultrecord.hfsr_lines(0xC0000002)] == ["HFSR.VECTTBL", "HFSR.FORCED", "HFSR.DEBUGEVT"]


def test_imprecise_bus_error_has_no_bfar_and_is_explained():
    f = faultrecord.from_record(faultrecord.decode_record(record(cfsr=1 << 10, bfar=0x12345678), 0x20000000))
    assert f.bfar is None  # BFARVALID clear: BFAR is not reported
    assert any("imprecise bus error" in c and "BFAR is not valid" in c for c in faultrecord.cause_lines(f))


def test_lazy_fp_stacking_error_and_extended_frame_with_pad():
    rec = faultrecord.decode_record(record(cfsr=1 << 13, exc_return=0xFFFFFFE9, flags=1 | 4 | 8,
                                     frame=[0, 0, 0, 0, 0, 0x101, 0x200, 1 << 9 | 1 << 24]), 0x20000000)
    f = faultrecord.from_record(rec)
    assert faultrecord.cfsr_lines(f.cfsr) == ["CFSR.BFSR.LSPERR (bit 13): bus fault during lazy floating-point state "
                                        "preservation"]
    er = faultrecord.ExcReturn(0xFFFFFFE9)
    assert er.extended and not er.psp and er.thread_mode
    assert f.pre_fault_sp == 0x20005500 + 104 + 4  # extended frame, plus the 8-byte alignment pad (xPSR bit 9)
    assert f.lazy_fp and "lazy stacking pending" in f.frame_note
    basic = faultrecord.from_record(faultrecord.decode_record(record(frame=[0] * 7 + [0x01000000]), 0))
    assert basic.pre_fault_sp == 0x20005500 + 32


def test_exc_return_values():
    assert faultrecord.ExcReturn(0xFFFFFFF1).describe().startswith("0xfffffff1: returns to handler mode, frame on the main")
    assert "process (PSP)" in faultrecord.ExcReturn(0xFFFFFFFD).describe()
    assert not faultrecord.ExcReturn(0x000001F3).valid


def test_stacking_failure_and_nested_faults():
    f = faultrecord.from_record(faultrecord.decode_record(record(cfsr=1 << 4, flags=16), 0))
    assert f.frame is None and "not stacked" in f.frame_note
    causes = faultrecord.cause_lines(f)
    assert any("could not be stacked" in c for c in causes)
    assert any("first fault's" in c for c in causes)


def test_records_refused_or_read():
    with pytest.raises(faultrecord.RecordError, match="no fault record"):
        faultrecord.decode_record(record(magic=0), 0x20000000)
    with pytest.raises(faultrecord.RecordError, match="checksum mismatch"):
        faultrecord.decode_record(record(checksum=1), 0x20000000)
    with pytest.raises(faultrecord.RecordError, match="version 2"):
        faultrecord.decode_record(record(version=2), 0x20000000)
    rec = faultrecord.decode_record(record(boot_count=4, fault_boot=3), 0)
    assert rec.fault_boot < rec.boot_count  # a fault from before the last reset
    f = faultrecord.from_record(rec)
    assert f.exception == "BusFault" and f.bfar == 0xF0000000 and f.frame[6] == 0x10C
