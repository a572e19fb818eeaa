#!/usr/bin/env bash
# A measured sweep of ELECTRA's settings on the sample corpus: trains configs/electra-mini.yaml
# once per named setting (each a list of mlm-train --set overrides), one after the other, and
# prints a table of where each discriminator ended: its training RTD loss (mean of the last three
# logged windows) against the prior's (the entropy of its replaced share: the loss of calling
# every token original), its RTD F1, the evaluation's RTD F1 and the generator's masked accuracy.
# A discriminator that learnt nothing sits at the prior with F1 0 (docs/ELECTRA.md, the sweep).
#
#   scripts/sweep_electra.sh OUT_DIR NAME='SET ...' [NAME='SET ...' ...]
#   scripts/sweep_electra.sh runs/sweep base='' lr5e-4='optim.learning_rate=5e-4'
#
# SWEEP_CONFIG (configs/electra-mini.yaml) and SWEEP_STEPS (450) set the recipe and budget; a run
# whose directory already holds a finished metrics.jsonl is reported, not trained again. Writes
# OUT_DIR/NAME/ (the run), OUT_DIR/NAME.log and OUT_DIR/table.tsv.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
(( $# >= 2 )) || { sed -n '2,14p' "$0" >&2; exit 1; }
out="$1"; shift
build="${MLM_BUILD_DIR:-$root/build}"
python="${PYTHON:-$root/.venv/bin/python}"
config="${SWEEP_CONFIG:-configs/electra-mini.yaml}"
steps="${SWEEP_STEPS:-450}"
[[ -x "$build/mlm-train" ]] || { echo "error: no $build/mlm-train (run scripts/test.sh)" >&2; exit 1; }
cd "$root"
mkdir -p "$out"
for spec in "$@"; do
  name="${spec%%=*}"
  [[ "$spec" == *=* && -n "$name" ]] || { echo "error: '$spec' is not NAME='SET ...'" >&2; exit 1; }
  sets=()
  for kv in ${spec#*=}; do sets+=(--set "$kv"); done
  if grep -qs '"stopped"' "$out/$name/metrics.jsonl" 2>/dev/null ||
     [[ -f "$out/$name/checkpoints/step_$(printf %08d "$steps")/model.pt" ]]; then
    echo "$name: already trained" >&2
    continue
  fi
  rm -rf "${out:?}/$name"
  echo "training $name: ${spec#*=}" >&2
  "$build/mlm-train" --config "$config" --set train.output_dir="$out/$name" \
    --set train.max_steps="$steps" --set logging.every_steps=10 --set logging.progress_bar=off \
    --set eval.every_steps="$steps" --set checkpoint.every_steps="$steps" "${sets[@]}" \
    > "$out/$name.log" 2>&1 || { echo "error: $name failed, see $out/$name.log" >&2; exit 1; }
done
"$python" - "$out" "$@" <<'EOF' | tee "$out/table.tsv"
import json, sys
out, specs = sys.argv[1], sys.argv[2:]
print("setting\trtd_loss\tprior_loss\trtd_f1\teval_rtd_f1\teval_rtd_loss\teval_mlm_acc\tsettings")
for spec in specs:
    name, sets = spec.split("=", 1)
    rows = [json.loads(l) for l in open(f"{out}/{name}/metrics.jsonl")]
    train = [r for r in rows if "rtd_loss" in r][-3:]
    ev = [r for r in rows if "eval_rtd_f1" in r][-1]
    loss = sum(r["rtd_loss"] for r in train) / len(train)
    prior = sum(r["rtd_prior_loss"] for r in train) / len(train)
    f1 = sum(r["rtd_f1"] for r in train) / len(train)
    print(f"{name}\t{loss:.4f}\t{prior:.4f}\t{f1:.3f}\t{ev['eval_rtd_f1']:.3f}\t"
          f"{ev['eval_rtd_loss']:.4f}\t{ev['eval_mlm_accuracy']:.4f}\t{sets or '(recipe)'}")
EOF
