"""Shared by the PyTorch peers of scripts/bench_vs_pytorch.sh (hf_bert.py, eager_bert.py,
hf_modernbert.py, electra_peer.py): command line, synthetic batch, AdamW parameter groups, the
transformers Trainer's step, timing loop, peak GEMM rate, FLOP count and the one JSON line each
peer prints.

The JSON line: peer, tokens_per_s, step_s, params, loss, peak_gflops, peak_source, mfu,
model_gflops_per_s (and what a peer adds, e.g. compile_s). MFU = tokens_per_s * 3 * forward FLOPs per token / peak, with
forward = 2L(4H^2 + 2HI) + 4LSH + 2p(H^2 + HV): p is the MLM probability for a head that scores
the masked positions only, 1 for a dense head that scores every position. ModernBERT's GeGLU
feed-forward block has Wi of H x 2I, so its 2HI becomes 3HI; its sliding-window layers are
counted at the full S as well (what a dense kernel under a window mask, SDPA's included, computes;
a windowed kernel would do about min(S, window + 1) / S of that term). ELECTRA's peer counts
its two models itself (electra_peer.forward_flops_per_token). The peak is --peak-gflops when
given (one measurement shared by every side: mlm-bench --peak-only's square_gflops, which
scripts/bench_vs_pytorch.sh and scripts/gpu_check.sh pass to mlm-bench and each peer), else
the best of a few products in the run's dtype on the run's device, measured in the same
process: 2048^3 on the CPU, 8192^3 on CUDA (mlm-bench's sizes). The JSON line's peak_source
says which: "shared" or "in-process".

--device cuda puts the model and the synthetic batches on the GPU and autocasts there (--bf16,
or --fp16 with a torch.amp.GradScaler, as the community scripts train fp16); the JSON line then
also has device, precision and peak_mem_mb (torch.cuda.max_memory_allocated over the steps).
On the CPU the line is what it always was.
"""
import argparse
import contextlib
import itertools
import json
import math
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
    precision = ap.add_mutually_exclusive_group()
    precision.add_argument("--bf16", action="store_true", help="bf16 autocast (default fp32)")
    precision.add_argument("--fp16", action="store_true",
                           help="fp16 autocast with a GradScaler (--device cuda)")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                    help="where the model, the batches and the peak GEMM run")
    ap.add_argument("--threads", type=int, default=0, help="0 = every CPU this process may use")
    ap.add_argument("--peak-gflops", type=float, metavar="X",
                    help="MFU against this peak in GFLOP/s, measured once for every side "
                         "(mlm-bench --peak-only); default: measured in this process")
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
    if a.device == "cuda" and not torch.cuda.is_available():
        ap.error("--device cuda: this torch sees no CUDA device")
    if a.peak_gflops is not None and not (math.isfinite(a.peak_gflops) and a.peak_gflops > 0):
        ap.error(f"--peak-gflops must be a positive GFLOP/s rate, got {a.peak_gflops}")
    if a.fp16 and a.device != "cuda":
        ap.error("--fp16 needs --device cuda (fp16 CPU products are a slow fallback)")
    torch.set_num_threads(a.threads or len(os.sched_getaffinity(0)))
    torch.manual_seed(0)
    return a


# Distinct synthetic batches a peer cycles through, as many as mlm-bench's ring: the masked
# count, and with it the shapes of a sparse head's products, changes from step to step as in
# training, and a warm-up of RING steps has met every shape the timed steps meet (oneDNN builds
# its primitives per shape; a long run has met every masked count it will meet).
RING = 8



def sample_replacements(masked, selected, mlm_logits, targets):
    """ELECTRA's corruption: Gumbel-max samples of the generator's softmax at the selected
    positions; returns the corrupted ids and where a sample differs from the original."""
    with torch.no_grad():  # argmax(logits + Gumbel noise) samples the softmax
        gumbel = -torch.empty_like(mlm_logits, dtype=torch.float32).exponential_().log()
        samples = (mlm_logits.float() + gumbel).argmax(-1)
        corrupted = masked.masked_scatter(selected, samples)
        replaced = torch.zeros_like(selected).masked_scatter(selected, samples.ne(targets))
    return corrupted, replaced


def rtd_loss(mlm_logits, targets, rtd_logits, replaced, tokens, rtd_weight):
    """The generator's cross-entropy plus rtd_weight x the discriminator's over non-padding tokens."""
    mlm = torch.nn.functional.cross_entropy(mlm_logits.float(), targets)
    rtd = torch.nn.functional.binary_cross_entropy_with_logits(rtd_logits.float()[tokens], replaced[tokens].float())
    return mlm + rtd_weight * rtd

def synthetic_batch(a):
    """Padding-free ids [B,S] (above the first special ids) and MLM labels: the id itself at
    about mlm_prob of the positions (at least one), -100 elsewhere."""
    ids = torch.randint(5, a.vocab, (a.batch, a.seq))
    masked = torch.rand(a.batch, a.seq) < a.mlm_prob
    masked.view(-1)[0] = True
    labels = torch.where(masked, ids, torch.full_like(ids, -100))
    return ids, labels


def synthetic_batches(a, prepare=lambda ids, labels: (ids, labels)):
    """An endless cycle over RING synthetic batches, drawn on the CPU (the same ids whatever the
    device), moved to a.device and passed through prepare(ids, labels) once up front (so the
    timed steps do not draw or copy them)."""
    return itertools.cycle([prepare(*(t.to(a.device) for t in synthetic_batch(a)))
                            for _ in range(RING)])


def autocast_dtype(a):
    """The autocast dtype of the run, None for fp32."""
    return torch.bfloat16 if a.bf16 else torch.float16 if a.fp16 else None


class Amp:
    """Mixed precision for a step on a.device: autocast() in the run's dtype, and update(loss,
    optimizer, parameters), which runs backward, clips the gradients at 1.0 and steps. For fp16
    a GradScaler scales the loss (fp16 gradients underflow) and unscales before the clipping;
    for bf16 and fp32 the scaler is disabled, and a disabled one passes everything through."""

    def __init__(self, a):
        self.device, self.dtype = a.device, autocast_dtype(a)
        self.scaler = torch.amp.GradScaler(a.device, enabled=a.fp16)

    def autocast(self):
        if self.dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(self.device, dtype=self.dtype)

    def update(self, loss, opt, parameters, max_norm=1.0):
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(parameters, max_norm)
        self.scaler.step(opt)
        self.scaler.update()
        opt.zero_grad(set_to_none=True)


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


def trainer_step(model, batches, a):
    """One step of a transformers model the way the Trainer takes it: the model moved to
    a.device, the next of `batches` (labels included) to the model, autocast as a asks (Amp;
    fp16 with the Trainer's GradScaler), backward, clipping at 1.0, the Trainer's default
    optimizer for torch >= 2.8 ("adamw_torch_fused": AdamW at its defaults, no decay on biases
    and LayerNorm). Returns step(), which gives the loss as a float."""
    model.to(a.device).train()
    opt = torch.optim.AdamW(adamw_param_groups(model, 0.01), lr=1e-4, betas=(0.9, 0.999), eps=1e-8,
                            fused=True)
    amp = Amp(a)

    def step():
        with amp.autocast():
            loss = model(**next(batches)).loss
        amp.update(loss, opt, model.parameters())
        return loss.item()
    return step


def count_params(model):
    return sum(p.numel() for p in model.parameters())  # tied weights are yielded once


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def synchronize(device):
    """Waits for the device's queued kernels (CUDA runs them asynchronously), so a time taken
    after it covers them."""
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def time_steps(step, steps, warmup=1, profile=None, device="cpu"):
    """Runs `warmup` untimed steps, then `steps` timed ones; step() returns the loss as a float.
    With a `profile` path, the timed steps run under torch.profiler (CPU operators, shapes; CUDA
    kernels too on a GPU) and its Chrome trace is saved there. Returns (seconds per timed step,
    last loss)."""
    for _ in range(warmup):
        step()
    activities = [torch.profiler.ProfilerActivity.CPU]
    if torch.device(device).type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    recording = (torch.profiler.profile(activities=activities, record_shapes=True)
                 if profile else contextlib.nullcontext())
    with recording:
        synchronize(device)
        t = time.perf_counter()
        for _ in range(steps):
            loss = step()
        synchronize(device)
        elapsed = time.perf_counter() - t
    if profile:
        recording.export_chrome_trace(profile)
    return elapsed / steps, loss


def peak_gflops(dtype, n=0, reps=5, device="cpu"):
    """Best GFLOP/s of a few n^3 products in dtype on the device (the CPU: this process's
    threads); n = 0 takes mlm-bench's size, 2048 on the CPU, 8192 on CUDA (a 2048^3 product is
    too short to fill a large GPU). The first product is a warm-up unless it is slow on the CPU
    (over a second: a scalar fallback, such as bf16 without AVX512-BF16, where one product can
    take a minute), then it is the only one; on CUDA it is always a warm-up (it also pays
    cuBLAS's start-up)."""
    on_gpu = torch.device(device).type == "cuda"
    n = n or (8192 if on_gpu else 2048)
    a, b = (torch.randn(n, n, device=device).to(dtype) for _ in range(2))
    synchronize(device)

    def product_s():
        t = time.perf_counter()
        torch.mm(a, b)
        synchronize(device)
        return time.perf_counter() - t

    first = product_s()
    if first > 1.0 and not on_gpu:
        return 2 * n ** 3 / first / 1e9
    return max(2 * n ** 3 / product_s() / 1e9 for _ in range(reps))


def forward_flops_per_token(L, H, I, S, V, p, glu=False):
    """glu: a gated feed-forward block (ModernBERT's GeGLU), input projection H x 2I."""
    ffn = 3 if glu else 2
    return 2 * L * (4 * H * H + ffn * H * I) + 4 * L * S * H + 2 * p * (H * H + H * V)


def report(peer, a, step_s, loss, params, head_fraction, glu=False, forward_flops=None, **extra):
    """Prints the JSON line; head_fraction is p of the FLOP formula (mlm_prob or 1), glu as in
    forward_flops_per_token; forward_flops, the forward FLOPs per token, replaces that formula
    for a peer whose model it does not describe."""
    tokens_per_s = a.batch * a.seq / step_s
    on_gpu = a.device == "cuda"
    # Read before the peak GEMM's own operands are allocated.
    peak_mem_mb = torch.cuda.max_memory_allocated() / 2 ** 20 if on_gpu else None
    shared = a.peak_gflops is not None
    peak = a.peak_gflops if shared else peak_gflops(autocast_dtype(a) or torch.float32, device=a.device)
    if forward_flops is None:
        forward_flops = forward_flops_per_token(a.layers, a.hidden, a.intermediate, a.seq, a.vocab,
                                                head_fraction, glu)
    flops = 3 * forward_flops
    out = {"peer": peer, "tokens_per_s": round(tokens_per_s, 1), "step_s": round(step_s, 4),
           "params": params, "loss": round(loss, 4),
           "peak_gflops": peak if shared else round(peak, 1),
           "peak_source": "shared" if shared else "in-process",
           "mfu": round(tokens_per_s * flops / (peak * 1e9), 4),
           "model_gflops_per_s": round(tokens_per_s * flops / 1e9, 2)}
    if on_gpu:  # only there, so the CPU line stays what scripts/bench_vs_pytorch.sh reads
        out.update(device=a.device, precision="bf16" if a.bf16 else "fp16" if a.fp16 else "fp32",
                   peak_mem_mb=round(peak_mem_mb, 1))
    out.update(extra)
    print(json.dumps(out), flush=True)
