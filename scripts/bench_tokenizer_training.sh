#!/usr/bin/env bash
# Tokenizer training speed: mlm-train (mlm-tokenizer, tokenizer.type byte_level_bpe or
# wordpiece) against the `tokenizers` library's own trainer (ByteLevelBPETokenizer's BpeTrainer,
# BertWordPieceTokenizer's WordPieceTrainer, reading the file itself in Rust) on the same file,
# vocabulary size and cores, run alternately ROUNDS times so a busy machine slows both alike.
#   scripts/bench_tokenizer_training.sh CORPUS [VOCAB_SIZE=32000] [KIND=byte_level_bpe] [ROUNDS=2]
# Cores: all of this machine's (pin with taskset -c 0,1 scripts/...; the library is told
# RAYON_NUM_THREADS=$(nproc)). Prints one line per run and the ratio library/ours per round.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
corpus="$(realpath "$1")"
vocab="${2:-32000}"
kind="${3:-byte_level_bpe}"
rounds="${4:-2}"
python="${MLM_PYTHON:-$root/.venv/bin/python}"
tokenizer_bin="${MLM_TOKENIZER:-${BUILD_DIR:-$root/build}/mlm-tokenizer}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cores="$(nproc)"

cat >"$work/run.yaml" <<YAML
data:
  train_files: [$corpus]
tokenizer:
  type: $kind
  model: $work/ours
  vocab_size: $vocab
YAML

cat >"$work/library.py" <<'PY'
import sys, time
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
corpus, vocab, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if kind == "byte_level_bpe":
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=vocab, min_frequency=2, show_progress=False,
                                  special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
else:
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=False)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(vocab_size=vocab, min_frequency=2, show_progress=False, limit_alphabet=1000,
                                        special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
start = time.time()
tok.train([corpus], trainer)
print("%.2f %d" % (time.time() - start, tok.get_vocab_size()))
PY

seconds() { local s e; s=$(date +%s.%N); "$@" >"$work/out.txt" 2>"$work/err.txt" || { cat "$work/err.txt" >&2; exit 1; }; e=$(date +%s.%N); echo "$e - $s" | bc; }

echo "corpus $corpus ($(du -m "$corpus" | cut -f1) MB), vocab $vocab, $kind, $cores cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
for ((r = 1; r <= rounds; r++)); do
  rm -rf "$work/ours"
  ours=$(seconds "$tokenizer_bin" --config "$work/run.yaml")
  ours_vocab=$(grep vocab_size "$work/out.txt" | cut -d' ' -f2)
  lib=$(seconds env RAYON_NUM_THREADS="$cores" TOKENIZERS_PARALLELISM=true "$python" "$work/library.py" "$corpus" "$vocab" "$kind")
  lib_vocab=$(cut -d' ' -f2 "$work/out.txt")
  printf 'round %d: mlm-train %.2fs (%s pieces), tokenizers %.2fs (%s pieces; python start included), tokenizers/mlm-train %.2f\n' \
    "$r" "$ours" "$ours_vocab" "$lib" "$lib_vocab" "$(echo "$lib / $ours" | bc -l)"
done
