#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang, AddressSanitizer and UBSan in build-fuzz and
# runs each one for SECONDS (default 60), or, with --runs, for RUNS inputs from a fixed seed:
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#   scripts/fuzz.sh --runs RUNS [TARGET...]
#   TARGET: config_fuzzer, document_reader_fuzzer, task_config_fuzzer, tokenizer_json_fuzzer,
#           safetensors_fuzzer, torch_save_fuzzer, config_json_fuzzer (default: all)
# CI (.ci/run) runs `scripts/fuzz.sh --runs 2000`: the same inputs on every machine, so a commit
# passes or fails there for what it is, not for what a timed search happened to reach; a longer
# (timed, forked, growing-corpus) search is `scripts/fuzz.sh 600`.
# Seeds come from configs/, tests/fixtures/ and fuzz/seeds/<target>/ (written by
# fuzz/make_seeds.py); the corpus grown by a run is kept in build-fuzz/corpus/<target>/ for the
# next one. A crash, hang or runaway allocation leaves its input in
# build-fuzz/artifacts/<target>/ and makes the script exit 1; replay it with
#   build-fuzz/fuzz/<target> <artifact>
# and, once fixed, store it in fuzz/regressions/<target>/ (replayed by
# tests/fault/fuzz_regression_test.cpp). A summary line per target (executions, coverage,
# corpus size, new artifacts) goes to build-fuzz/summary.txt.
# Environment: FUZZ_BUILD_DIR (default build-fuzz), JOBS (ninja -j, default 2).
set -euo pipefail
cd "$(dirname "$0")/.."

runs=""
if [ "${1:-}" = "--runs" ]; then
  runs=${2:?--runs needs a count}
  shift 2
fi
seconds=60
if [ -z "$runs" ] && [ $# -gt 0 ]; then
  seconds=$1
  shift
fi
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(config_fuzzer document_reader_fuzzer task_config_fuzzer
  tokenizer_json_fuzzer safetensors_fuzzer torch_save_fuzzer config_json_fuzzer)
FUZZ_BUILD_DIR=${FUZZ_BUILD_DIR:-build-fuzz}
JOBS=${JOBS:-2}

# clang with the libFuzzer runtime (Debian: clang-14 + libclang-rt-14-dev).
find_clang() {
  for cxx in clang++ clang++-14; do
    if command -v "$cxx" >/dev/null 2>&1; then
      local rt
      rt=$("$cxx" -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null || true)
      if [ -f "$rt" ] || ls "$("$cxx" -print-resource-dir)"/lib/linux/libclang_rt.fuzzer-x86_64.a \
          >/dev/null 2>&1; then
        echo "$cxx"
        return 0
      fi
    fi
  done
  return 1
}
if ! CXX_BIN=$(find_clang); then
  echo "[fuzz] installing clang-14 and libclang-rt-14-dev (libFuzzer)"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends clang-14 libclang-rt-14-dev
  CXX_BIN=$(find_clang)
fi

# A build directory keeps its compiler: naming another path to the same clang would make CMake
# drop the cache (and with it MLM_FUZZ) and rebuild everything.
cached=$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$FUZZ_BUILD_DIR/CMakeCache.txt" 2>/dev/null || true)
[ -n "$cached" ] && CXX_BIN=$cached
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$FUZZ_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" \
  -DCMAKE_CXX_COMPILER="$CXX_BIN" -DMLM_FUZZ=ON -DMLM_SANITIZE=ON -DMLM_BUILD_TESTS=OFF >/dev/null
ninja -C "$FUZZ_BUILD_DIR" -j "$JOBS" "${targets[@]}"

# Seeds: every shipped config; every fixture corpus file under each reader mode (the first
# byte of a document_reader_fuzzer input selects the mode); the probes' task files; the fixture
# weight files (byte 0 of a torch_save_fuzzer input: 0 = the file as it is); fuzz/seeds/<target>/.
seed() {
  local target=$1 dir=$FUZZ_BUILD_DIR/corpus/$1
  mkdir -p "$dir"
  if [ -d "fuzz/seeds/$target" ]; then
    for f in fuzz/seeds/"$target"/*; do cp "$f" "$dir/seed_$(basename "$f")"; done
  fi
  case "$target" in
    config_fuzzer)
      for f in configs/*.yaml; do cp "$f" "$dir/seed_$(basename "$f")"; done
      ;;
    document_reader_fuzzer)
      for f in tests/fixtures/corpus/*; do
        for flags in 0 1 2 5 8 9; do
          { printf "\\$(printf '%03o' "$flags")"; head -c 4000 "$f"; } \
            >"$dir/seed_${flags}_$(basename "$f")"
        done
      done
      ;;
    task_config_fuzzer)
      for f in configs/probes/*.yaml; do cp "$f" "$dir/seed_$(basename "$f")"; done
      ;;
    torch_save_fuzzer)
      for f in tests/fixtures/model/*.pt; do
        { printf '\000'; cat "$f"; } >"$dir/seed_$(basename "$f")"
      done
      ;;
  esac
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
# Leaks inside libraries we do not build (each entry says why) are not findings.
export LSAN_OPTIONS="suppressions=$PWD/tests/sanitizers/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export MLM_LOG_LEVEL=${MLM_LOG_LEVEL:-error}  # the reader warns once per bad record kind
# CPU only: the LibTorch of the weight-file targets must not look for a GPU.
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES-}
summary=$FUZZ_BUILD_DIR/summary.txt
: >"$summary"
status=0
for target in "${targets[@]}"; do
  seed "$target"
  artifacts=$FUZZ_BUILD_DIR/artifacts/$target
  mkdir -p "$artifacts"
  touch "$FUZZ_BUILD_DIR/$target.log.start"
  before=$(find "$artifacts" -type f | wc -l)
  if [ -n "$runs" ]; then
    echo "[fuzz] $target for $runs inputs (seed 1)"
    # One process, stopping at the first finding: the same inputs in the same order each time.
    "$FUZZ_BUILD_DIR/fuzz/$target" -seed=1 -runs="$runs" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$artifacts/" "$FUZZ_BUILD_DIR/corpus/$target" \
      >"$FUZZ_BUILD_DIR/$target.log" 2>&1 || true
  else
    echo "[fuzz] $target for ${seconds}s"
    # Fork mode keeps fuzzing after a crash, a hang (-timeout) or a runaway allocation
    # (-rss_limit_mb), so one known bug does not hide the next; each leaves an artifact.
    "$FUZZ_BUILD_DIR/fuzz/$target" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
      -timeout=10 -rss_limit_mb=2048 -max_total_time="$seconds" -print_final_stats=1 \
      -artifact_prefix="$artifacts/" "$FUZZ_BUILD_DIR/corpus/$target" >"$FUZZ_BUILD_DIR/$target.log" 2>&1 \
      || true
  fi
  grep -E "^#[0-9]+.* cov: |^INFO: fuzzed for|DONE" "$FUZZ_BUILD_DIR/$target.log" | tail -n 2
  after=$(find "$artifacts" -type f | wc -l)
  # The last status line: "#<execs>[: ]... cov: <edges> ft: <features> corp: <inputs>/<bytes> ..."
  last=$(grep -E "^#[0-9]+.* cov: " "$FUZZ_BUILD_DIR/$target.log" | tail -n 1)
  budget=${runs:+$runs runs}
  printf '%-24s %10s  execs %s  cov %s  ft %s  corpus %s  new artifacts %s\n' "$target" \
    "${budget:-${seconds}s}" "$(sed -E 's/^#([0-9]+).*/\1/' <<<"$last")" "$(sed -E 's/.* cov: ([0-9]+).*/\1/' <<<"$last")" \
    "$(sed -E 's/.* ft: ([0-9]+).*/\1/' <<<"$last")" "$(sed -E 's/.* corp: ([0-9]+).*/\1/' <<<"$last")" \
    "$((after - before))" | tee -a "$summary"
  if [ "$after" -gt "$before" ]; then
    status=1
    echo "[fuzz] $target: $((after - before)) new crash/timeout/oom input(s) in $artifacts:"
    find "$artifacts" -type f -newer "$FUZZ_BUILD_DIR/$target.log.start" -printf '  %p (%s bytes)\n'
  fi
done
exit $status
