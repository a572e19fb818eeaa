#!/usr/bin/env bash
# Downstream probes across pretraining: trains the quickstart-sized minis (same tokenizer,
# sequences, batch and steps) with eval.probes set to a suite of the probe tasks of
# scripts/get_probe_data.sh over PROBE_SEEDS fine-tuning seeds, an evaluation at step 0 and every
# 150 steps, and draws each run's suite average (± its spread over the seeds) and per-task scores
# next to its masked accuracy (RTD runs: their generator's) and RTD F1.
#
#   scripts/probe_curves.sh [OUT_DIR [OVERRIDE...]]   (default runs/probes; overrides such as
#                                                      --set train.threads=1 go to every run)
#   RUNS="bert-mini electra-mini" scripts/probe_curves.sh ...   trains only those (several such
#                                                      jobs can share OUT_DIR; each draws every run there;
#                                                      RUNS="" only draws)
#   PROBE_TASKS=all PROBE_SEEDS=3 scripts/probe_curves.sh ...  the four tasks over three seeds,
#                                                      with spreads (docs/RECIPES.md's figures)
#
# Runs: bert-mini (configs/mini.yaml), modernbert-mini, electra-mini, deberta-v3-rtd-mini (their
# configs/*.yaml) and, named in RUNS only, deberta-v3-mini (DeBERTa's body trained as a masked LM).
# The probes fine-tune a copy of the weights at each evaluation on the first PROBE_EXAMPLES
# (4,000) training examples of each task for one epoch (125 steps) at lr 3e-4 (a small encoder's
# rate: the task files' 5e-5 is meant for base-sized ones) and score the validation and test
# splits: a suite whose finetune: says so, written into OUT_DIR/tasks/. PROBE_TASKS names the tasks
# (wordnet_topic wordnet_hypernym by default; all: the four), PROBE_SEEDS the seeds (1).
# What it costs (docs/PROBES.md, "What a probe costs"), one thread a run, bf16 on an AMX Xeon:
# by default 0.8-1.2x the 150 training steps per probe point and 1.0-1.7x the run's training;
# the four tasks over 3 seeds 5-7x per point and 6-10x the run (~80 minutes for the four runs
# as two parallel jobs on 2 cores).
# Writes OUT_DIR/<run>/ (runs, metrics.jsonl with the probe_* rows), OUT_DIR/probes.png and
# OUT_DIR/probes.tsv (one row per run and probe point). Needs the build, the sample corpus and
# the probe data.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/runs/probes}"
shift $(( $# > 0 ? 1 : 0 ))
build="${BUILD_DIR:-$root/build}"
python="${PYTHON:-$root/.venv/bin/python}"
[[ -f "$root/data/sample/train.txt" ]] ||
  { echo "error: no sample corpus in data/sample (run scripts/get_sample_corpus.sh)" >&2; exit 1; }
[[ -f "$root/data/probes/wordnet_topic/train.jsonl" ]] ||
  { echo "error: no probe data in data/probes (run scripts/get_probe_data.sh)" >&2; exit 1; }
[[ -x "$build/mlm-train" ]] || { echo "error: no $build/mlm-train (run scripts/test.sh)" >&2; exit 1; }
cd "$root"
mkdir -p "$out/tasks"
tasks="${PROBE_TASKS:-wordnet_topic wordnet_hypernym}"
[[ "$tasks" == all ]] && tasks="wordnet_topic wordnet_hypernym wordnet_similarity pydoc_entities"
read -r -a task_names <<< "$tasks"
list=""
for task in "${task_names[@]}"; do list+="${list:+, }$root/configs/probes/$task.yaml"; done
# The screen: the suite's finetune: goes over each task file's own recipe. Written whole to a
# private file and renamed: jobs sharing OUT_DIR start at the same time.
printf 'suite:\n  name: probes\n  seeds: %s\n  tasks: [%s]\n  finetune: {epochs: 1, learning_rate: 3.0e-4, max_train_examples: %s}\n' \
  "${PROBE_SEEDS:-1}" "$list" "${PROBE_EXAMPLES:-4000}" > "$out/tasks/suite.yaml.$$"
mv "$out/tasks/suite.yaml.$$" "$out/tasks/suite.yaml"
all_runs=(bert-mini modernbert-mini electra-mini deberta-v3-rtd-mini)
read -r -a runs <<< "${RUNS-${all_runs[*]}}"
declare -A configs=([bert-mini]=configs/mini.yaml [modernbert-mini]=configs/modernbert-mini.yaml
                    [electra-mini]=configs/electra-mini.yaml [deberta-v3-rtd-mini]=configs/deberta-v3-rtd-mini.yaml
                    [deberta-v3-mini]=configs/deberta-v3-mini.yaml)
for run in "${runs[@]}"; do
  [[ -n "${configs[$run]:-}" ]] || { echo "error: unknown run '$run' (one of ${!configs[*]})" >&2; exit 1; }
  echo "== $run"
  "$build/mlm-train" --config "${configs[$run]}" --set train.output_dir="$out/$run" \
    --set eval.every_steps=150 --set eval.on_start=true --set checkpoint.every_steps=0 --set logging.progress_bar=off \
    --set "eval.probes=[$out/tasks/suite.yaml]" "$@"
done

"$python" - "$out" "${!configs[@]}" <<'PY'
import json, os, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

out, names = sys.argv[1], sys.argv[2:]
order = ["bert-mini", "modernbert-mini", "electra-mini", "deberta-v3-rtd-mini", "deberta-v3-mini"]
runs = [r for r in order if r in names and os.path.exists(os.path.join(out, r, "metrics.jsonl"))]
metrics = {r: [json.loads(l) for l in open(os.path.join(out, r, "metrics.jsonl")) if l.strip()] for r in runs}
seen = {row["probe"] for rows in metrics.values() for row in rows if "probe" in row}
tasks = [t for t in ("wordnet_topic", "wordnet_hypernym", "wordnet_similarity", "pydoc_entities") if t in seen]
colors = dict(zip(order, ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple")))

def training_seconds(rows):
    """{step: seconds spent training up to it}, from each logged window's tokens at its rate
    (elapsed_s also counts the evaluations and probes)."""
    seconds, total, tokens = {}, 0.0, 0
    for r in rows:
        if "tokens_per_s" in r:
            total += (r["tokens"] - tokens) / r["tokens_per_s"]
            tokens = r["tokens"]
            seconds[r["step"]] = total
    return seconds

fig, axes = plt.subplots(2, 3, figsize=(16, 8))
panels = {"masked": axes[0][0], "rtd": axes[0][1], "average": axes[0][2]}
panels.update(zip(tasks, axes[1]))  # three task panels fit; the table has the fourth
table = open(os.path.join(out, "probes.tsv"), "w")
table.write("run\tstep\ttokens\ttrain_s\tmasked_acc\trtd_f1\t" + "\t".join(f"{t}\t{t}_std" for t in tasks) +
            "\taverage\taverage_std\n")
for run in runs:
    rows = metrics[run]
    evals = {r["step"]: r for r in rows if "eval_mlm_accuracy" in r}
    trained = training_seconds(rows)
    probes = {}
    for r in rows:
        if "probe" in r:
            probes.setdefault(r["step"], {})[r["probe"] if r["probe_metric"] != "average" else "average"] = r
    steps = sorted(s for s in probes if "average" in probes[s])
    color = colors[run]
    panels["masked"].plot(sorted(evals), [evals[s]["eval_mlm_accuracy"] for s in sorted(evals)], "o-", color=color, label=run)
    rtd = [s for s in sorted(evals) if "eval_rtd_f1" in evals[s]]
    if rtd:
        panels["rtd"].plot(rtd, [evals[s]["eval_rtd_f1"] for s in rtd], "o-", color=color, label=run)
    for step in steps:
        point = probes[step]
        # Over the seeds, of their means over the tasks (nan: a run from before the row had it).
        avg_std = point["average"].setdefault("probe_validation_std", float("nan"))
        ev = evals.get(step, {})
        seconds = max((t for s, t in trained.items() if s <= step), default=0.0)
        cells = "\t".join(f"{point[t]['probe_validation']:.4f}\t{point[t]['probe_validation_std']:.4f}" for t in tasks)
        table.write(f"{run}\t{step}\t{ev.get('tokens', 0)}\t{seconds:.0f}\t{ev.get('eval_mlm_accuracy', float('nan')):.4f}\t"
                    f"{ev.get('eval_rtd_f1', float('nan')):.3f}\t{cells}\t{point['average']['probe_validation']:.4f}\t{avg_std:.4f}\n")
        print(f"{run} step {step} masked accuracy {ev.get('eval_mlm_accuracy', float('nan')):.4f}"
              + (f" rtd f1 {ev['eval_rtd_f1']:.3f}" if "eval_rtd_f1" in ev else "")
              + "".join(f" | {t} {point[t]['probe_validation']:.4f} ± {point[t]['probe_validation_std']:.4f}" for t in tasks)
              + f" | average {point['average']['probe_validation']:.4f} ± {avg_std:.4f}")
    panels["average"].errorbar(steps, [probes[s]["average"]["probe_validation"] for s in steps],
                               yerr=[probes[s]["average"]["probe_validation_std"] for s in steps], fmt="o-", capsize=3, color=color, label=run)
    for task in tasks[:3]:
        have = [s for s in steps if task in probes[s]]
        panels[task].errorbar(have, [probes[s][task]["probe_validation"] for s in have],
                              yerr=[probes[s][task]["probe_validation_std"] for s in have], fmt="o-", capsize=3, color=color, label=run)
        panels[task].set_title(f"{task}: validation {probes[have[0]][task]['probe_metric'] if have else ''}")
table.close()
panels["masked"].set_title("validation masked accuracy (own masking; RTD runs: generator)")
panels["rtd"].set_title("validation RTD F1 (replaced class)")
panels["average"].set_title("probe suite average (validation), ± std over seeds")
for ax in [a for row in axes for a in row]:
    ax.set_xlabel("step")
    if ax.get_legend_handles_labels()[0]:  # RTD F1: only with an RTD run
        ax.legend(fontsize=8)
fig.tight_layout()
fig.savefig(os.path.join(out, "probes.png"), dpi=100)
print("wrote", os.path.join(out, "probes.png"), "and", os.path.join(out, "probes.tsv"))
PY
