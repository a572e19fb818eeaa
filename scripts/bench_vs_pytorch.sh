#!/usr/bin/env bash
# mlm-bench against the eager-PyTorch peer (../shared/bench/peer_bert.py) at the same shapes,
# precision and thread count, run ALTERNATELY (the machines are shared and noisy: only ratios
# measured side by side mean anything). Prints each pair and the median ratio per shape.
#
#   scripts/bench_vs_pytorch.sh [mini|base|all] [--fp32] [--pipeline] [--rounds N]
#                               [--steps N] [--threads N] [--build-dir DIR]
#
#   mini: 4 layers, hidden 256, 4 heads, I 1024, vocab 30522, batch 32, seq 128
#   base: 12 layers, hidden 768, 12 heads, I 3072, vocab 30522, batch 16, seq 128
#   bf16 (default): ours train.precision=bf16, peer --bf16 --sparse;  --fp32: peer --sparse
#   --pipeline: instead of the peer, mlm-bench --data (tokenizer, streaming dataset, masking
#               on the sample corpus) against mlm-bench on synthetic ids, same shape, with the
#               sample tokenizer's vocabulary (configs/mini.yaml; scripts/get_sample_corpus.sh)
#
# Environment: PEER (path of peer_bert.py), PYTHON (default /usr/bin/python3, which has
# Debian's python3-torch). Builds mlm-bench in the build directory when it is missing.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
which_shapes=mini
precision=bf16
pipeline=0
rounds=3
steps=""
threads=""
build="${MLM_BUILD_DIR:-$root/build}"
while [[ $# -gt 0 ]]; do
  case "$1" in
    mini|base|all) which_shapes="$1" ;;
    --fp32) precision=fp32 ;;
    --pipeline) pipeline=1 ;;
    --rounds) rounds="$2"; shift ;;
    --steps) steps="$2"; shift ;;
    --threads) threads="$2"; shift ;;
    --build-dir) build="$2"; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "error: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
python="${PYTHON:-/usr/bin/python3}"
peer="${PEER:-$root/../shared/bench/peer_bert.py}"
if ((pipeline)); then
  [[ -f "$root/data/sample/train.txt" ]] ||
    { echo "error: no sample corpus in data/sample (run scripts/get_sample_corpus.sh)" >&2; exit 1; }
else
  [[ -f "$peer" ]] || { echo "error: peer not found at $peer (set PEER=...)" >&2; exit 1; }
fi
"$python" -c 'import torch' 2>/dev/null ||
  { echo "error: $python cannot import torch (Debian: apt-get install python3-torch)" >&2; exit 1; }
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "error: --rounds must be a positive integer" >&2; exit 2; }
# Same thread count for both: the CPUs this process may run on.
threads="${threads:-$("$python" -c 'import os; print(len(os.sched_getaffinity(0)))')}"
# LibTorch's set_num_threads does not reach the system OpenBLAS (fp32 products): pin it too.
export OPENBLAS_NUM_THREADS="$threads" OMP_NUM_THREADS="$threads"

bench="$build/mlm-bench"
if [[ ! -x "$bench" ]]; then
  echo "building mlm-bench in $build" >&2
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  ninja -C "$build" mlm-bench
fi

# name layers hidden heads intermediate batch default-steps
shape_args() {
  case "$1" in
    mini) echo "4 256 4 1024 32 10" ;;
    base) echo "12 768 12 3072 16 3" ;;
  esac
}

field() {  # field JSON NAME
  "$python" -c 'import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])' "$1" "$2"
}

run_shape() {
  local name="$1"
  read -r layers hidden heads inter batch default_steps <<<"$(shape_args "$name")"
  local n="${steps:-$default_steps}"
  # --pipeline keeps the sample tokenizer's vocabulary (model.vocab_size 0), which --data needs.
  local vocab=30522
  ((pipeline)) && vocab=0
  local ours_cmd=("$bench" --config "$root/configs/mini.yaml" --json --steps "$n" --warmup 1
    --set model.num_hidden_layers="$layers" model.hidden_size="$hidden"
    model.num_attention_heads="$heads" model.intermediate_size="$inter"
    model.max_position_embeddings=512 model.vocab_size="$vocab" model.sparse_head=true
    train.micro_batch_size="$batch" data.seq_len=128 masking.mlm_probability=0.15
    train.precision="$precision" train.threads="$threads" train.device=cpu)
  local peer_cmd=("$python" "$peer" --layers "$layers" --hidden "$hidden" --heads "$heads"
    --intermediate "$inter" --vocab 30522 --batch "$batch" --seq 128 --steps "$n"
    --threads "$threads" --sparse)
  [[ "$precision" == bf16 ]] && peer_cmd+=(--bf16)
  local label=mlm-bench versus=peer
  if ((pipeline)); then  # "ours" is the real pipeline, the reference is synthetic ids
    label="mlm-bench --data" versus=synthetic
    peer_cmd=("${ours_cmd[@]}")
    ours_cmd+=(--data)
  fi

  echo "== $name: L=$layers H=$hidden A=$heads I=$inter V=$vocab B=$batch S=128 $precision," \
       "$threads threads, $n timed steps, $rounds rounds (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  local ratios=()
  for ((r = 1; r <= rounds; r++)); do
    local ours theirs
    # Alternate who goes first, so a drift in the machine's load hits both sides alike.
    if ((r % 2)); then
      ours="$(MLM_LOG_LEVEL=warn "${ours_cmd[@]}")"
      theirs="$(MLM_LOG_LEVEL=warn "${peer_cmd[@]}")"
    else
      theirs="$(MLM_LOG_LEVEL=warn "${peer_cmd[@]}")"
      ours="$(MLM_LOG_LEVEL=warn "${ours_cmd[@]}")"
    fi
    local ot pt ratio
    ot="$(field "$ours" tokens_per_s)"
    pt="$(field "$theirs" tokens_per_s)"
    ratio="$("$python" -c 'import sys; print(f"{float(sys.argv[1]) / float(sys.argv[2]):.3f}")' "$ot" "$pt")"
    ratios+=("$ratio")
    printf 'round %d: %s %8.1f tok/s (mfu %.3f; data %.4fs fwd %.3fs bwd %.3fs opt %.3fs) | %s %8.1f tok/s (mfu %.3f) | ratio %s\n' \
      "$r" "$label" "$ot" "$(field "$ours" mfu)" "$(field "$ours" data_s)" "$(field "$ours" forward_s)" \
      "$(field "$ours" backward_s)" "$(field "$ours" optimizer_s)" "$versus" "$pt" \
      "$(field "$theirs" mfu)" "$ratio"
    echo "  $label: $ours"
    echo "  $versus: $theirs"
  done
  "$python" -c 'import statistics,sys; print(f"{sys.argv[1]} {sys.argv[2]}: median ratio {sys.argv[3]} / {sys.argv[4]} = {statistics.median(map(float, sys.argv[5:])):.3f}")' \
    "$name" "$precision" "$label" "$versus" "${ratios[@]}"
}

case "$which_shapes" in
  mini) run_shape mini ;;
  base) run_shape base ;;
  all) run_shape mini; run_shape base ;;
esac
