#!/usr/bin/env bash
# scripts/gpu_check.sh runs on a lent GPU machine with minutes of device time: a broken phase
# or a wrong flag is to be found here, not there.
#   gpu_check_dry_run_test.sh SOURCE_DIR             it parses (bash -n), --help names --dry-run
#   gpu_check_dry_run_test.sh SOURCE_DIR BUILD_DIR   and its --dry-run on BUILD_DIR (a CPU build
#       with mlm-train, mlm-bench, mlm-tokenizer) exits 0, every phase ok or skipped, the
#       learning runs on the CPU's curve, bench rows for mlm-bench and its two peers at a BERT
#       and a ModernBERT shape, none FAILED
set -euo pipefail
root=$1
build=${2:-}
script="$root/scripts/gpu_check.sh"
bash -n "$script"
"$script" --help | grep -q -- '--dry-run' || { echo "FAIL gpu_check.sh --help does not describe --dry-run"; exit 1; }
echo "ok   scripts/gpu_check.sh parses"
[[ -n $build ]] || exit 0

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if ! OUT="$out" BUILD_DIR="$build" bash "$script" --dry-run >"$out/stdout" 2>&1; then
  tail -n 80 "$out/stdout"
  echo "FAIL gpu_check.sh --dry-run exited non-zero"
  exit 1
fi
report="$out/gpu_check_report.md"
[[ -s $report && -s $out/gpu_check.log ]] || { echo "FAIL no report or log in \$OUT"; exit 1; }
fail() { cat "$report"; echo "FAIL $1"; exit 1; }
grep -qE '^\| bench \| ok \|' "$report" || fail "the bench phase did not run ok"
grep -qE '^\| learning \| ok \|' "$report" || fail "the learning phase did not run ok"
grep -q 'learning, cpu bf16: the same curve within noise' "$out/gpu_check.log" ||
  fail "no bf16 learning verdict in the log"
grep -qE 'FAILED|TIMED OUT' "$report" && fail "a phase or a bench side failed"
# Both models, 3 sides at each shape (mlm-bench, the transformers peer, the eager one).
rows=$(grep -cE '^\| (bert|modernbert) ' "$report" || true)
shapes=$(grep -cE '^\| (bert|modernbert) .* \| mlm-bench \|' "$report" || true)
grep -qE '^\| modernbert .* \| mlm-bench \|' "$report" || fail "no ModernBERT bench row"
((shapes >= 2 && rows == 3 * shapes)) || fail "$rows bench rows for $shapes shapes, expected 3 each"
echo "ok   scripts/gpu_check.sh --dry-run: $(grep -cE '^\| .* \| ok \|' "$report") phases ok, $rows bench rows"
