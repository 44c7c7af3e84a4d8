"""`--json` on every reporting command, `arena snapshot -` and `arena check --junit FILE`, on the
demo firmware in QEMU. Each command runs as `pipe CMD | cat > FILE`, GDB's way to send a
command's standard output to a program: the file must then be one JSON document alone (what
else the command says is in its "messages": `pipe` sends stderr down the pipe too), valid
against docs/command-json-schema.json (with the snapshot schema it refers to), and its figures
must equal nm's symbols, GDB's registers and the VERSION file. The JUnit report is read back
with xmllint (libxml2, not the xml.etree that wrote it) and matches `arena check --json`, in
the demo's overrun state (scenario 2: the canary FAILs, examples/demo/workload.c)."""
import json
import os
import subprocess
import tempfile

import pytest

from harness import FIRMWARE, ROOT, qemu

jsonschema = pytest.importorskip("jsonschema")
PLUGIN = ROOT / "gdbplugin" / "arenascope.py"
pytestmark = pytest.mark.skipif(not FIRMWARE.exists(), reason=f"{FIRMWARE} not built")
HEALTHY = ["break demo_invoke_done if invokes == 1", "continue", "delete"]
OVERRUN = HEALTHY + ["set var demo_scenario = 2", "break demo_invoke_done if invokes == 2", "continue", "delete"]
COMMANDS = ["info", "check", "regions --sort size", "map", "plan", "stack", "fault",
            "whereis &tensor_arena[100]", "version"]  # interpreters: on the TFLM stand-in, below
STANDIN = FIRMWARE.parent / "tflm_standin" / "tflm_standin_fw.elf"


def symbols():
    """{name: (address, size)} from nm -S: the independent truth for addresses."""
    out = subprocess.run(["arm-none-eabi-nm", "-S", str(FIRMWARE)], capture_output=True, text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4:
            found[parts[3]] = (int(parts[0], 16), int(parts[1], 16))
        elif len(parts) == 3:
            found[parts[2]] = (int(parts[0], 16), None)
    return found


def run_piped(commands, setup, tmp, elf=FIRMWARE):
    """Runs each command as `pipe CMD | cat > tmp/N.json` after setup in one gdb -batch session;
    returns ([file text], GDB's stdout + stderr, exit status)."""
    files = [os.path.join(tmp, f"{i}.json") for i in range(len(commands))]
    with qemu(elf) as (port, _log):
        cmd = ["gdb-multiarch", "-q", "-nx", "-batch", "-ex", "set tcp auto-retry on",
               "-ex", "set tcp connect-timeout 15", "-ex", f"target remote 127.0.0.1:{port}",
               "-ex", f"source {PLUGIN}", "-ex", "set pagination off"]
        for c in setup:
            cmd += ["-ex", c]
        for c, f in zip(commands, files, strict=True):
            cmd += ["-ex", f"pipe {c} | cat > {f}"]
        cmd.append(str(elf))
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, cwd=tmp)
    texts = [open(f, encoding="utf-8").read() if os.path.exists(f) else "" for f in files]
    return texts, proc.stdout + proc.stderr, proc.returncode


def validator():
    snap = json.loads((ROOT / "docs" / "snapshot-schema.json").read_text())
    command = json.loads((ROOT / "docs" / "command-json-schema.json").read_text())
    resolver = jsonschema.RefResolver.from_schema(command, store={snap["$id"]: snap, command["$id"]: command})
    return jsonschema.Draft202012Validator(command, resolver=resolver)


@pytest.fixture(scope="module")
def healthy():
    with tempfile.TemporaryDirectory() as tmp:
        texts, log, _rc = run_piped([f"arena {c} --json" for c in COMMANDS] + ["info registers sp"], HEALTHY, tmp)
    return dict(zip(COMMANDS + ["sp"], texts, strict=True)), log


@pytest.mark.parametrize("command", COMMANDS)
def test_each_json_is_one_valid_document(healthy, command):
    text = healthy[0][command]
    doc = json.loads(text)  # the whole file: one document, nothing else on stdout
    validator().validate(doc)
    assert doc["command"] == command.split()[0], doc


def test_json_figures_equal_nm_and_gdb(healthy):
    docs = {c.split()[0]: json.loads(t) for c, t in healthy[0].items() if c != "sp"}
    nm = symbols()
    arena_addr, arena_size = nm["tensor_arena"]
    for doc in (docs["info"], docs["map"]):
        assert doc["arenas"][0]["base_addr"] == arena_addr and doc["arenas"][0]["size_bytes"] == arena_size
    sizes = [r["size_bytes"] for r in docs["regions"]["arenas"][0]["regions"]]
    # largest first, as `arena regions --sort size` lists them
    assert docs["regions"]["sort"] == "size" and sizes == sorted(sizes, reverse=True) and len(sizes) > 10
    assert docs["regions"]["arenas"][0]["base_addr"] == arena_addr
    stack = docs["stack"]["stack"]
    assert (stack["low_addr"], stack["high_addr"]) == (nm["__StackLimit"][0], nm["__StackTop"][0])
    assert stack["sp"] == int(healthy[0]["sp"].split()[1], 16)
    w = docs["whereis"]
    assert w["address"] == arena_addr + 100 and w["arenas"][0]["offset"] == 100 and w["stack"] is None
    assert docs["fault"]["fault"] is None and docs["fault"]["note"]
    assert docs["version"]["arenascope"] == (ROOT / "VERSION").read_text().strip()
    assert docs["check"]["ok"] is True and docs["check"]["verdict"] != "FAIL"


def test_check_json_and_junit_agree_with_the_overrun():
    with tempfile.TemporaryDirectory() as tmp:
        xml = os.path.join(tmp, "report.xml")
        texts, log, rc = run_piped([f"arena check --json --junit {xml}"], OVERRUN, tmp)
        doc = json.loads(texts[0])
        assert rc != 0, log  # a FAIL fails gdb -batch
        assert f"arena check: wrote {xml} ({len(doc['checks'])} testcases, 1 failures)" in doc["messages"], doc
        validator().validate(doc)
        assert doc["ok"] is False and doc["verdict"] == "FAIL"
        assert [c["rule"] for c in doc["checks"] if c["verdict"] == "FAIL"] == ["canary"], doc

        def xpath(expr):
            return subprocess.run(["xmllint", "--xpath", expr, xml], capture_output=True, text=True,
                                  check=True).stdout.strip()
        assert xpath("string(/testsuites/testsuite/@name)") == "arenascope"
        assert int(float(xpath("count(//testcase)"))) == len(doc["checks"])
        assert xpath("string(/testsuites/testsuite/@failures)") == "1"
        assert xpath("string(//testcase[failure]/@name)") == "canary"
        names = [xpath(f"string(//testcase[{i + 1}]/@name)") for i in range(len(doc["checks"]))]
        assert names == [c["rule"] for c in doc["checks"]]
        canary = next(c for c in doc["checks"] if c["rule"] == "canary")
        assert xpath("string(//testcase[failure]/failure/@message)") == canary["reason"]


def test_snapshot_dash_writes_the_snapshot_to_stdout_and_no_file():
    with tempfile.TemporaryDirectory() as tmp:
        texts, log, _rc = run_piped(["arena snapshot -"], OVERRUN, tmp)
        assert not os.path.exists(os.path.join(tmp, "-")), log
    snap = json.loads(texts[0])
    jsonschema.validate(snap, json.loads((ROOT / "docs" / "snapshot-schema.json").read_text()))
    arena_addr, _ = symbols()["tensor_arena"]
    assert snap["verdict"] == "FAIL" and snap["arenas"][0]["base_addr"] == arena_addr
    a = snap["arenas"][0]
    # workload.c scenario 2 writes 128 B past an output that ends at the head's end: the damage
    # starts in the free band, at or above the head, within those 128 B
    assert a["damage"] is not None and a["head_bytes"] <= a["damage"]["offset"] < a["head_bytes"] + 128, a["damage"]


def test_junit_to_a_folder_that_is_missing_is_one_clear_error():
    with tempfile.TemporaryDirectory() as tmp:
        texts, log, _rc = run_piped(["arena check --junit /nonexistent/dir/r.xml"], HEALTHY, tmp)
    assert "arena check: cannot write /nonexistent/dir/r.xml: the folder /nonexistent/dir does not exist" in log, log
    assert "Traceback" not in log


@pytest.mark.skipif(not STANDIN.exists(), reason=f"{STANDIN} not built")
def test_interpreters_json_on_the_tflm_standin():
    """The stand-in has TFLM's type names (not TFLM): its interpreter's address equals nm's."""
    nm = subprocess.run(["arm-none-eabi-nm", "-C", str(STANDIN)], capture_output=True, text=True, check=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        texts, log, _rc = run_piped(["arena interpreters --json"], ["break inference_done", "continue", "delete"],
                                    tmp, elf=STANDIN)
    doc = json.loads(texts[0] or "null")
    assert doc is not None, log
    validator().validate(doc)
    entry = doc["interpreters"][0]
    assert f"{entry['address']:08x}" in nm and entry["buffers"], (entry, log)


def test_diff_json_through_pipe_is_one_document_with_its_messages(monkeypatch):
    """`arena diff A --json --view`: the diff is one document on the pipe; what the command says
    besides (here --view's "started", the viewer being /bin/true) is in its "messages", not after it."""
    monkeypatch.setenv("DISPLAY", ":arenascope-test")  # compareview starts a viewer only with a display
    schema = json.loads((ROOT / "docs" / "diff-schema.json").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        snap = os.path.join(tmp, "a.json")
        texts, log, _rc = run_piped([f"arena diff {snap} --json --view"],
                                    HEALTHY + [f"arena snapshot {snap}", "set arena viewer-path /bin/true"], tmp)
    doc = json.loads(texts[0] or "null")  # the whole file: one document
    assert doc is not None, log
    jsonschema.validate(doc, schema)
    assert doc["identical"] is True, doc["summary"]
    started = [m for m in doc["messages"] if m.startswith("arena diff: started /bin/true ")]
    assert len(started) == 1 and f"--before {snap} --diff " in started[0], doc["messages"]


def test_each_document_carries_its_warnings_however_often_it_is_asked():
    """A warning is said once a stop in text, but a JSON document stands alone: two identical
    `--json` commands at one stop carry the same messages (here: the planner is /bin/false)."""
    with tempfile.TemporaryDirectory() as tmp:
        texts, log, _rc = run_piped(["arena info --json", "arena info --json", "arena check --json"],
                                    HEALTHY + ["set arena planner-path /bin/false"], tmp)
    docs = [json.loads(t or "null") for t in texts]
    assert None not in docs, log
    first = docs[0]["messages"]
    assert any("cannot plan the published model (/bin/false is not arenascope-plan" in m for m in first), first
    assert docs[1]["messages"] == first and docs[2]["messages"] == first, docs


def test_a_failing_json_command_prints_its_error_as_json():
    """Issue 33: a script reading `arena X --json` reads JSON even when X fails: here, `whereis`
    on an expression GDB cannot evaluate, `regions` with a bad --sort, and `fault` with no stack
    range for a firmware run past its descriptor (the demo at reset: no descriptor yet)."""
    with tempfile.TemporaryDirectory() as tmp:
        texts, log, _rc = run_piped(["arena whereis no_such_symbol --json", "arena regions --sort nonsense --json",
                                     "arena info --json"], [], tmp)
    for text, command in zip(texts, ("whereis", "regions", "info"), strict=True):
        doc = json.loads(text)
        validator().validate(doc)
        assert doc["command"] == command and doc["error"].startswith(f"arena {command}: "), doc
        assert doc["error"] in log  # and GDB's error, as without --json (a batch exits non-zero)
    assert "nonsense" in json.loads(texts[1])["error"]


def test_fault_json_carries_the_verdict_without_a_fault():
    """The overrun scenario ends with no exception: `fault` is null, the verdict is still there."""
    with tempfile.TemporaryDirectory() as tmp:
        texts, _log, _rc = run_piped(["arena fault --json"], OVERRUN, tmp)
    doc = json.loads(texts[0])
    validator().validate(doc)
    assert doc["fault"] is None and doc["note"] and doc["verdict"] == "FAIL", doc
    assert [v["kind"] for v in doc["verdicts"]] == ["buffer-overrun"], doc["verdicts"]
    assert doc["verdicts"][0]["headline"].startswith("VERDICT: something wrote past its buffer in the arena"), doc
