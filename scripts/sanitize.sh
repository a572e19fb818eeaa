#!/usr/bin/env bash
# Builds test stages with AddressSanitizer + UndefinedBehaviorSanitizer (-DMLM_SANITIZE=ON) in
# build-asan and runs them:
#   scripts/sanitize.sh                  the torch-free stages: config text data masking
#   scripts/sanitize.sh STAGE...         these stages (e.g. model). Tests that load sentencepiece
#                                        in a LibTorch process (train, dist, cli, fault) cannot
#                                        pass: the sanitizer runtimes have no dlmopen, so the two
#                                        protobufs clash (src/text/sentencepiece/spm_library.cpp)
#   scripts/sanitize.sh --all            every stage, LibTorch ones included (slow to build)
# Any sanitizer report fails the run (halt_on_error). LibTorch itself is not instrumented;
# tests/sanitizers/lsan.supp lists the one-time allocations it never frees (see that file).
# Environment: SANITIZE_BUILD_DIR (default build-asan), JOBS (ninja -j, default 2); extra ctest
# arguments after "--".
set -euo pipefail
cd "$(dirname "$0")/.."

SANITIZE_BUILD_DIR=${SANITIZE_BUILD_DIR:-build-asan}
JOBS=${JOBS:-2}
stages=()
ctest_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --all) stages=(util config text data masking model dist train cli fault) ;;
    --) shift; ctest_args=("$@"); break ;;
    *) stages+=("$1") ;;
  esac
  shift
done
[ ${#stages[@]} -eq 0 ] && stages=(config text data masking)

cmake -S . -B "$SANITIZE_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMLM_SANITIZE=ON >/dev/null

# Only the stages whose test executable exists (a stage without tests yet is skipped).
available=$(ninja -C "$SANITIZE_BUILD_DIR" -t targets all | sed -n 's/^\(mlm_[a-z]*_tests\):.*/\1/p' | sort -u)
targets=()
labels=()
for stage in "${stages[@]}"; do
  if grep -qx "mlm_${stage}_tests" <<<"$available"; then
    targets+=("mlm_${stage}_tests")
    labels+=("$stage")
  else
    echo "[sanitize] no tests for stage '$stage' yet; skipped"
  fi
done
[ ${#targets[@]} -eq 0 ] && { echo "[sanitize] nothing to build"; exit 1; }
ninja -C "$SANITIZE_BUILD_DIR" -j "$JOBS" "${targets[@]}"

supp="$PWD/tests/sanitizers"
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:strict_init_order=1:detect_stack_use_after_return=1:check_initialization_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$supp/ubsan.supp${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"

regex="^($(IFS='|'; echo "${labels[*]}"))\$"
echo "[sanitize] running ctest -L '$regex' -LE slow in $SANITIZE_BUILD_DIR"
cd "$SANITIZE_BUILD_DIR"
ctest --output-on-failure -L "$regex" -LE slow "${ctest_args[@]}"
