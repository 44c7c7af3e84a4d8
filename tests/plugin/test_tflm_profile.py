"""The TFLM revision profile (decode/tflm_profile.py, issue 34): one table names TFLM's classes and
the members whose names changed, era by era; every other module reads TFLM's objects by role. The
eras are told apart by what real TFLM ELFs hold: class and member names as `ptype` and `nm` print
them for upstream 90b983c2, 58aa9833f, 547f8aeab and 5b3670d82 built for a Cortex-M4 with -g
(docs/integrating-tflm.md, "Every TFLM era"). Read from the sources with ast (no import runs)."""
import ast
import pathlib
import re

import pytest

from arenascope_plugin.decode import tflm_profile as P

PKG = pathlib.Path(__file__).resolve().parents[2] / "gdbplugin" / "arenascope_plugin"
PROFILE = PKG / "decode" / "tflm_profile.py"


def code_strings(path):
    """(line, text) of every string constant of a module that is not a docstring (comments and
    docstrings may cite TFLM's sources; what the code says or looks up may not name a class)."""
    tree = ast.parse(path.read_text(), str(path))
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_no_module_but_the_profile_names_a_class_or_member_that_varies_across_eras():
    varying = P.names_that_vary()
    # What real ELFs of the older eras hold that today's does not, and the renamed member: the
    # profile must know them as varying (else this test would pass on an empty set).
    assert {"MicroGraph", "MicroInterpreterGraph", "SimpleMemoryAllocator", "SingleArenaBufferAllocator",
            "memory_allocator_", "non_persistent_buffer_allocator_", "error_reporter_"} <= varying
    word = re.compile(r"\b(" + "|".join(sorted(varying, key=len, reverse=True)) + r")\b")
    # a class-like name the profile does not know (a new era's class written into a module)
    qualified = re.compile(r"tflite::([A-Z]\w*(?:Allocator|Graph|Planner|Interpreter|Allocations|Registration|"
                           r"Handle))\b")
    stable = P.stable_classes()
    found = []
    for path in sorted(PKG.rglob("*.py")):
        if path == PROFILE:
            continue
        for line, text in code_strings(path):
            found += [f"{path.relative_to(PKG)}:{line}: {m}" for m in word.findall(text)]
            found += [f"{path.relative_to(PKG)}:{line}: tflite::{m}" for m in qualified.findall(text)
                      if m not in stable and not text.startswith(f"tflite::{m}::")]
            found += [f"{path.relative_to(PKG)}:{line}: {m}" for m in re.findall(r"_ZTVN6tflite\w*", text)]
    assert not found, "TFLM names that vary by era, outside decode/tflm_profile.py:\n" + "\n".join(found)


def test_every_member_key_the_code_reads_is_declared_in_the_profile():
    """lay.off(ROLE, KEY) / lay.opt(ROLE, KEY) with a literal key: the key is one the profile
    declares (REQUIRED / OPTIONAL), so every era resolves it to its own member name."""
    keys = {k for table in (P.REQUIRED, P.OPTIONAL) for ks in table.values() for k in ks}
    bad = []
    for path in sorted(PKG.rglob("*.py")):
        for n in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in ("off", "opt") \
                    and len(n.args) == 2 and isinstance(n.args[1], ast.Constant) and n.args[1].value not in keys:
                bad.append(f"{path.relative_to(PKG)}:{n.lineno}: {n.args[1].value}")
    assert not bad, bad
    assert len(keys) >= 25


def test_vtable_symbols_follow_the_itanium_abi():
    # nm of real TFLM ELFs (58aa9833f, 5b3670d82, 90b983c2)
    assert P.vtable_symbol("tflite::MicroGraph") == "_ZTVN6tflite10MicroGraphE"
    assert P.vtable_symbol("tflite::MicroInterpreterGraph") == "_ZTVN6tflite21MicroInterpreterGraphE"
    assert P.vtable_symbol("tflite::SimpleMemoryAllocator") == "_ZTVN6tflite21SimpleMemoryAllocatorE"
    assert P.vtable_symbol("tflite::MicroAllocator") == "_ZTVN6tflite14MicroAllocatorE"


# What each real ELF's DWARF and symbol table hold (ptype, nm; /work/tflm-old/NOTES.md's logs):
# (graph vtable, arena allocator class, the MicroAllocator's pointer to it).
REAL = {
    "2026-08": ("_ZTVN6tflite21MicroInterpreterGraphE", "tflite::SingleArenaBufferAllocator",
                "non_persistent_buffer_allocator_"),
    "2023-02": ("_ZTVN6tflite10MicroGraphE", "tflite::SingleArenaBufferAllocator", "non_persistent_buffer_allocator_"),
    "2022-09": ("_ZTVN6tflite10MicroGraphE", "tflite::SingleArenaBufferAllocator", "non_persistent_buffer_allocator_"),
    "2022-07": ("_ZTVN6tflite10MicroGraphE", "tflite::SimpleMemoryAllocator", "non_persistent_buffer_allocator_"),
    "2022-03": ("_ZTVN6tflite10MicroGraphE", "tflite::SimpleMemoryAllocator", "memory_allocator_"),
}


def firmware(vtables, types, members):
    return (lambda s: s in vtables), (lambda c: c in types), (lambda c, m: (c, m) in members)


@pytest.mark.parametrize("era_id", sorted(REAL))
def test_each_real_era_is_told_apart(era_id):
    vtable, arena_allocator, pointer = REAL[era_id]
    # today's ELFs also hold the abstract MicroGraph's vtable: the newest era is tried first
    vtables = {vtable, "_ZTVN6tflite14MicroAllocatorE"} | ({"_ZTVN6tflite10MicroGraphE"} if era_id == "2026-08"
                                                            else set())
    types = {"tflite::MicroAllocator", arena_allocator, "tflite::MicroInterpreter"}
    members = {("tflite::MicroAllocator", pointer)}
    if era_id in ("2022-09", "2022-07", "2022-03"):   # ptype: error_reporter_ until 95761fcfd (2022-09-19)
        members.add((arena_allocator, "error_reporter_"))
    era, found = P.detect(*firmware(vtables, types, members))
    assert era is not None and era.id == era_id and not found
    assert era.cls(P.ARENA_ALLOCATOR) == arena_allocator
    assert era.member(P.MICRO_ALLOCATOR, P.NON_PERSISTENT_ALLOCATOR) == pointer
    assert P.BY_ID[era_id] is era


def test_a_layout_between_the_eras_is_not_supported_and_the_message_names_what_was_found():
    # A concrete MicroGraph with SingleArenaBufferAllocator but the pre-2022-04 single pointer:
    # no era has that.
    vtables = {"_ZTVN6tflite10MicroGraphE"}
    types = {"tflite::MicroAllocator", "tflite::SingleArenaBufferAllocator"}
    era, found = P.detect(*firmware(vtables, types, {("tflite::MicroAllocator", "memory_allocator_")}))
    assert era is None
    assert found == ["tflite::MicroAllocator", "tflite::MicroGraph", "tflite::SingleArenaBufferAllocator"]
    text = P.unsupported(found)
    assert text.startswith("this TFLM version is not supported: arenascope knows the layouts 2026-08 ")
    assert "this firmware has tflite::MicroAllocator, tflite::MicroGraph, tflite::SingleArenaBufferAllocator" in text


def test_the_eras_and_their_bounds():
    assert [e.id for e in P.ERAS] == ["2026-08", "2023-02", "2022-09", "2022-07", "2022-03"]
    assert P.BY_ID["2022-03"].member(P.MICRO_ALLOCATOR, P.PERSISTENT_ALLOCATOR) is None
    assert P.BY_ID["2022-03"].cls(P.NON_PERSISTENT_BASE) is None
    # every era's arena allocator has a vtable (nm: 'vtable for tflite::SimpleMemoryAllocator' in 5b3670d82)
    assert all(P.ARENA_ALLOCATOR in P.vtable_classes(e) for e in P.ERAS)
    assert P.BY_ID["2023-02"].checked.startswith("58aa9833f") and P.BY_ID["2022-07"].checked.startswith("547f8aeab")
    assert P.BY_ID["2022-03"].checked.startswith("5b3670d82") and P.NEWEST.checked.startswith("90b983c2")


ROOT = PKG.parents[1]


def planner_revisions():
    """(variable, id, commit) of every revision planner/src/revisions.cpp models, in the order it
    pushes them (newest first)."""
    text = (ROOT / "planner" / "src" / "revisions.cpp").read_text()
    defined = {v: (v, rid, commit) for v, rid, commit in
               re.findall(r'(\w+)\.id = "([^"]+)";\s*\1\.commit = "([0-9a-f]{40})";', text)}
    return [defined[v] for v in re.findall(r"r\.push_back\((\w+)\);", text)]


def test_the_plugins_eras_are_the_planners_revisions():
    """The plugin passes the era it detects as `arenascope-plan --tflm ID`: both parts name the same
    revisions, checked on the same commits (the planner's table, its schema's enum and, when it is
    built, what `--tflm list` prints)."""
    import json
    import subprocess
    revisions = [(rid, commit) for _var, rid, commit in planner_revisions()]
    assert [rid for rid, _ in revisions] == [e.id for e in P.ERAS]
    for (rid, commit), era in zip(revisions, P.ERAS, strict=True):
        assert commit.startswith(era.checked.split()[0]), (rid, commit, era.checked)
    schema = json.loads((ROOT / "docs" / "planner-schema.json").read_text())
    assert schema["properties"]["tflm"]["properties"]["revision"]["enum"] == [e.id for e in P.ERAS]
    tool = ROOT / "build" / "planner" / "arenascope-plan"
    if tool.exists():
        listed = [json.loads(line) for line in subprocess.run([str(tool), "--tflm", "list"], capture_output=True,
                                                               text=True, timeout=60, check=True).stdout.splitlines()]
        assert [(d["id"], d["commit"]) for d in listed] == revisions
