"""arenascope-plan on the real models in ../shared/models against what real TFLM builds printed.

Oracle: ../shared/tflm-figures/tflm-figures.json (PrintMemoryPlan buffer lines and
GetNonPersistentUsedBytes of TFLM built for x86-64 and for the Cortex-M4). Every buffer's
size, offset and lifetime, the head and the lower bound must be equal. Skips when ../shared is
absent (a clone on its own).
"""
import json
import math
import os
import re
import subprocess

import pytest

from harness import BUILD, ROOT, SHARED, TFLM_FIGURES

PLAN = BUILD / "planner" / "arenascope-plan"
MODELS = SHARED / "models"


def figures():
    if not TFLM_FIGURES.exists():
        return {}
    return json.loads(TFLM_FIGURES.read_text())["models"]


def run_plan(*args):
    return subprocess.run([str(PLAN), *map(str, args)], capture_output=True, text=True, timeout=60)


def plan_json(model, status=0):
    r = run_plan("--json", model)
    assert r.returncode == status, r.stderr
    return json.loads(r.stdout)


def as_tflm_plan(doc):
    """The tool's buffers in the shape of tflm-figures' PrintMemoryPlan lines."""
    return [{"id": b["id"], "size": b["size"], "offset": b["offset"], "first_used": b["first"],
             "last_used": b["last"]} for b in doc["buffers"]]


MODEL_NAMES = sorted(figures())


@pytest.mark.skipif(not MODEL_NAMES, reason="../shared/tflm-figures absent (clone on its own)")
@pytest.mark.parametrize("name", MODEL_NAMES)
@pytest.mark.parametrize("build", ["host", "arm_m4"])
def test_greedy_plan_equals_tflm(name, build):
    fig = figures()[name][build]
    if not fig.get("plan"):
        if "Hybrid models are not supported" in (fig.get("error") or ""):
            # TFLM's error names node 0, CONV_2D; so must ours, and the status says it failed.
            doc = plan_json(MODELS / name, status=1)
            assert doc["tflm_rejects"][0].startswith("subgraph 0 operator 0 (CONV_2D) is hybrid"), doc["tflm_rejects"]
            return
        pytest.skip(f"TFLM could not plan {name}: {fig.get('error')}")
    doc = plan_json(MODELS / name)
    ours = as_tflm_plan(doc)
    assert doc["approximate"] is False, doc["unmodelled_scratch"]
    assert ours == fig["plan"]
    assert doc["plans"]["tflm-greedy"]["head_bytes"] == fig["head_bytes"]
    assert doc["lower_bound"]["bytes"] == fig["lower_bound_bytes"]
    assert doc["lower_bound"]["scope"] == fig["lower_bound_time_step"]
    assert doc["lower_bound"]["bytes"] <= doc["plans"]["best"]["head_bytes"] <= fig["head_bytes"]


@pytest.mark.skipif(not MODELS.exists(), reason="../shared/models absent")
def test_table_names_the_figures():
    r = run_plan(MODELS / "tflm_micro_speech_quantized.tflite")
    assert r.returncode == 0, r.stderr
    # micro_speech: 5 buffers, head 5968 = lower bound (tflm-figures.json).
    assert "TFLM greedy            5968" in r.stdout
    assert "Reshape_2" in r.stdout and "[1,49,40,1]" in r.stdout


@pytest.mark.parametrize("content,needle", [
    (b"", "too short"),
    (b"\x10\x00\x00\x00NOPE" + b"\x00" * 40, 'not "TFL3"'),
    (b"\x10\x00\x00\x00TFL3" + b"\xff" * 40, "corrupt or truncated"),
])
def test_bad_files_are_clear_errors(tmp_path, content, needle):
    f = tmp_path / "bad.tflite"
    f.write_bytes(content)
    r = run_plan(f)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert needle in r.stderr and str(f) in r.stderr


def test_missing_file_and_usage(tmp_path):
    r = run_plan(tmp_path / "nope.tflite")
    assert r.returncode == 1 and "no such model file" in r.stderr and "nope.tflite" in r.stderr
    r = run_plan(tmp_path)
    assert r.returncode == 1 and "not a regular file" in r.stderr and str(tmp_path) in r.stderr
    r = run_plan("--json")
    assert r.returncode == 2 and "no model given" in r.stderr
    assert run_plan().returncode == 2
    assert run_plan("--bogus", "x").returncode == 2
    for bad in ("-1", "101", "ten", ""):
        r = run_plan("--margin", bad, "x")
        assert r.returncode == 2 and "--margin needs a percentage from 0 to 100" in r.stderr, bad
    assert run_plan("--snapshot").returncode == 2
    dscnn = BUILD / "planner" / "dscnn_kws.tflite"
    r = run_plan("--snapshot", tmp_path / "no" / "such" / "dir.json", dscnn)
    assert r.returncode == 1 and "cannot write the snapshot to" in r.stderr and "No such file" in r.stderr
    model = tmp_path / "m.tflite"  # the two paths swapped: the model must survive
    model.write_bytes(dscnn.read_bytes())
    (tmp_path / "link.json").symlink_to(model)
    for out in (model, tmp_path / "link.json"):
        r = run_plan("--snapshot", out, model)
        assert r.returncode == 2 and "is the model file itself" in r.stderr, r.stderr
    assert model.read_bytes() == dscnn.read_bytes()
    for args in ((), ("--json",), ("--header",)):
        with open("/dev/full", "w", encoding="utf-8") as full:
            r = subprocess.run([str(PLAN), *args, str(dscnn)], stdout=full, stderr=subprocess.PIPE, text=True,
                               timeout=60)
        assert r.returncode == 1 and "cannot write the output" in r.stderr, (args, r.stderr)
    r = run_plan("--json", "--margin", "20", dscnn)
    arena = json.loads(r.stdout)["arena"]
    at_least = math.ceil(arena["minimum_bytes"] * 1.2)
    assert arena["margin_pct"] == 20 and arena["recommended_bytes"] == math.ceil(at_least / 16) * 16


@pytest.mark.skipif(not MODELS.exists(), reason="../shared/models absent")
def test_json_survives_names_that_are_not_utf8(tmp_path):
    data = bytearray((MODELS / "tflm_hello_world_float.tflite").read_bytes())
    at = data.find(b"StatefulPartitionedCall:0")
    assert at > 0
    data[at] = 0xFF
    f = tmp_path / "badname.tflite"
    f.write_bytes(bytes(data))
    doc = plan_json(f)
    names = [t["name"] for t in doc["subgraphs"][0]["tensors"]]
    assert "\ufffdtatefulPartitionedCall:0" in names


@pytest.mark.skipif(not MODELS.exists(), reason="../shared/models absent")
def test_every_truncation_of_a_real_model_is_an_error(tmp_path):
    data = (MODELS / "tflm_hello_world_int8.tflite").read_bytes()
    f = tmp_path / "cut.tflite"
    for n in range(0, len(data), 97):
        f.write_bytes(data[:n])
        r = run_plan(f)
        assert r.returncode == 1, (n, r.returncode, r.stderr)


@pytest.mark.skipif(not MODEL_NAMES, reason="../shared/tflm-figures absent (clone on its own)")
def test_gdb_arena_plan_charts_a_model_with_no_target(tmp_path):
    """`arena plan --model` and `arena plan --snapshot` (of the tool's --snapshot) in real GDB,
    no target: the live bytes per scope are those of the plan real TFLM printed (computed here
    from tflm-figures.json's buffer lines)."""
    name = "tflm_micro_speech_quantized.tflite"
    snap = tmp_path / "micro_speech.json"
    assert run_plan("--snapshot", snap, MODELS / name).returncode == 0
    plan = figures()[name]["host"]["plan"]
    scopes = max(b["last_used"] for b in plan) + 1
    live = [sum(b["size"] for b in plan if b["first_used"] <= t <= b["last_used"]) for t in range(scopes)]
    r = subprocess.run(["gdb-multiarch", "-batch", "-nx", "-ex", f"source {ROOT / 'gdbplugin' / 'arenascope.py'}",
                        "-ex", f"set arena planner-path {PLAN}", "-ex", "set style enabled off",
                        "-ex", f"arena plan --model {MODELS / name}",
                        "-ex", f"arena plan --snapshot {snap}",
                        "-ex", f"arena plan --snapshot {tmp_path / 'missing.json'}",
                        "-ex", f"arena plan --model {MODELS / 'nope.tflite'}",
                        "-ex", f"arena plan --model {MODELS / name} --target host --margin 20",
                        "-ex", "arena plan --target host", "-ex", f"arena plan --model {MODELS / name} --margin 101",
                        "-ex", f"arena plan --model {MODELS / name} --margin \u0662\u0660",
                        "-ex", "set arena planner-path /nonexistent", "-ex", "arena plan --model ''"],
                       capture_output=True, text=True, timeout=120)
    out = r.stdout + r.stderr
    rows = [line.split() for line in out.splitlines() if line.strip().split(" ")[0] in ("in", "0", "1", "2", "3")]
    assert [int(row[2]) for row in rows] == live * 3, out  # the model's chart, the snapshot's, the host's
    assert f"model {MODELS / name}, predicted by arenascope-plan for cortex-m" in out
    assert "cannot read the snapshot" in out and "missing.json: No such file or directory" in out
    assert f"lower bound {figures()[name]['host']['lower_bound_bytes']} B" in out
    m4 = figures()[name]["arm_m4"]  # the plugin asks for the default target, cortex-m
    assert (f"arena_used_bytes() {m4['arena_used_bytes']} B after AllocateTensors; "
            f"minimum arena {m4['min_arena_bytes']} B") in out, out
    host = figures()[name]["host"]  # --target host --margin 20: x86-64's figures, 20 % up to a multiple of 16
    recommended = math.ceil(math.ceil(host["min_arena_bytes"] * 1.2) / 16) * 16
    assert (f"arena (host, reference kernels): arena_used_bytes() {host['arena_used_bytes']} B after AllocateTensors; "
            f"minimum arena {host['min_arena_bytes']} B") in out, out
    assert f"recommended {recommended} B (minimum + 20 %)" in out, out
    assert "--target, --margin, --kernels, --cpu and --tflm go with --model FILE.tflite" in out
    assert "101: use 0..100 percent" in out
    assert "'\u0662\u0660' is not a whole number" in out  # Arabic-Indic digits: not what the tool takes
    assert "nope.tflite: no such model file" in out
    assert "set arena planner-path: '/nonexistent' is not an executable file" in out
    assert "--model needs a .tflite file" in out
    assert "Traceback" not in out and "internal error" not in out
    # A model TFLM rejects is charted, then fails the batch run, as the tool's exit status does.
    hybrid = MODELS / "mlperf_tiny_kws_ref_model_float32.tflite"
    r = subprocess.run(["gdb-multiarch", "-batch", "-nx", "-ex", f"source {ROOT / 'gdbplugin' / 'arenascope.py'}",
                        "-ex", f"set arena planner-path {PLAN}", "-ex", f"arena plan --model {hybrid}"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "TFLM would reject this model: subgraph 0 operator 0 (CONV_2D) is hybrid" in r.stderr
    assert "lower bound" in r.stdout


RECORDED = re.compile(r"'(?P<what>[^']+)' used \d+ bytes with alignment overhead \(requested (?P<bytes>\d+) bytes for "
                      r"(?P<count>\d+) ")


@pytest.mark.skipif(not MODEL_NAMES, reason="../shared/tflm-figures absent (clone on its own)")
@pytest.mark.parametrize("name", MODEL_NAMES)
@pytest.mark.parametrize("build,target", [("host", "host"), ("arm_m4", "cortex-m")])
def test_arena_equals_what_tflm_measured(name, build, target):
    """The replay of TFLM's allocations predicts, byte for byte, what real TFLM builds measured
    (tflm-figures.json): the persistent tail (tail_bytes), arena_used_bytes() and the minimum
    arena found by bisection (min_arena_bytes); each tail category the RecordingMicroAllocator
    also counts has its requested bytes and count (the `recording` lines); the recommended arena
    is at least the measured minimum plus the margin."""
    fig = figures()[name][build]
    if not fig.get("plan"):
        pytest.skip(f"TFLM could not plan {name}")
    r = run_plan("--json", "--target", target, MODELS / name)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["target"] == target
    recorded = {m["what"]: (int(m["count"]), int(m["bytes"])) for line in fig["recording"]
                for m in [RECORDED.search(line)] if m}
    ours = {p["what"]: (p["count"], p["bytes"]) for p in doc["tail"]["parts"]}
    assert {"TfLiteEvalTensor data", "NodeAndRegistration struct", "Persistent TfLiteTensor data",
            "Persistent buffer data"} <= set(ours)
    for what in ours:
        if what in recorded:
            assert ours[what] == recorded[what], what
    arena = doc["arena"]
    assert arena["exact"], arena["unmodelled_kernels"]
    assert doc["tail"]["bytes"] == fig["tail_bytes"]
    assert arena["arena_used_bytes"] == fig["arena_used_bytes"]
    assert arena["minimum_bytes"] == fig["min_arena_bytes"]
    assert arena["recommended_bytes"] * 100 >= fig["min_arena_bytes"] * 110
    assert arena["recommended_bytes"] % 16 == 0


KNOWN_PHASES = {"MicroInterpreter constructor (MicroAllocator::Create)", "AllocateTensors: StartModelAllocation",
                "AllocateTensors: parsing builtin options", "AllocateTensors: kernels' Init",
                "AllocateTensors: kernels' Prepare", "AllocateTensors: memory planning (FinishModelAllocation)",
                "AllocateTensors: input/output TfLiteTensors"}


def replay_at(model, target, size):
    r = run_plan("--json", "--target", target, "--arena-size", size, model)
    doc = json.loads(r.stdout)
    replay = doc["replay"]
    # the gate (gate.h): 0 fits, 4 kTfLiteError returned, 5 TFLM crashes, hangs or corrupts memory
    expected = 0 if replay["fits"] else 4 if replay["outcome"]["kind"] == "error" else 5
    assert r.returncode == expected == doc["gate"]["exit_status"], (r.returncode, replay["outcome"], r.stderr)
    return replay


@pytest.mark.skipif(not MODEL_NAMES, reason="../shared/tflm-figures absent (clone on its own)")
@pytest.mark.parametrize("name", MODEL_NAMES)
@pytest.mark.parametrize("build,target", [("host", "host"), ("arm_m4", "cortex-m")])
def test_arena_size_against_tflms_minimum(name, build, target):
    """--arena-size N against the smallest arena real TFLM ran in (tflm-figures.json
    min_arena_bytes, the oracle): it fits at the minimum and not one byte below, and below it the
    shortfall is the minimum minus N and the failing request is in one of TFLM's phases."""
    fig = figures()[name][build]
    if not fig.get("min_arena_bytes"):
        pytest.skip(f"TFLM has no minimum arena for {name}")
    low = fig["min_arena_bytes"]
    model = MODELS / name
    at = replay_at(model, target, low)
    assert at["fits"] and at["failed"] is None and at["outcome"]["kind"] == "ok", at
    assert at["shortfall_bytes"] == 0 and at["minimum_bytes"] == low
    assert at["tail_bytes"] + at["head_bytes"] == at["arena_used_bytes"]
    assert at["tail_regions"] and all(0 <= t["offset"] < low for t in at["tail_regions"])
    for size in sorted({low - 1, low - 16, low - 100, low // 2, 64}, reverse=True):
        below = replay_at(model, target, size)
        assert not below["fits"], size
        assert below["shortfall_bytes"] == low - size, size
        assert below["failed"]["phase"] in KNOWN_PHASES, below["failed"]
        assert below["outcome"]["kind"] in ("error", "crash", "hang", "unknown"), below["outcome"]
        assert below["arena_used_bytes"] is None and below["tail_regions"] == []
        state = below["state"]
        assert 0 <= state["head"] <= state["tail"] <= size, (size, state)


def test_arena_size_usage(tmp_path):
    """N is ASCII decimal or 0x hex, 1..2^32-1; anything else is a usage error that names it."""
    for bad in ("0", "-5", "+5", "1e3", "4294967296", "0x", "0x100000000", "012", "\u0661\u0662", " 12", "12 ",
                "99999999999999999999", ""):
        r = run_plan("--arena-size", bad, DSCNN)
        assert r.returncode == 2, (bad, r.returncode, r.stdout[:200])
        assert "--arena-size needs a size in bytes from 1 to 4294967295" in r.stderr, (bad, r.stderr)
    assert run_plan("--arena-size").returncode == 2
    r = run_plan("--header", "--arena-size", "1000", DSCNN)
    assert r.returncode == 2 and "not --header" in r.stderr
    for good, value in (("4294967295", 4294967295), ("0x1000", 4096), ("0XfF", 255), ("1", 1)):
        r = run_plan("--json", "--arena-size", good, DSCNN)
        assert r.returncode in (0, 4, 5), (good, r.stderr)  # read as a size: the gate's answer, not usage (2)
        assert json.loads(r.stdout)["replay"]["arena_bytes"] == value
    assert "replay" not in plan_json(DSCNN)  # only asked for
    r = run_plan("--arena-size", "100000", DSCNN)
    assert r.returncode == 0
    # the first lines: the verdict, the minimum and the recommended size (gate.h), then the replay
    lines = r.stdout.splitlines()
    doc = plan_json(DSCNN)
    assert lines[1] == (f"verdict: FITS: AllocateTensors succeeds in an arena of 100000 B, "
                        f"{100000 - doc['arena']['minimum_bytes']} B above the minimum (exit status 0)")
    assert lines[2] == (f"minimum arena {doc['arena']['minimum_bytes']} B, recommended "
                        f"{doc['arena']['recommended_bytes']} B (minimum + 10 % margin)")
    assert lines[4].startswith("arena of 100000 bytes (--arena-size, cortex-m): FITS")
    assert "--arena-size N" in run_plan("--help").stdout


def compile_header(tmp_path, header_text, program=None):
    """Writes the header as plan.h and compiles `program` (C source) with every warning an error,
    into the executable tmp_path/prog; with no program, a file that defines the tables and
    includes the header, as the demo firmware does, into an object. Returns gcc's result."""
    (tmp_path / "plan.h").write_text(header_text)
    (tmp_path / "prog.c").write_text(program or '#define ARENASCOPE_PLAN_TABLES\n#include "plan.h"\n'
                                     "int main(void) { return (int)ARENASCOPE_PLAN_MINIMUM_EXACT + "
                                     "(int)arenascope_plan_head[0].size_bytes; }\n")
    out = ["-o", str(tmp_path / "prog")] if program else ["-c", "-o", str(tmp_path / "prog.o")]
    return subprocess.run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", f"-I{tmp_path}",
                           f"-I{ROOT / 'target_agent' / 'include'}", str(tmp_path / "prog.c"), *out],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.skipif(not MODEL_NAMES, reason="../shared/tflm-figures absent (clone on its own)")
def test_header_compiles_to_tflms_plan_and_tail(tmp_path):
    """--header for keyword_scrambled_8bit, compiled with the agent's header (as the demo
    firmware's build does): the head table is real TFLM's PrintMemoryPlan on the Cortex-M4
    (tflm-figures.json arm_m4 plan, planner id order), and the tail items end at the arena's end
    and reach down exactly tail_bytes; its 7 variable (SVDF state) tensors are in it."""
    fig = figures()["tflm_keyword_scrambled_8bit.tflite"]["arm_m4"]
    r = run_plan("--header", MODELS / "tflm_keyword_scrambled_8bit.tflite")
    assert r.returncode == 0, r.stderr
    built = compile_header(tmp_path, r.stdout, program=(
        '#include <stdio.h>\n#define ARENASCOPE_PLAN_TABLES\n#include "plan.h"\n'
        "int main(void) {\n"
        "  unsigned i, low = ARENASCOPE_PLAN_RECOMMENDED_ARENA_BYTES, top = 0;\n"
        "  for (i = 0; i < ARENASCOPE_PLAN_REGIONS; i++) { const arenascope_region_t *r = &arenascope_plan_head[i];\n"
        '    printf("head %u %u %u %d %d\\n", i, (unsigned)r->size_bytes, (unsigned)r->offset_bytes, '
        'r->first_use, r->last_use); }\n'
        "  for (i = 0; i < ARENASCOPE_PLAN_TAIL_ITEMS; i++) { "
        "const arenascope_plan_tail_item_t *t = &arenascope_plan_tail[i];\n"
        "    if (t->offset_bytes < low) low = t->offset_bytes;\n"
        "    if (t->offset_bytes + t->size_bytes > top) top = t->offset_bytes + t->size_bytes;\n"
        '    if (t->flags & ARENASCOPE_REGION_VARIABLE) '
        'printf("variable %u %u\\n", (unsigned)t->id, (unsigned)t->size_bytes); }\n'
        '  printf("tail %u %u %u\\n", ARENASCOPE_PLAN_RECOMMENDED_ARENA_BYTES - low, top, '
        'ARENASCOPE_PLAN_RECOMMENDED_ARENA_BYTES);\n'
        '  printf("ops %d %s\\n", ARENASCOPE_PLAN_MAIN_OPS, arenascope_plan_op_names[1]);\n'
        "  return 0;\n}\n"))
    assert built.returncode == 0, built.stderr
    lines = [line.split() for line in subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True,
                                                     check=True).stdout.splitlines()]
    head = [{"id": int(x[1]), "size": int(x[2]), "offset": int(x[3]), "first_used": int(x[4]),
             "last_used": int(x[5])} for x in lines if x[0] == "head"]
    assert head == fig["plan"]
    tail = next(x for x in lines if x[0] == "tail")
    assert int(tail[1]) == fig["tail_bytes"] and tail[2] == tail[3]
    variables = [(int(x[1]), int(x[2])) for x in lines if x[0] == "variable"]
    assert len(variables) == 7 and sum(size for _, size in variables) == 5120  # recording: 7 allocations, 5120 B
    assert next(x for x in lines if x[0] == "ops")[1:] == ["15", "SVDF"]
    assert run_plan("--header", "--json", MODELS / "tflm_keyword_scrambled_8bit.tflite").returncode == 2


DSCNN = BUILD / "planner" / "dscnn_kws.tflite"


def test_header_compiles_whatever_the_tensor_names_hold(tmp_path):
    """Tensor names are text from the model: a name holding a comment's start or end must not
    break a -Werror build (-Wcomment), nor end the comment early."""
    data = DSCNN.read_bytes()
    for old, new in [(b"block1/dw_relu", b"block1/*w_relu"), (b"block2/dw_relu", b"block2*/w_relu")]:
        assert data.count(old) == 1
        data = data.replace(old, new)
    model = tmp_path / "names.tflite"
    model.write_bytes(data)
    r = run_plan("--header", model)
    assert r.returncode == 0, r.stderr
    assert "#define ARENASCOPE_PLAN_MINIMUM_EXACT 1" in r.stdout
    built = compile_header(tmp_path, r.stdout)
    assert built.returncode == 0, built.stderr


@pytest.mark.skipif(not MODELS.exists(), reason="../shared/models absent")
def test_header_of_a_model_tflm_rejects_stops_the_build(tmp_path):
    """The hybrid float32 DS-CNN (TFLM rejects it, tflm-figures): exit 1, and a header that a
    build ignoring the exit status still cannot compile, with the reason in the #error."""
    r = run_plan("--header", MODELS / "mlperf_tiny_kws_ref_model_float32.tflite")
    assert r.returncode == 1
    assert "#define ARENASCOPE_PLAN_MINIMUM_EXACT 0" in r.stdout and "a floor: TFLM rejects this model" in r.stdout
    built = compile_header(tmp_path, r.stdout)
    assert built.returncode != 0 and "TFLM rejects this model" in built.stderr and "hybrid" in built.stderr


def test_project_dscnn_model_plans_as_worked_by_hand():
    """The project's own DS-CNN (planner/tools/write_dscnn.cpp, written at build time): 13
    operators; its head is two 25x5x64 int8 activations live together (8000 B each) = 16000 B."""
    doc = plan_json(DSCNN)
    ops = [op["op"] for op in doc["subgraphs"][0]["operators"]]
    assert ops == ["CONV_2D"] + ["DEPTHWISE_CONV_2D", "CONV_2D"] * 4 + ["AVERAGE_POOL_2D", "RESHAPE",
                                                                         "FULLY_CONNECTED", "SOFTMAX"]
    assert doc["subgraphs"][0]["tensors"][0]["shape"] == [1, 49, 10, 1]
    assert doc["plans"]["tflm-greedy"]["head_bytes"] == 16000 == doc["lower_bound"]["bytes"]
    assert not doc["approximate"] and not doc["tflm_rejects"]


def test_dscnn_writer_arguments(tmp_path):
    """The writer takes OUT and --blocks N in any order; anything else is a usage error that
    names it (it used to write a file named '--blocks'), and a failed write says why."""
    writer = BUILD / "planner" / "arenascope-write-dscnn"

    def run(*args):
        return subprocess.run([str(writer), *map(str, args)], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    a, b = tmp_path / "a.tflite", tmp_path / "b.tflite"
    assert run("--blocks", 3, a).returncode == 0 and run(b, "--blocks", 3).returncode == 0
    assert a.read_bytes() == b.read_bytes()
    ops = [op["op"] for op in plan_json(a)["subgraphs"][0]["operators"]]
    assert ops.count("DEPTHWISE_CONV_2D") == 3
    for args, needle in [(("--blocks", 501, "x.tflite"), "--blocks 501: give a whole number from 1 to 500"),
                         (("--blocks", "3x", "x.tflite"), "--blocks 3x"), (("--blocks",), "--blocks needs a number"),
                         (("x.tflite", "y.tflite"), "one output file only"), ((), "give the output file"),
                         (("--frobnicate", "x.tflite"), "unknown option --frobnicate")]:
        r = run(*args)
        assert r.returncode == 2 and needle in r.stderr and "usage:" in r.stderr, (args, r.stderr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.tflite", "b.tflite"]  # no stray files
    r = run("--help")
    assert r.returncode == 0 and r.stdout.startswith("usage:")
    r = run(tmp_path / "missing" / "x.tflite")
    assert r.returncode == 1 and "No such file or directory" in r.stderr


@pytest.mark.skipif(not MODEL_NAMES, reason="../shared/tflm-figures absent (clone on its own)")
@pytest.mark.parametrize("build", ["host", "arm_m4"])
def test_project_dscnn_has_the_plan_tflm_gave_mlperf_dscnn(build):
    """Same graph, shapes and quantization as MLPerf Tiny's DS-CNN KWS model: the same plan,
    buffer for buffer, as real TFLM printed for mlperf_tiny_kws_ref_model.tflite, and the
    tail, arena_used_bytes() and minimum arena real TFLM measured for it."""
    fig = figures()["mlperf_tiny_kws_ref_model.tflite"][build]
    r = run_plan("--json", "--target", "host" if build == "host" else "cortex-m", DSCNN)
    doc = json.loads(r.stdout)
    assert as_tflm_plan(doc) == fig["plan"]
    assert doc["tail"]["bytes"] == fig["tail_bytes"]
    assert doc["arena"]["arena_used_bytes"] == fig["arena_used_bytes"]
    assert doc["arena"]["minimum_bytes"] == fig["min_arena_bytes"] and doc["arena"]["exact"]


# Optional: the project's DS-CNN through real TFLM. CI has no TFLM and nothing of TFLM is in the
# project; build the probe by hand, outside it (docs/arena-budget.md, "Checked against real TFLM"):
#   ARENASCOPE_TFLM_ARENA_PROBE     x86-64 executable: arena_probe MODEL.tflite SIZE
#   ARENASCOPE_TFLM_ARENA_PROBE_M4  the same for the Cortex-M4, an ELF QEMU mps2-an386 runs with
#                                   semihosting (arguments from the semihosting command line)
# Contract: exit 0 and "arena_used_bytes N" when AllocateTensors and one Invoke succeed in an
# arena of SIZE bytes; anything else (an error, a crash, a hang) is a failure.
ARENA_PROBES = {"host": os.environ.get("ARENASCOPE_TFLM_ARENA_PROBE"),
                "cortex-m": os.environ.get("ARENASCOPE_TFLM_ARENA_PROBE_M4")}


def probe_arena(target, model, size):
    """arena_used_bytes() when real TFLM runs `model` in `size` bytes, else None."""
    probe = ARENA_PROBES[target]
    if target == "host":
        cmd = [probe, str(model), str(size)]
    else:
        cmd = ["qemu-system-arm", "-M", "mps2-an386", "-nographic", "-monitor", "none", "-serial", "null",
               "-semihosting-config", f"enable=on,target=native,arg=probe,arg={model},arg={size}", "-kernel", probe]
    try:  # a fault in an undersized arena loops in the M4's fault handler: a hang is a failure
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=15)
    except subprocess.TimeoutExpired:
        return None
    m = re.search(r"arena_used_bytes (\d+)", r.stdout)
    return int(m.group(1)) if r.returncode == 0 and m else None


def measured_minimum(target, model, high):
    """The smallest arena real TFLM runs the model in: bisection below `high`, then a scan of the
    64 bytes below (as tflm-figures found min_arena_bytes)."""
    assert probe_arena(target, model, high) is not None, f"real TFLM fails in {high} bytes"
    low = 0
    while high - low > 1:
        mid = (low + high) // 2
        if probe_arena(target, model, mid) is not None:
            high = mid
        else:
            low = mid
    return next((s for s in range(max(high - 64, 1), high) if probe_arena(target, model, s) is not None), high)


@pytest.mark.parametrize("target", ["host", "cortex-m"])
def test_project_dscnn_runs_in_real_tflm(target):
    """The DS-CNN the project writes is a model real TFLM accepts and runs (AllocateTensors and
    Invoke), and what it measures equals the prediction: arena_used_bytes() in a large arena and
    the minimum arena."""
    if not ARENA_PROBES[target] or not os.path.exists(ARENA_PROBES[target]):
        pytest.skip("ARENASCOPE_TFLM_ARENA_PROBE(_M4) names no real TFLM probe (optional test)")
    r = run_plan("--json", "--target", target, DSCNN)
    doc = json.loads(r.stdout)
    assert probe_arena(target, DSCNN, 200_000) == doc["arena"]["arena_used_bytes"]
    assert measured_minimum(target, DSCNN, 65_536) == doc["arena"]["minimum_bytes"]
