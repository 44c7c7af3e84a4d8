"""`arena fault` on the demo firmware's fault scenarios (QEMU mps2-an386 + gdb-multiarch).
Expected bits: ARMv7-M ARM B3.2.15/16; expected source lines: arm-none-eabi-addr2line on the
ELF (independent of GDB); expected damaged regions: the ELF's own symbols."""
import re
import subprocess

import pytest

from harness import (
    FIRMWARE,
    PLANNER,
    ROOT,
    demo_output_overrun,
    demo_plan,
    elf_symbols,
    fault_register,
    gdb_batch,
    qemu,
)

PLUGIN = ROOT / "gdbplugin" / "arenascope.py"
PLAN = demo_plan() if PLANNER.exists() else None  # the demo's layout (examples/demo/demo_plan.h)
pytestmark = pytest.mark.skipif(not FIRMWARE.exists(), reason=f"{FIRMWARE} not built")


def fault_report(scenario, stop="arenascope_fault_hook"):
    with qemu() as (port, _):
        _, text = gdb_batch(FIRMWARE, [f"source {PLUGIN}", "set arena colour off",
                                       "break demo_invoke_done if invokes == 1", "continue", "delete",
                                       f"break {stop}", f"set var demo_scenario = {scenario}", "continue",
                                       "arena fault"], remote_port=port)
    assert "Traceback" not in text and "internal error" not in text, text
    return text[text.index("arena fault") if "arena fault:" in text else 0:]


def addr2line(pc):
    out = subprocess.run(["arm-none-eabi-addr2line", "-e", str(FIRMWARE), f"{pc:#x}"], capture_output=True,
                         text=True, check=True).stdout.strip()
    return out.split(" (discriminator")[0]


def stacked_pc(text):
    return int(re.search(r" pc (0x[0-9a-f]+) ", text).group(1), 16)


@pytest.mark.parametrize("scenario,exception,bits,verdict", [
    (3, "BusFault", ["CFSR.BFSR.PRECISERR (bit 9)", "CFSR.BFSR.BFARVALID (bit 15)", "BFAR  0xf0000000 (valid)"],
     "VERDICT: not the arena and not the stack"),
    (4, "HardFault", ["HFSR.FORCED (bit 30)", "CFSR.BFSR.PRECISERR (bit 9)", "note: reported as HardFault (FORCED)"],
     "VERDICT: not the arena and not the stack"),
    (5, "UsageFault", ["CFSR.UFSR.UNDEFINSTR (bit 16)"], "VERDICT: not the arena and not the stack"),
    (6, "UsageFault", ["CFSR.UFSR.DIVBYZERO (bit 25)"], "VERDICT: not the arena and not the stack"),
    (7, "UsageFault", ["CFSR.UFSR.INVSTATE (bit 17)", "cause: a call through a null function pointer (PC 0)",
                       "faulting PC: 0x0: a null pointer"], "VERDICT: not the arena and not the stack"),
])
def test_fault_scenarios_decode_bits_source_line_and_verdict(scenario, exception, bits, verdict):
    text = fault_report(scenario)
    assert f"{exception}: from the agent's fault record at " in text and "(this boot, fault 1)" in text, text
    for b in bits:
        assert b in text, (b, text)
    assert "EXC_RETURN 0xfffffff9: returns to thread mode, frame on the main (MSP) stack, basic frame (32 B)" in text
    pc = stacked_pc(text)
    if pc:
        assert re.search(rf"faulting PC: {pc:#x} in provoke \+ \d+ at {re.escape(addr2line(pc))}", text), text
    assert verdict in text


def test_stack_into_arena_names_the_overwritten_tail_regions():
    syms = elf_symbols(FIRMWARE)
    text = fault_report(1)
    assert "BusFault: from the agent's fault record" in text and "BFAR  0x5a5a5a58 (valid)" in text
    assert "VERDICT: the stack ran into the arena." in text
    assert f"Its paint is gone to the limit {syms['__StackLimit']:#x}" in text
    # The top of the tail (reached first) and the operator table (NodeAndRegistration[N], 32 B
    # each on a Cortex-M) are among the regions named.
    m = re.search(r"overwritten since allocation: (.*?)\. A stack", text)
    assert m, text
    offsets = [(int(a), int(b)) for a, b in re.findall(r"\+(\d+)\.\.\+(\d+)", m.group(1))]
    top = PLAN["tail"]["regions"][0]
    assert (top["offset"], top["offset"] + top["size"]) == (top["offset"], PLAN["arena"]["recommended_bytes"])
    assert (top["offset"], top["offset"] + top["size"]) in offsets
    ops = len(PLAN["subgraphs"][0]["operators"])
    table = next(t for t in PLAN["tail"]["regions"] if t["role"] == "node-and-registration")
    assert table["size"] == 32 * ops and (table["offset"], table["offset"] + table["size"]) in offsets
    # Named from the model the firmware publishes (arenascope_arena_set_model), through the planner.
    for t in (top, table):
        assert f"{t['what']} (+{t['offset']}..+{t['offset'] + t['size']})" in m.group(1), (t["what"], m.group(1))
    pc = stacked_pc(text)
    assert re.search(rf"faulting PC: {pc:#x} in demo_invoke \+ \d+ at {re.escape(addr2line(pc))}", text), text


def test_fault_from_the_core_when_halted_at_handler_entry():
    text = fault_report(3, stop="BusFault_Handler")   # the agent has not recorded it yet
    assert "BusFault: from core registers (halted in the handler)" in text, text
    assert "CFSR.BFSR.PRECISERR (bit 9)" in text and "BFAR  0xf0000000 (valid)" in text
    assert "EXC_RETURN 0xfffffff9" in text
    pc = stacked_pc(text)
    assert re.search(rf"faulting PC: {pc:#x} in provoke \+ \d+ at {re.escape(addr2line(pc))}", text), text


def test_no_fault_says_so():
    with qemu() as (port, _):
        _, text = gdb_batch(FIRMWARE, [f"source {PLUGIN}", "break demo_invoke_done if invokes == 1", "continue",
                                       "arena fault"], remote_port=port)
    assert "arena fault: no fault: the core is not in a fault handler, and the agent's record has no fault this " \
           "boot" in text, text


def test_fault_survives_a_reset_and_is_reported_from_the_record():
    with qemu() as (port, _):
        _, text = gdb_batch(FIRMWARE, [f"source {PLUGIN}", "set arena colour off",
                                       "break demo_invoke_done if invokes == 1", "continue",
                                       "set var demo_reset_after_fault = 1", "set var demo_scenario = 3",
                                       # faults, records, resets (AIRCR), boots again and stops after the
                                       # first inference of boot 2. Under load QEMU's gdbstub can report
                                       # spurious stops: one at the reset vector (continue past it, at most
                                       # 3 times), and one at this same breakpoint while GDB steps over it
                                       # (CI, once: invokes is still 1 there), hence the boot in the condition.
                                       "condition 1 invokes == 1 && arenascope_fault_record.boot_count == 2",
                                       "python exec(\"for _ in range(3):\\n    gdb.execute('continue')\\n"
                                       "    if gdb.selected_frame().name() == 'demo_invoke_done': break\")",
                                       "arena fault"], remote_port=port)
    assert "BusFault: from the agent's fault record at" in text, text
    assert "from boot 1 (this is boot 2: the target has reset since)" in text, text
    assert "CFSR.BFSR.PRECISERR (bit 9)" in text and "BFAR  0xf0000000 (valid)" in text
    assert "only the registers and the frame above are the fault's" in text


def test_snapshot_carries_the_fault_and_the_damaged_regions():
    import json
    import os
    import tempfile

    import jsonschema
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "s.json")
        with qemu() as (port, _):
            gdb_batch(FIRMWARE, [f"source {PLUGIN}", "break demo_invoke_done if invokes == 1", "continue", "delete",
                                 "break arenascope_fault_hook", "set var demo_scenario = 1", "continue",
                                 f"arena snapshot {path}"], remote_port=port)
        snap = json.load(open(path, encoding="utf-8"))
    jsonschema.validate(snap, json.loads((ROOT / "docs" / "snapshot-schema.json").read_text()))
    f = snap["fault"]
    assert f["exception"] == "BusFault" and fault_register(f, "BFAR") == 0x5A5A5A58
    assert fault_register(f, "CFSR") == 0x8200
    assert f["arch"] == "cortex-m" and f["fault_address"] == {"register": "BFAR", "value": 0x5A5A5A58}
    assert [v["kind"] for v in f["verdicts"]] == ["stack-into-arena"] and not f["stale"]
    assert f["verdicts"][0]["headline"].startswith("VERDICT: the stack ran into the arena.")
    assert any(n.startswith("SP at the fault") for n in f["notes"]), f["notes"]
    regions = snap["arenas"][0]["regions"]
    damaged = [regions[i] for i in f["damaged_regions"]]
    assert damaged and all("immutable" in r["flags"] for r in damaged)
    assert max(r["offset"] + r["size_bytes"] for r in damaged) == snap["arenas"][0]["size_bytes"]  # from the top


def test_an_operator_writing_past_its_tensor_is_named_even_without_a_fault():
    with qemu() as (port, _):
        _, text = gdb_batch(FIRMWARE, [f"source {PLUGIN}", "break demo_invoke_done if invokes == 1", "continue",
                                       "delete", "set var demo_scenario = 2", "break demo_invoke_done if invokes == 2",
                                       "continue", "arena fault"], remote_port=port)
    assert "arena fault: no fault: the core is not in a fault handler" in text
    out = demo_output_overrun(PLAN)
    head = PLAN["plans"]["tflm-greedy"]["head_bytes"]  # the overrun: temp (64 B above it), then the free band
    assert (f"VERDICT: something wrote past its buffer in the arena: arena: free band overwritten at "
            f"+{head + 64}..+{head + 128}") in text, text
    assert f"the nearest region below is {out['name']} at +{out['offset']}..+{head}" in text


def test_inside_the_handler_the_frame_is_found_by_unwinding_the_handler():
    """After the handler's first instruction the handler has pushed, so SP is not the frame's
    address: the frame is where the ELF's call frame information says the handler's caller (the
    exception entry) left SP. Independently: $sp at BusFault_Handler's first instruction, where
    nothing is pushed yet, is the frame's address (ARMv7-M ARM B1.5.6)."""
    with qemu() as (port, _):
        probe, text = gdb_batch(FIRMWARE, [f"source {PLUGIN}", "break demo_invoke_done if invokes == 1", "continue",
                                           "delete", "break BusFault_Handler", "set var demo_scenario = 3",
                                           "continue", "echo SP-AT-ENTRY\n", "p/x $sp", "p/x $lr", "delete",
                                           "break arenascope_port_fault_c", "continue", "stepi", "stepi",
                                           "p/x $lr", "arena fault"], remote_port=port)
    values = re.findall(r"^\$\d+ = (0x[0-9a-f]+)$", text[text.index("SP-AT-ENTRY"):], re.M)
    sp, exc_return, lr_later = (int(v, 16) for v in values[:3])
    assert exc_return >> 28 == 0xF and lr_later == exc_return, text  # the agent's C handler keeps it in LR
    report = text[text.index("BusFault: from"):]
    assert f"stacked frame at {sp:#x}:" in report, report
    assert f"EXC_RETURN {exc_return:#010x}: returns to thread mode" in report, report
    assert (f"EXC_RETURN {exc_return:#x} and the frame's address {sp:#x} are where the handler saved them, found "
            "by unwinding its frames with the ELF's call frame information") in report, report
    assert "faulting PC: " in report and " in provoke + " in report, report


def test_lr_points_at_the_call_and_a_null_call_blames_the_caller():
    text = fault_report(7)
    lr = int(re.search(r" lr (0x[0-9a-f]+) ", text).group(1), 16)
    call_site = addr2line((lr & ~1) - 1)
    assert f"(return address: the call is at {call_site}" in text, text
    assert "VERDICT: not the arena and not the stack" in text and "the cause is the code that called through the " \
           "pointer: see LR" in text


def test_a_rejected_record_is_said():
    with qemu() as (port, _):
        _, text = gdb_batch(FIRMWARE, [f"source {PLUGIN}", "break demo_invoke_done if invokes == 1", "continue",
                                       "delete", "break arenascope_fault_hook", "set var demo_scenario = 3",
                                       "continue", "set var arenascope_fault_record.cfsr = 5", "arena fault"],
                            remote_port=port)
    assert "the agent's record was not used: fault record at" in text and "checksum mismatch" in text, text


def test_a_tail_overwritten_while_the_stack_stayed_in_bounds_is_not_blamed_on_the_stack(tmp_path):
    """A wild write into an immutable tail region (here by the test, through GDB) with the stack's
    paint and the guard band intact: the verdict names the region and says it was not the stack."""
    import json
    snap = tmp_path / "s.json"
    script = (f"import json, struct; s = json.load(open('{snap}')); a = s['arenas'][0]; "
              "r = [r for r in a['regions'] if 'immutable' in r['flags']][1]; "
              "gdb.selected_inferior().write_memory(r['address'], struct.pack('<I', 0x12345678)); "
              "print('SMASHED {} AT {:#x}'.format(r['label'], r['address']))")
    with qemu() as (port, _):
        _, text = gdb_batch(FIRMWARE, [f"source {PLUGIN}", "set arena colour off",
                                       "break demo_invoke_done if invokes == 2", "continue",
                                       f"arena snapshot {snap}", f"python {script}", "arena fault"], remote_port=port)
    label, addr = text.split("SMASHED ")[1].split("\n")[0].rsplit(" AT ", 1)
    regions = json.loads(snap.read_text())["arenas"][0]["regions"]
    assert "VERDICT: the persistent tail was overwritten, not by the stack" in text, text
    assert label in text.split("VERDICT: the persistent tail")[1] and f"watch -l *(unsigned int *){addr}" in text, text
    assert "the stack ran into the arena" not in text, text
    assert any(r["label"] == label for r in regions)
