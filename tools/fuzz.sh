#!/usr/bin/env bash
# Runs one of the planner's or the viewer's libFuzzer harnesses (docs/fuzzing.md) for a given time.
#   tools/fuzz.sh HARNESS SECONDS [CORPUS_DIR]
# HARNESS: reader (the model reader and the planners), budget (make_budget and the four writers,
# their output checked well-formed), arena_size (--arena-size N's replay at a fuzzed N) or snapshot
# (the viewer's snapshot reader and live message parser: viewer/fuzz, in BUILD/viewer/fuzz, seeded
# with tests/fixtures/*.json, -rss_limit_mb 512: the viewer's memory bound, viewer/README.md).
# Builds the harnesses if needed (clang; the fuzz project planner/fuzz in BUILD/planner/fuzz,
# BUILD = $ARENASCOPE_BUILD_DIR or build/), then fuzzes from CORPUS_DIR (default
# ${XDG_CACHE_HOME:-~/.cache}/arenascope-fuzz/HARNESS, outside the repository; it persists, so
# each run goes on from the last) and read-only seeds: the synthetic models, the build's DS-CNN
# and ../shared/models when present. A crash's input goes to CORPUS_DIR/../HARNESS-crashes/.
# Prints the executions, the rate and the crashes found; exits 1 when libFuzzer found one.
# Environment: ARENASCOPE_FUZZ_TIMEOUT (seconds one input may take, default 10),
# ARENASCOPE_FUZZ_ARGS (more libFuzzer flags, e.g. -jobs=2), ARENASCOPE_FUZZ_RSS_MB (default 2048;
# snapshot: 512).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage() { echo "usage: tools/fuzz.sh reader|budget|arena_size|snapshot SECONDS [CORPUS_DIR]" >&2; exit 2; }
if [ $# -lt 2 ] || [ $# -gt 3 ]; then usage; fi
harness=$1 seconds=$2
case $harness in reader | budget | arena_size | snapshot) ;; *) usage ;; esac
[[ $seconds =~ ^[1-9][0-9]*$ ]] || usage
command -v clang++ >/dev/null || { echo "fuzz.sh: the fuzzers need clang++ (libFuzzer)" >&2; exit 1; }
build=${ARENASCOPE_BUILD_DIR:-$root/build}
fuzz_build=$build/planner/fuzz fuzz_src=$root/planner/fuzz targets=("${harness}_fuzz" arenascope-fuzz-seeds)
rss_mb=${ARENASCOPE_FUZZ_RSS_MB:-2048}
if [ "$harness" = snapshot ]; then
  fuzz_build=$build/viewer/fuzz fuzz_src=$root/viewer/fuzz targets=(snapshot_fuzz) rss_mb=${ARENASCOPE_FUZZ_RSS_MB:-512}
fi
corpus=${3:-${XDG_CACHE_HOME:-$HOME/.cache}/arenascope-fuzz/$harness}
crashes=$(dirname "$corpus")/$harness-crashes
mkdir -p "$corpus" "$crashes"
corpus=$(cd "$corpus" && pwd) crashes=$(cd "$crashes" && pwd)

# Build (incremental): the main build's ExternalProject configures the same directory.
if [ ! -f "$fuzz_build/CMakeCache.txt" ]; then
  mkdir -p "$fuzz_build"
  cmake -S "$fuzz_src" -B "$fuzz_build" -DCMAKE_CXX_COMPILER=clang++ >"$fuzz_build/configure.log" 2>&1 ||
    { cat "$fuzz_build/configure.log"; exit 1; }
fi
cmake --build "$fuzz_build" --target "${targets[@]}" -j2 >/dev/null ||
  cmake --build "$fuzz_build" --target "${targets[@]}" -j1

# Seeds, rewritten each run (cheap): read-only corpus directories after the persistent one.
seeds=$(mktemp -d)
log=$(mktemp)
trap 'rm -rf "$seeds" "$log"' EXIT
models=()
[ -f "$build/planner/dscnn_kws.tflite" ] && models+=("$build/planner/dscnn_kws.tflite")
for m in "$root"/../shared/models/*.tflite; do [ -f "$m" ] && models+=("$m"); done
if [ "$harness" = snapshot ]; then
  models=()
  cp "$root"/tests/fixtures/*.json "$seeds"/
else
  "$fuzz_build/arenascope-fuzz-seeds" "$seeds" ${models[@]+"${models[@]}"}
fi
seed_dir=$seeds
[ "$harness" = arena_size ] && seed_dir=$seeds/arena_size

before=$(find "$crashes" -type f | wc -l)
echo "fuzz.sh: $harness for $seconds s, corpus $corpus ($(find "$corpus" -type f | wc -l) inputs), seeds: $([ "$harness" = snapshot ] && echo "tests/fixtures/*.json" || echo "${#models[@]} models + synthetic")"
status=0 start=$SECONDS
# shellcheck disable=SC2086  # ARENASCOPE_FUZZ_ARGS is a list of flags
"$fuzz_build/${harness}_fuzz" -max_total_time="$seconds" -timeout="${ARENASCOPE_FUZZ_TIMEOUT:-10}" \
  -rss_limit_mb="$rss_mb" -print_final_stats=1 -artifact_prefix="$crashes/" \
  ${ARENASCOPE_FUZZ_ARGS:-} "$corpus" "$seed_dir" >"$log" 2>&1 || status=$?
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
elapsed=$((SECONDS - start))
found=$(($(find "$crashes" -type f | wc -l) - before))
grep -a -E '^(#[0-9]+[[:space:]]+DONE|SUMMARY|arenascope fuzz:|==[0-9]+==ERROR)' "$log" | tail -5 || true
echo "fuzz.sh: $harness: ${execs:-?} executions in $elapsed s (${rate:-?} exec/s), $found crash(es) found" \
     "(corpus now $(find "$corpus" -type f | wc -l) inputs)"
if [ "$status" -ne 0 ] || [ "$found" -ne 0 ]; then
  tail -60 "$log"
  echo "fuzz.sh: inputs in $crashes; reproduce: $fuzz_build/${harness}_fuzz FILE" >&2
  exit 1
fi
