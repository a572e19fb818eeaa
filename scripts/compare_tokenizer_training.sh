#!/usr/bin/env bash
# Tokenizer training quality: mlm-train's trained vocabulary against the `tokenizers` library's
# trainer at the same size and settings on the same lines (tests/text/tokenizer_training_reference.py):
# vocabulary and merges overlap, and tokens per byte on held-out text.
#   scripts/compare_tokenizer_training.sh TRAIN HELDOUT [VOCAB_SIZE=8000] [STYLE=roberta]
# STYLE: roberta | modernbert (byte_level_bpe), bert | bert_cased (wordpiece).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
train="$(realpath "$1")"
heldout="$(realpath "$2")"
vocab="${3:-8000}"
style="${4:-roberta}"
python="${MLM_PYTHON:-$root/.venv/bin/python}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

case "$style" in
  roberta | modernbert) type=byte_level_bpe special=$style lowercase=false ;;
  bert) type=wordpiece special=bert lowercase=true ;;
  bert_cased) type=wordpiece special=bert lowercase=false ;;
  *) echo "unknown style '$style'" >&2; exit 2 ;;
esac
cat >"$work/run.yaml" <<YAML
data:
  train_files: [$train]
tokenizer:
  type: $type
  special_tokens: $special
  lowercase: $lowercase
  model: $work/ours
  vocab_size: $vocab
YAML
"${MLM_TOKENIZER:-${BUILD_DIR:-$root/build}/mlm-tokenizer}" --config "$work/run.yaml" >/dev/null 2>&1
"$python" "$root/tests/text/tokenizer_training_reference.py" "$style" "$work/ours" "$train" "$heldout" "$work/out.json"
"$python" - "$work/out.json" "$style" "$vocab" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t = d["tokens_per_byte"]
line = "%s vocab %s: pieces %d/%d, vocab overlap %.4f, tokens/byte mlm-train %.5f tokenizers %.5f (%+.2f%%)" % (
    sys.argv[2], sys.argv[3], d["vocab_size"]["ours"], d["vocab_size"]["library"], d["vocab_overlap"],
    t["ours"], t["library"], 100 * (t["ours"] / t["library"] - 1))
if "merges" in d:
    line += ", merges identical: %s (equal prefix %d of %d)" % (d["same_merges"], d["merges_equal_prefix"], d["merges"]["ours"])
print(line)
PY
