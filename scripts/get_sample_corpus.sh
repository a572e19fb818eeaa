#!/usr/bin/env bash
# Builds the sample corpus data/sample/{train,valid}.txt from the npm package nlp-corpus
# (MIT licence; 100 files of 1,000 English sentences from varied sources, ~9 MB).
# Documents are groups of 4 to 12 consecutive sentences, blank-line separated; every 50th
# document goes to valid.txt (2%). Idempotent: does nothing when both files exist.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/data/sample}"
if [[ -s "$out/train.txt" && -s "$out/valid.txt" ]]; then
  echo "sample corpus already present in $out"
  exit 0
fi
command -v npm >/dev/null || { echo "error: npm is required (apt-get install npm)" >&2; exit 1; }
python=/usr/bin/python3
[[ -x "$python" ]] || python=python3

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent nlp-corpus >/dev/null && tar xzf nlp-corpus-*.tgz)
mkdir -p "$out"

"$python" - "$tmp/package/builds" "$out" <<'PY'
import json, os, sys

builds, out = sys.argv[1], sys.argv[2]
files = sorted((f for f in os.listdir(builds) if f.startswith("doc-") and f.endswith(".json")),
               key=lambda f: int(f[4:-5]))
sentences = []
for name in files:
    with open(os.path.join(builds, name), encoding="utf-8") as f:
        sentences += [" ".join(s.split()) for s in json.load(f) if isinstance(s, str) and s.strip()]

train, valid = [], []
i = doc = 0
while i < len(sentences):
    size = 4 + (doc * 7919) % 9  # 4..12 sentences, a fixed pattern
    text = "\n".join(sentences[i:i + size])
    (valid if doc % 50 == 0 else train).append(text)
    i += size
    doc += 1
for name, docs in (("train.txt", train), ("valid.txt", valid)):
    tmp = os.path.join(out, name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n\n".join(docs) + "\n")
    os.replace(tmp, os.path.join(out, name))
print(f"{len(sentences)} sentences -> {len(train)} train and {len(valid)} valid documents in {out}")
PY
