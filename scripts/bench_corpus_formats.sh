#!/usr/bin/env bash
# Reading each corpus format: the sample corpus repeated to SIZE_MB (200) of text, written once
# as .txt, .txt.zst, .jsonl, .jsonl.zst, .jsonl.gz, Parquet, Arrow IPC (datasets' save_to_disk)
# and CSV by their usual producers (scripts/write_corpus_formats.py), then per format:
#   prepare    mlm-data prepare into a fresh store: input MB/s, tokens/s, peak RSS
#   stream     mlm-data --bench on the streaming path (read + tokenize + pack + mask), a fixed
#              number of seconds: tokens/s, peak RSS
# and the ratio of each to plain text's, measured in the same run. Formats alternate, ROUNDS
# times (2), and the best of each is kept, since the host is shared. Tokens per CPU-second
# (user + system time of the process) are printed too: on a host other work also loads they
# compare the formats' cost where wall-clock rates mostly measure the neighbours.
#   scripts/bench_corpus_formats.sh [BUILD_DIR]   (SIZE_MB=200, WORK_DIR=/tmp/mlm_formats,
#   THREADS=nproc, STREAM_SECONDS=15, ROUNDS=2)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-${BUILD_DIR:-$root/build}}"
size_mb="${SIZE_MB:-200}"
work="${WORK_DIR:-/tmp/mlm_formats}"
threads="${THREADS:-$(nproc)}"
seconds="${STREAM_SECONDS:-15}"
rounds="${ROUNDS:-2}"
python="${PYTHON:-$root/.venv/bin/python}"
mlm_data="$build/mlm-data"
[[ -x "$mlm_data" ]] || { echo "error: $mlm_data not built" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "error: /usr/bin/time is required (apt-get install time)" >&2; exit 1; }
[[ -s "$root/data/sample/train.txt" ]] || "$root/scripts/get_sample_corpus.sh"
tokenizer="$root/data/sample/spm_mini.model"
if [[ ! -s "$tokenizer" ]]; then  # trained as the quickstart trains it
  "$mlm_data" --config "$root/configs/mini.yaml" --batches 1 >/dev/null
fi

mkdir -p "$work"
"$python" "$root/scripts/write_corpus_formats.py" "$root/data/sample/train.txt" "$work/corpus" "$size_mb"

formats=(train.txt train.txt.zst train.jsonl train.jsonl.zst train.jsonl.gz train.parquet train_saved train.csv)
config() {  # config for one format: $1 the file, $2 the store
  cat > "$work/config.yaml" <<YAML
tokenizer:
  model: $tokenizer
  train_if_missing: false
data:
  train_files: [$work/corpus/$1]
  valid_files: [$root/data/sample/valid.txt]
${2:+  store: $2}
  seq_len: 128
  num_workers: $threads
train:
  micro_batch_size: 32
YAML
}

: > "$work/results.jsonl"
for ((round = 1; round <= rounds; round++)); do
  for f in "${formats[@]}"; do
    echo "== round $round: $f"
    config "$f" "$work/store"
    rm -rf "$work/store"
    /usr/bin/time -v "$mlm_data" prepare --config "$work/config.yaml" --threads "$threads" \
        2> "$work/prepare.time" > "$work/prepare.json"
    rss_kb=$(awk -F': ' '/Maximum resident/ {print $2}' "$work/prepare.time")
    prepare_cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {print s}' "$work/prepare.time")
    config "$f" ""
    /usr/bin/time -v "$mlm_data" --config "$work/config.yaml" --bench --bench-seconds "$seconds" \
        2> "$work/stream.time" > "$work/stream.json"
    stream_cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {print s}' "$work/stream.time")
    "$python" - "$f" "$round" "$rss_kb" "$work" "$prepare_cpu" "$stream_cpu" >> "$work/results.jsonl" <<'PY'
import json, os, sys
name, round_, rss_kb, work = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
prepare_cpu, stream_cpu = float(sys.argv[5]), float(sys.argv[6])
p = json.load(open(os.path.join(work, "prepare.json")))
s = json.load(open(os.path.join(work, "stream.json")))
path = os.path.join(work, "corpus", name)
size = (sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))
        if os.path.isdir(path) else os.path.getsize(path))
print(json.dumps({"format": name, "round": round_, "file_mb": size / 1e6,
                  "prepare_text_mb_per_s": p["mb_per_s"], "prepare_tokens_per_s": p["tokens_per_s"],
                  "prepare_tokens": p["tokens"], "prepare_peak_rss_mb": rss_kb / 1024,
                  "prepare_tokens_per_cpu_s": p["tokens"] / prepare_cpu,
                  "stream_tokens_per_s": s["tokens_per_s"], "stream_peak_rss_mb": s["peak_rss_bytes"] / 1e6,
                  "stream_tokens_per_cpu_s": s["tokens"] / stream_cpu}))
PY
    tail -n 1 "$work/results.jsonl"
  done
done

"$python" - "$work/results.jsonl" "$threads" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
best = {}
for r in rows:
    b = best.setdefault(r["format"], dict(r))
    for k in ("prepare_tokens_per_s", "stream_tokens_per_s", "prepare_text_mb_per_s",
              "prepare_tokens_per_cpu_s", "stream_tokens_per_cpu_s"):
        b[k] = max(b[k], r[k])
    for k in ("prepare_peak_rss_mb", "stream_peak_rss_mb"):
        b[k] = max(b[k], r[k])
text = best["train.txt"]
print(f"\nbest of {max(r['round'] for r in rows)} rounds, {sys.argv[2]} threads; ratios against train.txt")
print(f"{'':<16}{'':>9}{'prepare':->38}{'':<4}{'stream':->29}")
print(f"{'format':<16}{'file MB':>9}{'in MB/s':>9}{'tokens/s':>12}{'ratio':>7}{'/CPU-s':>7}{'RSS MB':>7}"
      f"{'tokens/s':>12}{'ratio':>7}{'/CPU-s':>7}{'RSS MB':>7}")
for name, b in best.items():
    assert b["prepare_tokens"] == text["prepare_tokens"], f"{name}: another token count"
    ratio = lambda k: b[k] / text[k]
    print(f"{name:<16}{b['file_mb']:>9.1f}{b['prepare_text_mb_per_s']:>9.1f}"
          f"{b['prepare_tokens_per_s']:>12,.0f}{ratio('prepare_tokens_per_s'):>7.2f}"
          f"{ratio('prepare_tokens_per_cpu_s'):>7.2f}{b['prepare_peak_rss_mb']:>7.0f}"
          f"{b['stream_tokens_per_s']:>12,.0f}{ratio('stream_tokens_per_s'):>7.2f}"
          f"{ratio('stream_tokens_per_cpu_s'):>7.2f}{b['stream_peak_rss_mb']:>7.0f}")
print("ratio: tokens/s against train.txt's; /CPU-s: tokens per CPU-second against train.txt's")
PY
