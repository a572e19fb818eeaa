#!/usr/bin/env bash
# scripts/bench_scaling.sh and scripts/project_ddp.py: the sweep a long measurement runs, and
# the projection's arithmetic.
#   bench_scaling_test.sh SOURCE_DIR             --dry-run lists every point of the default
#       sweep with its overrides; the projection of a made-up point matches the arithmetic
#       docs/PERFORMANCE.md states
#   bench_scaling_test.sh SOURCE_DIR BUILD_DIR   and one real point at configs/tiny.yaml
#       (positions raised), one stopped for memory and one skipped by prediction
set -euo pipefail
root=$1
build=${2:-}
script="$root/scripts/bench_scaling.sh"
project="$root/scripts/project_ddp.py"
fail() { echo "FAIL $1"; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

bash -n "$script"
"$script" --help | grep -q -- '--dry-run' || fail "bench_scaling.sh --help does not describe --dry-run"
rc=0; "$script" --bogus >/dev/null 2>&1 || rc=$?
((rc == 2)) || fail "an unknown argument exits $rc, not 2"
rc=0; "$script" --dry-run --seqs "128 x" >/dev/null 2>&1 || rc=$?
((rc == 2)) || fail "--seqs 'x' exits $rc, not 2"

if [[ -z $build ]]; then
  # Without a build the script reads max_position_embeddings from the YAML itself.
  BUILD_DIR="$out/none" "$script" --dry-run >"$out/dry" || fail "--dry-run exited non-zero"
  points=$(grep -c 'mlm-bench --config' "$out/dry" || true)
  # 2 models x 2 thread counts x (6 sequence lengths + 7 batch sizes)
  ((points == 52)) || fail "--dry-run lists $points points, expected 52"
  bert=$(grep 'configs/base.yaml' "$out/dry")
  raised=$(grep -c 'model.max_position_embeddings=' <<<"$bert" || true)
  ((raised == 8)) || fail "BERT-base: $raised points raise the positions, expected 8 (1024-8192, 2 thread counts)"
  grep 'data.seq_len=512 ' <<<"$bert" | grep -q max_position_embeddings && fail "BERT at 512 raised its positions"
  grep 'configs/modernbert-base.yaml' "$out/dry" | grep -q max_position_embeddings &&
    fail "ModernBERT (8192 positions) raised its positions"
  grep 'data.seq_len=8192 ' "$out/dry" | grep -qv -- '--steps 1 --warmup 1' && fail "seq 8192 not 1 warm-up + 1 timed step"
  grep 'train.micro_batch_size=1 ' "$out/dry" | grep 'data.seq_len=128 ' | grep -q -- '--steps 8 --warmup 8' ||
    fail "batch 1 x 128 does not warm up over the ring of 8 batches"
  echo "ok   bench_scaling.sh --dry-run: $points points"

  # One made-up point: 100M parameters, 1000 model MFLOP per token, vocabulary 10000 x 500.
  echo '{"model":"m","seq_len":100,"tokens_per_s":1000,"model_gflops_per_s":1000,"params":100000000,"vocab":10000,"hidden":500}' \
    >"$out/p.jsonl"
  python3 "$project" "$out/p.jsonl" --points m:100 --tokens-per-gpu "1000 1000000" --links "a=100" \
    --mfu 0.5 --peak-tflops 1000 --gpus 8 --bucket-mb 25 >"$out/proj" || fail "project_ddp.py exited non-zero"
  cat "$out/proj"
  # gradients 400 MB; ring 2*7/8 of it = 700 MB; embedding 10048 padded rows x 500 x 4 = 20.096 MB;
  # hidden when 2/3 x T x 1e9 / 5e14 >= (400 - 20.096) MB x 1.75 / 1e11: T >= 4.987k tokens.
  grep -qE '^\| m \| 100 \| 100\.0M \| 400 \| 700 \| 20 \| 5\.0k tokens \(49\.9 seq\), global batch 399 seq \|$' "$out/proj" ||
    fail "gradient, ring or embedding bytes, or the hidden-from point, are not the stated arithmetic"
  # T = 1e6: compute 2000 ms, backward 1333.3; all-reduce 7.00 ms; only the last buckets are
  # exposed: the last non-embedding bucket (379.904 MB - 14 x 26.2144 MB = 12.90 MB) and the
  # embedding bucket, (12.90 + 20.096) MB x 1.75 / 1e11 = 0.58 ms; memory (4 x 400 + 28 x 100) MB / 3.35e12 = 1.31 ms.
  grep -qE '^\| m \| 100 \| 1000000 \| 10000 \| 1000 \| 2000\.0 \| 1333\.3 \| 1\.31 \| 7\.00 / 0\.58 ' "$out/proj" ||
    fail "compute, memory or exposed all-reduce at 1M tokens are not the stated arithmetic"
  # T = 1000: backward 1.33 ms, far below 7.00 ms of all-reduce: nearly all of it is exposed.
  grep -qE '^\| m \| 100 \| 1000 \| 10 \| 1000 \| 2\.0 \| 1\.3 \| 1\.31 \| 7\.00 / 5\.[6-9][0-9] ' "$out/proj" ||
    fail "at 1000 tokens the all-reduce should run ~5.7 ms past backward"
  rc=0; python3 "$project" "$out/p.jsonl" --points m:512 >/dev/null 2>"$out/err" || rc=$?
  ((rc == 2)) && grep -q "no measured point for m at seq 512" "$out/err" || fail "a missing point is not one error line with exit 2"
  echo "ok   project_ddp.py: the stated arithmetic"
  exit 0
fi

# One tiny point past tiny.yaml's 128 positions, measured for real.
"$script" --build-dir "$build" --models tiny=configs/tiny.yaml --axes seq --seqs 256 --tokens 512 \
  --threads 1 --warmup 0 --steps 1 --jsonl "$out/sweep.jsonl" >"$out/stdout" 2>&1 ||
  { cat "$out/stdout"; fail "a tiny point exited non-zero"; }
grep -qE '^\| 1 \| 256 \| 2 \| 512 \| [0-9]+ \| .* \| positions raised to 256 \|$' "$out/stdout" ||
  { cat "$out/stdout"; fail "no table row for tiny at 256 with its positions raised"; }
python3 - "$out/sweep.jsonl" <<'PY' || fail "the JSON line lacks the sweep's fields or mlm-bench's"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) == 1, lines
j = lines[0]
assert (j["model"], j["axis"], j["seq_len"], j["batch"], j["positions_raised"]) == ("tiny", "seq", 256, 2, True), j
assert j["tokens_per_s"] > 0 and j["params"] > 0 and j["peak_rss_mb"] > 0 and j["model_gflops_per_s"] > 0, j
PY
python3 "$project" "$out/sweep.jsonl" --points tiny:256 --tokens-per-gpu 4096 >"$out/proj" ||
  fail "project_ddp.py on the tiny point exited non-zero"
grep -qE '^\| tiny \| 256 \| 4096 \| 16 \|' "$out/proj" || { cat "$out/proj"; fail "no projection row for the tiny point"; }
echo "ok   a tiny point measured and projected"

# A memory limit no process meets: stopped, reported, not failed.
"$script" --build-dir "$build" --models tiny=configs/tiny.yaml --axes batch --batches 2 --threads 1 \
  --max-rss-gb 0.01 >"$out/stdout" 2>&1 || { cat "$out/stdout"; fail "a stopped point made the sweep fail"; }
grep -q '^skipped tiny batch axis, 1 threads, seq 128, batch 2: resident memory passed 0.01 GB' "$out/stdout" &&
  grep -qE '^\| 1 \| 128 \| 2 \| 256 \| skipped: resident memory' "$out/stdout" ||
  { cat "$out/stdout"; fail "a point over the memory limit is not reported as skipped"; }
echo "ok   a point over the memory limit is stopped and reported"

# The second point costs >= 2 steps x 65536 x the first's time per step (>= 60 s when a tiny
# step takes 0.46 ms or more): skipped unstarted, while the first has 60 s however busy the host.
"$script" --build-dir "$build" --models tiny=configs/tiny.yaml --axes seq --seqs "64 4194304" --tokens 64 \
  --threads 1 --warmup 1 --steps 1 --max-s 60 >"$out/stdout" 2>&1 ||
  { cat "$out/stdout"; fail "a predicted skip made the sweep fail"; }
grep -qE '^skipped tiny seq axis, 1 threads, seq 4194304, batch 1: predicted >= [0-9]+ s' "$out/stdout" ||
  { cat "$out/stdout"; fail "a point predicted past --max-s is not skipped with its reason"; }
echo "ok   a point predicted past --max-s is skipped before it starts"
