"""Fuzz the planner's model reader with libFuzzer (clang, ASan, UBSan) for a bounded time.

The target (planner/fuzz/reader_fuzz.cpp) aborts on an invalid plan; ASan/UBSan abort on
memory errors. The seed corpus is the real models in ../shared/models when present (copied to a
temporary directory only); without them libFuzzer starts from an empty corpus.
Run longer by hand with ARENASCOPE_FUZZ_SECONDS.
"""
import os
import shutil
import subprocess

import pytest

from harness import BUILD, ROOT, SHARED

SECONDS = int(os.environ.get("ARENASCOPE_FUZZ_SECONDS", "30"))


@pytest.mark.skipif(not shutil.which("clang++"), reason="clang++ absent")
def test_reader_survives_fuzzing(tmp_path):
    gen = BUILD / "planner" / "gen"
    assert (gen / "tflite_subset_generated.h").exists(), "build the planner first"
    exe = tmp_path / "reader_fuzz"
    sources = sorted(str(p) for p in (ROOT / "planner" / "src").glob("*.cpp") if p.name != "main.cpp")
    subprocess.run(["clang++", "-std=c++17", "-g", "-O1", "-Wall", "-Wextra", "-Werror",
                    "-fsanitize=fuzzer,address,undefined", "-fno-sanitize-recover=undefined",
                    f"-I{ROOT / 'planner' / 'include'}", f"-I{gen}",
                    str(ROOT / "planner" / "fuzz" / "reader_fuzz.cpp"), *sources, "-lflatbuffers", "-o", str(exe)],
                   check=True, timeout=600)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for model in sorted((SHARED / "models").glob("*.tflite")) if (SHARED / "models").exists() else []:
        shutil.copy(model, corpus)
    r = subprocess.run([str(exe), f"-max_total_time={SECONDS}", "-max_len=65536", "-rss_limit_mb=1024",
                        f"-artifact_prefix={tmp_path}/", str(corpus)],
                       capture_output=True, text=True, timeout=SECONDS + 300)
    assert r.returncode == 0, r.stderr[-4000:]
    assert "Done" in r.stderr, r.stderr[-2000:]
    print(r.stderr.strip().splitlines()[-2])
