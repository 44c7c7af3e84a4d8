"""The same agent and workload built for the host (x86-64 Linux), under plain gdb: the
descriptor must sit where the compiler put the demo's RAM block, with 8-byte addresses."""
import sys

import pytest

from harness import ABI, HOST_DEMO, PLANNER, ROOT, decode, decode_fault_record, demo_plan, dwarf_layout, gdb_batch

NONE = ABI["sentinels"]["none"]
DESC_BYTES = ABI["layouts"]["8"]["descriptor"]["_size_one_arena"]
PLAN = demo_plan() if PLANNER.exists() else None  # the demo's layout (examples/demo/demo_plan.h)
ARENA_BYTES = PLAN["arena"]["recommended_bytes"] if PLAN else 0
GUARD_BYTES, STACK_BYTES = 256, 64 * 1024  # demo_plan.h, host/main.c

pytestmark = pytest.mark.skipif(not HOST_DEMO.exists(), reason=f"{HOST_DEMO} not built")


def test_host_demo_descriptor_under_gdb():
    dump, text = gdb_batch(HOST_DEMO, ["break demo_invoke_done", "run", "continue"], gdb="gdb", args=["3"],
                           reads=[("desc", "&arenascope_descriptor", DESC_BYTES), ("ram", "&ram", 1)])
    assert dump["frame"] == "demo_invoke_done", text
    d = decode("descriptor", bytes.fromhex(dump["mem"]["desc"]), 8)
    ram = dump["addr"]["ram"]  # where the compiler and loader put the static RAM block
    assert d["magic"] == b"ARENASCP" and d["addr_size"] == 8 and d["descriptor_size"] == DESC_BYTES
    a = d["arena"][0]
    assert a["base_addr"] == ram and a["size_bytes"] == ARENA_BYTES
    assert (d["guard"]["low_addr"], d["guard"]["high_addr"]) == (ram + ARENA_BYTES, ram + ARENA_BYTES + GUARD_BYTES)
    stack_low = ram + ARENA_BYTES + GUARD_BYTES
    assert (d["stack"]["low_addr"], d["stack"]["high_addr"]) == (stack_low, stack_low + STACK_BYTES)
    assert d["invoke_phase"] == 4  # stopped after the 2nd measured invoke
    # The thread painted its stack below its frame; the measured peak is inside the stack.
    assert 0 < d["stack"]["touched_lo"] < STACK_BYTES
    assert d["guard"]["touched_lo"] == NONE and a["canary"]["touched_lo"] == NONE
    assert a["region_count"] == len(PLAN["buffers"]) + len(PLAN["tail"]["regions"])
    assert a["head_bytes"] == PLAN["plans"]["tflm-greedy"]["head_bytes"]


def fault_record_decoder():
    """The plugin's fault-record decoder."""
    sys.path.insert(0, str(ROOT / "gdbplugin"))
    from arenascope_plugin.ports.cortex_m import faultrecord  # pylint: disable=import-outside-toplevel
    return faultrecord


def test_host_fault_record_carries_the_whole_checksum_table_address():
    # The host build's record is the fixture's 8-byte layout (DWARF of the x86-64 build), and the
    # checksum table's address, above 4 GiB in a 64-bit process, comes back whole from its bytes,
    # decoded at the fixture's offsets and by the plugin's decoder.
    fixture = ABI["fault_record"]
    size = fixture["layouts"]["8"]["_size"]
    assert dwarf_layout(HOST_DEMO, "arenascope_fault_record_t", [f for f, _ in fixture["fields"]],
                        gdb="gdb") == fixture["layouts"]["8"]
    dump, text = gdb_batch(HOST_DEMO, ["break demo_invoke_done", "run"], gdb="gdb", args=["3"],
                           reads=[("rec", "&arenascope_fault_record", size), ("sums", "&region_checksums", 4)])
    assert dump["frame"] == "demo_invoke_done", text
    raw = bytes.fromhex(dump["mem"]["rec"])
    table = dump["addr"]["sums"]
    assert table > 0xFFFFFFFF, f"the table is at {table:#x}: below 4 GiB, this proves nothing"
    r = decode_fault_record(raw, 8)
    assert r["version"] == fixture["version"] and r["size"] == size and r["_checksum_ok"]
    assert r["checksums_addr"] == table
    assert r["checksum_count"] == len(PLAN["buffers"]) + len(PLAN["tail"]["regions"])
    decoder = fault_record_decoder()
    rec = decoder.decode_record(raw, dump["addr"]["rec"])
    assert rec.checksums_addr == table and rec.boot_count == 1 and rec.fault_count == 0
    assert decoder.read_record(lambda a, n: raw[a - dump["addr"]["rec"]:][:n], dump["addr"]["rec"]) == rec


def test_host_demo_runs_to_completion():
    import subprocess
    proc = subprocess.run([str(HOST_DEMO), "3"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "3 inferences, 6 invoke marks" in proc.stdout


@pytest.mark.parametrize("scenario,signal", [(1, "SIGSEGV"), (3, "SIGSEGV"), (5, "SIGILL"), (6, "SIGFPE"),
                                             (7, "SIGSEGV")])
def test_host_fault_scenarios_become_signals(scenario, signal):
    dump, text = gdb_batch(HOST_DEMO, ["break demo_invoke_done", "run", f"set var demo_scenario = {scenario}",
                                       "delete", "continue"], gdb="gdb", args=["0"])
    assert f"received signal {signal}" in text, text


def test_host_stack_into_arena_leaves_its_bytes_in_the_guard_band_and_tail():
    dump, text = gdb_batch(HOST_DEMO, ["break demo_invoke_done", "run", "set var demo_scenario = 1", "delete",
                                       "continue"], gdb="gdb", args=["0"],
                           reads=[("guard", "&ram.guard", GUARD_BYTES), ("nodes", "nodes", 8)])
    assert "received signal SIGSEGV" in text, text
    assert bytes.fromhex(dump["mem"]["guard"]) != b"\xaa" * GUARD_BYTES
    assert bytes.fromhex(dump["mem"]["nodes"]) == b"\x5a" * 8  # the operator table's first pointer
