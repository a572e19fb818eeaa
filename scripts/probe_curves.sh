#!/usr/bin/env bash
# Downstream probes across pretraining: trains bert-mini, modernbert-mini and electra-mini (the
# quickstart's configs/mini.yaml, configs/modernbert-mini.yaml and configs/electra-mini.yaml:
# same tokenizer, sequences, batch, steps) with eval.probes on the WordNet tasks of
# scripts/get_probe_data.sh, an evaluation at step 0 and every 150 steps, and draws each run's
# probe scores next to its masked accuracy (ELECTRA: its generator's).
#
#   scripts/probe_curves.sh [OUT_DIR [OVERRIDE...]]   (default runs/probes; overrides such as
#                                                      --set train.threads=1 go to every run)
#   RUNS="modernbert-mini" scripts/probe_curves.sh ... trains only those (several such jobs can
#                                                      share OUT_DIR; each draws every run there)
#
# The probes fine-tune a copy of the weights at each evaluation on the first 4,000 training
# examples for one epoch (125 steps) at lr 3e-4 (a small encoder's rate: the task files' 5e-5 is
# meant for base-sized ones, and 1e-3 collapses bert-mini to the majority class) and score the
# validation and test splits: the variants are written into OUT_DIR/tasks/. A probe (both tasks)
# costs 0.8-1.1x the 150 training steps between probes, and the probes 1.0-1.4x the run's
# training; on the whole training split a probe cost 1.7-2.4x those steps, and the probes
# 2.2-3.2x the training (docs/PROBES.md, "What a probe costs"). About an hour on 2 cores.
# Writes OUT_DIR/<run>/ (runs, metrics.jsonl with the probe_* rows) and OUT_DIR/probes.png.
# Needs the build, the sample corpus and the probe data.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/runs/probes}"
shift $(( $# > 0 ? 1 : 0 ))
build="${MLM_BUILD_DIR:-$root/build}"
python="${PYTHON:-$root/.venv/bin/python}"
[[ -f "$root/data/sample/train.txt" ]] ||
  { echo "error: no sample corpus in data/sample (run scripts/get_sample_corpus.sh)" >&2; exit 1; }
[[ -f "$root/data/probes/wordnet_topic/train.jsonl" ]] ||
  { echo "error: no probe data in data/probes (run scripts/get_probe_data.sh)" >&2; exit 1; }
[[ -x "$build/mlm-train" ]] || { echo "error: no $build/mlm-train (run scripts/test.sh)" >&2; exit 1; }
cd "$root"
mkdir -p "$out/tasks"
tasks=()
for task in wordnet_topic wordnet_hypernym; do
  sed -e 's/^  learning_rate: .*/  learning_rate: 3.0e-4/' -e 's/^  epochs: .*/  epochs: 1/' \
      "configs/probes/$task.yaml" > "$out/tasks/$task.yaml"
  echo "  max_train_examples: 4000" >> "$out/tasks/$task.yaml"  # finetune: is the file's last section
  tasks+=("$out/tasks/$task.yaml")
done
probes="[$(IFS=,; echo "${tasks[*]}")]"
all_runs=(bert-mini modernbert-mini electra-mini)
read -r -a runs <<< "${RUNS:-${all_runs[*]}}"
declare -A configs=([bert-mini]=configs/mini.yaml [modernbert-mini]=configs/modernbert-mini.yaml
                    [electra-mini]=configs/electra-mini.yaml)
for run in "${runs[@]}"; do
  echo "== $run"
  "$build/mlm-train" --config "${configs[$run]}" --set train.output_dir="$out/$run" \
    --set eval.every_steps=150 --set eval.on_start=true --set checkpoint.every_steps=0 --set logging.progress_bar=off \
    --set "eval.probes=$probes" "$@"
done

"$python" - "$out" "${all_runs[@]}" <<'PY'
import json, os, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

out, runs = sys.argv[1], sys.argv[2:]
fig, axes = plt.subplots(1, 3, figsize=(15, 4))
for run, color in zip(runs, ("tab:blue", "tab:orange", "tab:green")):
    if not os.path.exists(os.path.join(out, run, "metrics.jsonl")):
        continue
    rows = [json.loads(l) for l in open(os.path.join(out, run, "metrics.jsonl")) if l.strip()]
    evals = [r for r in rows if "eval_mlm_accuracy" in r]
    axes[0].plot([r["step"] for r in evals], [r["eval_mlm_accuracy"] for r in evals], "o-", color=color, label=run)
    for ax, task in zip(axes[1:], ("wordnet_topic", "wordnet_hypernym")):
        probe = [r for r in rows if r.get("probe") == task]
        ax.plot([r["step"] for r in probe], [r["probe_validation"] for r in probe], "o-", color=color, label=run)
        ax.set_title(f"{task}: validation {probe[0]['probe_metric'] if probe else ''}")
        for r in probe:
            print(f"{run} step {r['step']} {task} validation {r['probe_validation']:.4f} test {r.get('probe_test', float('nan')):.4f}")
    for r in evals:
        rtd = f" rtd accuracy {r['eval_rtd_accuracy']:.4f} rtd f1 {r['eval_rtd_f1']:.4f}" if "eval_rtd_f1" in r else ""
        print(f"{run} step {r['step']} masked accuracy {r['eval_mlm_accuracy']:.4f}{rtd}")
axes[0].set_title("validation masked accuracy (own masking; ELECTRA: generator)")
for ax in axes:
    ax.set_xlabel("step")
    ax.legend()
fig.tight_layout()
fig.savefig(os.path.join(out, "probes.png"), dpi=100)
print("wrote", os.path.join(out, "probes.png"))
PY
