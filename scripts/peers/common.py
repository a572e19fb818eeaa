"""Shared by the PyTorch peers of scripts/bench_vs_pytorch.sh (hf_bert.py, eager_bert.py,
hf_modernbert.py, electra_peer.py): command line, synthetic batch, AdamW parameter groups, the
transformers Trainer's step, timing loop, peak GEMM rate, FLOP count and the one JSON line each
peer prints.

The JSON line: peer, tokens_per_s, step_s, params, loss, peak_gflops, mfu (and what a peer adds,
e.g. compile_s). MFU = tokens_per_s * 3 * forward FLOPs per token / peak, with
forward = 2L(4H^2 + 2HI) + 4LSH + 2p(H^2 + HV): p is the MLM probability for a head that scores
the masked positions only, 1 for a dense head that scores every position. ModernBERT's GeGLU
feed-forward block has Wi of H x 2I, so its 2HI becomes 3HI; its sliding-window layers are
counted at the full S as well (what a dense kernel under a window mask, SDPA's included, computes;
a windowed kernel would do about min(S, window + 1) / S of that term). ELECTRA's peer counts
its two models itself (electra_peer.forward_flops_per_token). The peak is the best of a few
2048^3 products in the run's dtype, measured in the same process.
"""
import argparse
import contextlib
import itertools
import json
import os
import time

import torch


def parse_args(description, add_arguments=None):
    """The flags every peer shares; add_arguments(parser) adds a peer's own."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--vocab", type=int, default=30522)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--intermediate", type=int, default=0, help="0 = 4 * hidden")
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=5, help="timed steps, after the warm-up steps")
    ap.add_argument("--warmup", type=int, default=1, help="untimed steps first")
    ap.add_argument("--mlm-prob", type=float, default=0.15)
    ap.add_argument("--bf16", action="store_true", help="bf16 autocast (default fp32)")
    ap.add_argument("--threads", type=int, default=0, help="0 = every CPU this process may use")
    ap.add_argument("--profile", metavar="TRACE",
                    help="record the timed steps with torch.profiler into this Chrome trace "
                         "(per-operator self times: scripts/profile_ops.py)")
    if add_arguments:
        add_arguments(ap)
    a = ap.parse_args()
    a.intermediate = a.intermediate or 4 * a.hidden
    if a.hidden % a.heads:
        ap.error(f"--hidden {a.hidden} is not a multiple of --heads {a.heads}")
    if a.steps < 1 or a.batch < 1 or a.seq < 1 or not 0.0 < a.mlm_prob <= 1.0:
        ap.error("--steps, --batch and --seq must be positive, --mlm-prob in (0, 1]")
    torch.set_num_threads(a.threads or len(os.sched_getaffinity(0)))
    torch.manual_seed(0)
    return a


# Distinct synthetic batches a peer cycles through, as many as mlm-bench's ring: the masked
# count, and with it the shapes of a sparse head's products, changes from step to step as in
# training, and a warm-up of RING steps has met every shape the timed steps meet (oneDNN builds
# its primitives per shape; a long run has met every masked count it will meet).
RING = 8


def synthetic_batch(a):
    """Padding-free ids [B,S] (above the first special ids) and MLM labels: the id itself at
    about mlm_prob of the positions (at least one), -100 elsewhere."""
    ids = torch.randint(5, a.vocab, (a.batch, a.seq))
    masked = torch.rand(a.batch, a.seq) < a.mlm_prob
    masked.view(-1)[0] = True
    labels = torch.where(masked, ids, torch.full_like(ids, -100))
    return ids, labels


def synthetic_batches(a, prepare=lambda ids, labels: (ids, labels)):
    """An endless cycle over RING synthetic batches, each passed through prepare(ids, labels)
    once up front (so the timed steps do not draw them)."""
    return itertools.cycle([prepare(*synthetic_batch(a)) for _ in range(RING)])


def adamw_param_groups(model, weight_decay=0.01):
    """Decay on every parameter but biases and LayerNorm parameters (the Hugging Face Trainer's
    rule: no decay inside nn.LayerNorm modules or for names with 'bias' / 'layernorm')."""
    in_norm = {id(p) for m in model.modules() if isinstance(m, torch.nn.LayerNorm)
               for p in m.parameters(recurse=False)}
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        lowered = name.lower()
        if id(p) in in_norm or "bias" in lowered or "layernorm" in lowered:
            no_decay.append(p)
        else:
            decay.append(p)
    return [{"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0}]


def trainer_step(model, batches, bf16):
    """One step of a transformers model the way the Trainer takes it: the next of `batches` (labels included)
    to the model, bf16 CPU autocast when asked, backward, clipping at 1.0, the Trainer's default
    optimizer for torch >= 2.8 ("adamw_torch_fused": AdamW at its defaults, no decay on biases
    and LayerNorm). Returns step(), which gives the loss as a float."""
    model.train()
    opt = torch.optim.AdamW(adamw_param_groups(model, 0.01), lr=1e-4, betas=(0.9, 0.999), eps=1e-8,
                            fused=True)
    autocast = (lambda: torch.autocast("cpu", dtype=torch.bfloat16)) if bf16 else contextlib.nullcontext

    def step():
        with autocast():
            loss = model(**next(batches)).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss.item()
    return step


def count_params(model):
    return sum(p.numel() for p in model.parameters())  # tied weights are yielded once


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def time_steps(step, steps, warmup=1, profile=None):
    """Runs `warmup` untimed steps, then `steps` timed ones; step() returns the loss as a float.
    With a `profile` path, the timed steps run under torch.profiler (CPU operators, shapes) and
    its Chrome trace is saved there. Returns (seconds per timed step, last loss)."""
    for _ in range(warmup):
        step()
    recording = (torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                        record_shapes=True)
                 if profile else contextlib.nullcontext())
    with recording:
        t = time.perf_counter()
        for _ in range(steps):
            loss = step()
        elapsed = time.perf_counter() - t
    if profile:
        recording.export_chrome_trace(profile)
    return elapsed / steps, loss


def peak_gflops(dtype, n=2048, reps=5):
    """Best GFLOP/s of a few n^3 products in dtype on this process's threads. The first product
    is a warm-up unless it is slow (over a second: a scalar fallback, such as bf16 without
    AVX512-BF16, where one product can take a minute), then it is the only one."""
    a, b = torch.randn(n, n).to(dtype), torch.randn(n, n).to(dtype)
    t = time.perf_counter()
    torch.mm(a, b)
    first = time.perf_counter() - t
    if first > 1.0:
        return 2 * n ** 3 / first / 1e9
    best = 0.0
    for _ in range(reps):
        t = time.perf_counter()
        torch.mm(a, b)
        best = max(best, 2 * n ** 3 / (time.perf_counter() - t) / 1e9)
    return best


def forward_flops_per_token(L, H, I, S, V, p, glu=False):
    """glu: a gated feed-forward block (ModernBERT's GeGLU), input projection H x 2I."""
    ffn = 3 if glu else 2
    return 2 * L * (4 * H * H + ffn * H * I) + 4 * L * S * H + 2 * p * (H * H + H * V)


def report(peer, a, step_s, loss, params, head_fraction, glu=False, forward_flops=None, **extra):
    """Prints the JSON line; head_fraction is p of the FLOP formula (mlm_prob or 1), glu as in
    forward_flops_per_token; forward_flops, the forward FLOPs per token, replaces that formula
    for a peer whose model it does not describe."""
    tokens_per_s = a.batch * a.seq / step_s
    peak = peak_gflops(torch.bfloat16 if a.bf16 else torch.float32)
    if forward_flops is None:
        forward_flops = forward_flops_per_token(a.layers, a.hidden, a.intermediate, a.seq, a.vocab,
                                                head_fraction, glu)
    flops = 3 * forward_flops
    out = {"peer": peer, "tokens_per_s": round(tokens_per_s, 1), "step_s": round(step_s, 4),
           "params": params, "loss": round(loss, 4), "peak_gflops": round(peak, 1),
           "mfu": round(tokens_per_s * flops / (peak * 1e9), 4)}
    out.update(extra)
    print(json.dumps(out), flush=True)
