#!/usr/bin/env bash
# Starts N ranks of mlm-train on this machine, the way torchrun would (RANK, WORLD_SIZE,
# LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT), and waits for all of them.
#
#   scripts/launch_local.sh N CONFIG [mlm-train arguments...]
#
# Output lines are prefixed "[rank R] ". Exit status: 0 when every rank succeeded, else the
# exit status of the first rank that failed (128+signal when a signal ended it). When a rank
# fails, the others get SIGTERM (mlm-train stops at the next step boundary), then SIGKILL
# after MLM_LAUNCH_GRACE_S seconds (default 30). Ctrl-C (or SIGINT/SIGTERM to this script) is
# passed on to every rank once, so each stops cleanly; a second Ctrl-C forces them.
#
# Environment: MLM_TRAIN (the executable; default $BUILD_DIR/mlm-train, BUILD_DIR defaulting
# to build/, then PATH),
# MASTER_ADDR (default 127.0.0.1), MASTER_PORT (default a free port),
# OMP_NUM_THREADS (default: this machine's cores divided by N, at least 1).
set -u -o pipefail

if ((BASH_VERSINFO[0] < 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] < 1))); then
  echo "$0: needs bash 5.1 or newer (wait -n -p), this is $BASH_VERSION" >&2
  exit 2
fi

usage() {
  echo "usage: $0 N CONFIG [mlm-train arguments...]" >&2
  exit 2
}
(($# >= 2)) || usage
nranks=$1
config=$2
shift 2
[[ $nranks =~ ^[1-9][0-9]*$ ]] || { echo "$0: N must be a positive integer, got '$nranks'" >&2; exit 2; }
[[ -f $config ]] || { echo "$0: config file '$config' does not exist" >&2; exit 2; }

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
exe=${MLM_TRAIN:-}
if [[ -z $exe ]]; then
  if [[ -x ${BUILD_DIR:-$root/build}/mlm-train ]]; then
    exe=${BUILD_DIR:-$root/build}/mlm-train
  else
    exe=$(command -v mlm-train || true)
  fi
fi
[[ -n $exe && -x $exe ]] || {
  echo "$0: cannot find mlm-train: build it (build/mlm-train) or set MLM_TRAIN=/path/to/mlm-train" >&2
  exit 2
}

free_port() {
  if [[ -x /usr/bin/python3 ]]; then
    /usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
    return
  fi
  local port
  for _ in $(seq 50); do  # no python: a random port nobody answers on
    port=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return
    fi
  done
  echo "$0: found no free port; set MASTER_PORT" >&2
  exit 1
}

export MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
export MASTER_PORT=${MASTER_PORT:-$(free_port)}
cores=$(nproc 2>/dev/null || echo 1)
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$((cores / nranks > 0 ? cores / nranks : 1))}
export WORLD_SIZE=$nranks LOCAL_WORLD_SIZE=$nranks
unset TORCHELASTIC_USE_AGENT_STORE  # rank 0 hosts the store

prefix_lines() {  # the output filter of rank $1: immune to Ctrl-C, so that a rank still
  trap '' INT TERM  # writing its checkpoint and last log lines has somewhere to write them
  exec sed -u "s/^/[rank $1] /"
}

# Each rank runs in its own session (env and setsid exec in place, so $! is the rank): a
# terminal Ctrl-C reaches only this script, which passes it on exactly once (twice would
# force-quit). env restores SIGINT, which bash leaves ignored in background commands.
default_int=()
env --default-signal=INT true 2>/dev/null && default_int=(env --default-signal=INT)
declare -A running=()  # pid -> rank
for ((rank = 0; rank < nranks; rank++)); do
  RANK=$rank LOCAL_RANK=$rank "${default_int[@]}" setsid "$exe" --config "$config" "$@" \
    > >(prefix_lines "$rank") 2> >(prefix_lines "$rank" >&2) &
  running[$!]=$rank
done
echo "launch_local: $nranks rank(s) of $exe, store $MASTER_ADDR:$MASTER_PORT" >&2

signal_ranks() {  # signal_ranks SIG: to every rank still running
  local pid
  for pid in "${!running[@]}"; do kill "-$1" "$pid" 2>/dev/null || true; done
}
stopping=0
on_signal() {  # pass Ctrl-C / termination on, once per signal received
  echo "launch_local: passing SIG$1 on to the ranks" >&2
  stopping=1
  signal_ranks "$1"
}
trap 'on_signal INT' INT
trap 'on_signal TERM' TERM

first_failure=0
killer=
while ((${#running[@]} > 0)); do
  done_pid=
  wait -n -p done_pid "${!running[@]}"
  status=$?
  [[ -n ${done_pid:-} ]] || continue  # wait was interrupted by a signal
  rank=${running[$done_pid]}
  unset "running[$done_pid]"
  if ((status != 0)); then
    echo "launch_local: rank $rank exited with status $status" >&2
    if ((first_failure == 0)); then
      first_failure=$status
      if ((${#running[@]} > 0 && !stopping)); then
        echo "launch_local: stopping the other ranks" >&2
        signal_ranks TERM
        grace=${MLM_LAUNCH_GRACE_S:-30}
        (
          trap 'exit 0' TERM  # all ranks ended in time
          sleep "$grace" &
          wait $!
          for pid in "${!running[@]}"; do kill -KILL "$pid" 2>/dev/null; done
        ) &
        killer=$!
      fi
    fi
  fi
done
[[ -n $killer ]] && kill "$killer" 2>/dev/null
wait 2>/dev/null  # the output filters
exit "$first_failure"
