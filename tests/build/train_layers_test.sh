#!/usr/bin/env bash
# The rooms of train/ are layered, lowest first:
#   optim/       the optimizer: update rules, learning-rate schedule, gradient clipping
#   checkpoint/  the checkpoint component, and a saved model opened (saved_model.h)
#   likelihood/  pseudo-log-likelihood scoring of sentences and minimal pairs
#   loop/        the step and the loop (it runs the probes through a callback, run_probes.h,
#                and a distiller through MicroBatchLoss, micro_batch_loss.h)
#   distill/     distillation: the teacher, the losses, the student's init
#   finetune/    fine-tuning on labelled tasks, and the probes built on it
#   run/         a run's assembly: bootstrap, trainer, what the user sees, stop signals
#   tools/       the commands behind the mains (evaluate, export, fill-mask, finetune, bench)
#   merge/       mlm-merge: averaging and merging saved models
# A room may include the rooms before it and itself, never one after it. Every pair is
# checked, and a room under src/train or include/mlm/train that the order does not name fails
# the test, so a new room has to take its place here first.
#   train_layers_test.sh REPO_ROOT
set -euo pipefail
root="$1"
order=(optim checkpoint likelihood loop distill finetune run tools merge)
status=0

named() {
  local room
  for room in "${order[@]}"; do [[ "$room" == "$1" ]] && return 0; done
  return 1
}

for dir in "$root/src/train" "$root/include/mlm/train"; do
  for path in "$dir"/*; do
    name=$(basename "$path")
    if [[ -f "$path" ]]; then
      echo "FAIL ${path#"$root"/} is outside every room of train/"
      status=1
    elif ! named "$name"; then
      echo "FAIL ${path#"$root"/} is a room the order in $(basename "$0") does not name"
      status=1
    fi
  done
done

for ((i = 0; i < ${#order[@]}; i++)); do
  room=${order[i]}
  dirs=()
  for dir in "$root/src/train/$room" "$root/include/mlm/train/$room"; do
    [[ -d "$dir" ]] && dirs+=("$dir")
  done
  if ((${#dirs[@]} == 0)); then
    echo "FAIL train/$room is in the order but does not exist"
    status=1
    continue
  fi
  for ((j = i + 1; j < ${#order[@]}; j++)); do
    higher=${order[j]}
    hits=$(grep -rnE "#include [\"<]mlm/train/$higher/" "${dirs[@]}" || true)
    if [[ -n "$hits" ]]; then
      echo "FAIL train/$room includes the higher room train/$higher:"
      echo "$hits"
      status=1
    else
      echo "ok   train/$room includes nothing from train/$higher"
    fi
  done
done
exit "$status"
