"""The planner's libFuzzer harnesses (planner/fuzz, docs/fuzzing.md), each for a bounded time.

reader_fuzz (the model reader, the planners, the replay), budget_fuzz (make_budget and its four
writers, each output checked well-formed) and arena_size_fuzz (--arena-size's replay at a fuzzed
size) abort on a broken invariant; ASan and UBSan abort on memory errors and undefined
behaviour. They are built once by the main build (planner/CMakeLists.txt, an ExternalProject
when clang++ is found), not here. Seeds: the synthetic models arenascope-fuzz-seeds writes, the
build's DS-CNN and ../shared/models when present; the corpus lives in a temporary directory.
Every input under tests/fixtures/fuzz/HARNESS/ (a crash found and fixed) runs first.
Then the headers budget_fuzz wrote for the seeds and the corpus it grew are compiled as C99 with
-Werror, and the checks are shown to catch what they are for (arenascope-fuzz-checks-selftest).
Run longer by hand: tools/fuzz.sh, or ARENASCOPE_FUZZ_SECONDS here (default 30 per harness).
"""
import os
import re
import shutil
import subprocess

import pytest

from harness import BUILD, ROOT, SHARED

SECONDS = int(os.environ.get("ARENASCOPE_FUZZ_SECONDS", "30"))
TIMEOUT = 20  # seconds one input may take (a sanitized replay of the largest real model takes ~1 s)
FUZZ = BUILD / "planner" / "fuzz"
HARNESSES = ["reader", "budget", "arena_size"]
REGRESSIONS = ROOT / "tests" / "fixtures" / "fuzz"
_CACHE = BUILD / "CMakeCache.txt"
_FUZZ_OFF = _CACHE.exists() and re.search(r"^ARENASCOPE_FUZZ:BOOL=OFF$", _CACHE.read_text(), re.M)

pytestmark = [pytest.mark.skipif(not shutil.which("clang++"), reason="clang++ absent: no libFuzzer"),
              pytest.mark.skipif(bool(_FUZZ_OFF), reason="configured with ARENASCOPE_FUZZ=OFF")]


def harness(name):
    exe = FUZZ / f"{name}_fuzz"
    assert exe.exists(), f"{exe} is missing: build the planner_fuzzers target (cmake --build build)"
    return exe


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    out = tmp_path_factory.mktemp("seeds")
    models = [BUILD / "planner" / "dscnn_kws.tflite"]
    assert models[0].exists(), "build the dscnn_model target first"
    models += sorted((SHARED / "models").glob("*.tflite")) if (SHARED / "models").exists() else []
    subprocess.run([str(FUZZ / "arenascope-fuzz-seeds"), str(out), *map(str, models)], check=True, timeout=60)
    # The synthetic models are there whatever ../shared holds: a CI without it starts from these.
    assert len(list(out.glob("*.tflite"))) >= 12 + len(models)
    return out


def run(exe, args, env=None, timeout=None):
    return subprocess.run([str(exe), f"-timeout={TIMEOUT}", "-rss_limit_mb=2048", *args], capture_output=True,
                          text=True, errors="replace", env=env, timeout=timeout)


def test_the_checks_catch_what_they_are_for():
    """The harnesses' checks pass real output and catch each defect they are for (checks_selftest.cpp)."""
    r = subprocess.run([str(FUZZ / "arenascope-fuzz-checks-selftest")], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert " 0 of " in r.stdout, r.stdout


@pytest.mark.parametrize("name", HARNESSES)
def test_harness_survives_fuzzing(name, seeds, tmp_path):
    exe = harness(name)
    fixed = sorted((REGRESSIONS / name).glob("*")) if (REGRESSIONS / name).exists() else []
    if fixed:  # each input that once crashed runs once: none may crash again
        r = run(exe, [*map(str, fixed)], timeout=TIMEOUT * len(fixed) + 60)
        assert r.returncode == 0, r.stderr[-4000:]
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    seed_dir = seeds / "arena_size" if name == "arena_size" else seeds
    r = run(exe, [f"-max_total_time={SECONDS}", "-print_final_stats=1", f"-artifact_prefix={tmp_path}/",
                  str(corpus), str(seed_dir)], timeout=SECONDS + 300)
    assert r.returncode == 0, r.stderr[-6000:]
    executions = int(re.search(r"^stat::number_of_executed_units: *(\d+)", r.stderr, re.M).group(1))
    assert executions > len(list(seed_dir.iterdir())), r.stderr[-2000:]  # it fuzzed, beyond the seeds
    print(f"{name}: {executions} executions in {SECONDS} s, no crash")
    if name == "budget":
        compile_headers(exe, [corpus, seed_dir], tmp_path)


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
