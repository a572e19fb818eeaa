#!/usr/bin/env bash
# BERT against ModernBERT at the quickstart's size on the sample corpus: trains
# configs/mini.yaml and configs/modernbert-mini.yaml (same tokenizer, 5.4M parameters each,
# same sequences, batch, steps and peak learning rate) with an evaluation and a checkpoint
# every 50 steps, then scores every checkpoint of both on the same validation batches at 15%
# masking (each run's own evaluation masks at its training rate: 15% and 30%), and draws the
# masked accuracy against tokens and against wall-clock time.
#
#   scripts/compare_encoders.sh [OUT_DIR]      (default runs/compare; ~20 minutes on 2 cores)
#
# Writes OUT_DIR/{bert-mini,modernbert-mini}/ (runs), OUT_DIR/curves.jsonl (one row per
# checkpoint: run, step, tokens, elapsed_s, accuracy and loss at 15%, accuracy at the run's
# own rate) and OUT_DIR/curves.png. Needs the build (mlm-train, mlm-eval) and the sample corpus
# (scripts/get_sample_corpus.sh); matplotlib comes with the project venv.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/runs/compare}"
build="${BUILD_DIR:-$root/build}"
python="${PYTHON:-$root/.venv/bin/python}"
[[ -f "$root/data/sample/train.txt" ]] ||
  { echo "error: no sample corpus in data/sample (run scripts/get_sample_corpus.sh)" >&2; exit 1; }
for tool in mlm-train mlm-eval; do
  [[ -x "$build/$tool" ]] || { echo "error: no $build/$tool (run scripts/test.sh or cmake --build build)" >&2; exit 1; }
done
cd "$root"
mkdir -p "$out"
every=(--set eval.every_steps=50 --set checkpoint.every_steps=50 --set checkpoint.keep_last=10
       --set logging.every_steps=10 --set logging.progress_bar=off)
declare -A configs=([bert-mini]=configs/mini.yaml [modernbert-mini]=configs/modernbert-mini.yaml)
for run in bert-mini modernbert-mini; do
  rm -rf "${out:?}/$run"
  echo "training $run (${configs[$run]})" >&2
  "$build/mlm-train" --config "${configs[$run]}" --set train.output_dir="$out/$run" "${every[@]}" \
    > "$out/$run.log" 2>&1 || { echo "error: $run failed, see $out/$run.log" >&2; exit 1; }
done
rows="$out/curves.jsonl"
: > "$rows"
for run in bert-mini modernbert-mini; do
  for checkpoint in "$out/$run"/checkpoints/step_*; do
    score=$("$build/mlm-eval" --config "${configs[$run]}" --checkpoint "$checkpoint" --json \
              --set masking.mlm_probability=0.15 --set eval.max_batches=20 2>/dev/null)
    echo "{\"run\": \"$run\", \"checkpoint\": \"$checkpoint\", \"at_15\": $score}" >> "$rows"
  done
done
"$python" "$root/scripts/plot_curves.py" "$out" "$rows"
