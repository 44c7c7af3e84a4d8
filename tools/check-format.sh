#!/usr/bin/env bash
# Checks that every C/C++ source of the project (tracked .c .h .cpp .hpp .cc; outside a git
# checkout, the same files found under the tree less build*/) is formatted as .clang-format says,
# and that no function is longer than tools/check_function_length.py allows (80 lines).
# Exits 1 and names the files (or functions) when one is not (fix: clang-format-14 -i FILE...;
# split the function), 0 when all are, and 77 (ctest: skipped) when clang-format 14 is missing:
# other versions format differently (the length check still runs first and fails on its own).
# ctest runs the two as the tests clang_format and function_length.
#   bash tools/check-format.sh
set -euo pipefail
cd "$(dirname "$0")/.."
python3 tools/check_function_length.py
cf=""
for c in clang-format-14 clang-format; do
  if command -v "$c" >/dev/null 2>&1 && "$c" --version | grep -q "version 14\."; then
    cf=$c
    break
  fi
done
if [ -z "$cf" ]; then
  echo "check-format.sh: skipped: clang-format 14 not found (Debian 12: apt-get install clang-format)"
  exit 77
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp' '*.cc')
else
  mapfile -t files < <(find . \( -path './build*' -o -path './.git' \) -prune -o -type f \
                       \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp' -o -name '*.cc' \) -print | sort)
fi
bad=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue  # deleted in the work tree, not yet in the index
  if ! "$cf" --style=file --dry-run -Werror "$f" >/dev/null 2>&1; then
    bad+=("$f")
  fi
done
if [ ${#bad[@]} -ne 0 ]; then
  echo "check-format.sh: ${#bad[@]} of ${#files[@]} files are not formatted (.clang-format); fix with:"
  echo "  $cf -i ${bad[*]}"
  "$cf" --style=file --dry-run "${bad[0]}" 2>&1 | head -20
  exit 1
fi
echo "check-format.sh: ${#files[@]} C/C++ files formatted ($cf)"
