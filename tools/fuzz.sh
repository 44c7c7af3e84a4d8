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
# -runs=N -reload=0, without address-space randomization, into WORK_DIR/corpus; WORK_DIR/seeds
# keeps the seeds (both made afresh each run); a crash's input goes to WORK_DIR/crashes/, which
# is kept. Without WORK_DIR the run works in a temporary directory, removed after, and a crash's
# input goes to ${XDG_CACHE_HOME:-~/.cache}/arenascope-fuzz/HARNESS-crashes/.
#
# Prints the executions, the rate, the coverage reached and the crashes found; exits 1 when
# libFuzzer found one, 2 on bad usage. Ctrl-C or SIGTERM stops the harness too. Environment:
# ARENASCOPE_FUZZ_TIMEOUT (seconds one input may take; default 10, deterministic mode 20),
# ARENASCOPE_FUZZ_ARGS (more libFuzzer flags, e.g. -jobs=2 by hand), ARENASCOPE_FUZZ_RSS_MB
# (default 2048; snapshot: 512).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
harnesses="reader, budget, arena_size or snapshot"
usage() {
  echo "usage: tools/fuzz.sh HARNESS SECONDS [CORPUS_DIR]     open-ended, by hand"
  echo "       tools/fuzz.sh --runs N HARNESS [WORK_DIR]     deterministic (CI)"
  echo "HARNESS: $harnesses (docs/fuzzing.md)"
}
bad() { echo "fuzz.sh: $1" >&2; usage >&2; exit 2; }
case ${1:-} in -h | --help) usage; exit 0 ;; esac
runs="" work="" seconds=""
if [ "${1:-}" = --runs ]; then
  [ $# -ge 3 ] || bad "--runs needs a count and a harness"
  [ $# -le 4 ] || bad "too many arguments: $*"
  runs=$2 harness=$3 work=${4:-}
  [[ $runs =~ ^[1-9][0-9]*$ ]] || bad "--runs takes a positive whole number of runs, not '$runs'"
else
  [ $# -ge 2 ] || bad "give a harness and the seconds to fuzz (or --runs N HARNESS)"
  [ $# -le 3 ] || bad "too many arguments: $*"
  harness=$1 seconds=$2
  [[ $seconds =~ ^[1-9][0-9]*$ ]] || bad "SECONDS must be a positive whole number, not '$seconds'"
fi
case $harness in reader | budget | arena_size | snapshot) ;; *) bad "no harness '$harness': $harnesses" ;; esac
# -seed_inputs takes a comma-separated list of paths: say so before anything is made or removed.
if [ -n "$work" ]; then
  case $work in *,*) bad "WORK_DIR must not contain a comma (libFuzzer's -seed_inputs list): $work" ;; esac
  [ ! -e "$work" ] || [ -d "$work" ] || bad "WORK_DIR is not a directory: $work"
fi
command -v clang++ >/dev/null || { echo "fuzz.sh: the fuzzers need clang++ (libFuzzer)" >&2; exit 1; }
build=${ARENASCOPE_BUILD_DIR:-$root/build}
fuzz_build=$build/planner/fuzz fuzz_src=$root/planner/fuzz targets=("${harness}_fuzz" arenascope-fuzz-seeds)
rss_mb=${ARENASCOPE_FUZZ_RSS_MB:-2048}
if [ "$harness" = snapshot ]; then
  fuzz_build=$build/viewer/fuzz fuzz_src=$root/viewer/fuzz targets=(snapshot_fuzz) rss_mb=${ARENASCOPE_FUZZ_RSS_MB:-512}
fi
exe=$fuzz_build/${harness}_fuzz
cache=${XDG_CACHE_HOME:-$HOME/.cache}/arenascope-fuzz

# A temporary directory for the seeds list, the log and the harnesses' own temporary files (their
# TMPDIR: a harness that crashes leaves its model file there, removed with it).
tmp=$(mktemp -d)
child=""
cleanup() { [ -z "$child" ] || kill "$child" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
trap 'echo "fuzz.sh: stopped" >&2; exit 130' INT
trap 'echo "fuzz.sh: stopped" >&2; exit 143' TERM
if [ -n "$runs" ] && [ -z "$work" ]; then
  case $tmp in *,*) bad "the temporary directory contains a comma (TMPDIR=$TMPDIR): give a WORK_DIR" ;; esac
fi
mkdir "$tmp/harness"

# Build (incremental): the main build's ExternalProject configures the same directory.
if [ ! -f "$fuzz_build/CMakeCache.txt" ]; then
  mkdir -p "$fuzz_build"
  cmake -S "$fuzz_src" -B "$fuzz_build" -DCMAKE_CXX_COMPILER=clang++ >"$fuzz_build/configure.log" 2>&1 ||
    { cat "$fuzz_build/configure.log"; exit 1; }
fi
cmake --build "$fuzz_build" --target "${targets[@]}" -j2 >/dev/null ||
  cmake --build "$fuzz_build" --target "${targets[@]}" -j1

if [ -n "$runs" ]; then
  if [ -n "$work" ]; then
    mkdir -p "$work"
    work=$(cd "$work" && pwd)
    rm -rf "$work/corpus" "$work/seeds" "$work/shared"
    crashes=$work/crashes
  else
    work=$tmp/work
    crashes=$cache/$harness-crashes
  fi
  corpus=$work/corpus seeds=$work/seeds
else
  corpus=${3:-$cache/$harness}
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

# harness_run LOG COMMAND...: runs the harness in the background (so that a signal to this script
# reaches it too), its output in LOG, its temporary files in $tmp/harness; its exit status in
# $status. (Redirecting the call instead would send the traps' messages to LOG too.)
harness_run() {
  local out=$1
  shift
  TMPDIR=$tmp/harness "$@" >"$out" 2>&1 &
  child=$!
  wait "$child" || status=$?
  child=""
}

log=$tmp/log
status=0 before=$(find "$crashes" -type f | wc -l) start_ns=$(date +%s%N)
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
  harness_run "$log" ${norandom[@]+"${norandom[@]}"} "$exe" -seed=1 -runs="$runs" -reload=0 -purge_allocator_interval=-1 \
    -timeout="${ARENASCOPE_FUZZ_TIMEOUT:-20}" -rss_limit_mb="$rss_mb" \
    -print_final_stats=1 -artifact_prefix="$crashes/" -seed_inputs=@"$tmp/seeds.list" \
    ${ARENASCOPE_FUZZ_ARGS:-} "$corpus"
else
  echo "fuzz.sh: $harness for $seconds s, corpus $corpus ($(find "$corpus" -type f | wc -l) inputs)," \
       "$n_seeds seeds ($n_regressions regression inputs, ${#shared[@]} models of ../shared)"
  # shellcheck disable=SC2086  # ARENASCOPE_FUZZ_ARGS is a list of flags
  harness_run "$log" "$exe" -max_total_time="$seconds" -timeout="${ARENASCOPE_FUZZ_TIMEOUT:-10}" \
    -rss_limit_mb="$rss_mb" -print_final_stats=1 -artifact_prefix="$crashes/" \
    ${ARENASCOPE_FUZZ_ARGS:-} "$corpus" "$seeds"
fi
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
elapsed_ms=$((($(date +%s%N) - start_ns) / 1000000))
rate="?"
[ -n "$execs" ] && [ "$elapsed_ms" -gt 0 ] && rate=$((execs * 1000 / elapsed_ms))
reached=$(grep -a -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 | sed -E 's/.*(cov: [0-9]+ ft: [0-9]+ corp: [0-9]+).*/\1/' || true)
found=$(($(find "$crashes" -type f | wc -l) - before))
grep -a -E '^(SUMMARY|arenascope fuzz:|==[0-9]+==ERROR)' "$log" | tail -5 || true
echo "fuzz.sh: $harness: ${execs:-?} executions in $((elapsed_ms / 1000)).$((elapsed_ms % 1000 / 100)) s" \
     "($rate exec/s), ${reached:-no final stats}, $found crash(es) found (corpus now $(find "$corpus" -type f | wc -l) inputs)"

# The deterministic mode then runs each model of ../shared once (arena_size: behind its prefixes).
if [ -n "$runs" ] && [ "$status" -eq 0 ] && [ ${#shared[@]} -gt 0 ]; then
  mkdir -p "$work/shared"
  "$fuzz_build/arenascope-fuzz-seeds" "$work/shared" "${shared[@]}"
  once=()
  for m in "${shared[@]}"; do
    b=$(basename "$m" .tflite)
    if [ "$harness" = arena_size ]; then once+=("$work/shared/arena_size/${b}"_*); else once+=("$work/shared/$b.tflite"); fi
  done
  harness_run "$log.shared" "$exe" -timeout="${ARENASCOPE_FUZZ_TIMEOUT:-20}" -rss_limit_mb="$rss_mb" \
    -artifact_prefix="$crashes/" "${once[@]}"
  echo "fuzz.sh: $harness: each of the ${#shared[@]} models of ../shared run once:" \
       "$(grep -a -c '^Executed ' "$log.shared" || true) executed, $([ "$status" -eq 0 ] && echo passed || echo FAILED)"
  [ "$status" -eq 0 ] || cat "$log.shared" >>"$log"
  found=$(($(find "$crashes" -type f | wc -l) - before))
fi

if [ "$status" -ne 0 ] || [ "$found" -ne 0 ]; then
  tail -60 "$log"
  echo "fuzz.sh: $found crash input(s) in $crashes; reproduce: $exe FILE" >&2
  exit 1
fi
