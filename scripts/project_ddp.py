#!/usr/bin/env python3
"""Projects data-parallel training on N GPUs from mlm-bench's model figures: per step, the
gradient all-reduce volume against the step's compute time, and whether the bucketed,
overlapped all-reduce (docs/DISTRIBUTED.md) hides it.

    scripts/project_ddp.py SWEEP.jsonl [--points "bert-base:128 modernbert-base:1024"]
        [--gpus 8] [--peak-tflops 989] [--mfu 0.4] [--links "nvlink=450 ib=40"]
        [--tokens-per-gpu "4096 16384 65536"] [--bucket-mb 25] [--hbm-tbs 3.35]

SWEEP.jsonl: lines of `mlm-bench --json` with a "model" field, as scripts/bench_scaling.sh
--jsonl writes them. From the line of each MODEL:SEQ point it takes the unique parameter count
(`params`), the model FLOPs per trained token (`model_gflops_per_s / tokens_per_s`, the formula
of docs/ARCHITECTURE.md section 5, the same one MFU uses), `vocab` and `hidden`; the CPU
timings themselves do not enter.

The model of one optimizer step on one GPU (every term printed, every constant an option):
  compute    T tokens x FLOPs/token / (peak x MFU); backward = 2/3 of it (twice the forward)
  gradients  params x --grad-bytes (4: the parameters stay fp32 under bf16 autocast, and
             GradientReducer sums each .grad in its parameter's dtype)
  all-reduce a ring moves 2(n-1)/n of the buffer per GPU: time = bytes x 2(n-1)/n / busbw,
             busbw as nccl-tests reports it for large messages (no per-call latency: small
             buckets run below it, so these times are lower bounds)
  overlap    buckets of --bucket-mb in reverse parameter order, ready at an even pace through
             the last micro-batch's backward (equal layers); they reduce one after another on
             one stream. The word-embedding matrix (padded rows x hidden) is registered first,
             so it is the last bucket, and tied to the decoder its gradient is complete only
             when backward ends: its all-reduce is never hidden.
  memory     bucket copies in and out (4 x grad bytes) and fused AdamW (fp32 parameter,
             gradient and two moments read, three written: 28 bytes/parameter) at --hbm-tbs
  step       compute + exposed all-reduce + memory
"hidden up to": the tokens per GPU (of the last micro-batch) below which the all-reduce of
everything but the embedding bucket takes longer than backward, so part of it is exposed.
"""
import argparse
import json
import math
import sys


def fail(message):
    """One line on stderr and exit 2, the project's code for bad input."""
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sweep", nargs="+", help="JSON lines from scripts/bench_scaling.sh --jsonl")
    p.add_argument("--points", default="bert-base:128 bert-base:512 modernbert-base:1024 modernbert-base:8192",
                   help="MODEL:SEQ pairs to project (default: each model's training phases)")
    p.add_argument("--gpus", type=int, default=8)
    p.add_argument("--peak-tflops", type=float, default=989.0,
                   help="dense bf16 peak per GPU (H100 SXM: 989)")
    p.add_argument("--mfu", type=float, default=0.4, help="model FLOPs utilization assumed on the GPU")
    p.add_argument("--links", default="nvlink=450 ib=40",
                   help="NAME=busbw GB/s pairs: achievable all-reduce bus bandwidth per GPU")
    p.add_argument("--tokens-per-gpu", default="4096 16384 65536")
    p.add_argument("--accum", type=int, default=1,
                   help="micro-batches per step: only the last one's backward overlaps the all-reduce")
    p.add_argument("--bucket-mb", type=float, default=25.0, help="distributed.bucket_mb")
    p.add_argument("--grad-bytes", type=int, default=4, help="bytes per reduced gradient element")
    p.add_argument("--pad-vocab-multiple", type=int, default=64, help="model.pad_vocab_multiple")
    p.add_argument("--hbm-tbs", type=float, default=3.35, help="GPU memory bandwidth, TB/s")
    a = p.parse_args(argv)
    if a.gpus < 2 or a.mfu <= 0 or a.mfu > 1 or a.accum < 1 or a.bucket_mb <= 0:
        p.error("need --gpus >= 2, 0 < --mfu <= 1, --accum >= 1, --bucket-mb > 0")
    try:
        a.links = [(n, float(v)) for n, v in (pair.split("=") for pair in a.links.split())]
        a.tokens_per_gpu = [int(t) for t in a.tokens_per_gpu.split()]
        a.points = [(m, int(s)) for m, s in (pt.rsplit(":", 1) for pt in a.points.split())]
    except ValueError as e:
        p.error(f"--links NAME=GBPS, --tokens-per-gpu integers, --points MODEL:SEQ ({e})")
    return a


def load_points(paths):
    """(model, seq) -> the first measured line for it."""
    found = {}
    for path in paths:
        try:
            f = open(path)
        except OSError as e:
            fail(f"{path}: {e.strerror}")
        with f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    j = json.loads(line)
                except json.JSONDecodeError as e:
                    fail(f"{path}:{number}: not JSON ({e})")
                if "skipped" in j or "tokens_per_s" not in j:
                    continue
                found.setdefault((j.get("model") or f"{j['layers']}x{j['hidden']}", j["seq_len"]), j)
    return found


def ring_seconds(nbytes, gpus, busbw_gbs):
    return nbytes * 2 * (gpus - 1) / gpus / (busbw_gbs * 1e9)


def exposed_allreduce(rest_bytes, tail_bytes, backward_s, bucket_bytes, seconds):
    """Seconds the all-reduce runs past the end of backward: buckets of the non-embedding
    gradients ready at an even pace through backward, the embedding bucket at its end, all
    reduced in order on one stream."""
    free_at, done = 0.0, 0.0
    n = max(1, math.ceil(rest_bytes / bucket_bytes))
    for k in range(1, n + 1):
        size = min(bucket_bytes, rest_bytes - (k - 1) * bucket_bytes)
        ready = backward_s * min(1.0, k * bucket_bytes / rest_bytes)
        free_at = max(free_at, ready) + seconds(size)
    done = max(free_at, backward_s) + seconds(tail_bytes)
    return done - backward_s


def main(argv):
    a = parse_args(argv)
    measured = load_points(a.sweep)
    peak = a.peak_tflops * 1e12 * a.mfu
    bucket = a.bucket_mb * 1024 * 1024
    print(f"{a.gpus} GPUs, {a.peak_tflops:g} TFLOP/s x MFU {a.mfu:g} = {peak / 1e12:.0f} TFLOP/s each, "
          f"gradients {a.grad_bytes} bytes, buckets {a.bucket_mb:g} MB, {a.accum} micro-batch(es) per step, "
          f"busbw " + ", ".join(f"{n} {v:g} GB/s" for n, v in a.links) + f", HBM {a.hbm_tbs:g} TB/s")
    rows, limits = [], []
    for model, seq in a.points:
        j = measured.get((model, seq))
        if j is None:
            fail(f"no measured point for {model} at seq {seq} in {' '.join(a.sweep)}")
        flops = j["model_gflops_per_s"] * 1e9 / j["tokens_per_s"]
        grad = j["params"] * a.grad_bytes
        rows_v = -(-j["vocab"] // a.pad_vocab_multiple) * a.pad_vocab_multiple
        tail = rows_v * j["hidden"] * a.grad_bytes
        rest = grad - tail
        memory_s = (4 * grad + 28 * j["params"]) / (a.hbm_tbs * 1e12)
        ring = grad * 2 * (a.gpus - 1) / a.gpus
        for tokens in a.tokens_per_gpu:
            if tokens < seq:
                continue  # not one whole sequence
            compute = tokens * flops / peak
            backward = compute * 2 / 3 / a.accum
            cells = []
            for name, busbw in a.links:
                total = ring_seconds(grad, a.gpus, busbw)
                exposed = exposed_allreduce(rest, tail, backward, bucket,
                                            lambda b, bw=busbw: ring_seconds(b, a.gpus, bw))
                step = compute + exposed + memory_s
                cells.append(f"{total * 1e3:.2f} / {exposed * 1e3:.2f} ({100 * exposed / step:.1f}%)")
            rows.append(f"| {model} | {seq} | {tokens} | {tokens // seq} | {flops / 1e6:.0f} | {compute * 1e3:.1f} | "
                        f"{backward * 1e3:.1f} | {memory_s * 1e3:.2f} | " + " | ".join(cells) + " |")
        # Backward (2/3 of compute) just long enough for the non-embedding all-reduce.
        cells = []
        for name, busbw in a.links:
            t = ring_seconds(rest, a.gpus, busbw) * 1.5 * a.accum * peak / flops
            cells.append(f"{t / 1e3:.1f}k tokens ({t / seq:.1f} seq), global batch {a.gpus * t / seq:.0f} seq")
        limits.append(f"| {model} | {seq} | {j['params'] / 1e6:.1f}M | {grad / 1e6:.0f} | {ring / 1e6:.0f} | "
                      f"{tail / 1e6:.0f} | " + " | ".join(cells) + " |")
    links = [n for n, _ in a.links]
    print()
    print("| model | seq | params | gradient MB | ring MB sent per GPU | embedding bucket MB | "
          + " | ".join(f"{n}: hidden from" for n in links) + " |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |" + " --- |" * len(links))
    print("\n".join(limits))
    print()
    print("| model | seq | tokens/GPU | sequences/GPU | MFLOP/token | compute ms | backward ms | memory ms | "
          + " | ".join(f"{n}: all-reduce / exposed ms (share of step)" for n in links) + " |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |" + " --- |" * len(links))
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
