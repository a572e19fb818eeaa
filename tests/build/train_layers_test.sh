#!/usr/bin/env bash
# The rooms of train/ are layered: checkpoint/ (the checkpoint component) below loop/ (the
# step and the loop) below app/ (a run's assembly: bootstrap, what the user sees, signals,
# commands). An include may go down or sideways, never up.
#   train_layers_test.sh REPO_ROOT
set -euo pipefail
root="$1"
status=0
check() {  # check ROOM HIGHER_ROOM...
  local room="$1"; shift
  for higher in "$@"; do
    hits=$(grep -rn "#include \"mlm/train/$higher/" "$root/src/train/$room" "$root/include/mlm/train/$room" || true)
    if [[ -n "$hits" ]]; then
      echo "FAIL train/$room includes the higher room train/$higher:"
      echo "$hits"
      status=1
    else
      echo "ok   train/$room includes nothing from train/$higher"
    fi
  done
}
check checkpoint loop app
check loop app
exit "$status"
