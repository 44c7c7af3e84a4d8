#!/usr/bin/env python3
"""Benchmark of arenascope-plan on every model in ../shared/models: prints figures, asserts nothing.

For each model in ../shared/models (and the project's own DS-CNN from the build) and both ABIs
(host x86-64, Cortex-M4): the lower bound, TFLM's greedy head (ours), our best head, TFLM's
measured head (../shared/tflm-figures), the predicted minimum arena against the measured
min_arena_bytes and the error (%), arena_used_bytes predicted and measured, the recommended
arena (minimum + 10 %), and the tool's run time (median of --runs, process start to exit).
The goal: every prediction within 2 % of the measured minimum, and the recommendation never
below it.

Then the planner at scale: chains of 2,000, 20,000 and 100,000 operators (written by the build's
arenascope-write-chain, tests/planner/write_chain.cpp, into a temporary directory) planned in
every output mode (table, --json, --header, --snapshot FILE), each run's wall time, CPU time
(user + system) and peak memory (maximum resident set, from wait4), and the ratio of each figure
to the previous size's next to the ratio of operators (equal ratios: linear). The targets: the
100,000-operator chain under 5 s and 500 MB in every mode (docs/arena-budget.md, "Limits and
scale"). --short: only 2,000 and 20,000 (seconds; ctest benchmarks_short). Then, per size, the
snapshot's and the JSON's bytes per operator with their ratio to the previous size's (1.0:
linear), and whether each snapshot is within the viewer's limits (64 MiB, 200,000 regions an
arena: common/include/arenascope/snapshot_limits.h) and compact.

Usage: tools/bench_planner.py [--build DIR] [--runs N] [--short] [--sizes N,N,...]
"""
import argparse
import datetime
import json
import os
import pathlib
import statistics
import subprocess
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=str(ROOT / "build"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--short", action="store_true", help="scale runs on 2,000 and 20,000 operators only")
    ap.add_argument("--sizes", help="chain lengths for the scale runs, comma-separated (default 2000,20000,100000)")
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


    sizes = ([int(n) for n in args.sizes.split(",")] if args.sizes
             else [2000, 20000] if args.short else [2000, 20000, 100000])
    scale(pathlib.Path(args.build), tool, sizes)


MODES = (("table", []), ("--json", ["--json"]), ("--header", ["--header"]), ("--snapshot", ["--snapshot"]))
TARGET_OPS, TARGET_S, TARGET_MB = 100000, 5.0, 500.0


MAX_SNAPSHOT_BYTES, MAX_REGIONS = 64 << 20, 200000  # common/include/arenascope/snapshot_limits.h


def run_measured(argv, stdout=subprocess.DEVNULL):
    """Run argv, its output to stdout (default: discarded): (exit code, wall s, CPU s, peak resident
    MB, stderr) of that child."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=stdout, stderr=subprocess.PIPE)
    err = proc.stderr.read().decode(errors="replace").strip()  # small: one error line at most
    _, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage (RUSAGE_CHILDREN is a maximum)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stderr.close()
    return proc.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, err


def scale(build, tool, sizes):
    writer = build / "tests" / "planner" / "arenascope-write-chain"
    if not writer.exists():
        raise SystemExit(f"need {writer}: build the target arenascope-write-chain first")
    print()
    print(f"planner at scale, {datetime.datetime.now(datetime.UTC).strftime('%Y-%m-%d')} (UTC)")
    head = (f"{'operators':>9} {'mode':10} {'wall s':>7} {'cpu s':>7} {'peak MB':>8} "
            f"{'x ops':>6} {'x wall':>7} {'x cpu':>7} {'x MB':>6}  target")
    print(head)
    print("-" * len(head))
    previous = {}
    outputs = []  # per size: (operators, snapshot bytes, snapshot regions, compact, JSON bytes)
    with tempfile.TemporaryDirectory(prefix="arenascope-bench-") as tmp:
        for n in sizes:
            model = pathlib.Path(tmp) / f"chain{n}.tflite"
            subprocess.run([str(writer), str(model), str(n)], check=True)
            for mode, extra in MODES:
                argv = [str(tool), *extra]
                if mode == "--snapshot":
                    argv.append(str(pathlib.Path(tmp) / "snapshot.json"))
                printed = pathlib.Path(tmp) / "stdout"
                with open(printed, "wb") as f:
                    rc, wall, cpu, mb, err = run_measured([*argv, str(model)], stdout=f)
                if mode == "--json":
                    json_bytes = printed.stat().st_size
                printed.unlink()
                if mode == "--snapshot":
                    snap = pathlib.Path(tmp) / "snapshot.json"
                    if rc == 0 and snap.exists():
                        regions = json.loads(snap.read_text())["arenas"][0]["regions"]
                        snap_out = (snap.stat().st_size, len(regions), any(r.get("count") for r in regions))
                        snap.unlink()
                    else:
                        snap_out = (None, None, False)
                ratios = ""
                if mode in previous:
                    pn, pwall, pcpu, pmb = previous[mode]
                    ratios = f"{n / pn:6.1f} {wall / pwall:7.1f} {cpu / pcpu:7.1f} {mb / pmb:6.1f}"
                else:
                    ratios = f"{'':6} {'':7} {'':7} {'':6}"
                target = ""
                if n == TARGET_OPS:
                    ok = cpu < TARGET_S and wall < TARGET_S and mb < TARGET_MB
                    target = (f"{'met' if ok else 'MISSED'} (< {TARGET_S:g} s, < {TARGET_MB:g} MB"
                              f"{'; wall over: a loaded machine?' if cpu < TARGET_S <= wall else ''})")
                # --header stops at 32,767 scopes / ids 0xFFFE (the agent's region fields): an error
                # after all the work, so its time still counts.
                status = "" if rc == 0 else f"  exit {rc}: {err.splitlines()[-1][-110:] if err else ''}"
                print(f"{n:9} {mode:10} {wall:7.2f} {cpu:7.2f} {mb:8.1f} {ratios}  {target}{status}", flush=True)
                previous[mode] = (n, wall, cpu, mb)
            model.unlink()
            outputs.append((n, *snap_out, json_bytes))
    print()
    head = (f"{'operators':>9} {'snapshot B/op':>13} {'x':>5} {'regions':>8} {'form':8} {'viewer limits':14} "
            f"{'JSON B/op':>9} {'x':>5}")
    print(head)
    print("-" * len(head))
    last = None
    for n, sbytes, regions, compact, jbytes in outputs:
        sper = sbytes / n if sbytes is not None else None
        jper = jbytes / n
        sx = f"{sper / last[0]:5.2f}" if last and sper and last[0] else f"{'':5}"
        jx = f"{jper / last[1]:5.2f}" if last else f"{'':5}"
        within = (sbytes is not None and sbytes <= MAX_SNAPSHOT_BYTES and regions <= MAX_REGIONS)
        print(f"{n:9} {sper if sper is not None else float('nan'):13.0f} {sx} {regions or 0:8} "
              f"{'compact' if compact else 'full':8} {'within' if within else 'REFUSED/OVER':14} {jper:9.0f} {jx}")
        last = (sper, jper)


if __name__ == "__main__":
    main()
