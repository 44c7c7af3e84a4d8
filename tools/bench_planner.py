#!/usr/bin/env python3
"""Benchmark of arenascope-plan on every model in ../shared/models: prints figures, asserts nothing.

For each model in ../shared/models (and the project's own DS-CNN from the build) and both ABIs
(host x86-64, Cortex-M4): the lower bound, TFLM's greedy head (ours), our best head, TFLM's
measured head (../shared/tflm-figures), the predicted minimum arena against the measured
min_arena_bytes and the error (%), arena_used_bytes predicted and measured, the recommended
arena (minimum + 10 %), and the tool's run time (median of --runs, process start to exit).
The goal: every prediction within 2 % of the measured minimum, and the recommendation never
below it.

Usage: tools/bench_planner.py [--build DIR] [--runs N]
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    tool = pathlib.Path(args.build) / "planner" / "arenascope-plan"
    figures_file = SHARED / "tflm-figures" / "tflm-figures.json"
    if not tool.exists():
        raise SystemExit(f"need {tool}: build first")
    figures = json.loads(figures_file.read_text())["models"] if figures_file.exists() else {}
    head = (f"{'model':42} {'abi':6} {'lower':>7} {'greedy':>7} {'best':>7} {'TFLM head':>9} "
            f"{'min pred':>8} {'min meas':>8} {'err %':>6} {'used pred':>9} {'used meas':>9} {'recommend':>9} "
            f"{'ms':>6}  note")
    print(head)
    print("-" * len(head))
    models = {p.name: p for p in sorted((SHARED / "models").glob("*.tflite"))}
    own = pathlib.Path(args.build) / "planner" / "dscnn_kws.tflite"  # the project's own DS-CNN
    if own.exists():
        models["(project) " + own.name] = own
    for name, path in models.items():
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            r = subprocess.run([str(tool), "--json", str(path)], capture_output=True, text=True)
            times.append((time.perf_counter() - t0) * 1000)
        if not r.stdout.strip():
            print(f"{name:42} error: {r.stderr.strip()}")
            continue
        doc = json.loads(r.stdout)
        note = "approximate (unmodelled scratch)" if doc["approximate"] else ""
        if doc.get("tflm_rejects"):
            note = "TFLM rejects it (hybrid)"
        for abi, key in (("host", "host"), ("cm4", "arm_m4")):
            fig = figures.get(name, {}).get(key, {})
            target = "host" if abi == "host" else "cortex-m"
            r = subprocess.run([str(tool), "--json", "--target", target, str(path)],
                               capture_output=True, text=True)
            doc = json.loads(r.stdout)
            arena = doc["arena"]
            pred = arena["minimum_bytes"]
            err = (f"{100 * (pred - fig['min_arena_bytes']) / fig['min_arena_bytes']:+.1f}"
                   if fig.get("min_arena_bytes") else "-")
            floor = "" if arena["exact"] else "minimum is a floor: " + ", ".join(arena["unmodelled_kernels"])
            def num(k, fig=fig):
                v = fig.get(k)
                return "-" if v is None else str(v)
            print(f"{name:42} {abi:6} {doc['lower_bound']['bytes']:7} {doc['plans']['tflm-greedy']['head_bytes']:7} "
                  f"{doc['plans']['best']['head_bytes']:7} {num('head_bytes'):>9} {pred:>8} "
                  f"{num('min_arena_bytes'):>8} {err:>6} {arena['arena_used_bytes']:>9} "
                  f"{num('arena_used_bytes'):>9} {arena['recommended_bytes']:>9} "
                  f"{statistics.median(times):6.1f}  {note or floor}")


if __name__ == "__main__":
    main()
