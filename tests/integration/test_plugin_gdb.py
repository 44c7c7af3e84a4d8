"""The GDB plugin against real targets: the demo firmware on QEMU through gdb-multiarch, the
host build under plain gdb. Expected values come from the ELF symbols, the linker map and the
real TFLM figures; every error case must give one clear line and no Python traceback."""
import json
import os
import re
import shutil
import subprocess
import tempfile

import pytest

from harness import (
    DEMO_IS_DSCNN,
    FIRMWARE,
    FIRMWARE_MAP,
    HOST_DEMO,
    PLANNER,
    ROOT,
    TFLM_FIGURES,
    demo_output_overrun,
    demo_plan,
    elf_symbols,
    gdb_batch,
    map_sections,
    qemu,
)

PLUGIN = ROOT / "gdbplugin" / "arenascope.py"
# The demo's layout is the planner's prediction for its model (examples/demo/demo_plan.h).
PLAN = demo_plan() if PLANNER.exists() else None
SIZE = PLAN["arena"]["recommended_bytes"] if PLAN else 0
HEAD = PLAN["plans"]["tflm-greedy"]["head_bytes"] if PLAN else 0
TAIL = PLAN["tail"]["bytes"] if PLAN else 0
TEMP_END = HEAD + 64          # the demo's first operator takes 64 B of temp above the head
REGIONS = len(PLAN["buffers"]) + len(PLAN["tail"]["regions"]) if PLAN else 0


def size_text(n):
    """The plugin's way of writing a size (render.py): bytes, and KiB from 1024 B."""
    return f"{n} B" if n < 1024 else f"{n} B ({n / 1024:.1f} KiB)"
LOAD = [f"source {PLUGIN}", "set arena colour off"]
FAULT_BREAKS = ["break HardFault_Handler", "break BusFault_Handler", "break UsageFault_Handler"]

pytestmark = pytest.mark.skipif(not FIRMWARE.exists(), reason=f"{FIRMWARE} not built")


def on_qemu(commands, invokes=1, elf=FIRMWARE, load_first=True):
    """Boots the firmware, stops after `invokes` measured inferences (0: at reset), runs commands."""
    with qemu(FIRMWARE) as (port, _log):
        pre = list(LOAD) if load_first else []
        if invokes:
            pre += [f"break demo_invoke_done if invokes == {invokes}", "continue", "delete"]
        _, text = gdb_batch(elf, pre + list(commands), remote_port=port)
    assert "Traceback" not in text, text
    return text


def gdb_rc(commands, elf=FIRMWARE, invokes=1):
    """Exit status of gdb -batch when the last command is commands[-1]."""
    with qemu(FIRMWARE) as (port, _log):
        cmd = ["gdb-multiarch", "-q", "-nx", "-batch", str(elf), "-ex", "set tcp auto-retry on",
               "-ex", "set tcp connect-timeout 15", "-ex", f"target remote 127.0.0.1:{port}"]
        for c in LOAD + [f"break demo_invoke_done if invokes == {invokes}", "continue", "delete"] + commands:
            cmd += ["-ex", c]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)
        return proc.returncode, proc.stdout + proc.stderr


def snapshot_of(commands=(), invokes=1):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "snap.json")
        text = on_qemu(list(commands) + [f"arena snapshot {path}"], invokes=invokes)
        assert "arena snapshot: wrote" in text, text
        with open(path, encoding="utf-8") as f:
            return json.load(f), text


def test_info_figures_match_the_symbols_and_the_linker_map():
    syms, sections = elf_symbols(FIRMWARE), map_sections(FIRMWARE_MAP)
    text = on_qemu(["arena info"])
    base, size = sections[".tensor_arena"]
    stack_lo, stack_size = sections[".stack"]
    assert f"arenascope descriptor at {syms['arenascope_descriptor']:#x} (symbol arenascope_descriptor)" in text
    assert size == SIZE
    assert f"bounds:                 {base:#x}-{base + size:#x}, size {size_text(SIZE)}" in text
    assert f"head (planned):         {size_text(HEAD)}, 0..+{HEAD}" in text
    assert f"tail (persistent):      {size_text(TAIL)}, +{SIZE - TAIL}..+{SIZE}" in text
    assert f"used:                   {size_text(TEMP_END + TAIL)}" in text   # temp end + tail
    assert f"stack:                    {stack_lo:#x}-{stack_lo + stack_size:#x}, size 8192 B" in text
    room = syms["__StackTop"] - (base + size)
    assert f"stack rule:               room to arena end {room} B >=" in text
    free = (SIZE - TAIL) // 4 * 4 - (TEMP_END + 3) // 4 * 4   # word-trimmed [temp end, tail)
    assert f"free band intact:       {free} B of {free} B" in text
    assert "upper estimate" in text


def validate(snap):
    import jsonschema
    jsonschema.validate(snap, json.loads((ROOT / "docs" / "snapshot-schema.json").read_text()))


def test_snapshot_carries_every_figure_and_tflms_plan():
    syms = elf_symbols(FIRMWARE)
    snap, _ = snapshot_of(invokes=2)
    validate(snap)
    assert snap["schema"] == "arenascope.snapshot" and snap["version"] == 3
    assert snap["source"]["descriptor_address"] == syms["arenascope_descriptor"]
    a = snap["arenas"][0]
    assert a["base_addr"] == syms["tensor_arena"] and a["size_bytes"] == SIZE
    assert (a["head_bytes"], a["temp_bytes"], a["tail_offset"], a["tail_bytes"]) == (HEAD, TEMP_END, SIZE - TAIL, TAIL)
    used = TEMP_END + TAIL
    assert a["used_bytes"] == used and a["peak_bytes"] == used and a["headroom_bytes"] == SIZE - used
    assert a["headroom_is_upper_estimate"] is True
    assert len(a["regions"]) == REGIONS
    assert snap["state"]["invokes"] == 2
    assert snap["stack"]["low_addr"] == syms["__StackLimit"] and snap["stack"]["high_addr"] == syms["__StackTop"]
    assert snap["stack"]["room_bytes"] == syms["__StackTop"] - (syms["tensor_arena"] + SIZE)
    assert snap["guard"]["low_addr"] == syms["__guard_start"] and snap["guard"]["intact_bytes"] == 256
    assert snap["verdict"] == "PASS"
    assert {c["rule"] for c in snap["checks"]} >= {"canary", "alignment", "plan", "used", "headroom", "guard", "stack"}
    if TFLM_FIGURES.exists() and DEMO_IS_DSCNN:  # the DS-CNN has MLPerf Tiny's DS-CNN graph
        fig = json.loads(TFLM_FIGURES.read_text())["models"]["mlperf_tiny_kws_ref_model.tflite"]["arm_m4"]
        assert a["plan"]["lower_bound_bytes"] == fig["lower_bound_bytes"]
        assert a["plan"]["lower_bound_scope"] == fig["lower_bound_time_step"]
        assert a["head_bytes"] == fig["head_bytes"]


@pytest.mark.parametrize("scenario,fails", [
    (0, set()),
    (1, {"guard", "stack", "fault"}),  # the stack ran through the guard band into the tail, then a fault
    (2, {"canary"}),                   # an operator wrote past its tensor into the free band (no fault)
    # Faults that are not the arena's: its rules pass, and the fault fails the snapshot.
    (3, {"fault"}), (4, {"fault"}), (5, {"fault"}), (6, {"fault"}), (7, {"fault"}),
])
def test_every_scenario_gives_the_expected_check_verdicts(scenario, fails):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "snap.json")
        stop = FAULT_BREAKS + [f"set var demo_scenario = {scenario}", "break demo_invoke_done if invokes == 2",
                               "continue"]
        text = on_qemu(stop + [f"arena snapshot {path}", "arena check"])
        with open(path, encoding="utf-8") as f:
            snap = json.load(f)
    validate(snap)
    failed = {c["rule"] for c in snap["checks"] if c["verdict"] == "FAIL"}
    assert failed == fails, text
    for rule in fails:
        assert f"FAIL  {rule}" in text
    assert ("arena check: FAIL" in text) == bool(fails)


def test_overrun_is_located_next_to_the_tensor_that_overran():
    text = on_qemu(["set var demo_scenario = 2", "break demo_invoke_done if invokes == 2", "continue",
                    "arena check", "arena map --width 32"])
    # the first operator whose output ends at the head writes it 128 B too long: temp, then
    # 64 B of the free band
    out = demo_output_overrun(PLAN)
    assert f"free band overwritten at +{TEMP_END}..+{TEMP_END + 64}" in text, text
    assert f"{out['name']} at +{out['offset']}..+{HEAD}" in text, text
    assert "X" in text.split("arena 0 0x")[1].splitlines()[0]


def test_check_fail_makes_batch_gdb_exit_non_zero():
    rc_ok, _ = gdb_rc(["arena check"])
    rc_fail, text = gdb_rc(["set var demo_scenario = 2", "break demo_invoke_done if invokes == 2", "continue",
                            "arena check"])
    assert rc_ok == 0 and rc_fail != 0, text


def test_map_regions_plan_whereis_stack():
    syms = elf_symbols(FIRMWARE)
    first = PLAN["buffers"][0]  # planner id 0: a tensor
    inside = first["offset"] + 8
    text = on_qemu(["arena map", "arena regions --sort size", "arena plan", "arena stack",
                    f"arena whereis {syms['tensor_arena'] + inside:#x}", "arena whereis &__guard_start",
                    "arena whereis 0x10", "arena whereis tensor_arena", "arena whereis tensor_arena[8]",
                    "arena whereis demo_invoke_done"])
    assert "legend:" in text and "regions of arena 0 by address:" in text
    assert f"arena 0: {REGIONS} regions, sorted by size" in text
    bound = PLAN["lower_bound"]
    assert (f"lower bound {bound['bytes']} B (scope {bound['scope']}); planned head {HEAD} B; "
            f"head / lower bound = {HEAD / bound['bytes']:.2f}") in text, text
    assert f"is in arena 0 at +{inside} (head (planned))" in text
    assert f"{first['name']}: +{first['offset']}..+{first['offset'] + first['size']}" in text, text
    assert "is in the guard band" in text
    assert "0x10 is outside every arena" in text
    assert f"{syms['tensor_arena']:#x} is in arena 0 at +0 " in text, text  # an array names its address
    assert ("'tensor_arena[8]' is a 1-byte uint8_t value held in memory" in text or
            "'tensor_arena[8]' is a 1-byte unsigned char value held in memory" in text), text
    assert "too narrow to be an address: for where it is stored, give &(tensor_arena[8])" in text
    assert f"{syms['demo_invoke_done'] & ~1:#x} is outside every arena" in text, text  # a function: its address
    assert "high-water mark:" in text and "scanned from target memory" in text


# ------------------------------------------------------------------ errors, one clear line each

def test_no_program_loaded():
    proc = subprocess.run(["gdb-multiarch", "-q", "-nx", "-batch", "-ex", f"source {PLUGIN}", "-ex", "arena info",
                           "-ex", "arena interpreters"], capture_output=True, text=True, timeout=60)
    assert "arena info: no program loaded and no target connected" in proc.stderr
    assert "arena interpreters: no program loaded and no target connected" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def test_elf_loaded_but_target_not_connected():
    proc = subprocess.run(["gdb-multiarch", "-q", "-nx", "-batch", str(FIRMWARE), "-ex", f"source {PLUGIN}",
                           "-ex", "arena check"], capture_output=True, text=True, timeout=60)
    assert "arena check: the target is not running: connect to it (`target remote HOST:PORT`)" in proc.stderr
    proc2 = subprocess.run(["gdb-multiarch", "-q", "-nx", "-batch", str(FIRMWARE), "-ex", f"source {PLUGIN}",
                            "-ex", "arena interpreters"], capture_output=True, text=True, timeout=60)
    assert "arena interpreters: the target is not running: connect to it" in proc2.stderr
    assert proc.returncode != 0


def test_running_target_is_refused_in_all_stop():
    text = on_qemu(["continue &", "arena info", "interrupt"])
    assert "arena info: the target is running and GDB cannot read its memory in all-stop mode" in text


@pytest.mark.parametrize("setup,message", [
    (["set var arenascope_descriptor.abi_major = 2"], "has ABI 2.1; this plugin reads ABI 1.x"),
    (["set var arenascope_descriptor.seq = 7"], "warning: the target stopped inside an agent update (seq odd)"),
    (["set var arenascope_descriptor.arena[0].region_count = 60000"], f"region_count 60000 with capacity {REGIONS}"),
    (["set var arenascope_descriptor.arena[0].regions_addr = 0x10000000"], "outside the RAM ranges"),
    (["set var arenascope_descriptor.arena[0].head_bytes = 99999"], "head_bytes 99999 is beyond the arena"),
    (["set arena descriptor-address &tensor_arena"], f"no arenascope descriptor at "
                                                      f"{elf_symbols(FIRMWARE)['tensor_arena']:#x}: magic is "),
    (["set arena descriptor-address 0xF0000000"], "cannot read 16 B at 0xf0000000"),
    (["set arena descriptor-address nosuchsymbol"], "cannot evaluate 'nosuchsymbol' as an address"),
    (["set arena scan-range 0x20000000"], "set arena scan-range: '0x20000000': expected 'START END'"),
    (["set arena canary-pattern foo"], "set arena canary-pattern: 'foo' is not a number"),
    (["set arena stack-paint-pattern 0x1AAAAAAAA"], "0x1AAAAAAAA does not fit in 32 bits"),
    (["set arena stack-range 0x20000000, 0x20001000"], "is not on this stack"),
    (["set arena descriptor-address demo_nodes()"], "could write target memory or call a target function"),
])
def test_bad_descriptors_give_one_clear_error(setup, message):
    text = on_qemu(setup + ["arena info"])
    assert message in text, text


def test_stripped_elf_finds_the_descriptor_by_scanning_ram():
    with tempfile.TemporaryDirectory() as tmp:
        stripped = os.path.join(tmp, "demo_fw_stripped.elf")
        subprocess.run(["arm-none-eabi-strip", "-o", stripped, str(FIRMWARE)], check=True)
        with qemu(FIRMWARE) as (port, _):
            _, at_reset = gdb_batch(stripped, LOAD + ["arena info", "arena stack"], remote_port=port)
        syms = elf_symbols(FIRMWARE)
        with qemu(FIRMWARE) as (port, _):
            _, later = gdb_batch(stripped, LOAD + ["break *%#x" % (syms["demo_invoke_done"] & ~1), "continue",
                                                   "arena info"], remote_port=port)
    assert "arena info: no arenascope descriptor found" in at_reset
    assert "scanned the ELF's RAM sections" in at_reset and ".bss 0x" in at_reset
    assert "set arena descriptor-address ADDR" in at_reset
    assert "arena stack: no stack bounds" in at_reset and "set arena stack-range LOW HIGH" in at_reset
    assert f"arenascope descriptor at {syms['arenascope_descriptor']:#x} (magic found by scanning" in later
    assert "Traceback" not in at_reset + later


def test_stack_without_a_descriptor_uses_the_linker_symbols():
    text = on_qemu(["break main", "continue", "arena stack"], invokes=0)
    assert "no usable arenascope descriptor" in text and "__StackLimit/__StackTop" in text
    assert "high-water mark:" in text


# ------------------------------------------------------------------ host build, plain gdb

@pytest.mark.skipif(not HOST_DEMO.exists(), reason="host demo not built")
def test_host_build_under_plain_gdb():
    dump, text = gdb_batch(HOST_DEMO, LOAD + ["break demo_invoke_done", "run", "arena info", "arena check"],
                           gdb="gdb", args=["3"], reads=[("ram", "&ram", 1)])
    ram = dump["addr"]["ram"]
    assert "Traceback" not in text
    assert "8-byte addresses" in text
    assert f"bounds:                 {ram:#x}-{ram + SIZE:#x}, size {SIZE} B" in text
    assert f"stack:                    {ram + SIZE + 256:#x}-{ram + SIZE + 256 + 65536:#x}" in text
    assert "arena check: PASS" in text


def test_auto_load_directory():
    """The auto-load setup of docs/gdb-commands.md: GDB runs SCRIPTS-DIR/<elf path>-gdb.py."""
    with tempfile.TemporaryDirectory() as scripts:
        target = os.path.join(scripts, str(FIRMWARE).lstrip("/") + "-gdb.py")
        os.makedirs(os.path.dirname(target))
        with open(target, "w", encoding="utf-8") as f:
            f.write(f'gdb.execute("source {PLUGIN}")\n')
        proc = subprocess.run(["gdb-multiarch", "-q", "-nx", "-batch",
                               "-iex", f"set auto-load scripts-directory {scripts}",
                               "-iex", f"add-auto-load-safe-path {scripts}", str(FIRMWARE), "-ex", "help arena"],
                              capture_output=True, text=True, timeout=60)
    assert "Inspect TensorFlow Lite Micro tensor arenas" in proc.stdout, proc.stdout + proc.stderr


def test_gdbinit_line():
    with tempfile.TemporaryDirectory() as home:
        with open(os.path.join(home, ".gdbinit"), "w", encoding="utf-8") as f:
            f.write(f"source {PLUGIN}\n")
        proc = subprocess.run(["gdb-multiarch", "-q", "-batch", "-ex", "help arena info"], capture_output=True,
                              text=True, timeout=60, env=dict(os.environ, HOME=home))
    assert "Print the arena's figures" in proc.stdout, proc.stdout + proc.stderr


def test_loading_twice_is_harmless_and_help_exists_for_every_command():
    proc = subprocess.run(["gdb-multiarch", "-q", "-nx", "-batch", "-ex", f"source {PLUGIN}", "-ex", f"source {PLUGIN}",
                           "-ex", "help arena", "-ex", "complete arena re", "-ex", "complete arena regions --sort s"],
                          capture_output=True, text=True, timeout=60)
    assert "arenascope: already loaded" in proc.stdout
    for command in ("info", "map", "regions", "plan", "stack", "check", "whereis", "snapshot", "view", "refresh",
                    "fault"):
        assert f"arena {command} --" in proc.stdout
    assert "arena regions" in proc.stdout.split("complete arena re")[-1] or "arena regions\n" in proc.stdout
    assert "arena regions --sort size" in proc.stdout


# ------------------------------------------------------------------ found by a reviewer trying to break it

def test_check_rereads_a_region_table_that_changed_without_a_new_generation():
    # Region 0 grown until it reaches the bottom of the tail, which is live all the time.
    first = PLAN["buffers"][0]
    grown = SIZE - TAIL - first["offset"] + 8
    text = on_qemu(["arena check", f"set var region_table[0].size_bytes = {grown}", "arena check"])
    first, second = text.split("arena check:")[0], text.split("arena check:")[1]
    assert "PASS  plan" in first and "FAIL  plan" in second, text


def test_halted_inside_an_agent_update_is_said_and_stack_still_works():
    # seq_end entered with seq odd: the end of an update (seq_begin calls it too, with seq even)
    text = on_qemu(["break seq_end if arenascope_descriptor.seq % 2 == 1", "continue", "arena info", "arena stack"])
    assert "stopped inside an agent update (seq odd)" in text
    assert "high-water mark:" in text and "kept changing" not in text


def test_elf_removed_from_disk_is_harmless():
    with tempfile.TemporaryDirectory() as tmp:
        elf = os.path.join(tmp, "fw.elf")
        shutil.copy(FIRMWARE, elf)
        text = on_qemu(["shell rm " + elf, "arena info", "arena check"], elf=elf)
    assert "bounds:" in text and "internal error" not in text, text


def test_after_the_stack_ran_into_the_arena_every_command_tells_it():
    syms = elf_symbols(FIRMWARE)
    text = on_qemu(["break BusFault_Handler", "set var demo_scenario = 1", "continue", "arena info", "arena stack",
                    f"arena whereis {syms['__StackLimit']:#x}"])
    assert "the agent's last measurement is stale" in text
    assert f"guard band:               {syms['__guard_start']:#x}-{syms['__guard_end']:#x}, 0 B of 256 B intact" in text
    assert "peak depth:               >= 8448 B (8.2 KiB): past the 8192 B (8.0 KiB) stack and through the whole " \
           "guard band, into the arena below (OVERFLOW)" in text
    assert "never used so far" not in text


def test_before_the_arena_is_published_and_before_the_stack_is_painted():
    at_reset = on_qemu(["arena stack"], invokes=0)
    assert "paint:                    none anywhere: not painted (yet?)" in at_reset
    assert "OVERFLOW" not in at_reset
    text = on_qemu(["break demo_allocate", "continue", "arena map", "arena plan", "arena regions", "arena check"],
                   invokes=0)
    assert text.count("no arena published yet") >= 3
    assert "WARN  arena" in text


def test_user_expressions_cannot_change_the_target():
    text = on_qemu(["print ticks", "arena whereis ticks++", "arena whereis ticks = 5", "arena whereis ticks <<= 1",
                    "arena whereis ticks >>= 1", "arena whereis ticks |= 1", "print ticks",
                    "print demo_sink", "arena whereis (demo_invoke_done)(7)", "arena attach (*demo_invoke_done)(9)",
                    "print demo_sink", "arena whereis &'workload.c'::demo_scenario", "arena whereis -1"])
    values = [line.split("=")[1].strip() for line in text.splitlines() if line.startswith("$")]
    assert values[0] == values[1] and values[2] == values[3], text
    assert text.count("could write target memory or call a target function") == 5
    assert text.count("it would call a target function, and arenascope only reads") == 2, text
    assert "is in the arena" not in text and "0xffffffff is outside" in text
    assert "Traceback" not in text


def test_colour_follows_gdb_styling_and_narrow_maps_keep_the_head():
    text = on_qemu(["arena map --width 16"])
    assert "\x1b[" not in text  # batch output to a pipe: GDB styling is off
    bar = text.split("[")[1].split("]")[0]
    assert bar.startswith("T") and "t" in bar, bar


def test_live_link_gives_a_late_viewer_the_latest_stop_and_says_when_the_target_runs():
    import socket as socketlib
    with socketlib.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = (f"python import socket, json; C = socket.create_connection(('127.0.0.1', {port})); "
              "C.settimeout(10); B = b''\n")
    read_one = ("python exec(\"while B.count(b'\\\\n') < N: B += C.recv(1 << 20)\"); "
                "L = B.split(b'\\n'); print('MSG', [json.loads(l).get('type') for l in L[:N]], "
                "[json.loads(l)['snapshot']['state']['invokes'] for l in L[:N] if b'snapshot' in l[:40]], "
                "[json.loads(l)['snapshot']['verdict'] for l in L[:N] if b'snapshot' in l[:40]])")
    text = on_qemu(["break demo_invoke_done if invokes == 2", "continue", "delete",
                    f"arena view --no-launch --port {port}", "set var demo_scenario = 2",
                    "break demo_invoke_done if invokes == 3", "continue",   # nobody watches this stop
                    client.strip(), "python N = 1", read_one,
                    "delete", "break demo_invoke_done if invokes == 4",
                    "continue",                                              # the viewer hears: running, then a stop
                    "python N = 3", read_one], invokes=1)
    msgs = [line for line in text.splitlines() if line.startswith("MSG")]
    assert msgs[0] == "MSG ['snapshot'] [3] ['FAIL']", text      # the stop it missed, not invoke 2's PASS
    assert msgs[1] == "MSG ['snapshot', 'state', 'snapshot'] [3, 4] ['FAIL', 'FAIL']", text
    assert "Fatal signal" not in text


def test_attach_refuses_what_is_not_an_interpreter_without_evaluating_it():
    """`arena attach` on the demo firmware (no TFLM in it): an assignment or a call is refused
    before GDB evaluates it (the variable keeps its value), a typed non-interpreter is refused."""
    text = on_qemu(["print demo_scenario", "arena attach demo_scenario = 5", "arena attach demo_invoke_done(3)",
                    "print demo_scenario", "arena attach tensor_arena", "arena attach &tensor_arena"])
    assert text.count("$1 = 0") == 1 and "$2 = 0" in text, text
    assert "refusing 'demo_scenario = 5'" in text and "refusing 'demo_invoke_done(3)'" in text
    assert "'tensor_arena' is a uint8_t [" in text and "not a tflite::MicroInterpreter" in text
    assert "'&tensor_arena' is a uint8_t (*)[" in text and "Traceback" not in text


def test_a_bad_view_port_is_refused_and_the_running_view_goes_on():
    """Issue 33: `arena view --port 99999` ended in an internal error (OverflowError) and shut the
    live view already serving; now it is refused in one line and the view keeps serving."""
    text = on_qemu(["arena view --no-launch --port 0", "arena view --no-launch --port 99999", "arena refresh"])
    assert "arena view: port 99999 is not a TCP port: give 1..65535 (0: any free port)" in text, text
    assert "internal error" not in text and "OverflowError" not in text
    assert "arena refresh: snapshot sent to 0 viewer(s)" in text, text  # still serving


def test_interpreters_on_a_firmware_without_tflm_says_so():
    """Issue 33: on the agent demo (no TFLM linked) `arena interpreters` said "build TFLM with -g";
    the ELF has no tflite vtable at all (nm), so it says the firmware links no TFLM."""
    nm = subprocess.run(["arm-none-eabi-nm", str(FIRMWARE)], capture_output=True, text=True, check=True).stdout
    assert "_ZTVN6tflite" not in nm
    text = on_qemu(["arena interpreters", "arena attach 0x20000000"])
    assert ("arena interpreters: this firmware links no TFLM (no tflite::MicroAllocator or graph vtable in its symbol "
            "table), and `arena interpreters` reads TFLM's MicroInterpreters; its arenas are the ones the arenascope "
            "agent publishes: `arena info`, `arena regions`") in text, text
    assert "with -g" not in text
    assert "arena attach: this firmware links no TFLM" in text, text


def test_arena_report_uses_the_viewer_the_setting_names(tmp_path):
    """Issue 33: `arena report` ignored `set arena viewer-path`, which the docs name."""
    fake = tmp_path / "fake-viewer"
    fake.write_text("#!/bin/sh\necho 'arenascope-viewer: the fake viewer ran' >&2\nexit 1\n")
    fake.chmod(0o755)
    text = on_qemu([f"set arena viewer-path {fake}", f"arena report {tmp_path / 'r.html'}"])
    assert "arena report: the fake viewer ran" in text, text


def test_bands_are_read_once_a_stop_and_again_after_memory_is_written():
    # issue 39: `arena map` twice at one stop reads the bands (the 8 KiB painted stack, the free
    # band's 3356 B, the guard band) and the region table once; the second reads the descriptor,
    # the fault record and the tail's TFLM objects the diagnosis checks (under 2 KiB). A write
    # from GDB (memory_changed) makes the next command read them again and see it.
    # `restore` writes without GDB's memory_changed: the plugin's hook after it (gdb/__init__.py).
    count = "python from arenascope_plugin.acquire.gdbtarget import GdbReader as R; R.bytes = 0"
    with tempfile.TemporaryDirectory() as tmp:
        zeros = os.path.join(tmp, "zeros.bin")
        with open(zeros, "wb") as f:
            f.write(bytes(4))
        text = on_qemu([count, "arena map", "python print('FIRST', R.bytes)", count, "arena map",
                        "python print('AGAIN', R.bytes)",
                        f"restore {zeros} binary (arenascope_descriptor.arena[0].canary.low_addr+64)", "arena check"])
    first, again = (int(re.search(rf"{w} (\d+)", text).group(1)) for w in ("FIRST", "AGAIN"))
    assert first >= 8192 + 3356 and 132 <= again < 2048, text
    assert re.search(r"FAIL\s+canary\s+arena: free band overwritten at \+16128\.\.\+16132", text), text
