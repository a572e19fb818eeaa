#!/usr/bin/env bash
# The prepared store at scale: prepare a generated ~1 GB corpus once, then read it as 1, 2
# and 4 data-parallel ranks. Prints one JSON line per measurement and a summary:
#   prepare  MB/s and tokens/s (in all and per thread), peak RSS
#   read     data-only throughput from the store (read + pack + mask, mlm-data --bench)
#   ranks    bytes each rank reads over one epoch of its share, as counted by the store
#            (tokens, index entries, the sequence table) and as the kernel saw it
#            (/proc/self/io read_bytes, after evicting the store from the page cache with
#            posix_fadvise, so every byte a rank touches is read from storage)
#   start    start-up and resume (mid-epoch position) time to the first batch
#   scripts/bench_prepared_store.sh [BUILD_DIR]   (SIZE_MB=1024, WORK_DIR=/tmp/mlm_prepared,
#   KEEP_STORE=1 to reuse a store prepared by an earlier run)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-${BUILD_DIR:-$root/build}}"
size_mb="${SIZE_MB:-1024}"
work="${WORK_DIR:-/tmp/mlm_prepared}"
python="${PYTHON:-$root/.venv/bin/python}"
mlm_data="$build/mlm-data"
[[ -x "$mlm_data" ]] || { echo "error: $mlm_data not built" >&2; exit 1; }
[[ -x /usr/bin/time ]] || { echo "error: /usr/bin/time is required (apt-get install time)" >&2; exit 1; }

mkdir -p "$work/corpus"
source_text="$root/data/sample/train.txt"
# 16 files of size_mb/16 each: the sample corpus repeated.
per_file=$((size_mb * 1048576 / 16))
for i in $(seq -w 0 15); do
  f="$work/corpus/train-$i.txt"
  if [[ ! -s "$f" || $(stat -c %s "$f") -lt $per_file ]]; then
    : > "$f.tmp"
    while [[ $(stat -c %s "$f.tmp") -lt $per_file ]]; do cat "$source_text" >> "$f.tmp"; printf '\n' >> "$f.tmp"; done
    mv "$f.tmp" "$f"
  fi
done
cat > "$work/config.yaml" <<YAML
tokenizer:
  model: $root/data/sample/spm_mini.model
  train_if_missing: false
data:
  train_files: [$work/corpus/train-*.txt]
  valid_files: [$root/data/sample/valid.txt]
  store: $work/store
  seq_len: 128
train:
  micro_batch_size: 32
YAML

threads="${THREADS:-$(nproc)}"
if [[ -z "${KEEP_STORE:-}" || ! -s "$work/prepare.json" ]]; then  # KEEP_STORE=1: reuse it
  echo "== prepare $(du -sh "$work/corpus" | cut -f1) with $threads threads"
  rm -rf "$work/store"
  /usr/bin/time -v "$mlm_data" prepare --config "$work/config.yaml" --threads "$threads" \
      2> "$work/prepare.time" | tee "$work/prepare.json"
  grep -E "Maximum resident|Elapsed" "$work/prepare.time"
fi

evict() {  # drop the store's pages from the page cache (no root needed)
  find "$work/store" -type f -print0 | xargs -0 "$python" -c '
import os, sys
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)'
}

echo "== read: data-only throughput from the store, 1 rank, 20 s"
evict
"$mlm_data" --config "$work/config.yaml" --bench --bench-seconds 20 2>/dev/null | tee "$work/read.json"

for n in 1 2 4; do
  for ((r = 0; r < n; r++)); do
    evict
    echo "== ranks: rank $r of $n, one epoch"
    "$mlm_data" --config "$work/config.yaml" --bench --bench-epoch --rank "$r" --world-size "$n" \
        2>/dev/null | tee "$work/rank-$n-$r.json"
  done
done

echo "== start: resume at the middle of the epoch (rank 0 of 1)"
"$python" - "$work" <<'PY'
import json, os, sys
work = sys.argv[1]
state = json.load(open(os.path.join(work, "read.json")))["position"]
half = json.load(open(os.path.join(work, "rank-1-0.json")))["sequences"] // 2
state["samples"] = half
os.makedirs(os.path.join(work, "resume"), exist_ok=True)
json.dump({"ranks": [{"data_position": state}]}, open(os.path.join(work, "resume", "trainer_state.json"), "w"))
PY
evict
"$mlm_data" --config "$work/config.yaml" --bench --bench-seconds 2 --from-checkpoint "$work/resume" \
    2>/dev/null | tee "$work/resume.json"

"$python" - "$work" <<'PY'
import glob, json, os, sys
work = sys.argv[1]
manifest = json.load(open(os.path.join(work, "store", "manifest.json")))
shards = manifest["splits"]["train"]["shards"]
store = sum(s["tokens_bytes"] + s["index_bytes"] for s in shards)
tables = sum(os.path.getsize(p) for p in glob.glob(os.path.join(work, "store", "train", "*.table")))
p = json.load(open(os.path.join(work, "prepare.json")))
print(f"\nprepare: {p}")
r = json.load(open(os.path.join(work, "read.json")))
print(f"read: {r['tokens_per_s']:,.0f} tokens/s, open {r['open_seconds']:.3f} s, first batch "
      f"{r['first_batch_seconds']:.3f} s, peak RSS {r['peak_rss_bytes'] / 1e6:.0f} MB")
print(f"store: {store / 1e6:.1f} MB of tokens and index (+ {tables / 1e6:.1f} MB sequence table)")
for n in (1, 2, 4):
    for rank in range(n):
        j = json.load(open(os.path.join(work, f"rank-{n}-{rank}.json")))
        print(f"ranks {n}, rank {rank}: {j['sequences']} sequences, counted {100 * j['bytes_read'] / store:.1f}% "
              f"of the store, storage reads {100 * j['proc_read_bytes'] / store:.1f}%, store pages resident "
              f"{100 * j['store_resident_bytes'] / store:.1f}%, peak RSS {j['peak_rss_bytes'] / 1e6:.0f} MB, "
              f"{j['seconds']:.1f} s")
s = json.load(open(os.path.join(work, "resume.json")))
half = json.load(open(os.path.join(work, "rank-1-0.json")))["sequences"] // 2
print(f"resume at sequence {half:,} of the epoch: open {s['open_seconds']:.3f} s, "
      f"first batch {s['first_batch_seconds']:.3f} s")
PY
