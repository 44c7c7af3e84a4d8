"""The planner's libFuzzer harnesses (planner/fuzz, docs/fuzzing.md), deterministic: seed 1, a fixed count.

reader_fuzz (the model reader, the planners, the replay), budget_fuzz (make_budget and its four
writers, each output checked well-formed) and arena_size_fuzz (--arena-size's replay at a fuzzed
size) abort on a broken invariant; ASan and UBSan abort on memory errors and undefined
behaviour. They are built once by the main build (planner/CMakeLists.txt, an ExternalProject
when clang++ is found), not here. `tools/fuzz.sh --runs N HARNESS WORK` runs each from seed 1 for
exactly N runs over the seeds (the synthetic models arenascope-fuzz-seeds writes and the build's
DS-CNN) and every input under tests/fixtures/fuzz/HARNESS/ (a crash found and fixed), then each
model of ../shared once when present: a given commit passes or fails the same way every time.
Then the headers budget_fuzz wrote for the seeds and the corpus it grew are compiled as C99 with
-Werror, and the checks are shown to catch what they are for (arenascope-fuzz-checks-selftest).
Open-ended fuzzing is by hand: tools/fuzz.sh HARNESS SECONDS.
"""
import os
import re
import shutil
import subprocess

import pytest

from harness import BUILD, ROOT

# Runs per harness: about half a minute each on a quiet 2-core machine (docs/fuzzing.md).
RUNS = {"reader": 100000, "budget": 15000, "arena_size": 15000}
TIMEOUT = 20  # seconds one input may take (a sanitized replay of the largest real model takes ~1 s)
FUZZ = BUILD / "planner" / "fuzz"
REGRESSIONS = ROOT / "tests" / "fixtures" / "fuzz"
_CACHE = BUILD / "CMakeCache.txt"
_FUZZ_OFF = _CACHE.exists() and re.search(r"^ARENASCOPE_FUZZ:BOOL=OFF$", _CACHE.read_text(), re.M)

pytestmark = [pytest.mark.skipif(not shutil.which("clang++"), reason="clang++ absent: no libFuzzer"),
              pytest.mark.skipif(bool(_FUZZ_OFF), reason="configured with ARENASCOPE_FUZZ=OFF")]


def run(exe, args, env=None, timeout=None):
    return subprocess.run([str(exe), f"-timeout={TIMEOUT}", "-rss_limit_mb=2048", *args], capture_output=True,
                          text=True, errors="replace", env=env, timeout=timeout)


def fuzz_runs(name, runs, work):
    """tools/fuzz.sh --runs: its report, after checking it ran every run and every regression input."""
    env = dict(os.environ, ARENASCOPE_BUILD_DIR=str(BUILD))
    r = subprocess.run(["bash", str(ROOT / "tools" / "fuzz.sh"), "--runs", str(runs), name, str(work)],
                       capture_output=True, text=True, errors="replace", env=env, timeout=1800)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    regressions = len([f for f in (REGRESSIONS / name).glob("*") if f.is_file()])
    assert f"({regressions} regression inputs)" in r.stdout, r.stdout
    m = re.search(rf"{name}: (\d+) executions .*, (cov: \d+ ft: \d+ corp: \d+), 0 crash", r.stdout)
    assert m and int(m.group(1)) == runs, r.stdout[-3000:]
    print(r.stdout)
    return r.stdout


def test_the_checks_catch_what_they_are_for():
    """The harnesses' checks pass real output and catch each defect they are for (checks_selftest.cpp)."""
    r = subprocess.run([str(FUZZ / "arenascope-fuzz-checks-selftest")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert " 0 of " in r.stdout, r.stdout


@pytest.mark.parametrize("name", sorted(RUNS))
def test_harness_survives_fuzzing(name, tmp_path):
    work = tmp_path / "work"
    fuzz_runs(name, RUNS[name], work)
    if name == "budget":
        compile_headers(FUZZ / "budget_fuzz", [work / "corpus", work / "seeds"], tmp_path)


def compile_headers(exe, corpora, tmp_path):
    """What budget_header wrote for the seeds and the corpus the run grew, compiled as firmware would."""
    headers = tmp_path / "headers"
    headers.mkdir()
    env = dict(os.environ, ARENASCOPE_FUZZ_HEADERS=str(headers))
    r = run(exe, ["-runs=0", *map(str, corpora)], env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-4000:]
    written = sorted(headers.glob("*.h"))
    assert written, "no model of the corpus gave a header"
    cc = shutil.which("cc") or shutil.which("clang")
    sources = []
    for h in written[:40]:
        c = h.with_suffix(".c")
        c.write_text(f'#define ARENASCOPE_PLAN_TABLES\n#include "{h.name}"\n'
                     "unsigned long use(void) {\n"
                     "    return sizeof arenascope_plan_head + sizeof arenascope_plan_tail +\n"
                     "           sizeof arenascope_plan_op_names + sizeof arenascope_plan_op_state +\n"
                     "           ARENASCOPE_PLAN_RECOMMENDED_ARENA_BYTES + ARENASCOPE_PLAN_TAIL_NODES;\n"
                     "}\n")
        sources.append(str(c))
    for c in sources:
        r = subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only",
                            f"-I{ROOT / 'target_agent' / 'include'}", c], capture_output=True, text=True,
                           errors="replace", timeout=60)
        # #error is how a header for a model TFLM rejects stops a build: by design.
        if r.returncode != 0 and "#error" in r.stderr and "TFLM rejects this model" in r.stderr:
            continue
        assert r.returncode == 0, f"{c}: {r.stderr[-3000:]}"
    print(f"budget: {len(sources)} of {len(written)} headers from the corpus compile")
