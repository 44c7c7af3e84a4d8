"""dwarflayout's member locations (the DWARF walk itself is checked against GDB's layout on a real TFLM
ELF in tests/integration/test_agentless_tflm.py, when one is named)."""
from types import SimpleNamespace

import pytest

from arenascope_plugin.acquire import dwarflayout


def die(value):
    return SimpleNamespace(attributes={"DW_AT_data_member_location": SimpleNamespace(value=value)})


def test_member_locations_as_constants_and_as_dwarf2_expressions():
    assert dwarflayout.member_location(die(108)) == 108
    assert dwarflayout.member_location(die([0x23, 0x6C])) == 108               # DW_OP_plus_uconst 108
    assert dwarflayout.member_location(die([0x23, 0xE5, 0x8E, 0x26])) == 624485  # ULEB128, DWARF spec's example
    assert dwarflayout.member_location(SimpleNamespace(attributes={})) == 0
    with pytest.raises(dwarflayout.LayoutError):
        dwarflayout.member_location(die([0x10, 0x01]))                           # DW_OP_constu: not a member offset


def test_a_typedef_struct_inside_a_namespace_is_found_by_its_qualified_name(tmp_path):
    """TFLM before 2022-10 declares `typedef struct {...} SubgraphAllocations;` inside namespace
    tflite (micro_allocator.h at 5b3670d82, 547f8aeab, 59b39f6cb); the standalone tool refused
    such firmware as built without -g. Compiled here with the host's g++ (its DWARF), both forms."""
    import shutil
    import subprocess
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("no g++")
    src = tmp_path / "t.cpp"
    src.write_text("namespace tflite {\n"
                   "typedef struct { void* node_and_registrations; void* tensors; } SubgraphAllocations;\n"
                   "struct ScratchBufferHandle { unsigned char* data; };\n}\n"
                   "typedef struct { int a; char b; } TfLiteEvalTensorLike;\n"
                   "tflite::SubgraphAllocations g_s; tflite::ScratchBufferHandle g_h; TfLiteEvalTensorLike g_e;\n"
                   "int main() { return 0; }\n")
    subprocess.run([gxx, "-g", "-O0", "-o", str(tmp_path / "t"), str(src)], check=True, timeout=120)
    types = dwarflayout.DwarfTypes(str(tmp_path / "t"))
    p = types.pointer
    assert types.size("tflite::SubgraphAllocations") == 2 * p
    assert types.members("tflite::SubgraphAllocations", ["node_and_registrations", "tensors"]) == \
        {"node_and_registrations": (0, p), "tensors": (p, p)}
    assert types.size("SubgraphAllocations") is None      # only by its qualified name
    assert types.size("tflite::ScratchBufferHandle") == p
    assert types.size("TfLiteEvalTensorLike") == 8
