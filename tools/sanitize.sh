#!/usr/bin/env bash
# The C/C++ unit tests (agent, TFLM recorder, planner, viewer core: ctest label "unit") under
# AddressSanitizer and UndefinedBehaviorSanitizer. Configures a host-only build tree with
# ARENASCOPE_SANITIZE=ON (no firmware), builds only the `unit_tests` target (the tests and what
# they link) and runs them. Exits non-zero when the build fails, a test fails or a sanitizer
# reports: every report aborts its test (-fno-sanitize-recover=undefined, ASan's default; leaks
# too, at exit).
#   bash tools/sanitize.sh [BUILD_DIR]      (default build/sanitize)
# The `sanitized_unit_tests` ctest of the main build runs it, so tools/test.sh does.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build/sanitize}
start=$SECONDS
mkdir -p "$dir"
# Debug (-O0 -g): the quickest to compile, and UBSan sees every check the source asks for.
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DARENASCOPE_SANITIZE=ON -DARENASCOPE_FIRMWARE=OFF \
      -DARENASCOPE_VIEWER=ON -DARENASCOPE_TESTS=ON >"$dir/configure.log" 2>&1 ||
  { cat "$dir/configure.log"; exit 1; }
cmake --build "$dir" -j"$(nproc)" --target unit_tests
export ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_string_checks=1:abort_on_error=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
status=0
(cd "$dir" && ctest --output-on-failure -j"$(nproc)" -L '^unit$') || status=$?
echo "sanitize.sh: unit tests under ASan+UBSan: $([ $status -eq 0 ] && echo clean || echo FAILED), $((SECONDS - start)) s"
exit $status
