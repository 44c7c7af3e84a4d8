"""arenascope-plan --write-offline-plan: the best plan found written into the model.

The model is tests/planner/greedy_loses.h's (written by arenascope-write-test-model): its lifetimes
and TFLM's greedy head (3840 B) are worked out by hand there, and the best first-fit plan (3072 B,
the lower bound) by brute force. Every other figure here follows from those: the rest of the arena
does not change, so the minimum arena and arena_used_bytes() fall by the same 768 B.

With ARENASCOPE_TFLM_RIG_ELF (a real TFLM firmware built by hand, docs/offline-plan.md "Checking
on real TFLM") the written model also runs on real TFLM under QEMU: the head and the minimum arena
it measures are the predicted ones, and the output equals the original model's.
"""
import json
import os
import re
import shutil
import struct
import subprocess

import pytest

from harness import BUILD

PLAN = BUILD / "planner" / "arenascope-plan"
WRITE = BUILD / "tests" / "planner" / "arenascope-write-test-model"
DSCNN = BUILD / "planner" / "dscnn_kws.tflite"
built = pytest.mark.skipif(not PLAN.exists() or not WRITE.exists(), reason="planner not built (cmake --build build)")

TFLM_HEAD, BOUND = 3840, 3072


def plan(*args):
    return subprocess.run([str(PLAN), *map(str, args)], capture_output=True, text=True, timeout=120)


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "greedy_loses.tflite"
    subprocess.run([str(WRITE), "greedy-loses", str(path)], check=True, timeout=60)
    return path


def budget(path):
    r = plan("--json", path)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@built
def test_the_written_model_carries_the_better_plan(model, tmp_path):
    before = budget(model)
    assert before["plans"]["tflm-greedy"]["head_bytes"] == TFLM_HEAD
    assert before["plans"]["best"] == {"planner": "search", "head_bytes": BOUND, "gap_bytes": 0,
                                       "minimum_arena_bytes": before["arena"]["minimum_bytes"] - (TFLM_HEAD - BOUND),
                                       "replaces_offline_plan": False,
                                       "search": {"ran": True, "exhausted": True,
                                                  "steps": before["plans"]["best"]["search"]["steps"]}}
    out = tmp_path / "offline.tflite"
    r = plan("--write-offline-plan", out, model)
    assert r.returncode == 0, r.stderr
    after = budget(out)
    # TFLM's greedy planner on the written model: every activation at its offline offset.
    assert after["plans"]["tflm-greedy"]["head_bytes"] == BOUND
    assert all(b["offline"] for b in after["buffers"])
    assert [b["offset"] for b in after["buffers"]] == [b["best_offset"] for b in before["buffers"]]
    saved = TFLM_HEAD - BOUND
    assert after["arena"]["minimum_bytes"] == before["arena"]["minimum_bytes"] - saved
    assert after["arena"]["arena_used_bytes"] == before["arena"]["arena_used_bytes"] - saved
    # What it prints: the figures before and after.
    rows = {m[0].strip(): tuple(map(int, m[1:])) for m in
            re.findall(r"^  (\w[\w (+%)-]+?)\s+(\d+)\s+(\d+)\s+(\d+)$", r.stdout, re.M)}
    assert rows["head (non-persistent)"] == (TFLM_HEAD, BOUND, saved)
    assert rows["minimum arena"] == (before["arena"]["minimum_bytes"], after["arena"]["minimum_bytes"], saved)
    assert "  the plan: found by the search, at the lower bound\n" in r.stdout
    # Every byte of the original follows the new block: the weights, names and operators as they were.
    old, new = model.read_bytes(), out.read_bytes()
    assert new[4:8] == old[4:8] == b"TFL3"
    shift = len(new) - len(old)
    assert shift > 0 and shift % 64 == 0 and new[8 + shift:] == old[8:]


@built
def test_rewriting_a_written_model_replaces_its_plan(model, tmp_path):
    once, twice = tmp_path / "once.tflite", tmp_path / "twice.tflite"
    assert plan("--write-offline-plan", once, model).returncode == 0
    r = plan("--write-offline-plan", twice, once)
    # The written plan already is the best: nothing to save, nothing written.
    assert r.returncode == 3 and not twice.exists()
    assert "The model's offline plan already reaches the lower bound (3072 B" in r.stderr


@built
def test_no_saving_on_a_broken_offline_plan_says_why_it_is_broken(model, tmp_path):
    """Issue 37: on a model whose own offline plan is broken, "nothing written" said nothing of it.
    The written model's plan, with its header's tensor count or its offsets edited in the bytes."""
    once = tmp_path / "once.tflite"
    assert plan("--write-offline-plan", once, model).returncode == 0
    data = once.read_bytes()
    header = struct.pack("<3I", 1, 1, 12)  # version 1, one subgraph, 12 tensors; then the offsets
    assert data.count(header) == 1
    at = data.index(header)
    assert struct.unpack_from("<7i", data, at + 12) == (0, 768, 2048, 2816, 768, 0, 0)
    count = tmp_path / "count.tflite"
    count.write_bytes(data[:at + 8] + struct.pack("<I", 13) + data[at + 12:])
    overlap = tmp_path / "overlap.tflite"
    overlap.write_bytes(data[:at + 12] + struct.pack("<7i", *[0] * 7) + data[at + 40:])
    tail = (". These figures are TFLM's plan without it, but it stays in the model, and TFLM would use it as it is "
            "(or reject the model): remove that metadata entry (re-export the model without it) and TFLM plans as "
            "these figures say\n")
    for bad, why in ((count, "metadata 'OfflineMemoryAllocation' lists 13 offsets but the model has 12 tensors "
                             "(TFLM rejects this model)"),
                     (overlap, "the model's offline plan (metadata 'OfflineMemoryAllocation') puts (tensor 0) at 0 "
                               "and (tensor 1) at 0: they are live at the same time and share bytes; fix the "
                               "offline plan")):
        out = tmp_path / "out.tflite"
        # Without the search no smaller plan is found: the one way to nothing written on this model.
        r = plan("--write-offline-plan", out, "--search-budget", "0", bad)
        assert r.returncode == 3 and not out.exists()
        assert r.stderr == (f"arenascope-plan: {bad}: no plan smaller than the {TFLM_HEAD} B head of TFLM's greedy "
                            "plan was found (best of orderings, 768 B above the lower bound (no search: "
                            f"--search-budget 0)); nothing written. The model's own offline plan is broken: {why}"
                            + tail)
        # With the search the broken plan is replaced, and the table says why.
        r = plan("--write-offline-plan", out, bad)
        assert r.returncode == 0, r.stderr
        assert f"  the model's own offline plan is invalid ({why}): replaced;" in r.stdout
        out.unlink()


@built
def test_no_saving_is_said_and_nothing_written(tmp_path):
    if not DSCNN.exists():
        pytest.skip("the DS-CNN model is not built")
    out = tmp_path / "out.tflite"
    r = plan("--write-offline-plan", out, DSCNN)
    assert r.returncode == 3, r.stderr
    assert not out.exists() and not list(tmp_path.glob(".arenascope-*"))
    assert "TFLM's greedy plan already reaches the lower bound" in r.stderr and "nothing written" in r.stderr


@built
def test_without_the_search_the_orderings_find_no_saving(model, tmp_path):
    r = plan("--write-offline-plan", tmp_path / "out.tflite", "--search-budget", "0", model)
    assert r.returncode == 3
    assert f"no plan smaller than the {TFLM_HEAD} B head of TFLM's greedy plan was found" in r.stderr
    assert "768 B above the lower bound (no search: --search-budget 0)" in r.stderr


@built
def test_the_output_file_is_written_safely(model, tmp_path):
    """Whole or not at all, through a temporary file only this run creates; a link to a file is
    written through; a FIFO (or a device) is refused, not replaced; the file keeps its mode (issue
    37: a 0600 file became 0644), a new one has a plain create's."""
    target = tmp_path / "target.tflite"
    target.write_bytes(b"old")
    target.chmod(0o600)
    out = tmp_path / "out.tflite"
    out.symlink_to(target)
    old = os.umask(0o027)
    try:
        r = plan("--write-offline-plan", out, model)
    finally:
        os.umask(old)
    assert r.returncode == 0, r.stderr
    assert out.is_symlink() and target.read_bytes()[4:8] == b"TFL3"
    assert target.stat().st_mode & 0o777 == 0o600
    old = os.umask(0o027)
    try:
        r = plan("--write-offline-plan", tmp_path / "fresh.tflite", model)
    finally:
        os.umask(old)
    assert r.returncode == 0 and (tmp_path / "fresh.tflite").stat().st_mode & 0o777 == 0o640
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    r = plan("--write-offline-plan", fifo, model)
    assert r.returncode == 1 and "not a regular file" in r.stderr and fifo.is_fifo()
    assert not list(tmp_path.glob(".arenascope-*"))
    # A full standard output: the file is written, and the tool says it could not report.
    with open("/dev/full", "w") as full:
        r = subprocess.run([str(PLAN), "--write-offline-plan", str(tmp_path / "o2.tflite"), str(model)],
                           stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert r.returncode == 1 and "but cannot print what it saved" in r.stderr
    assert (tmp_path / "o2.tflite").exists()


@built
def test_bad_uses_are_refused(model, tmp_path):
    r = plan("--write-offline-plan", model, model)
    assert r.returncode == 2 and "is the model itself" in r.stderr
    r = plan("--write-offline-plan", tmp_path / "o.tflite", "--json", model)
    assert r.returncode == 2 and "goes alone" in r.stderr
    r = plan("--write-offline-plan")
    assert r.returncode == 2 and "needs the file to write" in r.stderr
    r = plan("--write-offline-plan", tmp_path / "a.tflite", "--write-offline-plan", tmp_path / "b.tflite", model)
    assert r.returncode == 2 and "given twice" in r.stderr
    r = plan("--search-budget", "-1", model)
    assert r.returncode == 2 and "--search-budget needs a count" in r.stderr
    broken = tmp_path / "broken.tflite"
    broken.write_bytes(model.read_bytes()[:200])
    r = plan("--write-offline-plan", tmp_path / "o.tflite", broken)
    assert r.returncode == 1 and str(broken) in r.stderr
    assert not (tmp_path / "o.tflite").exists()


# --- real TFLM (optional) ---------------------------------------------------------------------
RIG = os.environ.get("ARENASCOPE_TFLM_RIG_ELF")
real = pytest.mark.skipif(not RIG or not os.path.exists(RIG) or not shutil.which("qemu-system-arm"),
                          reason="ARENASCOPE_TFLM_RIG_ELF (a real TFLM firmware, docs/offline-plan.md) not given")


def run_real(model, arena):
    """The rig's protocol (docs/offline-plan.md): the model loaded at 0x00300000, the arena size in
    the word g_rig_arena_bytes; it prints `alloc=1 used=U head=H tail=T` and `out0 ... crc32=C`."""
    nm = subprocess.run(["arm-none-eabi-nm", RIG], capture_output=True, text=True, check=True).stdout
    word = next(line.split()[0] for line in nm.splitlines() if line.endswith(" g_rig_arena_bytes"))
    r = subprocess.run(["qemu-system-arm", "-M", "mps2-an386", "-nographic", "-monitor", "none", "-serial", "null",
                        "-semihosting-config", "enable=on,target=native", "-kernel", RIG,
                        "-device", f"loader,file={model},addr=0x00300000,force-raw=on",
                        "-device", f"loader,addr=0x{word},data={arena},data-len=4"],
                       capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    text = r.stdout + r.stderr
    alloc = re.search(r"alloc=(\d) used=(\d+) head=(\d+) tail=(\d+)", text)
    crc = re.search(r"out0 .*crc32=([0-9a-f]+)", text)
    return (alloc and alloc.group(1) == "1" and r.returncode == 0,
            int(alloc.group(3)) if alloc else None, crc.group(1) if crc else None)


@real
def test_the_written_model_on_real_tflm(model, tmp_path):
    out = tmp_path / "offline.tflite"
    assert plan("--write-offline-plan", out, model).returncode == 0
    predicted = budget(out)["arena"]["minimum_bytes"]
    ok, head, crc = run_real(model, 3 << 20)
    assert ok and head == TFLM_HEAD
    ok2, head2, crc2 = run_real(out, predicted)
    assert ok2 and head2 == BOUND and crc2 == crc  # the same output as the original
    assert not run_real(out, predicted - 1)[0]      # and not a byte less
