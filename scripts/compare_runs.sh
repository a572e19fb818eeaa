#!/usr/bin/env bash
# Behaviour unchanged by a refactoring: the same short runs of seven reference configurations
# (BERT tiny; BERT mini with SOP, whole-word masking and accumulation; ModernBERT mini; ELECTRA
# mini, generator and discriminator; RoBERTa at tiny's size; DeBERTa-v3 mini; DeBERTa-v3 mini's
# generator and discriminator with GDES), made
# by two builds, must write the same metrics.jsonl rows (timing fields aside) and byte-equal
# weights, both at the end of STEPS steps and after each build resumed its run for 5 more.
# (optimizer.pt is compared through that resume: its bytes name tensors by address.)
#   scripts/compare_runs.sh OLD_BUILD_DIR NEW_BUILD_DIR [STEPS]
# Each build dir holds an mlm-train. Runs go to a temporary directory; prints one line per
# configuration and exits 1 on any difference. Data: the committed fixture corpus.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
old="$(cd "$1" && pwd)"; new="$(cd "$2" && pwd)"; steps="${3:-20}"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
corpus="$root/tests/fixtures/corpus"

common=(--set "tokenizer.model=$work/spm.model" --set tokenizer.vocab_size=200
        --set "data.train_files=[$corpus/train.txt]" --set "data.valid_files=[$corpus/valid.txt]"
        --set data.seq_len=64 --set train.threads=2
        --set train.micro_batch_size=8 --set logging.every_steps=5 --set logging.progress_bar=off
        --set checkpoint.every_steps=10 --set eval.every_steps=10 --set eval.max_batches=4
        --set schedule.warmup_steps=2)
declare -A extra=(
  [tiny]="--config $root/configs/tiny.yaml"
  [mini-sop]="--config $root/configs/mini.yaml --set model.objective=sop --set masking.strategy=whole_word --set train.grad_accum_steps=2 --set model.max_position_embeddings=128"
  [modernbert-mini]="--config $root/configs/modernbert-mini.yaml --set model.max_position_embeddings=128"
  [electra-mini]="--config $root/configs/electra-mini.yaml --set model.max_position_embeddings=128"
  [roberta-tiny]="--config $root/configs/tiny.yaml --set model.architecture=roberta"
  [deberta-v3-mini]="--config $root/configs/deberta-v3-mini.yaml"
  [deberta-v3-rtd-mini]="--config $root/configs/deberta-v3-rtd-mini.yaml"
)

# Timing fields differ from run to run; everything else must not.
rows() { python3 -c '
import json, sys
for line in open(sys.argv[1]):
    row = json.loads(line)
    for key in ("tokens_per_s", "elapsed_s", "eval_time_s"):
        row.pop(key, None)
    print(json.dumps(row, sort_keys=True))' "$1"; }

status=0
for name in tiny mini-sop modernbert-mini electra-mini roberta-tiny deberta-v3-mini deberta-v3-rtd-mini; do
  for side in old new; do
    bin="$old"; [[ $side == new ]] && bin="$new"
    for run in "train.max_steps=$steps" "train.max_steps=$((steps + 5)) --resume latest"; do
      # shellcheck disable=SC2086
      "$bin/mlm-train" ${extra[$name]} "${common[@]}" --set "train.output_dir=$work/$name-$side" \
        --set $run >>"$work/$name-$side.log" 2>&1 ||
        { echo "FAIL $name: $side run failed ($work/$name-$side.log)"; tail -3 "$work/$name-$side.log"; exit 1; }
    done
  done
  verdict="same"
  if ! diff <(rows "$work/$name-old/metrics.jsonl") <(rows "$work/$name-new/metrics.jsonl") >"$work/diff"; then
    verdict="metrics.jsonl rows differ: $(head -2 "$work/diff" | tr '\n' ' ')"
  fi
  for step in "$steps" "$((steps + 5))"; do
    dir="checkpoints/$(printf 'step_%08d' "$step")"
    cmp -s "$work/$name-old/$dir/model.pt" "$work/$name-new/$dir/model.pt" ||
      verdict="$verdict; model.pt of step $step differs"
  done
  echo "$name: $(wc -l <"$work/$name-new/metrics.jsonl") metrics rows, weights at steps $steps and $((steps + 5)) (resumed): $verdict"
  [[ $verdict == same ]] || status=1
done
exit "$status"
