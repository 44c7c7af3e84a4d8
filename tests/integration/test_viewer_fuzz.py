"""The viewer's snapshot reader under libFuzzer (viewer/fuzz, docs/fuzzing.md), for a bounded time.

tools/fuzz.sh snapshot builds the harness (clang, ASan, UBSan; incremental, in BUILD/viewer/fuzz)
and fuzzes parse_snapshot and the live message parsers from tests/fixtures/*.json, with
-rss_limit_mb 512 (the viewer's memory bound, viewer/README.md). Every input under
tests/fixtures/fuzz/snapshot/ (a crash found and fixed) runs first. The corpus is temporary.
Run longer by hand: tools/fuzz.sh snapshot SECONDS, or ARENASCOPE_FUZZ_SECONDS here (default 20).
"""
import os
import re
import shutil
import subprocess

import pytest

from harness import BUILD, ROOT

SECONDS = int(os.environ.get("ARENASCOPE_FUZZ_SECONDS", "20"))
_CACHE = BUILD / "CMakeCache.txt"
_FUZZ_OFF = _CACHE.exists() and re.search(r"^ARENASCOPE_FUZZ:BOOL=OFF$", _CACHE.read_text(), re.M)

pytestmark = [pytest.mark.skipif(not shutil.which("clang++"), reason="clang++ absent: no libFuzzer"),
              pytest.mark.skipif(bool(_FUZZ_OFF), reason="configured with ARENASCOPE_FUZZ=OFF")]


def test_snapshot_reader_survives_fuzzing(tmp_path):
    env = dict(os.environ, ARENASCOPE_BUILD_DIR=str(BUILD))
    corpus = tmp_path / "corpus"
    r = subprocess.run(["bash", str(ROOT / "tools" / "fuzz.sh"), "snapshot", str(SECONDS), str(corpus)],
                       capture_output=True, text=True, errors="replace", env=env, timeout=SECONDS + 900)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    m = re.search(r"snapshot: (\d+) executions", r.stdout)
    assert m, r.stdout[-3000:]
    seeds = len(list((ROOT / "tests" / "fixtures").glob("*.json")))
    assert int(m.group(1)) > seeds, r.stdout[-2000:]  # it fuzzed, beyond the seeds
    fixed = sorted((ROOT / "tests" / "fixtures" / "fuzz" / "snapshot").glob("*"))
    exe = BUILD / "viewer" / "fuzz" / "snapshot_fuzz"
    if fixed:  # each input that once crashed runs once: none may crash again
        r = subprocess.run([str(exe), "-rss_limit_mb=512", *map(str, fixed)], capture_output=True, text=True,
                           errors="replace", timeout=600)
        assert r.returncode == 0, r.stderr[-4000:]
    print(f"snapshot: {m.group(1)} executions in {SECONDS} s, no crash")
