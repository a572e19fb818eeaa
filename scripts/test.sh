#!/usr/bin/env bash
# Set-up, build and the test suite: scripts/test.sh [--all] [extra ctest args]
#   default  every stage's tests, plus the fast subset of the fault-injection suite
#            (ctest label "fault", see docs/RELIABILITY.md)
#   --all    everything, including the slow suites (label "slow": 20 random kills, long runs)
set -euo pipefail
cd "$(dirname "$0")/.."

run_all=0
ctest_args=()
for arg in "$@"; do
  case "$arg" in
    --all) run_all=1 ;;
    *) ctest_args+=("$arg") ;;
  esac
done

scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build}
# The fault-injection tests run in CI by default (fast ones); --all adds the slow ones.
FAULT_SUBSET=${FAULT_SUBSET:-"^(BadConfig|BadCorpus|FuzzRegression|CorruptCheckpoint|DiskFull|KillResume|NonFinite|OneWriter|ResumeAuto|SiblingRuns)"}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD_DIR" -j "$(nproc)"

cd "$BUILD_DIR"
if [ "$run_all" -eq 1 ]; then
  ctest --output-on-failure "${ctest_args[@]}"
else
  ctest --output-on-failure -LE "slow|fault" "${ctest_args[@]}"
  ctest --output-on-failure -L fault -LE slow -R "$FAULT_SUBSET" "${ctest_args[@]}"
fi
