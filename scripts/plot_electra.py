#!/usr/bin/env python3
"""The curves of scripts/compare_electra.sh: linear-probe accuracy (sentence order, same
document) of every probed checkpoint of both runs against training tokens and against
wall-clock seconds, and ELECTRA's replaced-token detection over its steps, into
OUT_DIR/curves.png; the per-checkpoint rows into OUT_DIR/curves.jsonl; on stdout two Markdown
tables: every probed checkpoint, and each checkpoint of the slower run (seconds per step)
beside the other run's checkpoint nearest in wall-clock seconds.

    .venv/bin/python scripts/plot_electra.py OUT_DIR

Reads OUT_DIR/probes.json (probe_linear.py --json over OUT_DIR/exports/RUN/step_N) and each
run's OUT_DIR/RUN/metrics.jsonl: tokens and elapsed_s of the train row at a checkpoint's step
(training, evaluations and checkpoints included), an RTD run's evaluation rows, and its train
rows for the RTD panel.
"""
import json
import os
import re
import sys

TASKS = ("sentence_order", "same_document")
RTD = ("rtd_f1", "rtd_accuracy", "generator_sample_accuracy")


def read_metrics(run_dir):
    """step -> train row, step -> evaluation row."""
    train, evals = {}, {}
    with open(os.path.join(run_dir, "metrics.jsonl"), encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if "eval_loss" in row:
                evals[row["step"]] = row
            elif "elapsed_s" in row:
                train[row["step"]] = row
    return train, evals


def device_label(out_dir, run):
    """'cpu, bf16, 2 threads' from the run log's start line, or '' when it has none."""
    try:
        with open(os.path.join(out_dir, f"{run}.log"), encoding="utf-8") as f:
            found = re.search(r"parameters on (\S+) \((\w+)\).*?; (\d+ threads?)", f.read())
    except OSError:
        return ""
    return ", ".join(found.groups()) if found else ""


def curves(out_dir, probes):
    """run -> rows (step, tokens, elapsed_s, probe accuracy and loss per task, evaluation RTD
    figures for an RTD run), by step."""
    rows, metrics = {}, {}
    for path, entry in probes["models"].items():
        found = re.search(r"exports/([^/]+)/step_(\d+)$", path)
        if not found:
            sys.exit(f"error: {path}: not an OUT_DIR/exports/RUN/step_N export")
        run, step = found.group(1), int(found.group(2))
        if run not in metrics:
            metrics[run] = read_metrics(os.path.join(out_dir, run))
        train, evals = metrics[run]
        row = {"run": run, "step": step, "tokens": train[step]["tokens"], "elapsed_s": train[step]["elapsed_s"]}
        for task in TASKS:
            row[task] = entry[task]["accuracy"]
            row[f"{task}_loss"] = entry[task]["loss"]
        if f"eval_{RTD[0]}" in evals.get(step, {}):
            row.update({f"eval_{k}": evals[step][f"eval_{k}"] for k in RTD})
        rows.setdefault(run, []).append(row)
    for run_rows in rows.values():
        run_rows.sort(key=lambda r: r["step"])
    return rows, metrics


def tables(rows):
    accuracy = lambda r: " | ".join(f"{r[t]:.4f}" for t in TASKS)
    lines = ["| run | step | tokens | seconds | sentence order | same document "
             "| eval RTD F1 | eval RTD accuracy | eval generator sample accuracy |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for run, run_rows in rows.items():
        for r in run_rows:
            rtd = " | ".join(f"{r[f'eval_{k}']:.4f}" if f"eval_{k}" in r else "" for k in RTD)
            lines.append(f"| {run} | {r['step']} | {r['tokens']:,} | {r['elapsed_s']:.0f} | {accuracy(r)} | {rtd} |")
    if len(rows) == 2:
        # The slower run's checkpoints against the faster run at the same seconds: that run has
        # trained more steps by then, unless it had ended (marked).
        slower, faster = sorted(rows, key=lambda run: -rows[run][-1]["elapsed_s"] / rows[run][-1]["step"])
        lines += ["", f"At equal wall-clock: each {slower} checkpoint and the {faster} checkpoint nearest "
                  "in seconds (* = its last, earlier)", "",
                  f"| {slower} step | seconds | sentence order | same document "
                  f"| {faster} step | seconds | sentence order | same document |",
                  "|---:|---:|---:|---:|---:|---:|---:|---:|"]
        last = rows[faster][-1]
        for r in rows[slower]:
            near = min(rows[faster], key=lambda f: abs(f["elapsed_s"] - r["elapsed_s"]))
            ended = "*" if near is last and last["elapsed_s"] < r["elapsed_s"] else ""
            lines.append(f"| {r['step']} | {r['elapsed_s']:.0f} | {accuracy(r)} "
                         f"| {near['step']}{ended} | {near['elapsed_s']:.0f} | {accuracy(near)} |")
    return "\n".join(lines)


def plot(out_dir, rows, metrics, majority):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.5))
    styles = {"sentence_order": "-", "same_document": "--"}
    for n, (run, run_rows) in enumerate(rows.items()):
        for task in TASKS:
            label = f"{run} {task.replace('_', ' ')}"
            for ax, x in zip(axes, ("tokens", "elapsed_s")):
                ax.plot([r[x] for r in run_rows], [r[task] for r in run_rows], styles[task], color=f"C{n}",
                        marker="o", label=label)
    device = device_label(out_dir, next(iter(rows)))
    axes[0].set_xlabel("training tokens")
    axes[1].set_xlabel(f"wall-clock seconds ({device})" if device else "wall-clock seconds")
    for ax in axes[:2]:
        for task in TASKS:
            ax.axhline(majority[task], color="gray", linestyle=styles[task], linewidth=0.8)
        ax.set_ylabel("linear-probe valid accuracy (gray: majority)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    rtd_runs = [run for run, (train, _) in metrics.items() if any("rtd_f1" in r for r in train.values())]
    for run in rtd_runs:
        train, evals = metrics[run]
        for n, key in enumerate(RTD):
            steps = sorted(s for s in train if key in train[s])
            axes[2].plot(steps, [train[s][key] for s in steps], color=f"C{n}", label=f"{key} (train)")
            steps = sorted(s for s in evals if f"eval_{key}" in evals[s])
            axes[2].plot(steps, [evals[s][f"eval_{key}"] for s in steps], "o", color=f"C{n}", label=f"eval {key}")
        axes[2].set_title(run, fontsize=10)
    axes[2].set_xlabel("step")
    axes[2].set_ylabel("replaced-token detection")
    axes[2].grid(alpha=0.3)
    axes[2].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out_dir, "curves.png"), dpi=110)


def main(out_dir):
    with open(os.path.join(out_dir, "probes.json"), encoding="utf-8") as f:
        probes = json.load(f)
    rows, metrics = curves(out_dir, probes)
    with open(os.path.join(out_dir, "curves.jsonl"), "w", encoding="utf-8") as f:
        for run_rows in rows.values():
            for r in run_rows:
                f.write(json.dumps(r) + "\n")
    print(f"linear-probe valid accuracy; majority: "
          + ", ".join(f"{t} {probes['majority'][t]:.4f}" for t in TASKS) + "\n")
    print(tables(rows))
    plot(out_dir, rows, metrics, probes["majority"])


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
