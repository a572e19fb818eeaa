#!/usr/bin/env bash
# A measured sweep of a recipe's settings on the sample corpus: trains CONFIG once per named
# setting (each a list of mlm-train --set overrides), one after the other, and prints a table of
# where each run ended.
# - RTD runs (ELECTRA, DeBERTa-v3): the discriminator's training RTD loss (mean of the last three
#   logged windows) against the prior's (the entropy of its replaced share: the loss of calling
#   every token original), its RTD F1, the evaluation's RTD F1 and the generator's masked
#   accuracy. A discriminator that learnt nothing sits at the prior with F1 0 (docs/ELECTRA.md).
# - MLM runs: the evaluation's masked accuracy against its unigram baseline (always the most
#   frequent token), and what the model fills in: one word of each of the first FILL_TEXTS (200)
#   validation lines masked (a fixed draw) and filled by mlm-fill, the share of the fills that
#   are its three most frequent ones, how many distinct fills, and how many are the masked word.
#   A model that has learnt only the corpus's frequent tokens fills most masks with `the . ,`.
#
#   scripts/sweep_recipe.sh CONFIG OUT_DIR NAME='SET ...' [NAME='SET ...' ...]
#   scripts/sweep_recipe.sh configs/electra-mini.yaml runs/sweep base='' lr5e-4='optim.learning_rate=5e-4'
#
# SWEEP_STEPS (450) sets the budget; a run whose directory already holds its last checkpoint is
# reported, not trained again. Writes OUT_DIR/NAME/ (the run), OUT_DIR/NAME.log and
# OUT_DIR/table.tsv.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
(( $# >= 3 )) || { sed -n '2,21p' "$0" >&2; exit 1; }
config="$1"; out="$2"; shift 2
build="${BUILD_DIR:-$root/build}"
python="${PYTHON:-$root/.venv/bin/python}"
steps="${SWEEP_STEPS:-450}"
[[ -x "$build/mlm-train" ]] || { echo "error: no $build/mlm-train (run scripts/test.sh)" >&2; exit 1; }
[[ -f "$config" ]] || { echo "error: no config $config" >&2; exit 1; }
cd "$root"
mkdir -p "$out"
last_checkpoint() { echo "$out/$1/checkpoints/step_$(printf %08d "$steps")"; }
for spec in "$@"; do
  name="${spec%%=*}"
  [[ "$spec" == *=* && -n "$name" ]] || { echo "error: '$spec' is not NAME='SET ...'" >&2; exit 1; }
  sets=()
  for kv in ${spec#*=}; do sets+=(--set "$kv"); done
  if [[ -f "$(last_checkpoint "$name")/model.pt" ]]; then
    echo "$name: already trained" >&2
    continue
  fi
  rm -rf "${out:?}/$name"
  echo "training $name: ${spec#*=}" >&2
  "$build/mlm-train" --config "$config" --set train.output_dir="$out/$name" \
    --set train.max_steps="$steps" --set logging.every_steps=10 --set logging.progress_bar=off \
    --set eval.every_steps="$steps" --set checkpoint.every_steps="$steps" "${sets[@]}" \
    > "$out/$name.log" 2>&1 || { echo "error: $name failed, see $out/$name.log" >&2; exit 1; }
done
"$python" - "$out" "$steps" "$build/mlm-fill" "${FILL_TEXTS:-200}" "$@" <<'PY' | tee "$out/table.tsv"
import json, random, re, subprocess, sys
from collections import Counter
out, steps, fill, n_texts, specs = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5:]

def masked_texts():
    """One alphabetic word of each of the first n_texts validation lines with >= 6 words, masked."""
    draw, texts = random.Random(0), []
    for line in open("data/sample/valid.txt", encoding="utf-8"):
        words = line.split()
        candidates = [i for i, w in enumerate(words) if re.fullmatch(r"[A-Za-z]+", w)]
        if len(words) < 6 or not candidates:
            continue
        i = draw.choice(candidates)
        texts.append((" ".join(words[:i] + ["[MASK]"] + words[i + 1:]), words[i]))
        if len(texts) == n_texts:
            break
    return texts

def fills(checkpoint, texts):
    result = subprocess.run([fill, "--checkpoint", checkpoint, "--json", "--top-k", "1"] + [t for t, _ in texts],
                            check=True, capture_output=True, text=True)
    return [json.loads(l)["masks"][0][0]["token_str"].strip().lstrip("\u2581") for l in result.stdout.splitlines()]

def fill_columns(name, texts):
    got = fills(f"{out}/{name}/checkpoints/step_{steps:08d}", texts)
    counts = Counter(got)
    top3 = sum(c for _, c in counts.most_common(3)) / len(got)
    hits = sum(g.lower() == w.lower() for g, (_, w) in zip(got, texts)) / len(got)
    return f"{top3:.2f} ({' '.join(t for t, _ in counts.most_common(3))})\t{len(counts)}\t{hits:.3f}"

texts = None
rtd_header = "setting\trtd_loss\tprior_loss\trtd_f1\teval_rtd_f1\teval_rtd_loss\teval_mlm_acc\tsettings"
mlm_header = "setting\teval_mlm_acc\tunigram_acc\tacc/unigram\teval_loss\ttop3_fill_share\tdistinct_fills\tfill_hits\tsettings"
header = None
for spec in specs:
    name, sets = spec.split("=", 1)
    rows = [json.loads(l) for l in open(f"{out}/{name}/metrics.jsonl")]
    ev = [r for r in rows if "eval_mlm_accuracy" in r][-1]
    if "eval_rtd_f1" in ev:
        if header != rtd_header:
            header = rtd_header
            print(header)
        train = [r for r in rows if "rtd_loss" in r][-3:]
        loss = sum(r["rtd_loss"] for r in train) / len(train)
        prior = sum(r["rtd_prior_loss"] for r in train) / len(train)
        f1 = sum(r["rtd_f1"] for r in train) / len(train)
        print(f"{name}\t{loss:.4f}\t{prior:.4f}\t{f1:.3f}\t{ev['eval_rtd_f1']:.3f}\t"
              f"{ev['eval_rtd_loss']:.4f}\t{ev['eval_mlm_accuracy']:.4f}\t{sets or '(recipe)'}")
    else:
        if header != mlm_header:
            header = mlm_header
            print(header)
        texts = texts or masked_texts()
        acc, unigram = ev["eval_mlm_accuracy"], ev["eval_unigram_accuracy"]
        print(f"{name}\t{acc:.4f}\t{unigram:.4f}\t{acc / unigram:.2f}\t{ev['eval_loss']:.4f}\t"
              f"{fill_columns(name, texts)}\t{sets or '(recipe)'}")
PY
