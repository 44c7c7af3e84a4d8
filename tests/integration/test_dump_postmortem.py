"""Post-mortem from a RAM dump (issue 20, item 4): the demo's stack-into-arena fault on QEMU
(mps2-an386) with gdb-multiarch, as test_fault.py provokes it. At the agent's fault hook GDB
dumps the ELF's RAM (its writable sections, read from the ELF with pyelftools here, in two files
split at .tensor_arena: two --ram ranges) with `dump binary memory`, saves `info registers`, and
records `arena info`, `arena check`, `arena fault` live. Then, QEMU gone, the standalone tool
(--ram, --registers) and GDB with only the ELF (`arena dump load`) must print the same lines.

What differs by design, and nothing else:
- the first line of each dump report: "...: reading a RAM dump, not a live target: ..." (said so
  nobody mistakes it for a board), checked here against the files and ranges the test made;
- the standalone tool's "failed rules" line of `check` goes to stderr as "arenascope check: ..."
  where GDB's is an error "arena check: ..." (each front end names itself);
- a call chain from GDB's unwinder: `arena fault` prints one ("call chain (GDB's unwinder ...")
  only when the stacked LR is not a return address; a dump has no unwinder (its core gives the
  PC's function only). At this fault LR is a return address, so no such line is printed live:
  the test asserts that, so a firmware change that brings the line in fails here with the
  reason, rather than as an unexplained difference."""
import json
import os
import re
import subprocess

import jsonschema
import pytest

from harness import FIRMWARE, PLANNER, ROOT, gdb_batch, qemu

PLUGIN = ROOT / "gdbplugin" / "arenascope.py"
CLI = ROOT / "gdbplugin" / "arenascope"
COMMANDS = ("info", "check", "fault")
pytestmark = [pytest.mark.skipif(not FIRMWARE.exists(), reason=f"{FIRMWARE} not built"),
              pytest.mark.skipif(not PLANNER.exists(), reason=f"{PLANNER} not built")]


def ram_sections(elf):
    """[(low, high, name)] of the ELF's allocated, writable sections (pyelftools, not the plugin)."""
    from elftools.elf.constants import SH_FLAGS
    from elftools.elf.elffile import ELFFile
    with open(elf, "rb") as f:
        return [(s["sh_addr"], s["sh_addr"] + s["sh_size"], s.name) for s in ELFFile(f).iter_sections()
                if s["sh_flags"] & SH_FLAGS.SHF_ALLOC and s["sh_flags"] & SH_FLAGS.SHF_WRITE and s["sh_size"]]


def recorded(path, command):
    """GDB commands that run `command` with its output (errors too) logged to `path` only."""
    return [f"set logging file {path}", "set logging overwrite on", "set logging redirect on",
            "set logging enabled on", command, "set logging enabled off"]


def lines(path):
    return path.read_text().splitlines()


@pytest.fixture(scope="module")
def crash(tmp_path_factory):
    """The dump, the registers and the live reports, taken at the fault on QEMU."""
    d = tmp_path_factory.mktemp("crash")
    ram = ram_sections(FIRMWARE)
    low, high = min(r[0] for r in ram), max(r[1] for r in ram)
    split = next(lo for lo, _, name in ram if name == ".tensor_arena")
    assert low < split < high
    files = [(d / "ram0.bin", low, split), (d / "ram1.bin", split, high)]
    commands = [f"source {PLUGIN}", "set arena colour off", f"set arena planner-path {PLANNER}",
                "break demo_invoke_done if invokes == 1", "continue", "delete",
                "break arenascope_fault_hook", "set var demo_scenario = 1", "continue"]
    commands += [f"dump binary memory {path} {lo:#x} {hi:#x}" for path, lo, hi in files]
    commands.append(f"python open('{d / 'regs.txt'}', 'w').write(gdb.execute('info registers', to_string=True))")
    for c in COMMANDS:
        commands += recorded(d / f"live-{c}.txt", f"arena {c}")
    with qemu() as (port, _):
        probe, text = gdb_batch(FIRMWARE, commands, remote_port=port)
    assert probe["frame"] == "arenascope_fault_hook", text
    for path, lo, hi in files:
        assert path.stat().st_size == hi - lo, (path, text)
    live = {c: lines(d / f"live-{c}.txt") for c in COMMANDS}
    # The reports are the fault's, so the comparison below compares something.
    assert "VERDICT: the stack ran into the arena." in "\n".join(live["fault"]), live["fault"]
    assert any("FAIL  stack" in x for x in live["check"]), live["check"]
    assert not any("call chain (GDB's unwinder" in x for x in live["fault"]), live["fault"]
    assert not any("warning" in x or "Traceback" in x for c in COMMANDS for x in live[c]), live
    return {"dir": d, "files": files, "live": live, "regs": d / "regs.txt", "low": low, "high": high}


def specs(crash):
    return [f"{path}@{lo:#x}" for path, lo, _ in crash["files"]]


def banner(crash, registers=True, files=None):
    held = ", ".join(f"{os.path.basename(p)} {lo:#010x}..{hi:#010x} ({hi - lo} B)"
                     for p, lo, hi in (files or crash["files"]))
    return (f"reading a RAM dump, not a live target: {held}; code and constants from the ELF; "
            + ("registers from regs.txt" if registers else "registers unknown (none given)"))


def tool(command, *args, cwd=None):
    proc = subprocess.run([str(CLI), command, "--elf", str(FIRMWARE), "--planner", str(PLANNER), *args],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, cwd=cwd,
                          env=dict(os.environ, NO_COLOR="1"))
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def ram_args(crash):
    return [a for s in specs(crash) for a in ("--ram", s)]


@pytest.mark.parametrize("command", COMMANDS)
def test_the_tool_on_the_dump_prints_what_gdb_printed_live(crash, command):
    proc = tool(command, *ram_args(crash), "--registers", str(crash["regs"]))
    out = proc.stdout.splitlines()
    assert out[0] == "arenascope: " + banner(crash), out[0]
    live = crash["live"][command]
    if command == "check":  # the failed-rules line: GDB's error, the tool's stderr (each names itself)
        assert proc.returncode == 1 and live[-1].startswith("arena check: failed rules: "), (proc.returncode, live)
        assert live[-1].replace("arena check:", "arenascope check:", 1) in proc.stderr.splitlines(), proc.stderr
        live = live[:-1]
    else:
        assert proc.returncode == 0, proc.stderr
    assert out[1:] == live


def test_gdb_with_only_the_elf_and_the_dump_prints_what_it_printed_live(crash):
    d = crash["dir"]
    commands = [f"source {PLUGIN}", "set arena colour off", f"set arena planner-path {PLANNER}",
                f"arena dump load {' '.join(specs(crash))} --registers {crash['regs']}"]
    for c in COMMANDS:
        commands += recorded(d / f"dump-{c}.txt", f"arena {c}")
    commands += [f"arena snapshot {d / 'dump-snap.json'}", "arena dump forget", "arena info"]
    probe, text = gdb_batch(FIRMWARE, commands, args=())  # no target: GDB has just the ELF (never runs it)
    assert probe["regs"] == {}, probe  # no process, no registers: the dump is what was read
    assert f"arena dump: loaded; {banner(crash)}" in text, text
    for c in COMMANDS:
        got = lines(d / f"dump-{c}.txt")
        assert got[0] == "arena: " + banner(crash), got
        assert got[1:] == crash["live"][c], c
    snap = json.loads((d / "dump-snap.json").read_text())
    jsonschema.validate(snap, json.loads((ROOT / "docs" / "snapshot-schema.json").read_text()))
    assert snap["source"]["dump"] == banner(crash).split("target: ")[1].split(";")[0], snap["source"]
    # Forgotten: the inferior again, which is not running.
    assert "arena dump: forgotten; commands read the target again" in text
    assert "arena info: the target is not running" in text, text


def test_without_registers_the_fault_comes_from_the_agents_record(crash):
    proc = tool("fault", *ram_args(crash))
    out = proc.stdout.splitlines()
    assert proc.returncode == 0 and out[0] == "arenascope: " + banner(crash, registers=False), proc.stdout
    assert out[1:] == crash["live"]["fault"]  # the record holds all of it: the core's registers add nothing here


def test_intel_hex_reads_as_the_raw_dump(crash):
    d = crash["dir"]
    whole = d / "ram.bin"
    whole.write_bytes(b"".join(p.read_bytes() for p, _, _ in crash["files"]))
    hexfile = d / "ram.hex"
    subprocess.run(["arm-none-eabi-objcopy", "-I", "binary", "-O", "ihex", "--change-addresses",
                    f"{crash['low']:#x}", str(whole), str(hexfile)], check=True, timeout=60)
    assert hexfile.read_text().splitlines()[-1] == ":00000001FF"
    for command in ("info", "fault"):
        raw = tool(command, *ram_args(crash), "--registers", str(crash["regs"])).stdout.splitlines()
        ihex = tool(command, "--ram", str(hexfile), "--registers", str(crash["regs"])).stdout.splitlines()
        assert ihex[0] == "arenascope: " + banner(crash, files=[(hexfile, crash["low"], crash["high"])]), ihex[0]
        assert ihex[1:] == raw[1:] and len(raw) > 5, command
    snaps = []
    for ram, files in ((ram_args(crash), crash["files"]), (["--ram", str(hexfile)], [(hexfile, crash["low"],
                                                                                       crash["high"])])):
        out = d / f"snap{len(snaps)}.json"
        assert tool("snapshot", *ram, "--registers", str(crash["regs"]), str(out)).returncode == 0
        snap = json.loads(out.read_text())
        snap["source"].pop("time")  # when it was written
        # The snapshot says it was read from a dump, and which (the viewer's file is no board's).
        assert snap["source"].pop("dump") == banner(crash, files=files).split("target: ")[1].split(";")[0]
        snaps.append(snap)
    assert snaps[0] == snaps[1] and snaps[0]["fault"]["exception"] == "BusFault"


def bad(crash, *args):
    """(stderr's one line) of a refused run: exit status 2, one line, no traceback."""
    proc = tool("info", *args)
    assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
    err = [x for x in proc.stderr.splitlines() if x.strip()]
    assert len(err) == 1 and err[0].startswith("arenascope info: "), err
    return err[0]


def test_bad_dumps_are_refused_with_one_line_naming_the_file(crash, tmp_path):
    first, low, _ = crash["files"][0]
    empty = tmp_path / "empty.bin"
    empty.write_bytes(b"")
    cut = tmp_path / "cut.hex"
    whole = tmp_path / "w.bin"
    whole.write_bytes(first.read_bytes()[:64])
    subprocess.run(["arm-none-eabi-objcopy", "-I", "binary", "-O", "ihex", "--change-addresses", f"{low:#x}",
                    str(whole), str(cut)], check=True)
    cut.write_text("\n".join(cut.read_text().splitlines()[:-1]) + "\n")  # the end-of-file record lost
    assert "give --ram (read a dump) or --via" in bad(crash, "--ram", f"{first}@{low:#x}", "--via", "gdb:1.2.3.4:1")
    assert "a raw dump holds no addresses" in bad(crash, "--ram", str(first))
    assert f"{empty} is empty" in bad(crash, "--ram", f"{empty}@{low:#x}")
    assert "overlaps ram0.bin" in bad(crash, "--ram", f"{first}@{low:#x}", "--ram", f"{first}@{low + 4:#x}")
    assert "outside 32-bit addresses" in bad(crash, "--ram", f"{first}@0x100000000")
    none = bad(crash, "--ram", f"{first}@0x60000000")
    assert "covers none of demo_fw.elf's RAM sections" in none and ".tensor_arena" in none, none
    assert "the file is truncated" in bad(crash, "--ram", str(cut))
    assert "no such file" in bad(crash, "--ram", f"{tmp_path / 'nothere.bin'}@{low:#x}")
    regs = tmp_path / "regs.txt"
    regs.write_text("pc             0x16c junk\nsp 12345\n")
    assert "line 2: sp's value '12345' is not GDB's 0x... form" in bad(
        crash, "--ram", f"{first}@{low:#x}", "--registers", str(regs))


def test_gdb_refuses_a_bad_dump_in_one_line_and_goes_on(crash, tmp_path):
    first, low, _ = crash["files"][0]
    _, text = gdb_batch(FIRMWARE, [f"source {PLUGIN}", f"arena dump load {first}",
                                   f"arena dump load {first}@{low:#x} {first}@{low + 8:#x}", "arena dump",
                                   "echo STILL HERE\\n"], args=())
    assert f"arena dump: {first}: a raw dump holds no addresses" in text, text
    assert "overlaps ram0.bin" in text and "arena dump: none loaded" in text, text
    assert "STILL HERE" in text and "Traceback" not in text and "internal error" not in text, text


def test_a_read_outside_the_dump_says_so(crash):
    """A dump of the first file only (below .tensor_arena): the arena, guard band and stack are not
    in it; the tool warns which sections are missing, then stops at the first read past its end."""
    first, low, split = crash["files"][0]
    guard = next(lo for lo, _, name in ram_sections(FIRMWARE) if name == ".stack_guard")
    proc = tool("info", "--ram", f"{first}@{low:#x}")
    assert "warning: the dump does not hold all of .tensor_arena" in proc.stderr, proc.stderr
    assert proc.returncode == 2 and re.search(rf"arenascope info: cannot read \d+ B at {guard:#x}: outside the RAM "
                                              rf"dump \(it holds {low:#x}\.\.{split:#x}\)", proc.stderr), proc.stderr


def test_the_report_from_the_dump_holds_the_live_fault_verdict(crash):
    """`arenascope report --ram`: the self-contained HTML of the dump's post-mortem, drawn by the
    viewer, with the verdict GDB printed live, whole, and the dump named."""
    out = crash["dir"] / "dump-report.html"
    proc = tool("report", *ram_args(crash), "--registers", str(crash["regs"]), str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == "arenascope: " + banner(crash)
    text = out.read_text()
    live = " ".join(x.strip() for x in crash["live"]["fault"])  # the verdict as GDB printed it, unwrapped
    start = live.index("VERDICT: the stack ran into the arena.")
    first_sentences = live[start:live.index(". ", start + 40) + 1]
    import html
    assert html.escape(first_sentences, quote=True) in text, first_sentences
    assert "Regions (" in text and "<svg" in text
    # Said to be a dump, and named by its firmware, not by the temporary file the viewer was given.
    held = banner(crash).split("target: ")[1].split(";")[0]
    assert "From a RAM DUMP, not a live target: " + html.escape(held) in text
    title = text.split("<title>")[1].split("</title>")[0]
    assert title.startswith(f"arenascope report: {FIRMWARE}, read from RAM dump "), title


def test_damage_below_a_region_the_stack_left_intact_is_not_blamed_on_the_stack(crash, tmp_path):
    """A stack grown into the arena overwrites its tail from the top down. Bytes flipped in the
    dump in a checksummed tail object far below the stack's damage, with intact ones between:
    the stack verdict keeps its own damage, and a second verdict says the lower one was most
    likely a wild write (analyse/faults.stack_reach)."""
    out = tool("snapshot", *ram_args(crash), "--registers", str(crash["regs"]), str(tmp_path / "s.json"))
    assert out.returncode == 0, out.stderr
    snap = json.loads((tmp_path / "s.json").read_text())
    arena = snap["arenas"][0]
    hit = set(snap["fault"]["damaged_regions"])
    assert hit  # the stack's own damage, at the top of the tail
    top_hit = min(arena["regions"][i]["offset"] for i in hit)
    intact = [r for r in arena["regions"] if "immutable" in r["flags"] and r["index"] not in hit
              and r["offset"] + r["size_bytes"] <= top_hit]
    victim = min(intact, key=lambda r: r["offset"])  # the lowest: intact ones lie between it and the stack
    assert any(r["offset"] > victim["offset"] for r in intact)
    path, lo, hi = next(f for f in crash["files"] if f[1] <= arena["base_addr"] + victim["offset"] < f[2])
    data = bytearray(path.read_bytes())
    at = arena["base_addr"] + victim["offset"] - lo
    data[at:at + 4] = bytes(b ^ 0xFF for b in data[at:at + 4])
    smashed = tmp_path / path.name
    smashed.write_bytes(data)
    ram = [a for p, base, _ in crash["files"] for a in ("--ram", f"{smashed if p == path else p}@{base:#x}")]
    proc = tool("fault", *ram, "--registers", str(crash["regs"]))
    text = " ".join(x.strip() for x in proc.stdout.splitlines())
    stack_v = text[text.index("VERDICT: the stack ran into the arena."):]
    stack_v = stack_v[:stack_v.index("tail regions were overwritten below")]
    where = f"(+{victim['offset']}..+{victim['offset'] + victim['size_bytes']})"
    assert where not in stack_v, stack_v
    other = text[text.index("tail regions were overwritten below one the stack left intact"):]
    assert where in other and "most likely not by the stack" in other, other
    assert f"*(unsigned int *){arena['base_addr'] + victim['offset']:#x}" in other


def test_the_tools_json_junit_and_snapshot_dash_on_the_dump(crash, tmp_path):
    """`arenascope check --json --junit`, `fault --json`, `snapshot -`: stdout is one JSON
    document (the dump's banner goes to stderr), and it says what GDB said live: the stack FAILs
    and the fault's verdict is the stack running into the arena."""
    import json
    import xml.dom.minidom
    regs = ["--registers", str(crash["regs"])]
    xml_path = tmp_path / "checks.xml"
    proc = tool("check", *ram_args(crash), *regs, "--json", "--junit", str(xml_path))
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1 and "reading a RAM dump" in proc.stderr, proc.stderr
    assert doc["command"] == "check" and doc["ok"] is False and doc["messages"] == []
    failed = [c["rule"] for c in doc["checks"] if c["verdict"] == "FAIL"]
    assert "stack" in failed and any("FAIL  stack" in x for x in crash["live"]["check"])
    cases = xml.dom.minidom.parse(str(xml_path)).getElementsByTagName("testcase")
    assert [c.getAttribute("name") for c in cases if c.getElementsByTagName("failure")] == failed
    fault = json.loads(tool("fault", *ram_args(crash), *regs, "--json").stdout)
    assert fault["fault"] is not None and fault["note"] is None
    assert any("the stack ran into the arena" in json.dumps(v) for v in fault["fault"]["verdicts"]), fault
    snap = json.loads(tool("snapshot", *ram_args(crash), *regs, "-").stdout)
    assert snap["verdict"] == "FAIL" and snap["source"]["dump"], snap["source"]


def test_a_truncated_dump_still_gives_the_fault_and_names_what_is_missing(crash, tmp_path):
    """Issue 33 (a trial): a dump 16 B short was refused whole by the tool (GDB went on), with the
    start of a read that lay inside the dump. The fault is still decoded, and the missing bytes
    are named, as in GDB."""
    path, lo, hi = crash["files"][1]
    short = tmp_path / "short.bin"
    short.write_bytes(path.read_bytes()[:-16])
    proc = tool("fault", "--ram", f"{crash['files'][0][0]}@{crash['files'][0][1]:#x}", "--ram", f"{short}@{lo:#x}",
                "--registers", str(crash["regs"]))
    assert proc.returncode == 0, proc.stderr
    assert "BusFault: from " in proc.stdout or "HardFault: from " in proc.stdout, proc.stdout
    assert f"{hi - 16:#x}..{hi:#x} (16 B) of it is outside the RAM dump" in proc.stdout + proc.stderr, proc.stdout
