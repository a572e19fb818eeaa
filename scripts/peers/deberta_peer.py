#!/usr/bin/env python3
"""DeBERTa-v3 peer: transformers' DebertaV2 modules trained on replaced-token detection with
gradient-disentangled embedding sharing (GDES) the way the community scripts do it (microsoft/
DeBERTa's apps/tasks/rtd_task.py, and the PyTorch DeBERTa-v3 pretraining scripts built on
transformers), one step being:
  the generator, a DebertaV2ForMaskedLM (transformers' default legacy head, tied to the word
  embeddings, scoring every position as transformers' head does; the MLM loss takes the masked
  ones), on the masked batch; a Gumbel-max sample from its logits at the masked positions
  (temperature 1, no gradient) written into the batch; the discriminator, a DebertaV2Model fed
  the generator's token vectors detached plus a zero-initialised delta of its own (GDES), with
  DeBERTa's RTD head (mask_predictions: LayerNorm(h + h[CLS]), dense, activation, a classifier
  to one logit per token); its targets say where a sample differs from the original token, and
  loss = mlm + rtd_weight * rtd (binary cross-entropy over the non-padding tokens).
The DeBERTa-v3 options (DebertaV2Config): relative attention in 256 log buckets up to 512
positions, pos_att_type p2c + c2p, the attention keys shared, the relative embeddings
layer-normed, no absolute positions, no token types, LayerNorm eps 1e-7, dropouts 0.1; masking
80% [MASK] / 10% random / 10% kept; autocast with --bf16 (or --fp16 and a GradScaler on --device
cuda), torch.optim.AdamW(fused=True) over both networks, no weight decay on biases and LayerNorm,
gradient clipping at 1.0.

Attention: transformers offers no SDPA path for DebertaV2 (its disentangled attention builds the
c2p / p2c scores itself); the peer asks for "sdpa", gets the ValueError transformers raises for
it, and runs "eager", which its JSON line reports as attn_implementation.

GDES: DeBERTa's rtd_task.py writes generator.weight.detach() + delta over the discriminator's
whole table before each step; the peer looks up the two tables at the batch's ids and adds the
rows (the same vectors and gradients, without a pass over the 128k x H table every step).

--hidden, --layers, --heads and --intermediate give the discriminator; the generator defaults to
DeBERTa-v3's: as wide, with the same heads and intermediate size, half as deep.

Prints one JSON line (scripts/peers/common.py). Run with the project venv, e.g. at
deberta-v3-small:
  .venv/bin/python scripts/peers/deberta_peer.py --layers 6 --hidden 768 --heads 12 \\
      --intermediate 3072 --vocab 128100 --batch 16 --bf16
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from transformers import DebertaV2Config, DebertaV2ForMaskedLM, DebertaV2Model  # noqa: E402

PAD_ID, MASK_ID = 0, 4  # [PAD] [UNK] [CLS] [SEP] [MASK] first, as in mlm-bench's synthetic vocabulary
MASK_REPLACE_PROB, RANDOM_REPLACE_PROB = 0.8, 0.1  # of the masked positions; the rest keep their token
POSITION_BUCKETS, MAX_POSITIONS = 256, 512


def add_arguments(ap):
    ap.add_argument("--gen-layers", type=int, default=0, help="generator layers, 0 = --layers / 2")
    ap.add_argument("--rtd-weight", type=float, default=50.0,
                    help="the discriminator loss's weight (mlm-train's model.rtd_weight default)")


def v3_config(a, layers):
    """DeBERTa-v3's options (microsoft/deberta-v3-*'s config.json) at the run's shape."""
    return DebertaV2Config(
        vocab_size=a.vocab, hidden_size=a.hidden, num_hidden_layers=layers,
        num_attention_heads=a.heads, intermediate_size=a.intermediate, hidden_act="gelu",
        hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
        max_position_embeddings=MAX_POSITIONS, type_vocab_size=0, layer_norm_eps=1e-7,
        relative_attention=True, position_buckets=POSITION_BUCKETS, max_relative_positions=-1,
        pos_att_type=["p2c", "c2p"], share_att_key=True, norm_rel_ebd="layer_norm",
        position_biased_input=False, pad_token_id=PAD_ID)


def build(cls, config):
    """cls(config) with SDPA where transformers offers it for the class, else eager."""
    try:
        return cls._from_config(config, attn_implementation="sdpa")
    except ValueError:  # "... does not support an attention implementation through sdpa yet"
        return cls._from_config(config, attn_implementation="eager")


class RtdHead(torch.nn.Module):
    """DeBERTa's mask_predictions (the hub's deberta-v3 checkpoints hold it; transformers has no
    class for it): every token's state next to the first token's, LayerNorm, dense H -> H,
    GELU, classifier H -> 1."""

    def __init__(self, hidden, eps):
        super().__init__()
        self.dense = torch.nn.Linear(hidden, hidden)
        self.LayerNorm = torch.nn.LayerNorm(hidden, eps=eps)
        self.classifier = torch.nn.Linear(hidden, 1)
        for linear in (self.dense, self.classifier):  # transformers' init for DeBERTa modules
            torch.nn.init.normal_(linear.weight, std=0.02)
            torch.nn.init.zeros_(linear.bias)

    def forward(self, hidden):
        states = self.LayerNorm(hidden + hidden[:, :1])
        return self.classifier(F.gelu(self.dense(states))).squeeze(-1)


def forward_flops_per_token(a):
    """Both networks' forward FLOPs per token, counted as mlm-bench counts DeBERTa's: per layer
    BERT's 4H^2 + 2HI + 2SH products plus, for each of c2p and p2c, every query against the 2k
    = 512 relative embeddings (2kH; their projection is shared over the batch, not counted);
    the generator's head at every position (H^2, then H x V) and the discriminator's (H^2 + H)."""
    H, I, S, V = a.hidden, a.intermediate, a.seq, a.vocab
    per_layer = 2 * (4 * H * H + 2 * H * I + 2 * S * H + 2 * (2 * POSITION_BUCKETS) * H)
    return (a.gen_layers + a.layers) * per_layer + 2 * (H * H + H * V) + 2 * (H * H + H)


def main():
    a = common.parse_args("DeBERTa-v3 (transformers' DebertaV2 generator and discriminator, RTD "
                          "with GDES) training steps (synthetic ids)", add_arguments)
    a.gen_layers = a.gen_layers or max(1, round(a.layers / 2))
    generator = build(DebertaV2ForMaskedLM, v3_config(a, a.gen_layers))
    discriminator = build(DebertaV2Model, v3_config(a, a.layers))
    attn = discriminator.config._attn_implementation
    # GDES: the discriminator reads the generator's table (detached) plus its delta; its own
    # table would never be read, so it is not trained either.
    discriminator.embeddings.word_embeddings = None
    delta = torch.nn.Embedding(a.vocab, a.hidden, padding_idx=PAD_ID)
    torch.nn.init.zeros_(delta.weight)
    mask_predictions = RtdHead(a.hidden, 1e-7)
    # One module, so that every parameter is counted, decayed and clipped once.
    pair = torch.nn.ModuleDict({"generator": generator, "discriminator": discriminator,
                                "word_embeddings_delta": delta, "mask_predictions": mask_predictions})
    pair.to(a.device).train()
    opt = torch.optim.AdamW(common.adamw_param_groups(pair, 0.01), lr=1e-4, fused=True)
    tables = generator.deberta.embeddings.word_embeddings

    def prepare(ids, labels):  # the collator's work: 80% [MASK], 10% random, 10% kept
        selected = labels.ne(-100)
        draw = torch.rand(ids.shape, device=ids.device)
        randoms = torch.randint(5, a.vocab, ids.shape, device=ids.device)
        masked = torch.where(selected & (draw < MASK_REPLACE_PROB), MASK_ID, ids)
        masked = torch.where(selected & (draw >= MASK_REPLACE_PROB)
                             & (draw < MASK_REPLACE_PROB + RANDOM_REPLACE_PROB), randoms, masked)
        return masked, selected, ids[selected]

    batches = common.synthetic_batches(a, prepare)
    padding = torch.ones(a.batch, a.seq, dtype=torch.long, device=a.device)  # no padding
    tokens = padding.bool()
    amp = common.Amp(a)

    def step():
        masked, selected, targets = next(batches)
        with amp.autocast():
            logits = generator(input_ids=masked, attention_mask=padding).logits
            mlm_logits = logits[selected]
            corrupted, replaced = common.sample_replacements(masked, selected, mlm_logits, targets)
            words = F.embedding(corrupted, tables.weight.detach()) + delta(corrupted)
            hidden = discriminator(inputs_embeds=words, attention_mask=padding).last_hidden_state
            rtd_logits = mask_predictions(hidden)
        loss = common.rtd_loss(mlm_logits, targets, rtd_logits, replaced, tokens, a.rtd_weight)
        amp.update(loss, opt, pair.parameters())
        return loss.item()

    step_s, loss = common.time_steps(step, a.steps, a.warmup, a.profile, a.device)
    common.report("deberta", a, step_s, loss, common.count_params(pair), None,
                  forward_flops=forward_flops_per_token(a), attn_implementation=attn)


if __name__ == "__main__":
    main()
