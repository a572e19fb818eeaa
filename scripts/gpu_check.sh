#!/usr/bin/env bash
# Builds mlm-train on a lent GPU machine and checks it there: GPU tests, the model and train
# stage tests, a 2-rank NCCL run (when there are 2+ GPUs) and mlm-bench at the BERT-base shape
# in bf16. The one script a session runs on the device machine.
#
# The GPU machine has a compiler, cmake, ninja, CUDA and a python3 whose torch package holds
# LibTorch (with its CMake config), but none of the Debian -dev packages the project links
# (yaml-cpp, spdlog, fmt, CLI11, nlohmann-json, GTest, sentencepiece, gloo headers, zlib),
# no apt and no internet. So it is two steps:
#
#   1. HERE, on the Debian 12 dev machine:   scripts/gpu_check.sh --fetch
#      apt-get downloads those -dev packages and the runtime libraries they need (recursively,
#      not libc/libstdc++/compilers/cmake/python/CUDA) into build-gpu/debs/ (ignored by git
#      through /build*/), prints their total size (the carry limit is 64 MiB) and the path to
#      carry.
#   2. THERE, through the device tool:
#        run(command="bash scripts/gpu_check.sh", carry=["build-gpu/debs"], timeout_s=540)
#      unpacks every .deb (dpkg-deb -x, else ar + tar, else python) into build-gpu/sysroot,
#      configures with CMake against it (CMAKE_PREFIX_PATH etc.; LibTorch from the machine's
#      own PyTorch through -DMLM_PYTHON), builds Release with ninja into build-gpu/build, then
#        - nvidia-smi, mlm-train --version
#        - ctest -L gpu, then ctest -L "model|train"
#        - when nvidia-smi -L lists 2+ GPUs: scripts/launch_local.sh 2 configs/tiny.yaml on
#          cuda with the NCCL backend, a few steps
#        - mlm-bench --json at the base shape (12 x 768, vocab 30522, sparse head), cuda, bf16:
#          batch 32 x seq 128, then batch 16 x seq 512; prints tokens/s, MFU and the measured
#          peak
#      Everything printed also goes to $OUT/gpu_check.log when $OUT is set (the device tool
#      brings $OUT back). Each phase is timed; the durations are printed at the end. On a
#      machine still warm from an earlier call, build-gpu/sysroot is kept when the .debs are
#      the same and ninja rebuilds only what changed.
#
# Environment (device side):
#   GPU_CHECK_BUDGET_S   overall budget in seconds (default 480): every phase runs under
#                        `timeout` with what is left; the tests and the NCCL run leave
#                        GPU_CHECK_BENCH_MIN_S (default 60) of it to the bench, which is
#                        skipped with a message when the build left less than that.
#   GPU_CHECK_JOBS       ninja -j (default: nproc); GPU_CHECK_CTEST_J  ctest -j for the
#                        model|train tests (default 4)
#   MLM_PYTHON           the python whose torch to build against (default: the first of
#                        python3 on PATH, /opt/torch/.venv/bin/python3 that has torch)
# Exit status: 0 when everything that ran passed; 1 when a phase failed (the later phases
# still run when they can); 2 on a usage or set-up error.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
gpu_dir="$root/build-gpu"
debs="$gpu_dir/debs"
sysroot="$gpu_dir/sysroot"
build="$gpu_dir/build"

# The -dev packages of scripts/setup.sh's PACKAGES (less compilers and tools).
DEV_PACKAGES=(libgloo-dev libhiredis-dev libibverbs-dev libsentencepiece-dev libcli11-dev
  libspdlog-dev libfmt-dev libyaml-cpp-dev libgtest-dev nlohmann-json3-dev zlib1g-dev)
# Dependencies not followed: the C/C++ runtime and toolchain (the GPU machine has its own),
# maintainer-script tools, and what no compile or link step of the project needs: googletest
# is gtest's source tree, catch2 spdlog's test framework; gloo is compiled into LibTorch, so
# only the headers of libgloo-dev, libhiredis-dev and libibverbs-dev are used, never their
# libraries (libgloo0, libhiredis0.14, libibverbs1 and its libnl and providers). Leaving them
# out also keeps Debian's provider-less libibverbs off LD_LIBRARY_PATH, where NCCL would
# load it instead of the GPU machine's own.
SKIP_RE='^(libc6|libc6-dev|libc-dev|libc-dev-bin|linux-libc-dev|libcrypt1|libcrypt-dev|libgcc-s1|libstdc\+\+6|libstdc\+\+-[0-9]+-dev|gcc(-[0-9]+)?|g\+\+(-[0-9]+)?|cpp(-[0-9]+)?|cmake|python3.*|adduser|debconf|dpkg|perl-base|init-system-helpers|catch2|googletest|libgloo0|libhiredis0\.14|libibverbs1|ibverbs-providers|libnl-.*)$'
CARRY_LIMIT=$((64 * 1024 * 1024))

# --- step 1: --fetch (dev machine) ---------------------------------------------------------
deps_of() {  # the packages "$1" Depends/Pre-Depends on; first choice of each alternative group
  apt-cache depends --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces \
    --no-enhances "$1" 2>/dev/null | awk '
      /^ \|(Pre)?Depends:/ { if (!alt) print $2; alt = 1; next }
      /^  (Pre)?Depends:/  { if (!alt) print $2; alt = 0; next }' |
    sed 's/:any$//' | grep -v '^<'
}

fetch() {
  command -v apt-get >/dev/null && command -v apt-cache >/dev/null ||
    { echo "gpu_check --fetch: needs apt-get (run it on the Debian dev machine)" >&2; exit 2; }
  local -A seen=()
  local queue=("${DEV_PACKAGES[@]}") pkgs=() p d
  while ((${#queue[@]})); do
    p=${queue[0]}
    queue=("${queue[@]:1}")
    [[ -n ${seen[$p]:-} || $p =~ $SKIP_RE ]] && continue
    seen[$p]=1
    pkgs+=("$p")
    for d in $(deps_of "$p"); do queue+=("$d"); done
  done
  # The versions installed here (what the project is built and tested with) where installed.
  local specs=() v
  for p in "${pkgs[@]}"; do
    v=$(dpkg-query -W -f='${Version}' "$p" 2>/dev/null || true)
    specs+=("$p${v:+=$v}")
  done
  mkdir -p "$debs"
  rm -f "$debs"/*.deb
  echo "gpu_check --fetch: ${#specs[@]} packages: ${pkgs[*]}"
  (cd "$debs" && apt-get download -q "${specs[@]}") || {
    echo "gpu_check --fetch: apt-get download failed (stale lists? run apt-get update)" >&2
    exit 1
  }
  # What the libraries need of the GPU machine's C/C++ runtime, checked there before building.
  local tmp
  tmp=$(mktemp -d)
  for p in "$debs"/*.deb; do dpkg-deb -x "$p" "$tmp"; done
  local glibc glibcxx
  glibc=$(find "$tmp" -name '*.so*' -type f -exec objdump -T {} + 2>/dev/null |
    grep -o 'GLIBC_2\.[0-9]*' | sort -t. -k2 -n -u | tail -1)
  glibcxx=$(find "$tmp" -name '*.so*' -type f -exec objdump -T {} + 2>/dev/null |
    grep -o 'GLIBCXX_3\.4\.[0-9]*' | sort -t. -k3 -n -u | tail -1)
  rm -rf "$tmp"
  {
    echo "# fetched by scripts/gpu_check.sh --fetch on $(. /etc/os-release && echo "$PRETTY_NAME")"
    echo "needs ${glibc:-GLIBC_2.0} ${glibcxx:-GLIBCXX_3.4}"
    for p in "$debs"/*.deb; do basename "$p"; done
  } >"$debs/MANIFEST"
  echo
  (cd "$debs" && ls -l --block-size=K -- *.deb | awk '{print "  " $5 "\t" $9}')
  local total
  total=$(cat "$debs"/* | wc -c)
  echo
  printf 'total: %d bytes (%.1f MiB) in %s; the carry limit is 64 MiB\n' "$total" \
    "$(awk -v b="$total" 'BEGIN { print b / 1048576 }')" "${debs#"$root"/}"
  echo "libraries need ${glibc:-?} and ${glibcxx:-?} of the GPU machine"
  if ((total > CARRY_LIMIT)); then
    echo "gpu_check --fetch: too big to carry" >&2
    exit 1
  fi
  echo "device tool: run(command=\"bash scripts/gpu_check.sh\", carry=[\"build-gpu/debs\"], timeout_s=540)"
}

if [[ ${1:-} == --fetch ]]; then
  fetch
  exit 0
elif [[ $# -gt 0 ]]; then
  sed -n '2,/^[^#]/{/^#/p}' "${BASH_SOURCE[0]}"
  [[ $1 == -h || $1 == --help ]] && exit 0
  exit 2
fi

# --- step 2: the GPU machine ---------------------------------------------------------------
tee_pid=
if [[ -n ${OUT:-} ]]; then
  mkdir -p "$OUT"
  exec 3>&1 4>&2
  exec > >(tee -a "$OUT/gpu_check.log") 2>&1
  tee_pid=$!
fi

start_s=$SECONDS
budget=${GPU_CHECK_BUDGET_S:-480}
bench_min=${GPU_CHECK_BENCH_MIN_S:-60}
failed=0
summary=()

left() { echo $((budget - (SECONDS - start_s))); }

finish() {
  local rc=$?
  ((rc == 0 && failed)) && rc=1
  echo
  echo "== gpu_check summary (budget ${budget}s, $((SECONDS - start_s))s elapsed)"
  local line
  for line in "${summary[@]}"; do echo "  $line"; done
  echo "gpu_check: exit $rc"
  if [[ -n $tee_pid ]]; then  # let tee write the last lines before $OUT is collected
    exec 1>&3 2>&4
    wait "$tee_pid" 2>/dev/null
  fi
  exit "$rc"
}
trap finish EXIT

# phase NAME CAP_S COMMAND...: runs COMMAND under timeout min(CAP_S, budget left - RESERVE_S),
# records its duration and status. A phase that fails sets the exit status but does not stop
# the rest. RESERVE_S (default 0): budget kept back for the phases after this one.
phase() {
  local name=$1 cap=$2
  shift 2
  local limit
  limit=$(($(left) - ${RESERVE_S:-0}))
  ((cap > 0 && cap < limit)) && limit=$cap
  if ((limit < 5)); then
    echo "== $name: SKIPPED (budget: $(left)s of ${budget}s left, ${RESERVE_S:-0}s of it kept for the bench)"
    summary+=("$(printf '%-22s skipped (budget)' "$name")")
    return 1
  fi
  echo
  echo "== $name (limit ${limit}s, $(left)s of the budget left)"
  local t0=$SECONDS rc
  timeout --kill-after=10 "$limit" "$@"
  rc=$?
  local what=ok
  ((rc == 124 || rc == 137)) && what="TIMED OUT after ${limit}s"
  ((rc != 0 && rc != 124 && rc != 137)) && what="FAILED (exit $rc)"
  ((rc != 0)) && failed=1
  echo "== $name: $what in $((SECONDS - t0))s"
  summary+=("$(printf '%-22s %4ds  %s' "$name" $((SECONDS - t0)) "$what")")
  return "$rc"
}

find_python() {
  local c
  for c in ${MLM_PYTHON:-} "$(command -v python3 || true)" /opt/torch/.venv/bin/python3; do
    [[ -n $c && -x $c ]] || continue
    if "$c" -c 'import importlib.util as u, sys; sys.exit(u.find_spec("torch") is None)' 2>/dev/null; then
      echo "$c"
      return 0
    fi
  done
  return 1
}

# Unpacks one .deb into the sysroot: dpkg-deb, else ar + tar, else python (ar is simple).
unpack_deb() {
  local deb=$1
  if command -v dpkg-deb >/dev/null; then
    dpkg-deb -x "$deb" "$sysroot"
  elif command -v ar >/dev/null; then
    local tmp member
    tmp=$(mktemp -d)
    (cd "$tmp" && ar x "$deb") || { rm -rf "$tmp"; return 1; }
    member=$(ls "$tmp"/data.tar* 2>/dev/null | head -1)
    [[ -n $member ]] && tar -xf "$member" -C "$sysroot"
    local rc=$?
    rm -rf "$tmp"
    return "$rc"
  else
    "$python" - "$deb" "$sysroot" <<'EOF'
import io, sys, tarfile
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"!<arch>\n", "not a .deb"
pos = 8
while pos < len(data):
    name, size = data[pos:pos + 16].decode().strip().rstrip("/"), int(data[pos + 48:pos + 58])
    body = data[pos + 60:pos + 60 + size]
    if name.startswith("data.tar"):
        if name.endswith(".zst"):
            import zstandard  # only needed for zstd-compressed packages
            body = zstandard.ZstdDecompressor().decompressobj().decompress(body)
        # Absolute links (libz.so) are fixed afterwards; the "data" filter would refuse them.
        trusted = {"filter": "fully_trusted"} if hasattr(tarfile, "fully_trusted_filter") else {}
        tarfile.open(fileobj=io.BytesIO(body)).extractall(sys.argv[2], **trusted)
        break
    pos += 60 + size + (size & 1)
EOF
  fi
}

unpack() {
  local stamp="$sysroot/.gpu_check-stamp" want
  want=$(cd "$debs" && md5sum -- *.deb | md5sum)
  if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then
    echo "sysroot up to date: $sysroot"
  else
    rm -rf "$sysroot"
    mkdir -p "$sysroot"
    local deb n=0
    for deb in "$debs"/*.deb; do
      unpack_deb "$deb" || { echo "cannot unpack $deb" >&2; return 1; }
      n=$((n + 1))
    done
    # Absolute links (libz.so -> /lib/x86_64-linux-gnu/libz.so.1.2.13) point into the sysroot.
    local link target
    while IFS= read -r -d '' link; do
      target=$(readlink "$link")
      [[ $target == /* ]] && ln -sfn "$sysroot$target" "$link"
    done < <(find "$sysroot" -type l -print0)
    echo "$want" >"$stamp"
    echo "unpacked $n packages into $sysroot"
  fi
  ls -d "$sysroot"/usr/lib/*-linux-gnu* >/dev/null 2>&1 ||
    { echo "no <arch>-linux-gnu directory in $sysroot/usr/lib" >&2; return 1; }
}

check_runtime() {  # the C/C++ runtime here against what the Debian libraries were built for
  local need
  need=$(sed -n 's/^needs //p' "$debs/MANIFEST" 2>/dev/null)
  echo "sysroot libraries need: ${need:-unknown}; this machine: glibc $(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}'), $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
  local want_glibc=${need%% *} have
  want_glibc=${want_glibc#GLIBC_}
  have=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
  if [[ -n $have && -n $want_glibc ]] &&
    [[ $(printf '%s\n%s\n' "$want_glibc" "$have" | sort -V | head -1) != "$want_glibc" ]]; then
    echo "WARNING: glibc $have is older than the $want_glibc the Debian libraries need: the link or the run will fail"
  fi
}

configure() {
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DMLM_PYTHON="$python" \
    "-DCMAKE_PREFIX_PATH=$sysroot/usr;$libdir/cmake;$sysroot/usr/share/cmake" \
    "-DCMAKE_INCLUDE_PATH=$sysroot/usr/include" \
    "-DCMAKE_LIBRARY_PATH=$libdir;$sysroot/lib/$multiarch" \
    "-DCMAKE_EXE_LINKER_FLAGS=-Wl,-rpath-link,$libdir -Wl,-rpath-link,$sysroot/lib/$multiarch" \
    "-DCMAKE_SHARED_LINKER_FLAGS=-Wl,-rpath-link,$libdir -Wl,-rpath-link,$sysroot/lib/$multiarch" \
    "-DCMAKE_BUILD_RPATH=$libdir" || return
  # Where each dependency was found: all of them should be under the sysroot.
  grep -E '^(yaml-cpp|spdlog|fmt|CLI11|nlohmann_json|GTest|Torch)_DIR|^(MLM_FMT|MLM_SPDLOG|SentencePiece|ZLIB)_(INCLUDE_DIR|LIBRARY|TRAIN_LIBRARY|LIBRARY_RELEASE):|^MLM_PYTHON:' \
    "$build/CMakeCache.txt" | sed 's/^/  /'
}

info() {
  local rc=0
  nvidia-smi || rc=$?
  echo
  "$build/mlm-train" --version || rc=$?
  return "$rc"
}

run_ctest() {  # run_ctest LABEL-REGEX [ctest args...]
  (cd "$build" && ctest --output-on-failure --no-tests=error --timeout 300 -L "$@")
}

nccl_run() {
  local run="$gpu_dir/runs/nccl"
  rm -rf "$run"
  mkdir -p "$run"
  local settings=(--set "train.output_dir=$run" --set "tokenizer.model=$run/spm_tiny.model")
  # The tokenizer first, once, so the two ranks do not both train it.
  "$build/mlm-tokenizer" --config "$root/configs/tiny.yaml" "${settings[@]}" || return
  MLM_TRAIN="$build/mlm-train" "$root/scripts/launch_local.sh" 2 "$root/configs/tiny.yaml" \
    "${settings[@]}" --set train.device=cuda --set distributed.backend=nccl \
    --set train.max_steps=12 --set checkpoint.every_steps=6 --set eval.every_steps=6 \
    --set logging.every_steps=2
}

bench_one() {  # bench_one BATCH SEQ
  local batch=$1 seq=$2 json
  json=$(MLM_LOG_LEVEL=warn "$build/mlm-bench" --config "$root/configs/mini.yaml" --json \
    --steps 20 --warmup 3 \
    --set model.num_hidden_layers=12 model.hidden_size=768 model.num_attention_heads=12 \
    model.intermediate_size=3072 model.max_position_embeddings=512 model.vocab_size=30522 \
    model.sparse_head=true train.micro_batch_size="$batch" data.seq_len="$seq" \
    masking.mlm_probability=0.15 train.precision=bf16 train.threads="$(nproc)" \
    train.device=cuda) || return
  echo "$json"
  "$python" - "$json" <<'PY'
import json, sys
r = json.loads(sys.argv[1])
ms = lambda key: f"{r[key] * 1e3:.1f}"
print(f"base bf16 {r['device']}, batch {r['batch']} x seq {r['seq_len']}: "
      f"{r['tokens_per_s']:.0f} tokens/s, {ms('step_s')} ms/step (fwd {ms('forward_s')} "
      f"bwd {ms('backward_s')} opt {ms('optimizer_s')} ms) | MFU {r['mfu']:.3f}: "
      f"{r['model_gflops_per_s'] / 1e3:.1f} model TFLOP/s of a measured "
      f"{r['peak_gflops'] / 1e3:.1f} TFLOP/s {r['precision']} peak")
PY
}

bench() {
  local rc=0
  bench_one 32 128 || rc=1
  bench_one 16 512 || rc=1
  return "$rc"
}

echo "gpu_check: $(date -u '+%Y-%m-%d %H:%M:%S UTC') on ${HOSTNAME:-?}, $(nproc) cores, budget ${budget}s"
echo "git: $(git -C "$root" log -1 --format='%h %s' 2>/dev/null || echo 'no git')"
ls "$debs"/*.deb >/dev/null 2>&1 || {
  echo "gpu_check: no .deb files in ${debs#"$root"/}: run scripts/gpu_check.sh --fetch on the dev machine and carry build-gpu/debs" >&2
  exit 2
}
python=$(find_python) || {
  echo "gpu_check: no python3 with torch found (set MLM_PYTHON)" >&2
  exit 2
}
echo "python: $python ($("$python" -c 'import importlib.metadata as m; print("torch", m.version("torch"))' 2>/dev/null))"
for tool in cmake ninja; do
  command -v "$tool" >/dev/null || { echo "gpu_check: $tool not found" >&2; exit 2; }
done
echo "cmake: $(cmake --version | head -1), ninja $(ninja --version), nvcc: $(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || echo none)"

# The phases run under timeout in a child bash: it sees these functions and variables.
export root gpu_dir debs sysroot build python
export -f unpack_deb unpack configure info run_ctest nccl_run bench_one bench
phase unpack 120 bash -c unpack || exit 1
multiarch=$(cd "$sysroot/usr/lib" && ls -d -- *-linux-gnu* 2>/dev/null | head -1)
libdir="$sysroot/usr/lib/$multiarch"
export multiarch libdir
check_runtime
phase configure 120 bash -c configure || exit 1
phase build 0 ninja -C "$build" -j "${GPU_CHECK_JOBS:-$(nproc)}" || exit 1

# The executables and tests find the Debian libraries' own dependencies (libspdlog needs
# libfmt) through LD_LIBRARY_PATH; their direct ones are in their RUNPATH.
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
RESERVE_S=0 phase info 30 bash -c info
# The tests and the NCCL run stop early rather than leave the bench less than its minimum
# (when the build left the bench its minimum at all).
RESERVE_S=0
(($(left) >= bench_min)) && RESERVE_S=$bench_min
phase "ctest -L gpu" 150 bash -c 'run_ctest gpu'
phase "ctest -L model|train" 180 bash -c 'run_ctest "model|train" -j "${GPU_CHECK_CTEST_J:-4}"'
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
if ((gpus >= 2)); then
  phase "nccl 2 ranks" 120 bash -c nccl_run
else
  echo
  echo "== nccl 2 ranks: SKIPPED ($gpus GPU(s); needs 2)"
  summary+=("$(printf '%-22s skipped (%d GPU)' "nccl 2 ranks" "$gpus")")
fi
if (($(left) < bench_min)); then
  echo
  echo "== bench: SKIPPED: $(left)s of the ${budget}s budget left, it needs ${bench_min}s (GPU_CHECK_BENCH_MIN_S)"
  summary+=("$(printf '%-22s skipped (budget)' bench)")
else
  RESERVE_S=0 phase bench 0 bash -c bench
fi
