#!/usr/bin/env bash
# Configures and builds everything (host parts and the Cortex-M4 firmware) into build/.
# ARENASCOPE_DEMO_MODEL=FILE.tflite lays the demo firmware's arena out for that model (empty or
# unset: the project's DS-CNN), so a demo run with --model does not outlive itself in build/.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DARENASCOPE_DEMO_MODEL="${ARENASCOPE_DEMO_MODEL:-}" >/dev/null
cmake --build build -j"$(nproc)"
