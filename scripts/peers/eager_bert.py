#!/usr/bin/env python3
"""Hand-written eager PyTorch peer: the fastest BERT MLM training step this file knows how to
write with PyTorch 2.x, at the same model and work as mlm-bench:
  post-LN BERT: word + position + token-type embeddings, LayerNorm eps 1e-12, dropout 0.1 on
  hidden states and attention probabilities, one fused QKV product per layer,
  F.scaled_dot_product_attention, exact GELU, MLM head (dense, GELU, LayerNorm, decoder tied to
  the word embeddings with its own bias).
  Sparse head: only the masked positions are scored; nothing reads the other positions' last
  hidden states, so the last layer runs its queries, output projection and feed-forward block
  on the masked positions only (padded per row to the row with the most), keys and values on
  every position.
  torch.optim.AdamW(fused=True), lr 1e-4, weight decay 0.01 except biases and LayerNorm,
  gradient clipping at 1.0, autocast with --bf16 (or --fp16 and a GradScaler on --device
  cuda), glibc malloc told to keep freed memory (as mlm-bench does; --malloc-default leaves it
  alone).
  --compile: the loss computation (model + head + cross-entropy) under torch.compile; the
  first step compiles and is reported as compile_s, then one warm-up step, then the timed ones.

Prints one JSON line (scripts/peers/common.py). Run with the project venv:
  .venv/bin/python scripts/peers/eager_bert.py --layers 4 --hidden 256 --heads 4 --batch 32 --compile
"""
import ctypes
import ctypes.util
import logging
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

DROPOUT = 0.1        # BERT's hidden_dropout_prob and attention_probs_dropout_prob
LN_EPS = 1e-12


class Layer(nn.Module):
    def __init__(self, H, A, I):
        super().__init__()
        self.heads = A
        self.qkv = nn.Linear(H, 3 * H)
        self.attn_out = nn.Linear(H, H)
        self.attn_ln = nn.LayerNorm(H, eps=LN_EPS)
        self.inter = nn.Linear(H, I)
        self.out = nn.Linear(I, H)
        self.out_ln = nn.LayerNorm(H, eps=LN_EPS)

    def forward(self, x, positions=None):
        """x [B,S,H] -> [B,S,H]; with positions [B,R], the outputs at those positions [B,R,H]."""
        B, S, H = x.shape
        A, D = self.heads, H // self.heads
        if positions is None:
            x_at, R = x, S
            q, k, v = self.qkv(x).view(B, S, 3, A, D).permute(2, 0, 3, 1, 4).unbind(0)
        else:
            R = positions.size(1)
            x_at = x.gather(1, positions.unsqueeze(-1).expand(B, R, H))
            w, b = self.qkv.weight, self.qkv.bias
            q = F.linear(x_at, w[:H], b[:H]).view(B, R, A, D).transpose(1, 2)
            k, v = F.linear(x, w[H:], b[H:]).view(B, S, 2, A, D).permute(2, 0, 3, 1, 4).unbind(0)
        p = DROPOUT if self.training else 0.0
        ctx = F.scaled_dot_product_attention(q, k, v, dropout_p=p)
        ctx = ctx.transpose(1, 2).reshape(B, R, H)
        h = self.attn_ln(x_at + F.dropout(self.attn_out(ctx), DROPOUT, self.training))
        f = self.out(F.gelu(self.inter(h)))
        return self.out_ln(h + F.dropout(f, DROPOUT, self.training))


class BertMlm(nn.Module):
    def __init__(self, V, H, L, A, I, P):
        super().__init__()
        self.word, self.pos = nn.Embedding(V, H), nn.Embedding(P, H)
        self.token_type = nn.Embedding(2, H)
        self.emb_ln = nn.LayerNorm(H, eps=LN_EPS)
        self.layers = nn.ModuleList(Layer(H, A, I) for _ in range(L))
        self.head_dense = nn.Linear(H, H)
        self.head_ln = nn.LayerNorm(H, eps=LN_EPS)
        self.head_bias = nn.Parameter(torch.zeros(V))
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)

    def forward(self, ids, positions, rows, targets):
        """ids [B,S] (no padding, token type 0); positions [B,R]: the masked positions of each
        row, padded; rows [N]: the real ones in [B*R]; targets [N]. Returns the mean MLM loss."""
        S = ids.size(1)
        x = self.word(ids) + self.pos.weight[:S] + self.token_type.weight[0]
        x = F.dropout(self.emb_ln(x), DROPOUT, self.training)
        for layer in self.layers[:-1]:
            x = layer(x)
        x = self.layers[-1](x, positions)                      # [B,R,H]
        h = x.reshape(-1, x.size(-1)).index_select(0, rows)    # [N,H]
        h = self.head_ln(F.gelu(self.head_dense(h)))
        logits = F.linear(h, self.word.weight, self.head_bias)
        return F.cross_entropy(logits.float(), targets)


class Loss(nn.Module):
    """The loss computation, autocast included: what --compile hands to torch.compile."""

    def __init__(self, model, amp):
        super().__init__()
        self.model, self.amp = model, amp

    def forward(self, ids, positions, rows, targets):
        with self.amp.autocast():
            return self.model(ids, positions, rows, targets)


def select(labels):
    """Masked positions of labels [B,S] (-100 = not masked) as positions [B,R] (row-padded with
    position 0), rows [N] (their slots in [B*R]) and targets [N]."""
    B, S = labels.shape
    flat = labels.reshape(-1).ne(-100).nonzero().squeeze(1)
    row = flat.div(S, rounding_mode="floor")
    counts = torch.bincount(row, minlength=B)
    width = max(1, int(counts.max()))
    starts = (counts.cumsum(0) - counts).index_select(0, row)
    slot = torch.arange(flat.numel(), device=labels.device) - starts
    positions = torch.zeros(B, width, dtype=torch.long, device=labels.device)
    positions[row, slot] = flat - row * S
    return positions, row * width + slot, labels.reshape(-1).index_select(0, flat)


def keep_freed_memory():
    """glibc malloc: large blocks from the heap instead of mmap, and no trimming, so the step's
    big temporaries are reused instead of page-faulted in again every step."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4
    libc.mallopt(M_MMAP_MAX, 0)
    libc.mallopt(M_TRIM_THRESHOLD, 2 ** 31 - 1)


def main():
    def extra(ap):
        ap.add_argument("--compile", action="store_true",
                        help="torch.compile the loss computation (compile time: compile_s)")
        ap.add_argument("--malloc-default", action="store_true",
                        help="leave glibc malloc's defaults (mmap and trimming) alone")

    a = common.parse_args("Hand-written eager PyTorch BERT MLM training steps (synthetic ids)",
                          extra)
    if not a.malloc_default:
        keep_freed_memory()
    model = BertMlm(a.vocab, a.hidden, a.layers, a.heads, a.intermediate, max(512, a.seq))
    model.to(a.device).train()
    opt = torch.optim.AdamW(common.adamw_param_groups(model, 0.01), lr=1e-4, fused=True)
    batches = common.synthetic_batches(a)
    amp = common.Amp(a)
    loss_fn = Loss(model, amp)
    if a.compile:
        # Its C++ build of the kernels warns when a CUDA toolkit is installed but no GPU runtime.
        logging.getLogger("torch.utils.cpp_extension").setLevel(logging.ERROR)
        loss_fn = torch.compile(loss_fn)
    params = list(model.parameters())

    def step():
        ids, labels = next(batches)
        positions, rows, targets = select(labels)  # data preparation, outside the compiled part
        loss = loss_fn(ids, positions, rows, targets)
        amp.update(loss, opt, params)
        return loss.item()

    extra_fields = {}
    if a.compile:
        _, compile_s = common.timed(step)  # compiles forward and backward
        extra_fields["compile_s"] = round(compile_s, 2)
    step_s, loss = common.time_steps(step, a.steps, a.warmup, a.profile, a.device)
    common.report("eager-compile" if a.compile else "eager", a, step_s, loss,
                  common.count_params(model), a.mlm_prob, **extra_fields)


if __name__ == "__main__":
    main()
