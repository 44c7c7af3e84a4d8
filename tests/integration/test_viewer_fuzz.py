"""The viewer's snapshot reader under libFuzzer (viewer/fuzz, docs/fuzzing.md), deterministic: seed 1, a fixed count.

`tools/fuzz.sh --runs N snapshot WORK` builds the harness (clang, ASan, UBSan; incremental, in
BUILD/viewer/fuzz) and runs parse_snapshot and the live message parsers from seed 1 for exactly N
runs over tests/fixtures/*.json and every input under tests/fixtures/fuzz/snapshot/ (a crash found
and fixed), with -rss_limit_mb 512 (the viewer's memory bound, viewer/README.md): a given commit
passes or fails the same way every time. Open-ended fuzzing is by hand: tools/fuzz.sh snapshot SECONDS.
"""
import os
import re
import shutil
import subprocess

import pytest

from harness import BUILD, ROOT

RUNS = 10000  # about half a minute on a quiet 2-core machine (docs/fuzzing.md)
_CACHE = BUILD / "CMakeCache.txt"
_FUZZ_OFF = _CACHE.exists() and re.search(r"^ARENASCOPE_FUZZ:BOOL=OFF$", _CACHE.read_text(), re.M)

pytestmark = [pytest.mark.skipif(not shutil.which("clang++"), reason="clang++ absent: no libFuzzer"),
              pytest.mark.skipif(bool(_FUZZ_OFF), reason="configured with ARENASCOPE_FUZZ=OFF")]


def test_snapshot_reader_survives_fuzzing(tmp_path):
    env = dict(os.environ, ARENASCOPE_BUILD_DIR=str(BUILD))
    r = subprocess.run(["bash", str(ROOT / "tools" / "fuzz.sh"), "--runs", str(RUNS), "snapshot", str(tmp_path / "w")],
                       capture_output=True, text=True, errors="replace", env=env, timeout=1800)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    fixed = ROOT / "tests" / "fixtures" / "fuzz" / "snapshot"
    regressions = len([f for f in fixed.glob("*") if f.is_file()]) if fixed.exists() else 0
    assert f"({regressions} regression inputs)" in r.stdout, r.stdout
    m = re.search(r"snapshot: (\d+) executions .*, cov: \d+ ft: \d+ corp: \d+, 0 crash", r.stdout)
    assert m and int(m.group(1)) == RUNS, r.stdout[-3000:]
    print(r.stdout)
