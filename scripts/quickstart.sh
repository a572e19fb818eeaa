#!/usr/bin/env bash
# The quickstart: install what is missing, build, fetch the sample corpus, train
# configs/modernbert-mini.yaml (the tokenizer is trained first when missing), evaluate the
# final checkpoint, print its masked-token accuracy, draw the training curves and show what it
# predicts for a few [MASK]s (mlm-fill).
# Training takes about 8.5 minutes in fp32 on 2 cores without AVX-512 (measured, docs/RECIPES.md); on
# CPUs with AVX512-BF16 and GPUs train.precision auto picks bf16 (about 3 minutes).
# configs/mini.yaml, BERT at the same size and budget, is the comparison (docs/RECIPES.md).
# Re-running continues (or re-evaluates) runs/modernbert-mini.
#   scripts/quickstart.sh [extra mlm-train arguments, e.g. --set train.max_steps=200]
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
build="${BUILD_DIR:-$root/build}"
config=configs/modernbert-mini.yaml
run_dir=runs/modernbert-mini
python="$root/.venv/bin/python"  # made by scripts/setup.sh: matplotlib for the plot

echo "== [1/7] system packages and the project venv"
scripts/setup.sh

echo "== [2/7] build (Release, Ninja) in $build"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$build" mlm-train mlm-eval mlm-fill

echo "== [3/7] sample corpus"
scripts/get_sample_corpus.sh

echo "== [4/7] train $config"
start=$(date +%s)
"$build/mlm-train" --config "$config" --resume latest "$@"
echo "trained in $(( $(date +%s) - start ))s"

echo "== [5/7] evaluate the final checkpoint"
checkpoint="$(ls -d "$run_dir"/checkpoints/step_* | sort | tail -n 1)"
result="$("$build/mlm-eval" --config "$config" --checkpoint "$checkpoint" --json)"
echo "$result"
"$python" - "$result" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
print(f"masked-token accuracy {r['masked_accuracy']:.4f} against a unigram baseline of "
      f"{r['unigram_accuracy']:.4f} (MLM loss {r['mlm_loss']:.4f}, "
      f"perplexity {r['perplexity']:.1f}, {r['num_masked']} masked tokens)")
PY

echo "== [6/7] training curves"
"$python" scripts/plot_metrics.py "$run_dir"

echo "== [7/7] what the model predicts for a few masks"
"$build/mlm-fill" --checkpoint "$checkpoint" --top-k 5 \
  "The [MASK] statement defines a function." \
  "A list is a mutable [MASK] of items." \
  "Use the [MASK] module to read and write files."
