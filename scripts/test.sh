#!/usr/bin/env bash
# Set-up, build and the whole test suite: scripts/test.sh [--all] [extra ctest args]
#   --all   also runs the slow suites (ctest label "slow": fault injection, long runs).
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
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$BUILD_DIR" -j "$(nproc)"

cd "$BUILD_DIR"
if [ "$run_all" -eq 1 ]; then
  ctest --output-on-failure "${ctest_args[@]}"
else
  ctest --output-on-failure -LE slow "${ctest_args[@]}"
fi
