#!/usr/bin/env bash
# Runs one of the planner's or the viewer's libFuzzer harnesses (docs/fuzzing.md).
#
#   tools/fuzz.sh HARNESS SECONDS [CORPUS_DIR]   open-ended, by hand: fuzzes for SECONDS with a
#                                                 fresh random seed, the corpus kept between runs
#   tools/fuzz.sh --runs N HARNESS [WORK_DIR]     deterministic, for CI: seed 1, exactly N runs,
#                                                 a fresh corpus; the same commit passes or fails
#                                                 the same way every time
#
# HARNESS: reader (the model reader and the planners), budget (make_budget and the four writers,
# their output checked well-formed), arena_size (--arena-size N's replay at a fuzzed N) or snapshot
# (the viewer's snapshot reader and live message parser: viewer/fuzz, in BUILD/viewer/fuzz, seeded
# with tests/fixtures/*.json, -rss_limit_mb 512: the viewer's memory bound, viewer/README.md).
# Builds the harnesses if needed (clang; the fuzz project planner/fuzz in BUILD/planner/fuzz,
# BUILD = $ARENASCOPE_BUILD_DIR or build/).
#
# Seeds, both modes: the synthetic models arenascope-fuzz-seeds writes and the build's DS-CNN (for
# snapshot: tests/fixtures/*.json), plus every regression input in tests/fixtures/fuzz/HARNESS/
# (an input that once crashed it). ../shared/models, when present, are seeds of the open-ended
# mode (not with ARENASCOPE_FUZZ_SHARED=0); the deterministic mode runs each of them once after
# fuzzing instead, so that its fuzzing does not depend on what ../shared holds.
#
# Open-ended: fuzzes from CORPUS_DIR (default ${XDG_CACHE_HOME:-~/.cache}/arenascope-fuzz/HARNESS,
# outside the repository; it persists, so each run goes on from the last) with the seeds as a
# read-only second corpus; a crash's input goes to CORPUS_DIR/../HARNESS-crashes/.
# Deterministic: the seeds are listed in name order (-seed_inputs), libFuzzer runs with -seed=1
# -runs=N -reload=0 into WORK_DIR/corpus (default: a temporary directory, removed after); a
# crash's input goes to WORK_DIR/crashes/. WORK_DIR/seeds keeps the seeds.
#
# Prints the executions, the rate, the coverage reached and the crashes found; exits 1 when
# libFuzzer found one. Environment: ARENASCOPE_FUZZ_TIMEOUT (seconds one input may take; default
# 10, deterministic mode 20), ARENASCOPE_FUZZ_ARGS (more libFuzzer flags, e.g. -jobs=2 by hand),
# ARENASCOPE_FUZZ_RSS_MB (default 2048; snapshot: 512).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
usage() {
  echo "usage: tools/fuzz.sh reader|budget|arena_size|snapshot SECONDS [CORPUS_DIR]" >&2
  echo "       tools/fuzz.sh --runs N reader|budget|arena_size|snapshot [WORK_DIR]" >&2
  exit 2
}
runs=""
if [ "${1:-}" = --runs ]; then
  [ $# -ge 3 ] && [ $# -le 4 ] || usage
  runs=$2 harness=$3 work=${4:-}
  [[ $runs =~ ^[1-9][0-9]*$ ]] || usage
else
  [ $# -ge 2 ] && [ $# -le 3 ] || usage
  harness=$1 seconds=$2
  [[ $seconds =~ ^[1-9][0-9]*$ ]] || usage
fi
case $harness in reader | budget | arena_size | snapshot) ;; *) usage ;; esac
command -v clang++ >/dev/null || { echo "fuzz.sh: the fuzzers need clang++ (libFuzzer)" >&2; exit 1; }
build=${ARENASCOPE_BUILD_DIR:-$root/build}
fuzz_build=$build/planner/fuzz fuzz_src=$root/planner/fuzz targets=("${harness}_fuzz" arenascope-fuzz-seeds)
rss_mb=${ARENASCOPE_FUZZ_RSS_MB:-2048}
if [ "$harness" = snapshot ]; then
  fuzz_build=$build/viewer/fuzz fuzz_src=$root/viewer/fuzz targets=(snapshot_fuzz) rss_mb=${ARENASCOPE_FUZZ_RSS_MB:-512}
fi
exe=$fuzz_build/${harness}_fuzz

# Build (incremental): the main build's ExternalProject configures the same directory.
if [ ! -f "$fuzz_build/CMakeCache.txt" ]; then
  mkdir -p "$fuzz_build"
  cmake -S "$fuzz_src" -B "$fuzz_build" -DCMAKE_CXX_COMPILER=clang++ >"$fuzz_build/configure.log" 2>&1 ||
    { cat "$fuzz_build/configure.log"; exit 1; }
fi
cmake --build "$fuzz_build" --target "${targets[@]}" -j2 >/dev/null ||
  cmake --build "$fuzz_build" --target "${targets[@]}" -j1

# Where this run works: the deterministic mode's WORK_DIR (or a temporary one), else a temporary
# directory for the seeds beside the persistent corpus.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "$runs" ]; then
  if [ -n "$work" ]; then
    mkdir -p "$work"
    work=$(cd "$work" && pwd)
    rm -rf "$work/corpus" "$work/seeds" "$work/crashes" "$work/shared"
  else
    work=$tmp
  fi
  # -seed_inputs takes a comma-separated list of paths.
  case $work in *,*) echo "fuzz.sh: WORK_DIR must not contain a comma: $work" >&2; exit 2 ;; esac
  corpus=$work/corpus crashes=$work/crashes seeds=$work/seeds
else
  corpus=${3:-${XDG_CACHE_HOME:-$HOME/.cache}/arenascope-fuzz/$harness}
  crashes=$(dirname "$corpus")/$harness-crashes
  seeds=$tmp/seeds
fi
mkdir -p "$corpus" "$crashes" "$seeds"
corpus=$(cd "$corpus" && pwd) crashes=$(cd "$crashes" && pwd)

# The seeds, rewritten each run (cheap).
shared=()
for m in "$root"/../shared/models/*.tflite; do [ -f "$m" ] && shared+=("$m"); done
[ "${ARENASCOPE_FUZZ_SHARED:-1}" = 0 ] && shared=()
if [ "$harness" = snapshot ]; then
  cp "$root"/tests/fixtures/*.json "$seeds"/
  shared=()
else
  models=("$build/planner/dscnn_kws.tflite")
  [ -f "${models[0]}" ] || { echo "fuzz.sh: ${models[0]} is missing: build first (bash tools/build.sh)" >&2; exit 1; }
  [ -z "$runs" ] && models+=(${shared[@]+"${shared[@]}"})
  "$fuzz_build/arenascope-fuzz-seeds" "$seeds" "${models[@]}"
  if [ "$harness" = arena_size ]; then
    find "$seeds" -maxdepth 1 -type f -delete
    mv "$seeds"/arena_size/* "$seeds"/ && rmdir "$seeds"/arena_size
  else
    rm -rf "$seeds"/arena_size
  fi
fi
regressions=$root/tests/fixtures/fuzz/$harness
n_regressions=0
if [ -d "$regressions" ]; then
  for f in "$regressions"/*; do
    [ -f "$f" ] || continue
    cp "$f" "$seeds/regression-$(basename "$f")"
    n_regressions=$((n_regressions + 1))
  done
fi
n_seeds=$(find "$seeds" -type f | wc -l)

log=$tmp/log
status=0 start=$SECONDS before=$(find "$crashes" -type f | wc -l)
if [ -n "$runs" ]; then
  find "$seeds" -type f | LC_ALL=C sort | paste -sd, >"$tmp/seeds.list"
  echo "fuzz.sh: $harness, $runs runs from seed 1: $n_seeds seeds ($n_regressions regression inputs)"
  # libFuzzer feeds the values the code compares back into its mutations, and some are addresses
  # (the flatbuffers verifier compares pointers): with address-space randomization they differ
  # from run to run, and so would the inputs tried. setarch -R runs the harness without it.
  norandom=(setarch "$(uname -m)" -R)
  if ! "${norandom[@]}" true 2>/dev/null; then
    echo "fuzz.sh: setarch -R cannot turn address-space randomization off here: runs may differ" >&2
    norandom=()
  fi
  # shellcheck disable=SC2086  # ARENASCOPE_FUZZ_ARGS is a list of flags
  ${norandom[@]+"${norandom[@]}"} "$exe" -seed=1 -runs="$runs" -reload=0 -purge_allocator_interval=-1 \
    -timeout="${ARENASCOPE_FUZZ_TIMEOUT:-20}" -rss_limit_mb="$rss_mb" \
    -print_final_stats=1 -artifact_prefix="$crashes/" -seed_inputs=@"$tmp/seeds.list" \
    ${ARENASCOPE_FUZZ_ARGS:-} "$corpus" >"$log" 2>&1 || status=$?
else
  echo "fuzz.sh: $harness for $seconds s, corpus $corpus ($(find "$corpus" -type f | wc -l) inputs)," \
       "$n_seeds seeds ($n_regressions regression inputs, ${#shared[@]} models of ../shared)"
  # shellcheck disable=SC2086  # ARENASCOPE_FUZZ_ARGS is a list of flags
  "$exe" -max_total_time="$seconds" -timeout="${ARENASCOPE_FUZZ_TIMEOUT:-10}" \
    -rss_limit_mb="$rss_mb" -print_final_stats=1 -artifact_prefix="$crashes/" \
    ${ARENASCOPE_FUZZ_ARGS:-} "$corpus" "$seeds" >"$log" 2>&1 || status=$?
fi
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
reached=$(grep -a -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 | sed -E 's/.*(cov: [0-9]+ ft: [0-9]+ corp: [0-9]+).*/\1/' || true)
elapsed=$((SECONDS - start))
found=$(($(find "$crashes" -type f | wc -l) - before))
grep -a -E '^(SUMMARY|arenascope fuzz:|==[0-9]+==ERROR)' "$log" | tail -5 || true
echo "fuzz.sh: $harness: ${execs:-?} executions in $elapsed s (${rate:-?} exec/s), ${reached:-no final stats}," \
     "$found crash(es) found (corpus now $(find "$corpus" -type f | wc -l) inputs)"

# The deterministic mode then runs each model of ../shared once (arena_size: behind its prefixes).
if [ -n "$runs" ] && [ "$status" -eq 0 ] && [ ${#shared[@]} -gt 0 ]; then
  mkdir -p "$work/shared"
  "$fuzz_build/arenascope-fuzz-seeds" "$work/shared" "${shared[@]}"
  once=()
  for m in "${shared[@]}"; do
    b=$(basename "$m" .tflite)
    if [ "$harness" = arena_size ]; then once+=("$work/shared/arena_size/${b}"_*); else once+=("$work/shared/$b.tflite"); fi
  done
  "$exe" -timeout="${ARENASCOPE_FUZZ_TIMEOUT:-20}" -rss_limit_mb="$rss_mb" -artifact_prefix="$crashes/" \
    "${once[@]}" >"$log.shared" 2>&1 || status=$?
  echo "fuzz.sh: $harness: each of the ${#shared[@]} models of ../shared run once ($([ "$status" -eq 0 ] && echo passed || echo FAILED))"
  grep -a -c "^Executed " "$log.shared" | sed "s/^/fuzz.sh: executed: /"
  [ "$status" -eq 0 ] || cat "$log.shared" >>"$log"
fi

if [ "$status" -ne 0 ] || [ "$found" -ne 0 ]; then
  tail -60 "$log"
  echo "fuzz.sh: inputs in $crashes; reproduce: $exe FILE" >&2
  exit 1
fi
