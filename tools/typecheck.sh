#!/usr/bin/env bash
# Type-checks the plugin's pipeline and its acquire/ and decode/ stages with mypy, as
# gdbplugin/pyproject.toml [tool.mypy] says (the files, python_version 3.11, strict Optional,
# check_untyped_defs). First a self-check: mypy must reject a snippet that adds 1 to an
# `int | None`, with these settings, or a clean run would prove nothing. Prints mypy's findings
# and exits 1 when there is any, 0 when there is none, and 77 (ctest: skipped) when mypy is
# missing (Debian 12: apt-get install mypy; tools/setup-deps.sh installs it).
#   bash tools/typecheck.sh
set -euo pipefail
cd "$(dirname "$0")/../gdbplugin"
if ! command -v mypy >/dev/null 2>&1; then
  echo "typecheck.sh: skipped: mypy not found (Debian 12: apt-get install mypy, or bash tools/setup-deps.sh)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A fresh cache each run: nothing written into the source tree.
cat >"$tmp/bad.py" <<'PY'
def grown(size: int | None) -> int:
    return size + 1
PY
if out=$(mypy --cache-dir "$tmp/cache" "$tmp/bad.py" 2>&1) || ! grep -q 'bad.py:2: error: .*\[operator\]' <<<"$out"; then
  echo "typecheck.sh: self-check failed: mypy did not reject adding 1 to an int | None (is strict Optional off?):" >&2
  echo "$out" >&2
  exit 1
fi
mypy --cache-dir "$tmp/cache"  # set -e: its status is the script's
