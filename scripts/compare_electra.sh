#!/usr/bin/env bash
# ELECTRA against BERT at the quickstart's size and equal compute on the sample corpus: trains
# configs/mini.yaml and configs/electra-mini.yaml (same tokenizer, sequences, batch, steps and
# so the same training tokens; peak learning rate 1e-3 both) one after the other, with an
# evaluation and a checkpoint every 50 steps, exports every checkpoint, probes each export's
# encoder (BERT's, ELECTRA's discriminator) with scripts/probe_linear.py (sentence order, same
# document: a downstream figure neither objective predicts), and draws the probe accuracy
# against tokens and against wall-clock seconds, and ELECTRA's replaced-token detection over
# its steps (scripts/plot_electra.py).
#
#   scripts/compare_electra.sh [OUT_DIR]       (default runs/compare-electra)
#
# Default: 450 steps, all 18 checkpoints probed (4000 train and 1000 valid pairs per task):
# ~20 minutes of training plus ~20 s per probed checkpoint on 2 cores. Environment overrides,
# for a smoke test or to bound the time: COMPARE_STEPS (450), COMPARE_EVERY (50: checkpoints and
# evaluations), PROBE_STEPS (the checkpoint steps to probe, e.g. "150 300 450"; default all),
# PROBE_PAIRS (4000). A smoke test: COMPARE_STEPS=10 COMPARE_EVERY=5 PROBE_PAIRS=200.
#
# Writes OUT_DIR/{bert-mini,electra-mini}/ (runs; their logs beside), OUT_DIR/exports/RUN/step_N
# (Hugging Face directories), OUT_DIR/probes.json (probe_linear.py --json over every probed
# export), OUT_DIR/curves.jsonl (one row per probed checkpoint: run, step, tokens, elapsed_s,
# probe accuracy and loss per task; for ELECTRA its evaluation's RTD figures at that step),
# OUT_DIR/curves.png, and the tables (per checkpoint, and at equal wall-clock) on stdout. Needs
# the build (mlm-train, mlm-export) and the sample corpus (scripts/get_sample_corpus.sh).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/runs/compare-electra}"
build="${MLM_BUILD_DIR:-$root/build}"
python="${PYTHON:-$root/.venv/bin/python}"
steps="${COMPARE_STEPS:-450}"
every="${COMPARE_EVERY:-50}"
[[ -f "$root/data/sample/train.txt" ]] ||
  { echo "error: no sample corpus in data/sample (run scripts/get_sample_corpus.sh)" >&2; exit 1; }
for tool in mlm-train mlm-export; do
  [[ -x "$build/$tool" ]] || { echo "error: no $build/$tool (run scripts/test.sh or cmake --build build)" >&2; exit 1; }
done
(( steps % every == 0 )) || { echo "error: COMPARE_STEPS ($steps) is not a multiple of COMPARE_EVERY ($every)" >&2; exit 1; }
cd "$root"
mkdir -p "$out"
# A train row (tokens, elapsed_s) at every checkpoint: the logging interval must divide it.
settings=(--set train.max_steps="$steps" --set eval.every_steps="$every" --set checkpoint.every_steps="$every"
          --set checkpoint.keep_last=0 --set logging.every_steps=$(( every % 10 == 0 ? 10 : every ))
          --set logging.progress_bar=off)
declare -A configs=([bert-mini]=configs/mini.yaml [electra-mini]=configs/electra-mini.yaml)
exports=()
for run in bert-mini electra-mini; do
  rm -rf "${out:?}/$run" "${out:?}/exports/$run"
  echo "training $run (${configs[$run]})" >&2
  "$build/mlm-train" --config "${configs[$run]}" --set train.output_dir="$out/$run" "${settings[@]}" \
    > "$out/$run.log" 2>&1 || { echo "error: $run failed, see $out/$run.log" >&2; exit 1; }
  for checkpoint in "$out/$run"/checkpoints/step_*; do
    step=$((10#${checkpoint##*step_}))
    [[ -z "${PROBE_STEPS:-}" || " $PROBE_STEPS " == *" $step "* ]] || continue
    "$build/mlm-export" --checkpoint "$checkpoint" --output "$out/exports/$run/step_$step" 2>> "$out/$run.log" ||
      { echo "error: exporting $checkpoint failed, see $out/$run.log" >&2; exit 1; }
    exports+=("$out/exports/$run/step_$step")
  done
done
(( ${#exports[@]} )) || { echo "error: PROBE_STEPS ($PROBE_STEPS) names no checkpoint" >&2; exit 1; }
echo "probing ${#exports[@]} exports" >&2
"$python" "$root/scripts/probe_linear.py" "${exports[@]}" --train data/sample/train.txt \
  --valid data/sample/valid.txt --pairs "${PROBE_PAIRS:-4000}" --json > "$out/probes.json"
"$python" "$root/scripts/plot_electra.py" "$out"
