#!/usr/bin/env bash
# The test command: installs what is missing, builds, runs every test (ctest), prints the
# agent's footprint. Exit status is ctest's.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-deps.sh
bash tools/build.sh
/usr/bin/python3 tools/footprint.py build/firmware
cd build
ctest --output-on-failure -j2
