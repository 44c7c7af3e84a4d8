#!/usr/bin/env bash
# The test command: installs what is missing, builds, runs every test (ctest; the agent's
# footprint budget is one of them) and prints the footprint. Exit status is ctest's.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-deps.sh
bash tools/build.sh
status=0
(cd build && ctest --output-on-failure -j2) || status=$?
/usr/bin/python3 tools/footprint.py build/firmware || true
exit $status
