#!/usr/bin/env python3
"""The curves of scripts/compare_encoders.sh: validation masked accuracy (every checkpoint scored
at 15% masking on the same batches) against training tokens and against wall-clock seconds, one
line per run, into OUT_DIR/curves.png; and the same figures as a Markdown table on stdout.

    .venv/bin/python scripts/plot_curves.py OUT_DIR OUT_DIR/curves.jsonl

Tokens and seconds at a checkpoint come from the run's metrics.jsonl (the train row of that
step: tokens seen, elapsed_s of training, evaluations and checkpoints included); the run's own
evaluation (at its training masking rate) is listed beside.
"""
import json
import os
import re
import sys


def metrics_at(run_dir):
    """step -> (tokens, elapsed_s) of the train rows, step -> own eval accuracy."""
    train, own = {}, {}
    with open(os.path.join(run_dir, "metrics.jsonl"), encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if "eval_mlm_accuracy" in row:
                own[row["step"]] = row["eval_mlm_accuracy"]
            elif "elapsed_s" in row:
                train[row["step"]] = (row["tokens"], row["elapsed_s"])
    return train, own


def main(out_dir, rows_path):
    curves = {}
    with open(rows_path, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            step = int(re.search(r"step_(\d+)", row["checkpoint"]).group(1))
            curves.setdefault(row["run"], []).append((step, row["at_15"]))
    table = ["| run | step | tokens | seconds | masked accuracy at 15% | loss at 15% | own eval accuracy |",
             "|---|---|---|---|---|---|---|"]
    points = {}
    for run, scored in curves.items():
        train, own = metrics_at(os.path.join(out_dir, run))
        for step, score in sorted(scored):
            tokens, seconds = train[step]
            points.setdefault(run, []).append((tokens, seconds, score["masked_accuracy"]))
            table.append(f"| {run} | {step} | {tokens:,} | {seconds:.0f} | {score['masked_accuracy']:.4f} | "
                         f"{score['mlm_loss']:.3f} | {own.get(step, float('nan')):.4f} |")
    print("\n".join(table))

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for run, p in points.items():
        axes[0].plot([t for t, _, _ in p], [a for _, _, a in p], marker="o", label=run)
        axes[1].plot([s for _, s, _ in p], [a for _, _, a in p], marker="o", label=run)
    axes[0].set_xlabel("training tokens")
    axes[1].set_xlabel("wall-clock seconds (2 CPU cores, fp32)")
    for ax in axes:
        ax.set_ylabel("validation masked accuracy (15% masking)")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "curves.png"), dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
