#!/usr/bin/env python3
"""ELECTRA peer: transformers' ElectraForMaskedLM (the generator) and ElectraForPreTraining (the
discriminator) trained on replaced-token detection the way the community PyTorch ELECTRA scripts
do it (richarddwang/electra_pytorch, lucidrains/electra-pytorch), one step being:
  the generator on the masked batch (its head scores every position, as transformers' does; the
  MLM loss takes the masked ones), a Gumbel-max sample from its logits at the masked positions
  (temperature 1, no gradient), those samples written into the batch for the discriminator, whose
  targets say where a sample differs from the original token, and
  loss = mlm + 50 * rtd (binary cross-entropy over the non-padding tokens).
  The two models share one embeddings module (word, position and token-type embeddings and their
  LayerNorm; the generator's head is tied to the word embeddings), ElectraConfig's defaults
  otherwise (dropouts 0.1), SDPA attention, masking 85% [MASK] / 15% kept (ELECTRA's: no random
  tokens), autocast with --bf16 (or --fp16 and a GradScaler on --device cuda),
  torch.optim.AdamW(fused=True) over both models, no weight decay on biases and LayerNorm,
  gradient clipping at 1.0.
--hidden, --layers, --heads and --intermediate give the discriminator; the generator defaults to
ELECTRA's (a quarter of the hidden size, as many layers, a head per 64 wide, intermediate 4x).

Prints one JSON line (scripts/peers/common.py). Run with the project venv, e.g. at electra-small:
  .venv/bin/python scripts/peers/electra_peer.py --layers 12 --hidden 256 --heads 4 \\
      --intermediate 1024 --embedding 128 --gen-hidden 64 --batch 32
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

import torch  # noqa: E402
from transformers import ElectraConfig, ElectraForMaskedLM, ElectraForPreTraining  # noqa: E402

MASK_ID = 4              # [PAD] [UNK] [CLS] [SEP] [MASK] first, as in mlm-bench's synthetic vocabulary
MASK_REPLACE_PROB = 0.85  # of the masked positions; the others keep their token


def add_arguments(ap):
    ap.add_argument("--embedding", type=int, default=0, help="embedding size, 0 = --hidden")
    ap.add_argument("--gen-hidden", type=int, default=0, help="generator hidden size, 0 = --hidden / 4")
    ap.add_argument("--gen-heads", type=int, default=0, help="0 = one per 64 of --gen-hidden, at least 1")
    ap.add_argument("--gen-intermediate", type=int, default=0, help="0 = 4 * --gen-hidden")
    ap.add_argument("--gen-layers", type=int, default=0, help="0 = --layers")
    ap.add_argument("--rtd-weight", type=float, default=50.0, help="the discriminator loss's weight")


def generator_shape(a):
    """Fills in the generator's defaults, ELECTRA's rule (its get_generator_config)."""
    a.embedding = a.embedding or a.hidden
    a.gen_hidden = a.gen_hidden or round(a.hidden / 4)
    a.gen_heads = a.gen_heads or max(1, a.gen_hidden // 64)
    a.gen_intermediate = a.gen_intermediate or 4 * a.gen_hidden
    a.gen_layers = a.gen_layers or a.layers
    if a.gen_hidden % a.gen_heads:
        raise SystemExit(f"--gen-hidden {a.gen_hidden} is not a multiple of --gen-heads {a.gen_heads}")


def forward_flops_per_token(a):
    """Both models' forward FLOPs per token: each encoder as common.forward_flops_per_token counts
    it (head left out), the embedding projections (E x H where E != H), the generator's head at
    every position (H_g x E, then E x V) and the discriminator's (H x H, then H x 1)."""
    S, V, E = a.seq, a.vocab, a.embedding
    encoders = (common.forward_flops_per_token(a.gen_layers, a.gen_hidden, a.gen_intermediate, S, V, 0)
                + common.forward_flops_per_token(a.layers, a.hidden, a.intermediate, S, V, 0))
    projections = sum(2 * E * h for h in (a.gen_hidden, a.hidden) if h != E)
    heads = 2 * (a.gen_hidden * E + E * V) + 2 * (a.hidden * a.hidden + a.hidden)
    return encoders + projections + heads


def main():
    a = common.parse_args("ELECTRA (transformers' generator and discriminator) training steps "
                          "(synthetic ids)", add_arguments)
    generator_shape(a)
    shared = {"vocab_size": a.vocab, "embedding_size": a.embedding,
              "max_position_embeddings": max(512, a.seq), "attn_implementation": "sdpa"}
    generator = ElectraForMaskedLM(ElectraConfig(
        hidden_size=a.gen_hidden, num_hidden_layers=a.gen_layers, num_attention_heads=a.gen_heads,
        intermediate_size=a.gen_intermediate, **shared))
    discriminator = ElectraForPreTraining(ElectraConfig(
        hidden_size=a.hidden, num_hidden_layers=a.layers, num_attention_heads=a.heads,
        intermediate_size=a.intermediate, **shared))
    discriminator.electra.embeddings = generator.electra.embeddings
    for model in (generator, discriminator):
        assert model.config._attn_implementation == "sdpa", model.config._attn_implementation
    # One module, so that shared tensors are counted, decayed and clipped once.
    pair = torch.nn.ModuleDict({"generator": generator, "discriminator": discriminator})
    pair.to(a.device).train()
    opt = torch.optim.AdamW(common.adamw_param_groups(pair, 0.01), lr=1e-4, fused=True)

    def prepare(ids, labels):  # the collator's work: [MASK] at 85% of the selected positions
        selected = labels.ne(-100)
        replace = torch.rand(ids.shape, device=ids.device) < MASK_REPLACE_PROB
        masked = ids.masked_fill(selected & replace, MASK_ID)
        return masked, selected, ids[selected]

    batches = common.synthetic_batches(a, prepare)
    # No padding in the synthetic batches.
    padding = torch.ones(a.batch, a.seq, dtype=torch.long, device=a.device)
    tokens = padding.bool()
    types = torch.zeros_like(padding)
    amp = common.Amp(a)

    def step():
        masked, selected, targets = next(batches)
        with amp.autocast():
            logits = generator(input_ids=masked, attention_mask=padding, token_type_ids=types).logits
            mlm_logits = logits[selected]
            corrupted, replaced = common.sample_replacements(masked, selected, mlm_logits, targets)
            rtd_logits = discriminator(input_ids=corrupted, attention_mask=padding,
                                       token_type_ids=types).logits
        loss = common.rtd_loss(mlm_logits, targets, rtd_logits, replaced, tokens, a.rtd_weight)
        amp.update(loss, opt, pair.parameters())
        return loss.item()

    step_s, loss = common.time_steps(step, a.steps, a.warmup, a.profile, a.device)
    common.report("electra", a, step_s, loss, common.count_params(pair), None,
                  forward_flops=forward_flops_per_token(a))


if __name__ == "__main__":
    main()
