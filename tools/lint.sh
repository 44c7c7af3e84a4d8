#!/usr/bin/env bash
# Lints the project's Python (every tracked *.py and gdbplugin/arenascope) with ruff, as the root's
# pyproject.toml [tool.ruff] says: ruff's WebAssembly build under node (tools/lint/ruff.mjs; the
# version is pinned in tools/lint/package-lock.json, installed by tools/setup-deps.sh). Prints
# `path:line:col: CODE message` per finding and exits 1 when there is any, 0 when there is none,
# and 77 (ctest: skipped) when node is missing.
#   bash tools/lint.sh [FILE...]     (FILE: from the repository root; none: all of them)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v node >/dev/null 2>&1; then
  echo "lint.sh: skipped: node not found (Debian 12: apt-get install nodejs npm, then bash tools/setup-deps.sh)"
  exit 77
fi
if ! node tools/lint/ruff.mjs --installed; then
  echo "lint.sh: ruff is not installed as tools/lint/package-lock.json pins it:" \
       "run bash tools/setup-deps.sh (or: cd tools/lint && npm ci)" >&2
  exit 1
fi
exec node tools/lint/ruff.mjs "$@"
