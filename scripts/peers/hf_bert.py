#!/usr/bin/env python3
"""Hugging Face peer: transformers.BertForMaskedLM trained the way a transformers user (or the
Trainer) does it: BertConfig with the shape, SDPA attention, BERT's dropout 0.1, the labels
passed to the model (its head scores every position, the loss ignores label -100), autocast
with --bf16 (or --fp16 and a GradScaler on --device cuda), the Trainer's default optimizer for
torch >= 2.8 (AdamW, fused), no weight decay on biases and LayerNorm, gradient clipping at 1.0.

Prints one JSON line (scripts/peers/common.py). Run with the project venv:
  .venv/bin/python scripts/peers/hf_bert.py --layers 4 --hidden 256 --heads 4 --batch 32 --bf16
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

import torch  # noqa: E402
from transformers import BertConfig, BertForMaskedLM  # noqa: E402


def main():
    a = common.parse_args("Hugging Face BertForMaskedLM training steps (synthetic ids)")
    config = BertConfig(vocab_size=a.vocab, hidden_size=a.hidden, num_hidden_layers=a.layers,
                        num_attention_heads=a.heads, intermediate_size=a.intermediate,
                        max_position_embeddings=max(512, a.seq), hidden_dropout_prob=0.1,
                        attention_probs_dropout_prob=0.1, attn_implementation="sdpa")
    model = BertForMaskedLM(config)
    assert model.config._attn_implementation == "sdpa", model.config._attn_implementation
    # What DataCollatorForLanguageModeling hands the model for an unpadded batch.
    batches = common.synthetic_batches(a, lambda ids, labels: {
        "input_ids": ids, "attention_mask": torch.ones_like(ids),
        "token_type_ids": torch.zeros_like(ids), "labels": labels})
    step_s, loss = common.time_steps(common.trainer_step(model, batches, a), a.steps, a.warmup,
                                     a.profile, a.device)
    common.report("hf", a, step_s, loss, common.count_params(model), 1.0)


if __name__ == "__main__":
    main()
