#!/usr/bin/env python3
"""Benchmark of the planner's search for a better plan (plan.h plan_search): prints figures,
asserts nothing.

1. Models where the best of orderings already reaches the lower bound (every model in
   ../shared/models, when present, and the build's DS-CNN): the search does not run, so
   arenascope-plan --json takes the same time with the default budget as with --search-budget 0
   (the goal: not slower than before the search existed). Median of --runs, process start to exit.
2. Random graphs (arenascope-write-test-model random-graph OPS SEED: FULLY_CONNECTED and ADD
   operators, tests/planner/write_test_model.cpp) of 50 to 500 operators, where TFLM's greedy plan
   misses the lower bound: TFLM's head, the best of orderings, the search's head at three budgets,
   the lower bound, the gap left, the steps spent and the time. The goal: the default budget
   (20,000,000 steps) within about a second on a 2-core machine.
--short: the DS-CNN and two small graphs (seconds; ctest benchmarks_short).

Usage: tools/bench_search.py [--build DIR] [--runs N] [--short]
"""
import argparse
import json
import pathlib
import statistics
import subprocess
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def timed(cmd, runs):
    times, out = [], None
    for _ in range(runs):
        t = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        times.append(time.perf_counter() - t)
        out = r
    return statistics.median(times), out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--short", action="store_true")
    args = ap.parse_args()
    build = pathlib.Path(args.build)
    plan = build / "planner" / "arenascope-plan"
    write = build / "tests" / "planner" / "arenascope-write-test-model"

    models = [build / "planner" / "dscnn_kws.tflite"]
    if not args.short and (SHARED / "models").is_dir():
        models += sorted((SHARED / "models").glob("*.tflite"))
    print("1. models where the orderings reach the lower bound: --json time, default budget vs 0")
    print(f"  {'model':<44} {'head':>7} {'bound':>7} {'search':>6} {'default s':>9} {'budget 0 s':>10}")
    for m in models:
        t_default, r = timed([str(plan), "--json", str(m)], args.runs)
        t_zero, _ = timed([str(plan), "--json", "--search-budget", "0", str(m)], args.runs)
        if r.returncode not in (0, 1) or not r.stdout.strip():
            print(f"  {m.name:<44} (not planned: {r.stderr.strip()[:60]})")
            continue
        d = json.loads(r.stdout)
        best = d["plans"]["best"]
        print(f"  {m.name:<44} {best['head_bytes']:>7} {d['lower_bound']['bytes']:>7} "
              f"{'ran' if best['search']['ran'] else 'no':>6} {t_default:>9.3f} {t_zero:>10.3f}")

    sizes = [(50, 1), (100, 1)] if args.short else [(50, 1), (100, 1), (200, 1), (500, 1), (100, 2), (200, 3)]
    budgets = [2_000_000, 20_000_000] if args.short else [2_000_000, 20_000_000, 200_000_000]
    print("\n2. random graphs where TFLM's greedy plan misses the lower bound")
    print(f"  {'ops':>4} {'seed':>4} {'buffers':>7} {'tflm':>7} {'orders':>7} {'bound':>7} "
          f"{'budget':>11} {'search':>7} {'gap':>5} {'optimal':>7} {'steps':>11} {'s':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for ops, seed in sizes:
            path = pathlib.Path(tmp) / f"r{ops}_{seed}.tflite"
            subprocess.run([str(write), "random-graph", str(path), str(ops), str(seed)], check=True)
            _, r0 = timed([str(plan), "--json", "--search-budget", "0", str(path)], 1)
            orders = json.loads(r0.stdout)["plans"]["best"]["head_bytes"]
            for budget in budgets:
                t, r = timed([str(plan), "--json", "--search-budget", str(budget), str(path)], args.runs)
                d = json.loads(r.stdout)
                best, bound = d["plans"]["best"], d["lower_bound"]["bytes"]
                print(f"  {ops:>4} {seed:>4} {len(d['buffers']):>7} {d['plans']['tflm-greedy']['head_bytes']:>7} "
                      f"{orders:>7} {bound:>7} {budget:>11,} {best['head_bytes']:>7} {best['gap_bytes']:>5} "
                      f"{'yes' if best['search']['exhausted'] else 'no':>7} {best['search']['steps']:>11,} {t:>6.2f}")


if __name__ == "__main__":
    main()
