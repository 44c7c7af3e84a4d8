"""One corrupt word of the agent's descriptor on the demo firmware (QEMU mps2-an386 +
gdb-multiarch): the field is named as corrupt with its address, the rules that rest on it are not
run (no PASS and no FAIL from them), everything else is still read, and the snapshot keeps
docs/snapshot-schema.json. The test writes the word through GDB's Python API (the plugin never
writes target memory); the expected addresses come from the ELF's DWARF through GDB's own
expressions (`&arenascope_descriptor.FIELD`), the allowed verdicts from docs/agent-abi.md."""
import json
import re

import jsonschema
import pytest

from harness import BAD_OUTPUT, FIRMWARE, ROOT, gdb_batch, qemu

PLUGIN = ROOT / "gdbplugin" / "arenascope.py"
SCHEMA = jsonschema.Draft202012Validator(json.loads((ROOT / "docs" / "snapshot-schema.json").read_text()))
pytestmark = pytest.mark.skipif(not FIRMWARE.exists(), reason=f"{FIRMWARE} not built")

DESC = "arenascope_descriptor"
TABLE = f"{DESC}.arena[0].regions_addr"
# (name, the lvalue the word is written at (GDB expression), bytes written, the field as named,
#  the rules that must say "not judged")
CORRUPTIONS = [
    ("canary-pattern-0", f"{DESC}.canary_pattern", "00000000", "canary_pattern 0x00000000",
     ("canary", "guard", "headroom")),
    ("paint-pattern-0", f"{DESC}.stack_paint_pattern", "00000000", "stack_paint_pattern 0x00000000", ("stack",)),
    ("arena-flags-ff", f"{DESC}.arena[0].flags", "ff", "arena 0 flags 0xff", ()),
    ("region-kind-99", f"((unsigned char *){TABLE})[3 * 16 + 10]", "63", "arena 0 region table", ("plan",)),
    ("table-zeroed", f"((unsigned char *){TABLE})[0]", "00" * 72 * 16, "arena 0 region table", ("plan",)),
]


def write(lvalue, hexbytes):
    return ("python gdb.selected_inferior().write_memory(int(gdb.parse_and_eval("
            f"'(unsigned long)&({lvalue})')), bytes.fromhex('{hexbytes}'))")


def address_of(lvalue):
    return f"python print('ADDR {lvalue} = %#x' % int(gdb.parse_and_eval('(unsigned long)&({lvalue})')))"


def checks_of(text):
    """{rule: (verdict, reason)} of the last `arena check` table in text."""
    return {m.group(2): (m.group(1), m.group(3)) for m in
            re.finditer(r"^  (PASS|WARN|FAIL)  (\S+)\s+(.*)$", text, re.M)}


def session(tmp_path, corruption, stop_steps):
    name, lvalue, hexbytes, _, _ = corruption
    snap = tmp_path / f"{name}.json"
    steps = [f"source {PLUGIN}", "set arena colour off", *stop_steps, address_of(lvalue), write(lvalue, hexbytes),
             "echo ===CHECK\\n", "arena check", "echo ===INFO\\n", "arena info", "echo ===FAULT\\n", "arena fault",
             f"arena snapshot {snap}"]
    with qemu() as (port, _):
        _, text = gdb_batch(FIRMWARE, steps, remote_port=port, timeout=180)
    assert not BAD_OUTPUT.search(text), text
    return text, json.loads(snap.read_text())


@pytest.mark.parametrize("corruption", CORRUPTIONS, ids=[c[0] for c in CORRUPTIONS])
def test_a_corrupt_field_is_named_and_its_rules_not_run(tmp_path, corruption):
    _, lvalue, _, field, rules = corruption
    text, snap = session(tmp_path, corruption, ["break demo_invoke_done if invokes == 1", "continue", "delete"])
    at = int(re.search(rf"ADDR {re.escape(lvalue)} = (0x[0-9a-f]+)", text).group(1), 16)
    check = checks_of(text[text.index("===CHECK"):text.index("===INFO")])
    verdict, reason = check["descriptor"]
    assert verdict == "FAIL" and field in reason, check
    width = "unsigned char" if "flags" in field or "table" in field else "unsigned int"  # the written field's
    # the writer is caught where the test wrote; in the zeroed table, at the first wrong byte: entry 0's
    # kind, +10 in the entry (docs/agent-abi.md)
    watched = at + 10 if corruption[0] == "table-zeroed" else at
    assert f"`watch -l *({width} *){watched:#x}`" in reason, reason
    if "table" not in field:
        assert f"{field} at {at:#x}" in reason, reason
    for rule in rules:
        assert check[rule][0] == "WARN" and check[rule][1].startswith("not judged"), (rule, check[rule])
    # the healthy firmware's other rules are still judged, and pass
    for rule in ("alignment", "bounds", "used") + (() if "headroom" in rules else ("headroom",)):
        assert check[rule][0] == "PASS", (rule, check[rule])
    info = text[text.index("===INFO"):text.index("===FAULT")]
    assert f"corrupt:                {field}" in info, info
    assert "no fault: the core is not in a fault handler" in text[text.index("===FAULT"):]
    errors = [e.message for e in SCHEMA.iter_errors(snap)]
    assert not errors, errors[:3]
    got = {c["rule"]: c["verdict"] for c in snap["checks"]}
    assert got["descriptor"] == "FAIL" and all(got[r] == "WARN" for r in rules), got
    if field == "arena 0 region table":
        assert snap["arenas"][0]["regions"] == []  # no kind99 and no zeroed region reaches the snapshot


def test_a_damaged_region_table_keeps_the_post_mortem(tmp_path):
    """Scenario 1 (the stack runs into the arena) at the agent's fault hook, then the table's
    address is pointed at peripheral space: the fault is still decoded and judged."""
    corruption = ("table-moved", TABLE, "000000f0", "arena 0 region table", ("plan",))
    text, snap = session(tmp_path, corruption, ["break demo_invoke_done if invokes == 1", "continue", "delete",
                                                "break arenascope_fault_hook", "set var demo_scenario = 1",
                                                "continue"])
    fault = text[text.index("===FAULT"):]
    assert "from the agent's fault record at " in fault, fault
    assert "VERDICT: the stack ran into the arena" in fault, fault
    # what the corrupt table keeps it from telling is said, not left out silently
    assert "the arenascope descriptor is corrupt (arena 0 region table): no region is known, so overwritten " \
        "tail regions" in " ".join(fault.split()), fault
    check = checks_of(text[text.index("===CHECK"):text.index("===INFO")])
    assert check["descriptor"][0] == "FAIL" and "0xf0000000" in check["descriptor"][1]
    assert "outside the RAM ranges" in check["descriptor"][1] and check["plan"][0] == "WARN"
    assert snap["fault"]["verdicts"] and not list(SCHEMA.iter_errors(snap))


def test_a_fault_with_a_corrupt_pattern_makes_no_claim_about_the_bands(tmp_path):
    """A BusFault (scenario 3) whose healthy verdict is "not the arena and not the stack": with the
    canary pattern corrupt the bands cannot say so, and the verdict says unknown, naming the field."""
    corruption = CORRUPTIONS[0]
    text, snap = session(tmp_path, corruption, ["break demo_invoke_done if invokes == 1", "continue", "delete",
                                                "break arenascope_fault_hook", "set var demo_scenario = 3",
                                                "continue"])
    fault = text[text.index("===FAULT"):]
    assert "BusFault: from the agent's fault record at " in fault, fault
    assert "VERDICT: unknown whether the arena or the stack did it: the descriptor's canary_pattern is " \
        "corrupt, so the checks resting on it could not tell. Look at " in " ".join(fault.split()), fault
    assert "not the arena and not the stack" not in fault
    assert [v["kind"] for v in snap["fault"]["verdicts"]] == ["unknown"]


def test_a_band_outside_declared_ram_is_never_read(tmp_path):
    """The guard band's bounds pointed at peripheral space (0x40000000, the mps2-an386's APB): the
    host does not scan it (a read there can have side effects), says so, and no `m` packet for it
    leaves GDB (GDB's own `set debug remote` log of the packets it sends)."""
    low = "00000040" + "00010040"  # low_addr 0x40000000, high_addr 0x40000100 (little-endian words)
    steps = [f"source {PLUGIN}", "set arena colour off", "break demo_invoke_done if invokes == 1", "continue",
             "delete", write(f"{DESC}.guard.low_addr", low), "set debug remote 1", "echo ===CHECK\\n",
             "arena check", "set debug remote 0"]
    with qemu() as (port, _):
        _, text = gdb_batch(FIRMWARE, steps, remote_port=port, timeout=180)
    assert "Traceback" not in text, text
    check = text[text.index("===CHECK"):]
    assert "the guard band 0x40000000-0x40000100 lies in no RAM the ELF or the target declares: not read" in check
    sent = re.findall(r"Sending packet: \$m([0-9a-f]+),([0-9a-f]+)", check)
    assert sent, check  # the log is there: the descriptor and the other bands were read
    assert not [a for a, _ in sent if 0x40000000 <= int(a, 16) < 0x40000100], sent
