"""TFLM without debug information (issue 35, item 4): the revision profile's measured layouts
(decode/tflm_layouts.py, written by tools/measure_tflm_layouts.py from real TFLM builds with -g)
stand in for the classes a TFLM library built without -g leaves undescribed, once everything the
firmware's DWARF still describes agrees with them; otherwise the plugin refuses, saying why.

The firmware here is the TFLM stand-in (NOT TensorFlow Lite Micro: examples/tflm_standin) built
twice by the build: with -g (tflm_standin_fw.elf) and with its TFLM part compiled -g0 and the
application with -g (tflm_standin_nodebug_fw.elf), which leaves exactly what a prebuilt TFLM
leaves: the MicroInterpreter, TfLiteTensor, TfLiteNode, TfLiteEvalTensor described, the classes
with vtables only declared. The expected values come from the -g build's own DWARF."""
import ast
import importlib.util
import os
import pathlib

import pytest

from arenascope_plugin.acquire.elfsymbols import ElfSymbols
from arenascope_plugin.decode import tflm, tflm_layouts
from arenascope_plugin.decode import tflm_profile as P
from arenascope_plugin.errors import TargetError

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(os.environ.get("ARENASCOPE_BUILD_DIR", ROOT / "build"))
STANDIN = BUILD / "firmware" / "tflm_standin"
WITH_G, NODEBUG = STANDIN / "tflm_standin_fw.elf", STANDIN / "tflm_standin_nodebug_fw.elf"
needs_elfs = pytest.mark.skipif(not (WITH_G.exists() and NODEBUG.exists()),
                                reason=f"{NODEBUG} not built (bash tools/build.sh)")


def tool():
    spec = importlib.util.spec_from_file_location("measure_tflm_layouts", ROOT / "tools" / "measure_tflm_layouts.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_era_has_a_measured_arm_layout_keyed_by_role_and_member_key():
    """Each era was measured on a real Cortex-M build, and an entry holds only the profile's roles
    and member keys (never TFLM's names, which vary by era) with every size the walk needs."""
    roles = {*P.REQUIRED, *P.OPTIONAL, *P.SIZED, *P.SIZED_IF_PRESENT, *P.VIRTUAL}
    keys = {r: set(P.REQUIRED.get(r, [])) | set(P.OPTIONAL.get(r, [])) for r in roles}
    assert {(m["era"], m["abi"]) for m in tflm_layouts.MEASURED} >= {(e.id, "arm-eabi") for e in P.ERAS}
    for m in tflm_layouts.MEASURED:
        era = P.BY_ID[m["era"]]
        assert set(m["sizes"]) >= {r for r in P.SIZED if era.cls(r)}, m["era"]
        for table in ("offsets", "member_sizes", "optional"):
            for role, members in m[table].items():
                assert role in roles and set(members) <= keys[role], (m["era"], table, role)
        assert set(m["offsets"]) == set(P.REQUIRED), m["era"]
        assert set(m["vtables"]) <= set(P.VIRTUAL) and P.GRAPH in m["vtables"], m["era"]
    # the module is written by the tool, whole: it parses to the one assignment
    tree = ast.parse((ROOT / "gdbplugin" / "arenascope_plugin" / "decode" / "tflm_layouts.py").read_text())
    assert [type(n).__name__ for n in tree.body] == ["Expr", "Assign"]


def test_the_measured_2026_08_layout_is_tflm_90b983c2s():
    """Figures of real TFLM 90b983c2 on the Cortex-M4 (TFLM-INTERNALS.md, "Measured layouts"; the
    stand-in copies them): the objects the tail holds, and where the walk's pointers sit."""
    m = P.measured(P.BY_ID["2026-08"], "arm-eabi")
    assert {r: m["sizes"][r] for r in (P.INTERPRETER, P.MICRO_ALLOCATOR, P.ARENA_ALLOCATOR, P.GREEDY_PLANNER,
                                       P.EVAL_TENSOR, P.NODE_AND_REGISTRATION, P.TFLITE_TENSOR)} == \
        {P.INTERPRETER: 208, P.MICRO_ALLOCATOR: 36, P.ARENA_ALLOCATOR: 36, P.GREEDY_PLANNER: 44, P.EVAL_TENSOR: 12,
         P.NODE_AND_REGISTRATION: 32, P.TFLITE_TENSOR: 32}
    assert m["offsets"][P.ARENA_ALLOCATOR] == {"buffer_head_": 8, "buffer_tail_": 12, "head_": 16, "tail_": 20,
                                               "temp_": 24}
    assert m["bases"] == (0, 4)  # SingleArenaBufferAllocator's two interfaces, a vtable pointer each
    assert P.measured(P.BY_ID["2026-08"], "xtensa") is None


def test_the_measured_rv32_layout_differs_from_arms_only_by_4_byte_enums():
    """Real TFLM 90b983c2 built for rv32imac/ilp32 (docs/integrating-tflm.md, "TFLM without debug
    information"): the same roles as the Cortex-M4's, and the same figures but where an enum is a
    member: TfLiteTensor 40 B (32), TfLiteEvalTensor.type 4 B (1), and the MicroInterpreter's
    TfLiteStatus initialization_status_, 4 B (1), which moves the members after it by 4."""
    arm, rv = (P.measured(P.BY_ID["2026-08"], abi) for abi in ("arm-eabi", "riscv32-ilp32"))
    for table in ("offsets", "member_sizes", "optional", "sizes", "vtables"):
        assert set(rv[table]) == set(arm[table]), table
    assert rv["sizes"][P.INTERPRETER] == 212 and rv["sizes"][P.TFLITE_TENSOR] == 40
    assert rv["member_sizes"][P.EVAL_TENSOR]["type"] == 4 and rv["optional"][P.INTERPRETER] == \
        {"initialization_status_": (152, 4)}
    moved = {k: v + 4 for k, v in arm["offsets"][P.INTERPRETER].items() if v > 149}
    assert rv["offsets"][P.INTERPRETER] == {**arm["offsets"][P.INTERPRETER], **moved}
    differ = {(t, r) for t in ("offsets", "member_sizes", "optional", "sizes") for r in arm[t] if rv[t][r] != arm[t][r]}
    assert differ == {("offsets", P.INTERPRETER), ("member_sizes", P.EVAL_TENSOR), ("optional", P.INTERPRETER),
                      ("sizes", P.INTERPRETER), ("sizes", P.TFLITE_TENSOR)}, differ
    assert rv["vtables"] == arm["vtables"] and rv["bases"] == arm["bases"]


@needs_elfs
def test_the_nodebug_firmware_lacks_what_a_prebuilt_tflm_lacks():
    s = ElfSymbols(str(NODEBUG))
    era = P.NEWEST
    assert s.type_size(era.cls(P.INTERPRETER)) == 208
    assert [r for r in (P.MICRO_ALLOCATOR, P.ARENA_ALLOCATOR, P.GRAPH, P.GREEDY_PLANNER, P.SUBGRAPH_ALLOCATIONS,
                        P.NODE_AND_REGISTRATION) if s.type_size(era.cls(r)) is not None] == []
    assert s.abi() == "arm-eabi"


@needs_elfs
def test_the_stand_ins_vtables_are_not_tflms_so_the_measured_layout_is_refused():
    """The stand-in's classes have fewer virtual functions than TFLM's: its vtables are smaller
    than the measured ones, so the layout cannot be confirmed and nothing is read by it."""
    vt = ElfSymbols(str(WITH_G)).vtables([P.NEWEST.cls(P.MICRO_ALLOCATOR)])
    stand_in = vt[P.NEWEST.cls(P.MICRO_ALLOCATOR)][1]
    measured = P.measured(P.NEWEST, "arm-eabi")["vtables"][P.MICRO_ALLOCATOR]
    assert stand_in != measured
    with pytest.raises(TargetError) as e:
        tflm.layout(ElfSymbols(str(NODEBUG)))
    text = str(e.value)
    assert "TFLM built without -g" in text and "Rebuild TFLM with -g" in text, text
    assert f"vtable for {P.NEWEST.cls(P.MICRO_ALLOCATOR)} is {stand_in} B, measured {measured} B" in text, text


@needs_elfs
def test_a_layout_measured_on_the_same_build_with_g_reads_the_nodebug_build_as_dwarf_does(monkeypatch):
    """Measured by the tool on the -g build, the layout fills in what the -g0 build does not
    describe: the same Layout as DWARF gives, said to come from the measurement."""
    entry = tool().measure(str(WITH_G), "the stand-in with -g")
    monkeypatch.setattr(tflm_layouts, "MEASURED", [entry])
    monkeypatch.setattr(P, "MEASURED", [entry])
    dwarf, measured = tflm.layout(ElfSymbols(str(WITH_G))), tflm.layout(ElfSymbols(str(NODEBUG)))
    assert not dwarf.measured and measured.measured == "the stand-in with -g (arm-eabi)"
    for f in ("offsets", "sizes", "member_sizes", "optional", "saba_nonpersistent_base", "saba_persistent_base"):
        assert getattr(measured, f) == getattr(dwarf, f), f
    assert measured.era is dwarf.era is P.NEWEST
    assert set(measured.undescribed) == {P.NEWEST.cls(r) for r in (P.GRAPH, P.MICRO_ALLOCATOR, P.ARENA_ALLOCATOR,
                                                                   P.SUBGRAPH_ALLOCATIONS, P.NODE_AND_REGISTRATION)}
    assert measured.confirmed > 10
    doc = tflm.layout_json(measured)
    assert doc["id"] == "2026-08" and doc["source"]["from"] == "measured", doc
    assert tflm.layout_json(dwarf)["source"] == {"from": "debug-information"}


@needs_elfs
def test_a_measured_layout_the_interpreter_contradicts_is_refused(monkeypatch):
    """One member of the MicroInterpreter moved (a TFLM between the measured commits): refused,
    naming the member, where it is and where the measurement has it."""
    entry = tool().measure(str(WITH_G), "the stand-in with -g")
    real = entry["offsets"][P.INTERPRETER]["allocator_"]
    entry["offsets"][P.INTERPRETER]["allocator_"] = real + 4
    monkeypatch.setattr(P, "MEASURED", [entry])
    with pytest.raises(TargetError) as e:
        tflm.layout(ElfSymbols(str(NODEBUG)))
    assert f"{P.NEWEST.cls(P.INTERPRETER)}::allocator_ is at +{real}, measured +{real + 4}" in str(e.value)


@needs_elfs
def test_no_measurement_for_the_abi_is_refused_naming_what_is_measured(monkeypatch):
    monkeypatch.setattr(P, "MEASURED", [dict(m, abi="riscv32-ilp32") for m in tflm_layouts.MEASURED])
    with pytest.raises(TargetError) as e:
        tflm.layout(ElfSymbols(str(NODEBUG)))
    assert "2026-08: not measured on arm-eabi" in str(e.value) and "2026-08 on riscv32-ilp32" in str(e.value)
