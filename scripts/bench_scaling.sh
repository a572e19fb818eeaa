#!/usr/bin/env bash
# How mlm-bench's training step scales, for BERT-base (configs/base.yaml) and ModernBERT-base
# (configs/modernbert-base.yaml), synthetic batches, bf16 or fp32 as the CPU allows, along
# three axes:
#   seq      sequence length at a fixed number of tokens per step (batch = tokens / seq, >= 1)
#   batch    batch size at one sequence length
#   threads  both axes at every thread count of --threads
# Each point prints mlm-bench's JSON line (tokens/s, forward/backward/optimizer s, MFU, peak
# RSS, ...); at the end one Markdown table per model and axis.
#
#   scripts/bench_scaling.sh [--models "NAME=CONFIG ..."] [--axes "seq batch"] [--threads "1 2"]
#       [--seqs "128 512 1024 2048 4096 8192"] [--tokens 8192]
#       [--batch-seq 128] [--batches "1 2 4 8 16 32 64"]
#       [--fp32|--bf16] [--warmup N] [--steps N] [--set KEY=VALUE]...
#       [--max-s 120] [--max-rss-gb G] [--lock FILE] [--jsonl FILE] [--build-dir DIR] [--dry-run]
#
# Steps per point (unless --warmup/--steps): up to 2048 tokens per step 8 warm-up and 8 timed
# (mlm-bench's ring of 8 batches, every masked count met before timing); up to 4096, 2 and 2;
# longer steps 1 and 1.
# A sequence longer than the config's model.max_position_embeddings raises it to the
# sequence for the run (BERT's learned position table; a synthetic benchmark only: the
# attention is then full S^2) and the table says so.
# Limits: a point whose process runs past --max-s seconds (default 120) or whose resident
# memory passes --max-rss-gb (default 70% of MemAvailable at start) is stopped and reported as
# skipped; on the seq axis a point is skipped before it starts when the previous point's step
# time, scaled by the tokens per step, already exceeds --max-s (cost per token does not fall
# with the sequence). Every skip prints a line and a table row.
# --lock FILE holds flock(FILE) around each timed point only (the wait for it is not timed), so
# other timings on a shared machine interleave with the sweep.
# --jsonl FILE appends one line per point: mlm-bench's object plus model, config, axis and
# positions_raised (skipped points: model, axis, seq_len, batch, threads, skipped). That file
# feeds scripts/project_ddp.py.
# --dry-run prints each point's command and runs nothing (no build needed).
# Exit status: 0, or 1 when a point failed (not skipped), 2 for bad usage.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
models="bert-base=configs/base.yaml modernbert-base=configs/modernbert-base.yaml"
axes="seq batch"
thread_counts="1 2"
seqs="128 512 1024 2048 4096 8192"
tokens=8192
batch_seq=128
batches="1 2 4 8 16 32 64"
precision=""
warmup=""
steps=""
extra_sets=()
max_s=120
max_rss_gb=""
lock=""
jsonl=""
dry_run=0
build="${BUILD_DIR:-$root/build}"
usage_error() { echo "error: $1 (see --help)" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --models|--axes|--threads|--seqs|--tokens|--batch-seq|--batches|--warmup|--steps|--set|\
    --max-s|--max-rss-gb|--lock|--jsonl|--build-dir)
      [[ $# -ge 2 ]] || usage_error "$1 needs a value" ;;&
    --models) models="$2"; shift ;;
    --axes) axes="$2"; shift ;;
    --threads) thread_counts="$2"; shift ;;
    --seqs) seqs="$2"; shift ;;
    --tokens) tokens="$2"; shift ;;
    --batch-seq) batch_seq="$2"; shift ;;
    --batches) batches="$2"; shift ;;
    --warmup) warmup="$2"; shift ;;
    --steps) steps="$2"; shift ;;
    --set) extra_sets+=("$2"); shift ;;
    --max-s) max_s="$2"; shift ;;
    --max-rss-gb) max_rss_gb="$2"; shift ;;
    --lock) lock="$2"; shift ;;
    --jsonl) jsonl="$2"; shift ;;
    --build-dir) build="$2"; shift ;;
    --fp32) precision=fp32 ;;
    --bf16) precision=bf16 ;;
    --dry-run) dry_run=1 ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) usage_error "unknown argument '$1'" ;;
  esac
  shift
done
is_count() { [[ $1 =~ ^[1-9][0-9]*$ ]]; }
for n in $thread_counts $seqs $batches "$tokens" "$batch_seq" "$max_s"; do
  is_count "$n" || usage_error "'$n' is not a positive integer"
done
[[ -z $warmup || $warmup =~ ^[0-9]+$ ]] || usage_error "--warmup '$warmup' is not a count"
[[ -z $steps ]] || is_count "$steps" || usage_error "--steps '$steps' is not a positive integer"
for axis in $axes; do
  [[ $axis == seq || $axis == batch ]] || usage_error "--axes: '$axis' is not seq or batch"
done
if [[ -z $max_rss_gb ]]; then
  max_rss_gb=$(awk '/^MemAvailable/ { printf "%.1f", $2 * 0.7 / 1048576 }' /proc/meminfo)
fi
[[ $max_rss_gb =~ ^[0-9]+(\.[0-9]+)?$ ]] || usage_error "--max-rss-gb '$max_rss_gb' is not a number"
max_rss_kb=$(awk -v g="$max_rss_gb" 'BEGIN { printf "%d", g * 1048576 }')
if [[ -z "$precision" ]]; then
  precision=fp32
  grep -q avx512_bf16 /proc/cpuinfo && precision=bf16
fi
bench="$build/mlm-bench"
if ((!dry_run)); then
  [[ -x "$bench" ]] || { echo "error: no $bench (build it: ninja -C $build mlm-bench)" >&2; exit 1; }
fi
flags=$(grep -o 'avx512_bf16\|amx_bf16\|avx512f\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ' || true)
echo "mlm-bench scaling, $precision, CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), flags: $flags"
echo "limits: $max_s s and $max_rss_gb GB resident per point$([[ -n $lock ]] && echo ", each point under flock $lock")"

# The longest sequence a config's position table holds, from its resolved config.
max_positions() {
  local config=$1
  if ((dry_run)) && [[ ! -x "$bench" ]]; then
    awk '$1 == "max_position_embeddings:" { print $2; exit }' "$config"
    return
  fi
  "$bench" --config "$config" --print-config | awk '$1 == "max_position_embeddings:" { print $2; exit }'
}

# Runs "$@" with stdout in $1, stopping it past max_s seconds or max_rss_kb resident: then
# sets `stopped` to the reason and returns 3; else returns the command's status.
stopped=""
run_limited() {
  local out=$1; shift
  "$@" >"$out" 2>"$out.err" &
  point_pid=$!
  local start=$SECONDS rss
  stopped=""
  while kill -0 "$point_pid" 2>/dev/null; do
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$point_pid/status" 2>/dev/null || true)
    if [[ -n $rss ]] && ((rss > max_rss_kb)); then
      stopped="resident memory passed $max_rss_gb GB"
    elif ((SECONDS - start >= max_s)); then
      stopped="ran past $max_s s"
    fi
    if [[ -n $stopped ]]; then
      kill -KILL "$point_pid" 2>/dev/null || true
      wait "$point_pid" 2>/dev/null || true
      point_pid=""
      return 3
    fi
    sleep 0.2
  done
  local rc=0
  wait "$point_pid" || rc=$?
  point_pid=""
  return "$rc"
}

# One Markdown row from a point's JSON (mlm-bench's fields plus positions_raised).
read -r -d '' row_py <<'PY' || true
import json, sys
j = json.loads(sys.argv[1])
split = f"{j['forward_s']:.2f} / {j['backward_s']:.2f} / {j['optimizer_s']:.2f}"
busy = j['cpu_s'] / j['step_s'] if j['step_s'] > 0 else 0.0
note = f"positions raised to {j['seq_len']}" if j['positions_raised'] else ""
print(f"| {j['threads']} | {j['seq_len']} | {j['batch']} | {int(j['tokens_per_step'])} | {j['tokens_per_s']:.0f} | "
      f"{split} | {j['mfu']:.2f} | {j['peak_rss_mb'] / 1024:.1f} | {busy:.2f} | {j['warmup']} + {j['steps']} | {note} |")
PY
# mlm-bench's JSON with the sweep's own fields added.
read -r -d '' tag_py <<'PY' || true
import json, sys
j = json.loads(sys.argv[1])
j.update(model=sys.argv[2], config=sys.argv[3], axis=sys.argv[4], positions_raised=sys.argv[5] == "1")
print(json.dumps(j))
PY

tmp=$(mktemp -d)
point_pid=""   # the point running now: stopped with the sweep
trap '[[ -n $point_pid ]] && kill -KILL "$point_pid" 2>/dev/null; rm -rf "$tmp"' EXIT
declare -A rows=()    # "model axis" -> table rows
declare -A last_step_s=() last_tokens=()
failed=0
lock_fd=""
[[ -n $lock ]] && exec {lock_fd}>>"$lock"

run_point() {
  local name=$1 config=$2 axis=$3 threads=$4 seq=$5 batch=$6 positions=$7
  local key="$name $axis" point_tokens=$((seq * batch)) w=$warmup s=$steps raised=0
  if [[ -z $w || -z $s ]]; then
    local auto_w=1 auto_s=1
    if ((point_tokens <= 2048)); then auto_w=8 auto_s=8
    elif ((point_tokens <= 4096)); then auto_w=2 auto_s=2
    fi
    w=${w:-$auto_w} s=${s:-$auto_s}
  fi
  local sets=(data.seq_len="$seq" train.micro_batch_size="$batch" train.grad_accum_steps=1
              train.precision="$precision" train.threads="$threads" train.device=cpu)
  if ((seq > positions)); then sets+=(model.max_position_embeddings="$seq"); raised=1; fi
  sets+=("${extra_sets[@]}")
  local cmd=(env OMP_NUM_THREADS="$threads" MLM_LOG_LEVEL=warn "$bench" --config "$config" --json
             --steps "$s" --warmup "$w" --set "${sets[@]}")
  local what="$name $axis axis, $threads threads, seq $seq, batch $batch"
  if ((dry_run)); then
    printf '%s' "${lock:+flock $lock }"; printf '%q ' "${cmd[@]}"; echo
    return 0
  fi
  local skip="" series="$name $axis $threads"
  if [[ $axis == seq && -n ${last_step_s[$series]:-} ]]; then
    local bound
    bound=$(awk -v t="${last_step_s[$series]}" -v a="${last_tokens[$series]}" -v b="$point_tokens" \
                -v n=$((w + s)) 'BEGIN { printf "%.0f", n * t * b / a }')
    if ((bound > max_s)); then skip="predicted >= $bound s ($((w + s)) steps at the previous point's time per token) > $max_s s"; fi
  fi
  if [[ -z $skip ]]; then
    if [[ -n $lock ]]; then flock "$lock_fd"; fi
    local rc=0
    run_limited "$tmp/out" "${cmd[@]}" || rc=$?
    skip=$stopped
    if [[ -n $lock ]]; then flock -u "$lock_fd"; fi
    if ((rc != 0 && rc != 3)); then
      echo "FAILED $what (exit $rc): $(tail -n 1 "$tmp/out.err")" >&2
      rows[$key]+="| $threads | $seq | $batch | $point_tokens | failed (exit $rc) | | | | | | |"$'\n'
      failed=1
      return 0
    fi
  fi
  if [[ -n $skip ]]; then
    echo "skipped $what: $skip"
    rows[$key]+="| $threads | $seq | $batch | $point_tokens | skipped: $skip | | | | | | |"$'\n'
    if [[ -n $jsonl ]]; then python3 -c 'import json, sys; print(json.dumps(dict(zip(
        ["model", "axis", "threads", "seq_len", "batch", "skipped"], sys.argv[1:3] + [int(v) for v in sys.argv[3:6]] + sys.argv[6:]))))' \
        "$name" "$axis" "$threads" "$seq" "$batch" "$skip" >>"$jsonl"; fi
    return 0
  fi
  local json
  json=$(python3 -c "$tag_py" "$(tail -n 1 "$tmp/out")" "$name" "$config" "$axis" "$raised")
  echo "$json"
  if [[ -n $jsonl ]]; then echo "$json" >>"$jsonl"; fi
  rows[$key]+="$(python3 -c "$row_py" "$json")"$'\n'
  last_step_s[$series]=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["step_s"])' "$json")
  last_tokens[$series]=$point_tokens
}

order=()
for spec in $models; do
  [[ $spec == *=* ]] || usage_error "--models: '$spec' is not NAME=CONFIG"
  name=${spec%%=*} config=${spec#*=}
  [[ $config == /* ]] || config="$root/$config"
  [[ -f $config ]] || { echo "error: --models $name: no config $config" >&2; exit 2; }
  positions=$(max_positions "$config")
  is_count "$positions" || { echo "error: no model.max_position_embeddings in $config" >&2; exit 2; }
  for axis in $axes; do
    order+=("$name:$axis")
    if [[ $axis == seq ]]; then
      for seq in $seqs; do
        batch=$((tokens / seq)); ((batch >= 1)) || batch=1
        for threads in $thread_counts; do
          run_point "$name" "$config" seq "$threads" "$seq" "$batch" "$positions"
        done
      done
    else
      for batch in $batches; do
        for threads in $thread_counts; do
          run_point "$name" "$config" batch "$threads" "$batch_seq" "$batch" "$positions"
        done
      done
    fi
  done
done
((dry_run)) && exit 0

for entry in "${order[@]}"; do
  name=${entry%%:*} axis=${entry#*:}
  echo
  if [[ $axis == seq ]]; then
    echo "$name, $precision, sequence length at $tokens tokens per step (batch = $tokens / seq):"
  else
    echo "$name, $precision, batch size at sequence length $batch_seq:"
  fi
  echo
  echo "| threads | seq | batch | tokens/step | tokens/s | forward / backward / optimizer s | MFU | peak RSS GB | cores busy | warm-up + timed | note |"
  echo "| ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | --- | --- |"
  printf '%s' "${rows["$name $axis"]:-}"
done
exit "$failed"
