#!/usr/bin/env bash
# Peak memory while streaming a generated 1 GB corpus (target: < 500 MB resident).
# Generates /tmp/mlm_data_memory/corpus.txt (the sample corpus, or the test fixture corpus,
# repeated to SIZE_MB, plus one 100 MB line without a newline), trains a small tokenizer on a
# bounded sample of it, then streams one full pass (the valid split: finite) through
# read + tokenize + pack + mask with `mlm-data --bench` under /usr/bin/time -v.
#   scripts/bench_data_memory.sh [BUILD_DIR]   (SIZE_MB=1024 by default)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-${BUILD_DIR:-$root/build}}"
size_mb="${SIZE_MB:-1024}"
work="${WORK_DIR:-/tmp/mlm_data_memory}"
mlm_data="$build/mlm-data"
[[ -x "$mlm_data" ]] || { echo "error: $mlm_data not built" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "error: /usr/bin/time is required (apt-get install time)" >&2; exit 1; }

mkdir -p "$work"
corpus="$work/corpus.txt"
source_text="$root/data/sample/train.txt"
[[ -s "$source_text" ]] || source_text="$root/tests/fixtures/corpus/train.txt"
if [[ ! -s "$corpus" || $(( $(stat -c %s "$corpus") / 1048576 )) -lt $size_mb ]]; then
  echo "generating ${size_mb} MB corpus in $corpus from $source_text"
  : > "$corpus.tmp"
  # One 100 MB single line: must be streamed in bounded pieces.
  head -c $((100 * 1048576)) < <(while :; do tr '\n' ' ' < "$source_text"; done) >> "$corpus.tmp"
  printf '\n\n' >> "$corpus.tmp"
  while [[ $(stat -c %s "$corpus.tmp") -lt $((size_mb * 1048576)) ]]; do
    cat "$source_text" >> "$corpus.tmp"
    printf '\n' >> "$corpus.tmp"
  done
  mv "$corpus.tmp" "$corpus"
fi

cat > "$work/config.yaml" <<YAML
tokenizer:
  model: $work/spm.model
  vocab_size: 8000
  input_sentence_size: 200000
data:
  train_files: [$corpus]
  valid_files: [$corpus]
  seq_len: 128
  num_workers: 2
train:
  micro_batch_size: 32
eval:
  batch_size: 32
YAML

if [[ ! -s "$work/spm.model" ]]; then
  "$build/mlm-tokenizer" --config "$work/config.yaml"
fi

echo "streaming $(du -h "$corpus" | cut -f1) once through mlm-data --bench ..."
/usr/bin/time -v "$mlm_data" --config "$work/config.yaml" --split valid --bench \
    --bench-seconds 1e9 2> "$work/time.txt" | tee "$work/bench.json"
peak_kb=$(awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$work/time.txt")
echo "peak RSS: $((peak_kb / 1024)) MB (target < 500 MB)"
grep -E "Elapsed|Exit status" "$work/time.txt"
