#!/usr/bin/env python3
"""Hugging Face peer for ModernBERT: transformers.ModernBertForMaskedLM trained the way a
transformers user (or the Trainer) does it: ModernBertConfig with the shape and ModernBERT's
defaults otherwise (RoPE, GeGLU, pre-norm without biases, a global attention layer every 3,
sliding-window attention of 128 in the others, dropouts 0), SDPA attention, the labels passed to
the model (sparse_prediction off, its default: the head scores every position, the loss ignores
label -100), the batch DataCollatorForLanguageModeling gives (no token types), masking
probability 0.30 as ModernBERT trains unless --mlm-prob says otherwise, autocast with --bf16
(or --fp16 and a GradScaler on --device cuda), the Trainer's default optimizer for torch >= 2.8
(AdamW, fused), no weight decay on biases and LayerNorm, gradient clipping at 1.0.

Prints one JSON line (scripts/peers/common.py). Run with the project venv, e.g. at the published
modernbert-base shape:
  .venv/bin/python scripts/peers/hf_modernbert.py --layers 22 --hidden 768 --heads 12 \
      --intermediate 1152 --vocab 50368 --seq 1024 --batch 2
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

import torch  # noqa: E402
from transformers import ModernBertConfig, ModernBertForMaskedLM  # noqa: E402

# ModernBERT's special ids (its tokenizer's); a smaller test vocabulary takes ids below 5, which
# the synthetic batch never draws.
MODERNBERT_SPECIALS = {"pad_token_id": 50283, "bos_token_id": 50281, "eos_token_id": 50282,
                       "cls_token_id": 50281, "sep_token_id": 50282}
LOW_SPECIALS = {"pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2, "cls_token_id": 1, "sep_token_id": 2}


def main():
    a = common.parse_args("Hugging Face ModernBertForMaskedLM training steps (synthetic ids)",
                          lambda ap: ap.set_defaults(mlm_prob=0.3))
    specials = MODERNBERT_SPECIALS if a.vocab > max(MODERNBERT_SPECIALS.values()) else LOW_SPECIALS
    config = ModernBertConfig(vocab_size=a.vocab, hidden_size=a.hidden, num_hidden_layers=a.layers,
                              num_attention_heads=a.heads, intermediate_size=a.intermediate,
                              max_position_embeddings=max(8192, a.seq), attn_implementation="sdpa",
                              **specials)
    model = ModernBertForMaskedLM(config)
    assert model.config._attn_implementation == "sdpa", model.config._attn_implementation
    # What DataCollatorForLanguageModeling hands the model for an unpadded batch of a tokenizer
    # without token types (ModernBERT's).
    batches = common.synthetic_batches(a, lambda ids, labels: {
        "input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": labels})
    step_s, loss = common.time_steps(common.trainer_step(model, batches, a), a.steps, a.warmup,
                                     a.profile, a.device)
    common.report("hf", a, step_s, loss, common.count_params(model), 1.0, glu=True)


if __name__ == "__main__":
    main()
