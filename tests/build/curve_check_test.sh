#!/usr/bin/env bash
# scripts/curve_check.py, the learning phase's verdict (scripts/gpu_check.sh): a reference of
# ten seeded runs, then a run drawn like them passes, one shifted by 8 seeds' std fails, one
# that stopped early (a missing point) fails, and its t quantile is Student's.
#   curve_check_test.sh SOURCE_DIR PYTHON
set -euo pipefail
root=$1
python=$2
check="$root/scripts/curve_check.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Runs: loss at steps 50..200 = 5 - step/100 + noise, seeded; eval_loss 0.2 below it.
"$python" - "$tmp" <<'PY'
import json, random, sys
out = sys.argv[1]
def write(name, seed, shift=0.0, last=200):
    rng = random.Random(seed)
    with open(f"{out}/{name}.jsonl", "w") as f:
        for step in range(50, last + 1, 50):
            loss = 5 - step / 100 + rng.gauss(0, 0.03) + shift
            f.write(json.dumps({"step": step, "loss": loss, "lr": 1e-3}) + "\n")
            f.write(json.dumps({"step": step, "eval_loss": loss - 0.2 + rng.gauss(0, 0.03)}) + "\n")
for seed in range(10):
    write(f"seed{seed}", seed)
write("like", 100)
write("shifted", 101, shift=8 * 0.03)
write("short", 102, last=150)
PY
"$python" "$check" reference "$tmp/ref.json" "$tmp"/seed?.jsonl >/dev/null
"$python" "$check" compare "$tmp/ref.json" "$tmp/like.jsonl" >"$tmp/like.out" ||
  { cat "$tmp/like.out"; echo "FAIL a run drawn like the seeds is off the curve"; exit 1; }
for bad in shifted short; do
  if "$python" "$check" compare "$tmp/ref.json" "$tmp/$bad.jsonl" >"$tmp/$bad.out"; then
    cat "$tmp/$bad.out"; echo "FAIL the $bad run passed"; exit 1
  fi
done
grep -q MISSING "$tmp/short.out" || { cat "$tmp/short.out"; echo "FAIL no MISSING point"; exit 1; }
# Student's t: 97.5% at 2 and 30 degrees of freedom, 99.5% at 4 (the textbook tables).
PYTHONPATH="$root/scripts" "$python" -c '
from curve_check import t_quantile
for p, df, want in ((0.975, 2, 4.3027), (0.975, 30, 2.0423), (0.995, 4, 4.6041)):
    got = t_quantile(p, df)
    assert abs(got - want) < 1e-3, (p, df, got, want)'
echo "ok   curve_check.py: like the seeds passes, shifted and short runs fail, t quantiles"
