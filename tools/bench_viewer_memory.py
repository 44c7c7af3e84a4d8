#!/usr/bin/env python3
"""Benchmark of the viewer's peak resident memory for hostile and large inputs; fails over the bound.

Writes snapshot files of about --mb MB each (default 63: just under the 64 MiB a snapshot may
have) that a DOM parser turns into gigabytes: arrays of `{}`, `[]` and `null`, an object of
many empty members, deep nesting, a real snapshot whose `regions` array holds near-empty
objects, a huge string, a huge number token, numbers as long strings; and two legitimate
snapshots: --regions regions (default 10,000), and as many minimal regions as fit in --mb MB (at
most the 200,000 an arena may have). Each is drawn by the real viewer, headless
(`arenascope-viewer FILE --screenshot OUT --size 1280x800`) on an Xvfb the script starts, and its
peak resident set (getrusage of that child: ru_maxrss) is printed with its ratio to the file.

The documented bound (viewer/README.md, "Memory"): peak RSS <= FACTOR x file + CONSTANT, for
any input. The script exits 1 when a run exceeds it, or when the viewer crashed (a signal) or
accepted a hostile input; exit status 2 (refused) is the expected outcome for those.

Usage: tools/bench_viewer_memory.py [--mb MB] [--regions N] [--short] [--build DIR]
  --short: 4 MB inputs and 1,000 regions (the benchmarks_short test).
"""
import argparse
import json
import os
import pathlib
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "demo_overrun_snapshot.json"
TIME = "/usr/bin/time"  # GNU time (Debian: time)
FACTOR, CONSTANT_MIB = 4, 160  # the bound; viewer/README.md says why
sys.path.insert(0, str(ROOT / "tools"))
from bench_viewer import synthetic  # noqa: E402  (the 10,000-region snapshot of the frame benchmark)


def fill(head, item, tail, size):
    """head + item,item,... + tail, about size bytes."""
    n = max(1, (size - len(head) - len(tail)) // (len(item) + 1))
    return head + ",".join([item] * n) + tail


def patched(put, raw):
    """The demo snapshot with one value replaced by the raw JSON text raw; put(snap, marker) sets it."""
    snap = json.loads(FIXTURE.read_text())
    put(snap, "@@RAW@@")
    return json.dumps(snap).replace('"@@RAW@@"', raw)


def with_regions(regions_text):
    """The demo snapshot, its arena 0's regions replaced by regions_text (the JSON of an array)."""
    return patched(lambda s, m: s["arenas"][0].update(regions=m), regions_text)


def most_regions(size):
    """A legitimate snapshot: bench_viewer's synthetic regions, as many as fit (at most 200,000)."""
    one = len(json.dumps(synthetic(8)["arenas"][0]["regions"][1], separators=(",", ":"))) + 1
    n = min(200000, max(8, (size - 4000) // one))
    return n, json.dumps(synthetic(n), separators=(",", ":"))


def inputs(size, regions):
    """(name, text, legitimate) for each input."""
    deep = size // 2 - 1
    yield "array of {}", fill("[", "{}", "]", size), False
    yield "array of []", fill("[", "[]", "]", size), False
    yield "array of null", fill("[", "null", "]", size), False
    yield "object of empty members", "{" + ",".join(f'"{i:x}":{{}}' for i in range(size // 12)) + "}", False
    yield "deep nesting", "[" * deep + "]" * deep, False
    yield "regions of {}", with_regions(fill("[", "{}", "]", size)), False
    label = '"' + "x" * size + '"'
    yield "huge string", patched(lambda s, m: s["arenas"][0]["regions"][0].update(label=m), label), False
    yield "huge number", patched(lambda s, m: s["state"].update(invokes=m), "9" * size), False
    yield "numbers as long strings", fill('{"schema":"arenascope.snapshot","x":[', '"' + "7" * 30 + '"', "]}",
                                          size), False
    yield f"legitimate, {regions} regions", json.dumps(synthetic(regions)), True
    n, text = most_regions(size)
    yield f"legitimate, {n} regions", text, True


def peak_rss(viewer, path, display, tmp):
    """(exit status or -signal, peak RSS in bytes, seconds, stderr's last line) of one headless run.

    GNU time measures it (its child's ru_maxrss): a child of this script would report this
    script's own peak, which a process keeps across exec."""
    env = dict(os.environ, DISPLAY=display)
    err, rss = pathlib.Path(tmp, "stderr"), pathlib.Path(tmp, "rss")
    t0 = time.monotonic()
    with open(err, "wb") as e:
        p = subprocess.run([TIME, "-q", "-f", "%M", "-o", str(rss), str(viewer), str(path), "--screenshot",
                            str(pathlib.Path(tmp, "out.png")), "--size", "1280x800"], stdout=subprocess.DEVNULL,
                           stderr=e, env=env, timeout=600)
    lines = err.read_text(errors="replace").strip().splitlines()
    status = p.returncode
    for line in lines:
        if line.startswith("Command terminated by signal "):
            status = -int(line.split()[-1])
    lines = [x for x in lines if not x.startswith("Command ")]
    return status, int(rss.read_text().split()[-1]) * 1024, time.monotonic() - t0, lines[-1] if lines else ""


def start_xvfb():
    """An Xvfb on a free display number; (process, ":N")."""
    for n in range(90, 200):
        if not pathlib.Path(f"/tmp/.X11-unix/X{n}").exists() and not pathlib.Path(f"/tmp/.X{n}-lock").exists():
            x = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for _ in range(100):
                if pathlib.Path(f"/tmp/.X11-unix/X{n}").exists():
                    return x, f":{n}"
                time.sleep(0.05)
            x.kill()
    raise SystemExit("bench_viewer_memory: cannot start Xvfb")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=63)
    parser.add_argument("--regions", type=int, default=10000)
    parser.add_argument("--short", action="store_true", help="4 MB inputs, 1,000 regions")
    parser.add_argument("--build", default=os.environ.get("ARENASCOPE_BUILD_DIR", str(ROOT / "build")))
    args = parser.parse_args()
    if args.short:
        args.mb, args.regions = 4, 1000
    viewer = pathlib.Path(args.build, "viewer", "arenascope-viewer")
    if not viewer.exists():
        print(f"bench_viewer_memory: {viewer} is missing: build first (bash tools/build.sh)", file=sys.stderr)
        return 2
    if not pathlib.Path(TIME).exists():
        print(f"bench_viewer_memory: {TIME} is missing (apt-get install time)", file=sys.stderr)
        return 2
    if not shutil.which("Xvfb"):
        print("bench_viewer_memory: Xvfb is missing (apt-get install xvfb)", file=sys.stderr)
        return 2
    size = int(args.mb * 1e6)
    xvfb, display = start_xvfb()
    failures = []
    print(f"viewer peak resident memory (headless --screenshot, 1280x800); bound {FACTOR} x file + {CONSTANT_MIB} MiB")
    print(f"  {'input':34} {'file MB':>8} {'peak MB':>8} {'ratio':>6} {'bound MB':>8} {'s':>5}  outcome")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for name, text, legitimate in inputs(size, args.regions):
                path = pathlib.Path(tmp, "in.json")
                path.write_text(text)
                del text
                file_bytes = path.stat().st_size
                status, rss, seconds, last = peak_rss(viewer, path, display, tmp)
                bound = FACTOR * file_bytes + (CONSTANT_MIB << 20)
                ok = rss <= bound and (status == 0 if legitimate else status == 2)
                outcome = "shown" if status == 0 else "refused" if status == 2 else f"exit {status}"
                print(f"  {name:34} {file_bytes / 1e6:8.1f} {rss / 1e6:8.1f} {rss / file_bytes:6.1f} "
                      f"{bound / 1e6:8.1f} {seconds:5.1f}  {outcome}{'' if ok else '  <-- FAILS'}")
                if not legitimate and status == 2:
                    print(f"      {last[:160]}")
                if not ok:
                    failures.append(f"{name}: {outcome}, {rss / 1e6:.1f} MB peak (bound {bound / 1e6:.1f} MB): {last}")
    finally:
        xvfb.terminate()
        xvfb.wait(timeout=10)
    self_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"  (this script: {self_rss / 1e3:.0f} MB peak)")
    for f in failures:
        print(f"bench_viewer_memory: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
