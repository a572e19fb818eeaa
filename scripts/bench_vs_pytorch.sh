#!/usr/bin/env bash
# mlm-bench against PyTorch peers (scripts/peers/, run on the project venv's torch) at the
# same shapes, precision and thread count, run ALTERNATELY in rounds, the order rotated every
# round (the machines are shared and noisy: only ratios measured side by side mean anything):
#   hf             Hugging Face BertForMaskedLM as a transformers user trains it (SDPA, labels
#                  to the model: dense head, fused AdamW)            scripts/peers/hf_bert.py
#                  (modernbert: ModernBertForMaskedLM the same way)  scripts/peers/hf_modernbert.py
#   eager          hand-written eager PyTorch (fused QKV, SDPA, sparse head, last layer on the
#                  masked positions, fused AdamW)                    scripts/peers/eager_bert.py
#   eager-compile  the same under torch.compile (compile time reported apart, not timed)
#   electra        (electra shapes only) transformers' ELECTRA generator and discriminator as
#                  the community scripts train them (Gumbel sampling, mlm + 50 rtd, shared
#                  embeddings, SDPA, fused AdamW)                    scripts/peers/electra_peer.py
#   deberta        (deberta shapes only) transformers' DebertaV2 generator and discriminator as
#                  the community DeBERTa-v3 scripts train them (RTD, GDES, eager attention:
#                  transformers has no SDPA for DebertaV2, fused AdamW) scripts/peers/deberta_peer.py
# Prints every round's figures and, per shape, the median ratio of mlm-bench's tokens/s to each
# peer's and to the faster of eager and eager-compile in each round. One peak for every side:
# at the start of each shape, mlm-bench --peak-only measures it once (same precision and thread
# count: a 2048^3 square and the step's own products, FLOP-weighted); the square rate is passed
# to mlm-bench and every peer (--peak-gflops), and each row shows MFU against both.
#
#   scripts/bench_vs_pytorch.sh [mini|base|modernbert|electra-small|electra-base|electra|
#                                deberta-small|deberta-base|deberta|all]
#                               [--fp32|--bf16] [--pipeline] [--attention]
#                               [--rounds N] [--steps N] [--threads N] [--build-dir DIR]
#
#   mini: 4 layers, hidden 256, 4 heads, I 1024, vocab 30522, batch 32, seq 128, mlm prob 0.15
#   base: 12 layers, hidden 768, 12 heads, I 3072, vocab 30522, batch 16, seq 128, mlm prob 0.15
#   modernbert: the published modernbert-base shape (22 layers, hidden 768, 12 heads, GeGLU
#         I 1152, vocab 50368, mlm prob 0.30) at seq 128 (batch 16) and seq 1024 (batch 2), 2
#         warm-up and 2 timed steps; mlm-bench on configs/modernbert-base.yaml against the hf peer only
#   electra-small: ELECTRA's small pair: discriminator 12 layers, hidden 256, 4 heads, I 1024,
#         embedding 128; generator hidden 64 (1/4), 1 head, I 256, 12 layers; vocab 30522, batch
#         32, seq 128, mlm prob 0.15, 85% [MASK] / 15% kept; mlm-bench with model.objective=rtd
#         against the electra peer only
#   electra-base: discriminator 12 layers, hidden 768, 12 heads, I 3072, embedding 768; generator
#         hidden 256 (1/3), 4 heads, I 1024, 12 layers; batch 16, the rest as electra-small
#   electra: electra-small and electra-base
#   deberta-small: deberta-v3-small's discriminator (6 layers, hidden 768, 12 heads, I 3072,
#         vocab 128100, relative positions in 256 log buckets up to 512, p2c + c2p, shared keys,
#         normed relative embeddings) and the generator configs/deberta-v3-small.yaml gives it
#         (as wide, half as deep: 3 layers); RTD with GDES, rtd weight 50, batch 16, seq 128, mlm
#         prob 0.15 (80/10/10); mlm-bench on configs/deberta-v3-small.yaml with model.objective=rtd
#         against the deberta peer only
#   deberta-base: deberta-v3-base (12 layers, generator 6), configs/deberta-v3-base.yaml, the
#         rest as deberta-small
#   deberta: deberta-small and deberta-base
#   --attention: (deberta shapes only) instead of the training steps, one layer's disentangled
#               self-attention alone, forward + backward: mlm-bench --attention (fused scores,
#               and the ATen composition they replace) against transformers'
#               DisentangledSelfAttention (scripts/peers/deberta_attention_peer.py), ms per
#               layer-step, 5 warm-up and 20 timed steps (--steps N) per side and round
#               (deberta: the small shape once, the base layer being the same)
#   all: mini and base
#   precision: bf16 (ours train.precision=bf16, peers --bf16) when the CPU has AVX512-BF16,
#              else fp32 (bf16 products take a scalar fallback there); --fp32 / --bf16 force it
#   --pipeline: instead of the peers, mlm-bench --data (tokenizer, streaming dataset, masking
#               on the sample corpus) against mlm-bench on synthetic ids, same shape, with the
#               sample tokenizer's vocabulary (configs/mini.yaml; scripts/get_sample_corpus.sh);
#               BERT MLM shapes only
#
# Environment: PYTHON (default: the project venv, .venv/bin/python, made by scripts/setup.sh).
# Builds mlm-bench in the build directory when it is missing.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
which_shapes=mini
precision=""
pipeline=0
attention=0
rounds=3
steps=""
threads=""
build="${BUILD_DIR:-$root/build}"
while [[ $# -gt 0 ]]; do
  case "$1" in
    mini|base|modernbert|electra-small|electra-base|electra|deberta-small|deberta-base|deberta|all)
      which_shapes="$1" ;;
    --fp32) precision=fp32 ;;
    --bf16) precision=bf16 ;;
    --pipeline) pipeline=1 ;;
    --attention) attention=1 ;;
    --rounds) rounds="$2"; shift ;;
    --steps) steps="$2"; shift ;;
    --threads) threads="$2"; shift ;;
    --build-dir) build="$2"; shift ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
    *) echo "error: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "error: --rounds must be a positive integer" >&2; exit 2; }
if ((pipeline)) && [[ "$which_shapes" == modernbert || "$which_shapes" == electra* || "$which_shapes" == deberta* ]]; then
  echo "error: --pipeline runs the BERT shapes (mini, base) only" >&2
  exit 2
fi
if ((attention)) && [[ "$which_shapes" != deberta* ]]; then
  echo "error: --attention times DeBERTa's attention: deberta-small, deberta-base or deberta" >&2
  exit 2
fi
if [[ "$which_shapes" == modernbert && ! -f "$root/configs/modernbert-base.yaml" ]]; then
  echo "error: no configs/modernbert-base.yaml (mlm-bench's side of the modernbert shapes)" >&2
  exit 1
fi

python="${PYTHON:-$root/.venv/bin/python}"
if [[ -z "${PYTHON:-}" && ! -x "$python" ]]; then
  echo "error: no project venv at $root/.venv (run scripts/setup.sh, or set PYTHON=...)" >&2
  exit 1
fi
peers="$root/scripts/peers"
if ((pipeline)); then
  [[ -f "$root/data/sample/train.txt" ]] ||
    { echo "error: no sample corpus in data/sample (run scripts/get_sample_corpus.sh)" >&2; exit 1; }
else
  "$python" -c 'import torch, transformers' 2>/dev/null ||
    { echo "error: $python cannot import torch and transformers (run scripts/setup.sh)" >&2; exit 1; }
fi

if [[ -n "$precision" ]]; then
  echo "precision: $precision (--$precision given)"
elif grep -q avx512_bf16 /proc/cpuinfo; then
  precision=bf16
  echo "precision: bf16 (the CPU has AVX512-BF16; --fp32 to override)"
else
  precision=fp32
  echo "precision: fp32 (no AVX512-BF16 on this CPU: bf16 products would run a scalar fallback" \
       "on both sides; --bf16 to force it)"
fi
# Same thread count for all: the CPUs this process may run on.
threads="${threads:-$(nproc)}"
export OPENBLAS_NUM_THREADS="$threads" OMP_NUM_THREADS="$threads" MKL_NUM_THREADS="$threads"

bench="$build/mlm-bench"
if [[ ! -x "$bench" ]]; then
  echo "building mlm-bench in $build" >&2
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  ninja -C "$build" mlm-bench
fi

# name -> layers hidden heads intermediate vocab batch seq mlm-probability default-steps
#         warm-up-steps. Every side cycles through 8 synthetic batches (mlm-bench's ring,
#         scripts/peers/common.py RING), whose masked counts differ as in training; 8 warm-up
#         steps meet each batch's shapes once, so the timed steps, as a long run's, find oneDNN's
#         primitives for their shapes built (one warm-up step left the sparse heads building
#         theirs in the timed steps: +12% for mlm-bench at mini with 60). The ModernBERT shapes
#         also need the second step: it still grows the heap after the first allocated AdamW's
#         state.
shape_args() {
  case "$1" in
    mini) echo "4 256 4 1024 30522 32 128 0.15 10 8" ;;
    base) echo "12 768 12 3072 30522 16 128 0.15 3 8" ;;
    modernbert-128) echo "22 768 12 1152 50368 16 128 0.3 2 8" ;;
    modernbert-1024) echo "22 768 12 1152 50368 2 1024 0.3 2 8" ;;
    electra-small) echo "12 256 4 1024 30522 32 128 0.15 5 8" ;;
    electra-base) echo "12 768 12 3072 30522 16 128 0.15 3 8" ;;
    deberta-small) echo "6 768 12 3072 128100 16 128 0.15 3 8" ;;
    deberta-base) echo "12 768 12 3072 128100 16 128 0.15 2 8" ;;
  esac
}

# ELECTRA's name -> embedding generator-hidden generator-heads generator-intermediate, and the
# generator's hidden size as mlm-train's ratio of the discriminator's (1/3 to 16 digits: 768
# times it is 256.0 in double precision)
electra_args() {
  case "$1" in
    electra-small) echo "128 64 1 256 0.25" ;;
    electra-base) echo "768 256 4 1024 0.3333333333333333" ;;
  esac
}

# One round's lines: round_report ROUND LABEL JSON [LABEL JSON]... (the first is mlm-bench);
# $PEAK_MODEL, the shared model-shape peak: MFU against it beside the one against the square.
read -r -d '' round_report <<'PY' || true
import json, os, sys
r, rest = sys.argv[1], sys.argv[2:]
sides = [(rest[i], json.loads(rest[i + 1])) for i in range(0, len(rest), 2)]
ours = sides[0][1]["tokens_per_s"]
peak_model = float(os.environ["PEAK_MODEL"])
print(f"round {r}:")
for label, j in sides:
    model_gflops = j.get("model_gflops_per_s", j["mfu"] * j["peak_gflops"])
    line = (f"  {label:<16} {j['tokens_per_s']:9.1f} tok/s  mfu {j['mfu']:.3f} square"
            f" {model_gflops / peak_model:.3f} model-shape")
    if "forward_s" in j:
        line += (f"  (data {j['data_s']:.4f}s fwd {j['forward_s']:.3f}s bwd {j['backward_s']:.3f}s"
                 f" opt {j['optimizer_s']:.3f}s)")
    if "compile_s" in j:
        line += f"  (compile {j['compile_s']:.1f}s, untimed)"
    if j is not sides[0][1]:
        line += f"  ratio {ours / j['tokens_per_s']:.3f}"
    print(line)
for label, j in sides:
    print(f"    {label}: {json.dumps(j)}")
PY

# The medians: summary NAME PRECISION ROUND LABEL JSON [ROUND LABEL JSON]... (first label: ours).
read -r -d '' summary <<'PY' || true
import collections, json, statistics, sys
name, precision, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
rounds = collections.defaultdict(dict)
order = []
for i in range(0, len(rest), 3):
    rounds[rest[i]][rest[i + 1]] = json.loads(rest[i + 2])["tokens_per_s"]
    if rest[i + 1] not in order:
        order.append(rest[i + 1])
ours, others = order[0], order[1:]
def median_ratio(versus):
    return statistics.median(rounds[r][ours] / versus(rounds[r]) for r in rounds)
for label in others:
    print(f"{name} {precision}: median ratio {ours} / {label} = "
          f"{median_ratio(lambda t: t[label]):.3f}")
if "eager" in others and "eager-compile" in others:
    print(f"{name} {precision}: median ratio {ours} / faster of eager, eager-compile = "
          f"{median_ratio(lambda t: max(t['eager'], t['eager-compile'])):.3f}")
PY

# --attention: one layer's self-attention, ours (fused and composition) against transformers'.
run_attention() {
  local name="$1"
  read -r layers hidden heads inter vocab batch seq mlm_prob default_steps warmup <<<"$(shape_args "$name")"
  local n="${steps:-20}"
  local ours=("$bench" --attention --json --config "$root/configs/deberta-v3-${name#deberta-}.yaml" --steps "$n"
    --warmup 5 --set model.hidden_size="$hidden" model.num_attention_heads="$heads" data.seq_len="$seq"
    train.micro_batch_size="$batch" train.precision="$precision" train.threads="$threads" train.device=cpu)
  local theirs=("$python" "$peers/deberta_attention_peer.py" --hidden "$hidden" --heads "$heads" --batch "$batch"
    --seq "$seq" --steps "$n" --warmup 5 --threads "$threads")
  [[ "$precision" == bf16 ]] && theirs+=(--bf16)
  echo "== $name attention.self: H=$hidden A=$heads B=$batch S=$seq $precision, $threads threads," \
       "5 warm-up + $n timed layer-steps, $rounds rounds (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  local r a b
  for ((r = 1; r <= rounds; r++)); do
    if ((r % 2)); then
      a="$(MLM_LOG_LEVEL=warn "${ours[@]}")"; b="$("${theirs[@]}")"
    else
      b="$("${theirs[@]}")"; a="$(MLM_LOG_LEVEL=warn "${ours[@]}")"
    fi
    "$python" - "$r" "$a" "$b" <<'PY'
import json, sys
r, ours, theirs = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
print(f"round {r}: ms per layer-step (forward)  mlm fused {ours['fused_ms']:.2f} ({ours['fused_forward_ms']:.2f})"
      f"  mlm composition {ours['composition_ms']:.2f} ({ours['composition_forward_ms']:.2f})"
      f"  transformers {theirs['ms']:.2f} ({theirs['forward_ms']:.2f})"
      f"  ratio transformers / fused {theirs['ms'] / ours['fused_ms']:.2f}"
      f"  composition / fused {ours['composition_ms'] / ours['fused_ms']:.2f}")
print(f"    mlm-bench: {json.dumps(ours)}")
print(f"    peer: {json.dumps(theirs)}")
PY
  done
}

run_shape() {
  local name="$1"
  read -r layers hidden heads inter vocab batch seq mlm_prob default_steps warmup <<<"$(shape_args "$name")"
  local n="${steps:-$default_steps}"
  local run=(train.precision="$precision" train.threads="$threads" train.device=cpu)
  # --pipeline keeps the sample tokenizer's vocabulary (model.vocab_size 0), which --data needs.
  local our_vocab="$vocab"
  ((pipeline)) && our_vocab=0
  local ours
  if [[ "$name" == deberta-* ]]; then
    # The DeBERTa-v3 options are the config's (configs/deberta-v3-small.yaml, -base.yaml); the
    # shape is given again so both sides surely run the same one. DeBERTa-v3's objective: RTD
    # with GDES, the generator the config's default (as wide, half as deep).
    ours=("$bench" --config "$root/configs/deberta-v3-${name#deberta-}.yaml" --json --steps "$n" --warmup "$warmup"
      --set model.num_hidden_layers="$layers" model.hidden_size="$hidden"
      model.num_attention_heads="$heads" model.intermediate_size="$inter"
      model.vocab_size="$vocab" model.objective=rtd model.embedding_sharing=gdes model.rtd_weight=50
      model.rtd_temperature=1.0 data.seq_len="$seq" train.micro_batch_size="$batch"
      train.grad_accum_steps=1 masking.mlm_probability="$mlm_prob" "${run[@]}")
  elif [[ "$name" == modernbert-* ]]; then
    # The architecture and the rest of the model (RoPE, local/global layers, no biases) are the
    # config's; the shape is given again so both sides surely run the same one.
    ours=("$bench" --config "$root/configs/modernbert-base.yaml" --json --steps "$n" --warmup "$warmup"
      --set model.num_hidden_layers="$layers" model.hidden_size="$hidden"
      model.num_attention_heads="$heads" model.intermediate_size="$inter"
      model.vocab_size="$vocab" data.seq_len="$seq" train.micro_batch_size="$batch"
      train.grad_accum_steps=1 masking.mlm_probability="$mlm_prob" "${run[@]}")
  else
    ours=("$bench" --config "$root/configs/mini.yaml" --json --steps "$n" --warmup "$warmup"
      --set model.num_hidden_layers="$layers" model.hidden_size="$hidden"
      model.num_attention_heads="$heads" model.intermediate_size="$inter"
      model.max_position_embeddings=512 model.vocab_size="$our_vocab" model.sparse_head=true
      train.micro_batch_size="$batch" data.seq_len="$seq" masking.mlm_probability="$mlm_prob"
      "${run[@]}")
  fi
  local electra=() about=""
  if [[ "$name" == electra-* ]]; then
    local embedding gen_hidden gen_heads gen_inter ratio
    read -r embedding gen_hidden gen_heads gen_inter ratio <<<"$(electra_args "$name")"
    ours+=(model.architecture=electra model.objective=rtd model.embedding_size="$embedding" model.generator_hidden_ratio="$ratio"
      model.generator_layers_ratio=1.0 model.rtd_weight=50 model.rtd_temperature=1.0
      model.embedding_sharing=shared masking.mask_replace_prob=0.85 masking.random_replace_prob=0)
    electra=(--embedding "$embedding" --gen-hidden "$gen_hidden" --gen-heads "$gen_heads"
      --gen-intermediate "$gen_inter" --gen-layers "$layers" --rtd-weight 50)
    about=" E=$embedding, generator H=$gen_hidden A=$gen_heads I=$gen_inter"
  elif [[ "$name" == deberta-* ]]; then
    about=" RTD+GDES, generator L=$((layers / 2))"
  fi
  local shape=(--layers "$layers" --hidden "$hidden" --heads "$heads" --intermediate "$inter"
    --vocab "$vocab" --batch "$batch" --seq "$seq" --steps "$n" --warmup "$warmup" --mlm-prob "$mlm_prob"
    --threads "$threads")
  [[ "$precision" == bf16 ]] && shape+=(--bf16)
  # The shared peak: measured once here, every side's MFU divides by its square rate.
  local peak peak_square peak_model
  peak="$(MLM_LOG_LEVEL=warn "${ours[@]}" --peak-only)"
  read -r peak_square peak_model < <("$python" -c \
    'import json, sys; j = json.loads(sys.argv[1]); print(j["square_gflops"], j["model_gflops"])' "$peak")
  ours+=(--peak-gflops "$peak_square")
  shape+=(--peak-gflops "$peak_square")
  # Sides: labels and commands (one array per side, named cmd_<index>); side 0 is "ours".
  local labels cmd_0 cmd_1 cmd_2 cmd_3
  if ((pipeline)); then  # "ours" is the real pipeline, the reference is synthetic ids
    labels=("mlm-bench --data" synthetic)
    cmd_0=("${ours[@]}" --data)
    cmd_1=("${ours[@]}")
  elif [[ "$name" == modernbert-* ]]; then  # no hand-written ModernBERT peer
    labels=(mlm-bench hf)
    cmd_0=("${ours[@]}")
    cmd_1=("$python" "$peers/hf_modernbert.py" "${shape[@]}")
  elif [[ "$name" == deberta-* ]]; then  # no other DeBERTa peer
    labels=(mlm-bench deberta)
    cmd_0=("${ours[@]}")
    cmd_1=("$python" "$peers/deberta_peer.py" "${shape[@]}" --gen-layers "$((layers / 2))" --rtd-weight 50)
  elif [[ "$name" == electra-* ]]; then  # no other ELECTRA peer
    labels=(mlm-bench electra)
    cmd_0=("${ours[@]}")
    cmd_1=("$python" "$peers/electra_peer.py" "${shape[@]}" "${electra[@]}")
  else
    labels=(mlm-bench hf eager eager-compile)
    cmd_0=("${ours[@]}")
    cmd_1=("$python" "$peers/hf_bert.py" "${shape[@]}")
    cmd_2=("$python" "$peers/eager_bert.py" "${shape[@]}")
    cmd_3=("$python" "$peers/eager_bert.py" "${shape[@]}" --compile)
  fi
  local count=${#labels[@]}

  echo "== $name: L=$layers H=$hidden A=$heads I=$inter V=$our_vocab B=$batch S=$seq p=$mlm_prob$about" \
       "$precision, $threads threads, $warmup warm-up + $n timed steps, $rounds rounds" \
       "(load: $(cut -d' ' -f1-3 /proc/loadavg))"
  printf '   peak (shared, mlm-bench --peak-only, %s, %s threads): square %.1f GFLOP/s, model shapes %.1f GFLOP/s\n' \
    "$precision" "$threads" "$peak_square" "$peak_model"
  local records=()
  for ((r = 1; r <= rounds; r++)); do
    # Rotate who goes first, so a drift in the machine's load hits every side alike.
    local results=() k i
    for ((k = 0; k < count; k++)); do
      i=$(((r - 1 + k) % count))
      local -n cmd="cmd_$i"
      results[i]="$(MLM_LOG_LEVEL=warn "${cmd[@]}")"
      unset -n cmd
    done
    local args=()
    for ((i = 0; i < count; i++)); do
      args+=("${labels[i]}" "${results[i]}")
      records+=("$r" "${labels[i]}" "${results[i]}")
    done
    PEAK_MODEL="$peak_model" "$python" -c "$round_report" "$r" "${args[@]}"
  done
  "$python" -c "$summary" "$name" "$precision" "${records[@]}"
  printf '%s %s: MFU against the shared peak: square %.1f GFLOP/s, model shapes %.1f GFLOP/s\n' \
    "$name" "$precision" "$peak_square" "$peak_model"
}

case "$which_shapes" in
  mini) run_shape mini ;;
  base) run_shape base ;;
  modernbert) run_shape modernbert-128; run_shape modernbert-1024 ;;
  electra-small|electra-base) run_shape "$which_shapes" ;;
  electra) run_shape electra-small; run_shape electra-base ;;
  deberta-small|deberta-base) if ((attention)); then run_attention "$which_shapes"; else run_shape "$which_shapes"; fi ;;
  deberta) if ((attention)); then run_attention deberta-small; else run_shape deberta-small; run_shape deberta-base; fi ;;
  all) run_shape mini; run_shape base ;;
esac
