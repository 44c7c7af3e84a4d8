#!/usr/bin/env python3
"""Benchmark of the viewer's frame time: prints figures, asserts nothing.

Renders, headless under Xvfb with Mesa's software renderer, a snapshot with 10,000 regions and
one with none (an empty frame: the same window and panels, no regions), and prints the mean
frame time of each and their ratio; then the 10,000-region frame again with its region rasters
rebuilt every frame (the cost of a frame that zooms, pans or takes a new snapshot). Target (issue
#4): the 10,000-region frame within a quarter of a 60 Hz frame, 4.2 ms, on this machine's software
renderer.

Usage: tools/bench_viewer.py [--frames N] [--regions N]
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
VIEWER = ROOT / "build" / "viewer" / "arenascope-viewer"
FIXTURE = ROOT / "tests" / "fixtures" / "demo_overrun_snapshot.json"


def synthetic(n):
    """The demo snapshot with its regions replaced by n planned 16-byte tensors over 64 scopes
    in a 1 MiB arena (every figure the viewer needs is still given, as the plugin would)."""
    snap = json.loads(FIXTURE.read_text())
    a = snap["arenas"][0]
    size, scopes = 1 << 20, 64
    a.update(size_bytes=size, head_bytes=n * 16 // 4, temp_bytes=n * 16 // 4, tail_offset=size - 4096, tail_bytes=4096,
             damage=None, free_band=None)
    base = a["base_addr"]
    a["regions"] = [{"index": i, "id": i, "kind": "tensor" if i % 5 else "scratch", "offset": (i % (n // 4 or 1)) * 16,
                     "address": base + (i % (n // 4 or 1)) * 16, "size_bytes": 16, "first_use": i % scopes,
                     "last_use": min(scopes - 1, i % scopes + 1), "flags": [], "label": f"tensor {i}", "name": None,
                     "shape": None, "dtype": None} for i in range(n)]
    a["plan"] = {"scopes": scopes, "live_bytes": [n * 16 // scopes * 2] * scopes,
                 "live_regions": [[] for _ in range(scopes)],
                 "lower_bound_bytes": n * 16 // scopes * 2, "lower_bound_scope": 0}
    return snap


def frame_ms(path, frames, rebuild=False):
    out = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1280x800x24", str(VIEWER), str(path), "--bench",
                          str(frames), "--size", "1280x800"] + (["--bench-rebuild"] if rebuild else []),
                         capture_output=True, text=True, timeout=600)
    m = re.search(r"mean frame time ([\d.]+) ms", out.stdout)
    if not m:
        raise SystemExit(f"bench_viewer: the viewer failed: {out.stderr.strip()}")
    return float(m.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=300)
    parser.add_argument("--regions", type=int, default=10000)
    args = parser.parse_args()
    if not VIEWER.exists():
        print("bench_viewer: build first (bash tools/build.sh)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        full, empty = pathlib.Path(tmp, "full.json"), pathlib.Path(tmp, "empty.json")
        full.write_text(json.dumps(synthetic(args.regions)))
        e = synthetic(4)
        e["arenas"][0]["regions"] = []
        e["arenas"][0]["plan"].update(live_bytes=[0] * e["arenas"][0]["plan"]["scopes"], lower_bound_bytes=0)
        empty.write_text(json.dumps(e))
        t_full, t_empty = frame_ms(full, args.frames), frame_ms(empty, args.frames)
        t_rebuild = frame_ms(full, args.frames, rebuild=True)
    budget = 1000.0 / 60 / 4
    print(f"viewer frame time, {args.frames} frames at 1280x800, Xvfb + Mesa software renderer")
    print(f"  empty frame (no regions):  {t_empty:7.3f} ms")
    print(f"  {args.regions} regions:           {t_full:7.3f} ms")
    print(f"  ratio:                     {t_full / t_empty:7.2f}")
    print(f"  {args.regions} regions, rasters rebuilt every frame (zooming, panning, new snapshots): "
          f"{t_rebuild:7.3f} ms")
    print(f"  target <= {budget:.1f} ms (a quarter of a 60 Hz frame): {'met' if t_full <= budget else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
