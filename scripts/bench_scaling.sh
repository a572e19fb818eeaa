#!/usr/bin/env bash
# How mlm-bench's cost grows with the work: ModernBERT-base (configs/modernbert-base.yaml, bf16
# or fp32 as the CPU allows, synthetic batches) at several sequence lengths with the same
# tokens per step, on 1 and 2 threads: tokens/s, the forward/backward split, MFU and peak
# resident memory, one line each, then a Markdown table.
#
#   scripts/bench_scaling.sh [--seqs "128 512 1024 4096 8192"] [--tokens 8192] [--threads "1 2"]
#                            [--steps N] [--fp32|--bf16] [--build-dir DIR]
#
# Batch = tokens / seq (at least 1). One warm-up step, then --steps timed ones (default 1).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
seqs="128 512 1024 4096 8192"
tokens=8192
thread_counts="1 2"
steps=1
precision=""
build="${MLM_BUILD_DIR:-$root/build}"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seqs) seqs="$2"; shift ;;
    --tokens) tokens="$2"; shift ;;
    --threads) thread_counts="$2"; shift ;;
    --steps) steps="$2"; shift ;;
    --fp32) precision=fp32 ;;
    --bf16) precision=bf16 ;;
    --build-dir) build="$2"; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
    *) echo "error: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if [[ -z "$precision" ]]; then
  precision=fp32
  grep -q avx512_bf16 /proc/cpuinfo && precision=bf16
fi
bench="$build/mlm-bench"
[[ -x "$bench" ]] || { echo "error: no $bench (build it: ninja -C $build mlm-bench)" >&2; exit 1; }
echo "ModernBERT-base, $precision, $tokens tokens per step, CPU flags:" \
     "$(grep -o 'avx512_bf16\|amx_bf16\|avx512f\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')"
# One Markdown row from mlm-bench's JSON.
read -r -d '' row <<'PY' || true
import json, sys
j = json.loads(sys.argv[1])
split = f"{j['forward_s']:.2f} / {j['backward_s']:.2f} / {j['optimizer_s']:.2f}"
print(f"| {j['threads']} | {j['seq_len']} | {j['batch']} | {j['tokens_per_s']:.0f} | {split} | "
      f"{j['mfu']:.2f} | {j['peak_rss_mb'] / 1024:.1f} |")
PY
rows=()
for threads in $thread_counts; do
  for seq in $seqs; do
    batch=$((tokens / seq)); ((batch >= 1)) || batch=1
    json=$(OMP_NUM_THREADS="$threads" MLM_LOG_LEVEL=warn "$bench" --config "$root/configs/modernbert-base.yaml" \
      --json --steps "$steps" --warmup 1 --set model.vocab_size=50368 data.seq_len="$seq" \
      train.micro_batch_size="$batch" train.grad_accum_steps=1 train.precision="$precision" \
      train.threads="$threads" train.device=cpu)
    echo "$json"
    rows+=("$(python3 -c "$row" "$json")")
  done
done
echo
echo "| threads | seq | batch | tokens/s | forward / backward / optimizer s | MFU | peak RSS GB |"
echo "| ---: | ---: | ---: | ---: | --- | ---: | ---: |"
printf '%s\n' "${rows[@]}"
