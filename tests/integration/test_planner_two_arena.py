"""arenascope-plan --persistent-size P --non-persistent-size N: TFLM's two-arena mode.

Expected figures are worked out by hand from TFLM 90b983c2's source (micro_allocator.cc, the
five-argument MicroAllocator::Create; arena_allocator/persistent_arena_buffer_allocator.{h,cc},
non_persistent_arena_buffer_allocator.{h,cc}), and, where the relation is exact, from the
single-arena figures real TFLM measured (../shared/tflm-figures, skipped without it):

- Create puts, in the persistent buffer, from its end aligned down to 16: the
  PersistentArenaBufferAllocator (a vtable pointer and 3 pointers: 16 B on Cortex-M, 32 B on
  x86-64), the NonPersistentArenaBufferAllocator (a vtable pointer, 5 pointer-sized members, an
  int and a bool: 29 B rounded to 32 on Cortex-M; 53 B rounded to 56 on x86-64), the
  GreedyMemoryPlanner (44 / 72 B) and the MicroAllocator (36 / 72 B), each aligned to its
  alignof (4 / 8).
- The single-arena tail starts with the SingleArenaBufferAllocator (36 / 72 B) instead of the two
  allocators (48 / 88 B). On x86-64 the difference is 16 B, a multiple of the 16-byte alignment
  every other request uses at most, so the whole tail moves by exactly 16: persistent used =
  tail_bytes + 16. On Cortex-M it is 12 B, absorbed or not by the first 16-aligned request's
  padding: persistent used = tail_bytes or tail_bytes + 16 (every model has one: the
  input TfLiteTensor* array is 16-aligned).
- The non-persistent buffer holds only the head and the temporaries, so after AllocateTensors
  its used bytes (next_temp_ - buffer_head_) are the greedy plan's head: head_bytes.
- The persistent buffer fails below its start, its end aligned down: its minimum is the used
  bytes rounded up to 16.
"""
import json
import subprocess

import pytest

from harness import BUILD, SHARED, TFLM_FIGURES

PLAN = BUILD / "planner" / "arenascope-plan"
DSCNN = BUILD / "planner" / "dscnn_kws.tflite"
built = pytest.mark.skipif(not PLAN.exists() or not DSCNN.exists(), reason="planner not built (cmake --build build)")


def figures():
    return json.loads(TFLM_FIGURES.read_text())["models"] if TFLM_FIGURES.exists() else {}


MODEL_NAMES = sorted(n for n, f in figures().items() if f.get("arm_m4", {}).get("plan"))


def two(model, p, n, *more, status=None):
    """The JSON of a two-arena run; its exit status is the gate's (gate.h): 0 when the buffers fit,
    4 when one runs out (or `status`, given)."""
    r = subprocess.run([str(PLAN), "--json", *more, "--persistent-size", str(p), "--non-persistent-size", str(n),
                        str(model)], capture_output=True, text=True, timeout=60)
    doc = json.loads(r.stdout) if r.stdout.strip() else None
    if status is None:
        status = 0 if doc["two_arena"]["fits"] else 4
    assert r.returncode == status, r.stderr
    if doc is not None and status in (0, 4):
        assert doc["gate"]["exit_status"] == status and doc["gate"]["verdict"] == ("FITS" if status == 0 else
                                                                                    "DOES NOT FIT")
    return doc


@built
def test_create_puts_its_four_objects_at_the_top_of_the_persistent_buffer():
    for size in (20000, 20007):  # the end aligned down to 16: 20000 either way
        t = two(DSCNN, size, 20000)["two_arena"]
        got = [(r["what"], r["offset"], r["size"]) for r in t["tail_regions"][:4]]
        assert got == [("PersistentArenaBufferAllocator", 20000 - 16, 16),
                       ("NonPersistentArenaBufferAllocator", 20000 - 16 - 32, 32),
                       ("GreedyMemoryPlanner", 20000 - 48 - 44, 44),
                       ("MicroAllocator", 20000 - 92 - 36, 36)]
        assert [c["role"] for c in t["constructor"]] == ["persistent-arena-allocator",
                                                          "non-persistent-arena-allocator", "memory-planner",
                                                          "micro-allocator"]
    host = two(DSCNN, 20000, 20000, "--target", "host")["two_arena"]
    assert [(r["offset"], r["size"]) for r in host["tail_regions"][:4]] == [
        (20000 - 32, 32), (20000 - 32 - 56, 56), (20000 - 88 - 72, 72), (20000 - 160 - 72, 72)]


@built
def test_each_buffer_has_its_own_minimum_and_the_first_to_run_out_is_named():
    doc = two(DSCNN, 20000, 20000)
    t, head = doc["two_arena"], doc["plans"]["tflm-greedy"]["head_bytes"]
    assert t["fits"] and t["runs_out"] is None
    assert t["non_persistent"]["used_bytes"] == head
    used = t["persistent"]["used_bytes"]
    assert t["persistent"]["minimum_bytes"] == (used + 15) // 16 * 16
    assert t["arena_used_bytes"] == used + head
    # The DS-CNN's temporaries and the planner's arrays fit in its head: the head sets the minimum.
    assert t["non_persistent"]["minimum_bytes"] == head
    short = two(DSCNN, 20000, head - 1)["two_arena"]
    assert (short["fits"], short["runs_out"]) == (False, "non-persistent")
    assert short["failed"]["message"] == f"Failed to resize buffer. Requested: {head}, available {head - 1}, missing: 1"
    pmin = t["persistent"]["minimum_bytes"]
    assert two(DSCNN, pmin, head)["two_arena"]["fits"]
    p_short = two(DSCNN, pmin - 1, head)["two_arena"]  # aligned down: 16 B fewer
    assert (p_short["fits"], p_short["runs_out"]) == (False, "persistent")
    assert p_short["failed"]["message"].startswith("Failed to allocate tail memory.")
    # Both too small: the constructor's requests come first. In 64 B (aligned: 64) the two
    # allocators take 48 and the planner's 44 B do not fit: 16 available, 28 missing.
    tiny = two(DSCNN, 64, 64)["two_arena"]
    assert (tiny["runs_out"], tiny["failed"]["step"], tiny["failed"]["what"]) == ("persistent", 2,
                                                                                  "GreedyMemoryPlanner")
    assert tiny["failed"]["message"] == "Failed to allocate tail memory. Requested: 44, available 16, missing: 28"


@built
def test_the_table_and_the_snapshot_show_both_buffers(tmp_path):
    r = subprocess.run([str(PLAN), "--persistent-size", "20000", "--non-persistent-size", "15000", str(DSCNN)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 4, r.stderr  # the gate: the buffers given are too small (gate.h)
    assert r.stdout.splitlines()[1] == ("verdict: DOES NOT FIT: AllocateTensors fails: the non-persistent buffer "
                                        "runs out; give it at least 16000 B (exit status 4)")
    assert "the non-persistent buffer runs out first" in r.stdout
    assert "give the non-persistent buffer at least 16000 B" in r.stdout
    snap_path = tmp_path / "two.json"
    r = subprocess.run([str(PLAN), "--snapshot", str(snap_path), "--persistent-size", "20000",
                        "--non-persistent-size", "16008", str(DSCNN)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    snap = json.loads(snap_path.read_text())
    head, tail = snap["arenas"]
    assert (head["memory"], head["base_addr"], head["size_bytes"]) == ("non-persistent", 0, 16008)
    assert {x["kind"] for x in head["regions"]} <= {"tensor", "scratch"}
    assert (tail["memory"], tail["base_addr"], tail["size_bytes"]) == ("persistent", 16016, 20000)
    assert tail["regions"][0]["label"] == "PersistentArenaBufferAllocator"
    assert tail["regions"][0]["address"] == 16016 + 19984
    assert tail["tail_offset"] == 20000 - tail["tail_bytes"]


@built
def test_usage_errors():
    for args in (["--persistent-size", "100"], ["--persistent-size", "0", "--non-persistent-size", "1"],
                 ["--persistent-size", "100", "--non-persistent-size", "100", "--adapter"],
                 ["--persistent-size", "100", "--non-persistent-size", "100", "--arena-size", "100"]):
        r = subprocess.run([str(PLAN), *args, str(DSCNN)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 2, args
        assert "arenascope-plan:" in r.stderr


@built
@pytest.mark.skipif(not MODEL_NAMES, reason="../shared/tflm-figures absent (clone on its own)")
@pytest.mark.parametrize("name", MODEL_NAMES)
@pytest.mark.parametrize("build,target", [("host", "host"), ("arm_m4", "cortex-m")])
def test_against_the_single_arena_figures_of_real_tflm(name, build, target):
    fig = figures()[name][build]
    big = 1 << 24
    t = two(SHARED / "models" / name, big, big, "--target", target)["two_arena"]
    assert t["exact"]
    assert t["non_persistent"]["used_bytes"] == fig["head_bytes"]
    grown = t["persistent"]["used_bytes"] - fig["tail_bytes"]
    assert grown == 16 if target == "host" else grown in (0, 16)
    assert t["persistent"]["minimum_bytes"] == (t["persistent"]["used_bytes"] + 15) // 16 * 16
    # No buffer needs more than the one arena real TFLM needed.
    assert t["non_persistent"]["minimum_bytes"] <= fig["min_arena_bytes"]


@built
def test_a_snapshot_of_buffers_too_small_draws_them_at_their_minimum(tmp_path):
    """NP 15000 B < the head's 16000 B: the non-persistent buffer is drawn at its minimum, the
    persistent one (8192 B, enough) at its given size, and the `used` check FAILs naming the first
    to run out."""
    snap_path = tmp_path / "short.json"
    r = subprocess.run([str(PLAN), "--snapshot", str(snap_path), "--persistent-size", "8199",
                        "--non-persistent-size", "15000", str(DSCNN)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 4, r.stderr  # the snapshot is written, and the gate says the buffers are too small
    snap = json.loads(snap_path.read_text())
    head, tail = snap["arenas"]
    assert head["size_bytes"] == 16000 and head["head_bytes"] == 16000
    assert (tail["base_addr"], tail["size_bytes"]) == (16000, 8192)  # 8199 aligned down, as TFLM takes it
    assert tail["regions"][0]["offset"] == 8192 - 16
    assert tail["size_bytes"] - tail["tail_offset"] == tail["tail_bytes"]
    used = next(c for c in snap["checks"] if c["rule"] == "used")
    assert used["verdict"] == "FAIL" and "the non-persistent buffer runs out first" in used["reason"]
    assert snap["verdict"] == "FAIL"
