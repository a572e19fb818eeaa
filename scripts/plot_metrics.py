#!/usr/bin/env python3
"""Draws a run's metrics.jsonl: loss, masked-token accuracy and learning rate against steps
(train rows, and eval rows as markers), into RUN_DIR/metrics.png.

    .venv/bin/python scripts/plot_metrics.py RUN_DIR [--output FILE]

Needs matplotlib: the project venv has it (scripts/setup.sh).
"""
import argparse
import json
import os
import sys


def read_rows(path):
    train, evals = [], []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                print(f"{path}:{number}: skipping a line that is not JSON", file=sys.stderr)
                continue
            if "eval_loss" in row:
                evals.append(row)
            elif "loss" in row:
                train.append(row)
    return train, evals


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", help="train.output_dir of a run (holds metrics.jsonl)")
    parser.add_argument("--output", help="image file (default RUN_DIR/metrics.png)")
    args = parser.parse_args()
    metrics = os.path.join(args.run_dir, "metrics.jsonl")
    if not os.path.isfile(metrics):
        sys.exit(f"plot_metrics: {metrics} does not exist (is {args.run_dir} a run directory?)")
    train, evals = read_rows(metrics)
    if not train and not evals:
        sys.exit(f"plot_metrics: {metrics} has no metrics rows yet")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_loss, ax_acc, ax_lr) = plt.subplots(3, 1, figsize=(8, 10), sharex=True)
    steps = [r["step"] for r in train]
    if train:
        # null = a logging window of skipped (non-finite) steps only: a gap in the line
        def column(key):
            return [float("nan") if r.get(key) is None else r[key] for r in train]
        ax_loss.plot(steps, column("loss"), label="train", linewidth=1)
        ax_acc.plot(steps, column("mlm_accuracy"), label="train", linewidth=1)
        ax_lr.plot(steps, [r["lr"] for r in train], color="tab:green", linewidth=1)
    if evals:
        eval_steps = [r["step"] for r in evals]
        ax_loss.plot(eval_steps, [r["eval_loss"] for r in evals], "o-", label="validation")
        ax_acc.plot(eval_steps, [r["eval_mlm_accuracy"] for r in evals], "o-", label="validation")
    ax_loss.set_ylabel("MLM loss (nats / masked token)")
    ax_acc.set_ylabel("masked-token accuracy")
    ax_lr.set_ylabel("learning rate")
    ax_lr.set_xlabel("step")
    for ax in (ax_loss, ax_acc, ax_lr):
        ax.grid(True, alpha=0.3)
    ax_loss.legend()
    ax_acc.legend()
    fig.suptitle(os.path.basename(os.path.normpath(args.run_dir)))
    fig.tight_layout()
    output = args.output or os.path.join(args.run_dir, "metrics.png")
    fig.savefig(output, dpi=100)
    print(f"plot written to {output}")


if __name__ == "__main__":
    main()
