#!/usr/bin/env bash
# Configures and builds everything (host parts and the Cortex-M4 firmware) into build/.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
