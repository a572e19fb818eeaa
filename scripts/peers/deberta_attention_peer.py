#!/usr/bin/env python3
"""transformers' DisentangledSelfAttention alone, timed as `mlm-bench --attention` times ours:
one layer's attention.self (the q, k, v projections, the relative projections of the shared
keys, c2p and p2c, the mask, softmax, dropout 0.1 and the context) forward and backward on
random hidden states [B,S,H] in training mode, the relative embeddings' LayerNorm each step
(transformers' encoder does it once per forward: get_rel_embedding), the relative positions and
the mask built once (as its encoder builds them once per forward for every layer), autocast
with --bf16. DeBERTa-v3's options (deberta_peer.v3_config). Prints one JSON line: milliseconds
per layer-step (forward + backward) and of the forward alone, means over --steps after
--warmup.

  .venv/bin/python scripts/peers/deberta_attention_peer.py --hidden 768 --heads 12 \\
      --batch 16 --seq 128 --steps 20 --warmup 5 --bf16
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import deberta_peer  # noqa: E402

import torch  # noqa: E402
from transformers.models.deberta_v2.modeling_deberta_v2 import DebertaV2Encoder  # noqa: E402


def main():
    a = common.parse_args("transformers' DisentangledSelfAttention forward + backward (one layer)")
    config = deberta_peer.v3_config(a, layers=1)
    config._attn_implementation = "eager"
    encoder = DebertaV2Encoder(config).to(a.device).train()
    attention = encoder.layer[0].attention.self
    x = torch.randn(a.batch, a.seq, a.hidden, device=a.device, requires_grad=True)
    upstream = torch.randn(a.batch, a.seq, a.hidden, device=a.device)
    mask = encoder.get_attention_mask(torch.ones(a.batch, a.seq, dtype=torch.long, device=a.device))
    relative_pos = encoder.get_rel_pos(x)
    amp = common.Amp(a)

    def layer_step():
        start = time.perf_counter()
        with amp.autocast():
            context, _ = attention(x, mask, relative_pos=relative_pos, rel_embeddings=encoder.get_rel_embedding())
        common.synchronize(a.device)
        forward = time.perf_counter() - start
        (context.float() * upstream).sum().backward()
        common.synchronize(a.device)
        total = time.perf_counter() - start
        x.grad = None
        encoder.zero_grad(set_to_none=True)
        return forward, total

    for _ in range(a.warmup):
        layer_step()
    forward = total = 0.0
    for _ in range(a.steps):
        f, t = layer_step()
        forward, total = forward + f, total + t
    print(json.dumps({"peer": "transformers DisentangledSelfAttention",
                      "ms": round(1e3 * total / a.steps, 3), "forward_ms": round(1e3 * forward / a.steps, 3),
                      "batch": a.batch, "seq_len": a.seq, "hidden": a.hidden, "heads": a.heads,
                      "precision": "bf16" if a.bf16 else "fp16" if a.fp16 else "fp32",
                      "threads": torch.get_num_threads()}), flush=True)


if __name__ == "__main__":
    main()
