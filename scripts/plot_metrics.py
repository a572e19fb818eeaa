#!/usr/bin/env python3
"""Draws a run's metrics.jsonl: loss, masked-token accuracy and learning rate against steps
(train rows, and eval rows as markers), into RUN_DIR/metrics.png. A run with fine-tuning
probes (eval.probes) gets a panel of each task's validation score; an ELECTRA run (objective
rtd) one more, the discriminator's F1 and accuracy and the share of masked
positions the generator sampled right; its loss panel shows the generator's MLM loss.

    .venv/bin/python scripts/plot_metrics.py RUN_DIR [--output FILE]

Needs matplotlib: the project venv has it (scripts/setup.sh).
"""
import argparse
import json
import os
import sys


def read_rows(path):
    train, evals, probes = [], [], []
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
            if "probe" in row:
                probes.append(row)
            elif "eval_loss" in row:
                evals.append(row)
            elif "loss" in row:
                train.append(row)
    return train, evals, probes


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", help="train.output_dir of a run (holds metrics.jsonl)")
    parser.add_argument("--output", help="image file (default RUN_DIR/metrics.png)")
    args = parser.parse_args()
    metrics = os.path.join(args.run_dir, "metrics.jsonl")
    if not os.path.isfile(metrics):
        sys.exit(f"plot_metrics: {metrics} does not exist (is {args.run_dir} a run directory?)")
    train, evals, probes = read_rows(metrics)
    if not train and not evals:
        sys.exit(f"plot_metrics: {metrics} has no metrics rows yet")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rtd = any("rtd_f1" in r for r in train + evals)
    panels = 3 + rtd + bool(probes)
    fig, axes = plt.subplots(panels, 1, figsize=(8, 3.3 * panels), sharex=True)
    ax_loss, ax_acc, ax_lr = axes[:3]
    steps = [r["step"] for r in train]
    # null = a logging window of skipped (non-finite) steps only: a gap in the line
    def column(rows, key):
        return [float("nan") if r.get(key) is None else r[key] for r in rows]
    if train:
        # An rtd row's "loss" is mlm + lambda * rtd; its mlm_loss is what eval_loss measures.
        ax_loss.plot(steps, column(train, "mlm_loss" if rtd else "loss"), label="train", linewidth=1)
        ax_acc.plot(steps, column(train, "mlm_accuracy"), label="train", linewidth=1)
        ax_lr.plot(steps, [r["lr"] for r in train], color="tab:green", linewidth=1)
    if evals:
        eval_steps = [r["step"] for r in evals]
        ax_loss.plot(eval_steps, [r["eval_loss"] for r in evals], "o-", label="validation")
        ax_acc.plot(eval_steps, [r["eval_mlm_accuracy"] for r in evals], "o-", label="validation")
    if rtd:
        ax_rtd = axes[3]
        figures = [("rtd_f1", "discriminator F1 (replaced)"), ("rtd_accuracy", "discriminator accuracy"),
                   ("generator_sample_accuracy", "generator sampled the original")]
        for key, label in figures:
            line = ax_rtd.plot(steps, column(train, key), label=label, linewidth=1)[0]
            if evals:
                ax_rtd.plot([r["step"] for r in evals], column(evals, "eval_" + key), "o",
                            color=line.get_color())
        ax_rtd.set_ylabel("replaced-token detection")
        ax_rtd.grid(True, alpha=0.3)
        ax_rtd.legend()
    if probes:
        ax_probe = axes[3 + rtd]
        for task in sorted({r["probe"] for r in probes}):
            rows = [r for r in probes if r["probe"] == task]
            ax_probe.plot([r["step"] for r in rows], [r["probe_validation"] for r in rows], "o-",
                          label=f"{task} ({rows[0]['probe_metric']})")
        ax_probe.set_ylabel("probe validation score")
        ax_probe.grid(True, alpha=0.3)
        ax_probe.legend()
    ax_loss.set_ylabel("generator MLM loss (nats / masked token)" if rtd else "MLM loss (nats / masked token)")
    ax_acc.set_ylabel("masked-token accuracy")
    ax_lr.set_ylabel("learning rate")
    axes[-1].set_xlabel("step")
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
