#!/usr/bin/env bash
# Builds mlm-train on a lent GPU machine and checks it there: GPU tests, the model and train
# stage tests, a 2-rank NCCL run (when there are 2+ GPUs) and mlm-bench against the PyTorch
# peers at the BERT-base and ModernBERT-base shapes in bf16. The one script a session runs on
# the device machine; --dry-run runs the same phases here first, on the CPU.
#
#   scripts/gpu_check.sh --fetch     (dev machine) fetch the .deb files to carry
#   scripts/gpu_check.sh             (GPU machine) unpack, configure, build, then the checks
#   scripts/gpu_check.sh --dry-run   (dev machine) the checks only, on the CPU build
#   scripts/gpu_check.sh --reference (dev machine) re-make the CPU curve the learning phase
#                                    compares with (tests/fixtures/curves/tiny_cpu_fp32.json)
#
# The GPU machine has a compiler, cmake, ninja, CUDA and a python3 whose torch package holds
# LibTorch (with its CMake config) and transformers, but none of the Debian -dev packages the
# project links (yaml-cpp, spdlog, fmt, CLI11, nlohmann-json, GTest, sentencepiece, gloo
# headers, zlib), no apt and no internet. So it is two steps:
#
#   1. HERE, on the Debian 12 dev machine:   scripts/gpu_check.sh --fetch
#      apt-get downloads those -dev packages and the runtime libraries they need (recursively,
#      not libc/libstdc++/compilers/cmake/python/CUDA) into build-gpu/debs/ (ignored by git
#      through /build*/), prints their total size (the carry limit is 64 MiB) and the path to
#      carry. Then scripts/gpu_check.sh --dry-run, so a broken phase or flag shows here.
#   2. THERE, through the device tool:
#        run(command="bash scripts/gpu_check.sh", carry=["build-gpu/debs"], timeout_s=540)
#      unpacks every .deb (dpkg-deb -x, else ar + tar, else python) into build-gpu/sysroot,
#      configures with CMake against it (CMAKE_PREFIX_PATH etc.; LibTorch from the machine's
#      own PyTorch through -DMLM_PYTHON), builds Release with ninja into build-gpu/build, then
#      the phases:
#        info      nvidia-smi, mlm-train --version, the python's torch and transformers
#        ctest -L gpu, then ctest -L "model|train"
#        learning  200 steps of configs/tiny.yaml (seed 42) in bf16 and in fp16 against the CPU's
#                  fp32 curve: the training loss of every 50-step window and the evaluation
#                  loss every 50 steps must lie within prediction intervals of ten CPU runs
#                  (seeds 1-10, tests/fixtures/curves/tiny_cpu_fp32.json) that hold together at
#                  99% (scripts/curve_check.py)
#        2 ranks   when nvidia-smi -L lists 2+ GPUs: scripts/launch_local.sh 2 configs/tiny.yaml
#                  on cuda with the NCCL backend, 12 steps
#        bench     at each shape, mlm-bench --json, then the transformers peer
#                  (scripts/peers/hf_bert.py or hf_modernbert.py) and the eager one
#                  (scripts/peers/eager_bert.py), all with --device cuda --bf16, 3 warm-up + 20
#                  timed steps: BERT-base (12 x 768, I 3072, vocab 30522, sparse head, p 0.15)
#                  at batch 32 x seq 128 and 16 x 512; ModernBERT-base (configs/modernbert-base.yaml:
#                  22 x 768, GeGLU I 1152, vocab 50368, p 0.3) at 32 x 128 and 8 x 1024. First,
#                  per shape, one shared peak: mlm-bench --peak-only (8192^3 products and the
#                  step's own, FLOP-weighted), its square rate passed to every side
#                  (--peak-gflops). Each side's tokens/s, MFU against the shared square and
#                  model-shape peaks, the ratio ours / side, and peak GPU memory (the caching
#                  allocator's peak of tensor memory, torch.cuda.max_memory_allocated). At
#                  the ModernBERT shapes the eager peer is a post-LN BERT of that size (there is
#                  no hand-written ModernBERT peer): its MFU compares, its tokens/s does not.
#      On a machine still warm from an earlier call, build-gpu/sysroot is kept when the .debs
#      are the same and ninja rebuilds only what changed.
#
# --dry-run: every phase after the build, on THIS machine's CPU build: no unpack, configure or
# build (BUILD_DIR, default build/, must hold mlm-train, mlm-bench and mlm-tokenizer),
# device cpu, fp32, the project's .venv/bin/python; the ctest phases run the first 2 tests of
# their label whose executables are built (skipped, saying so, when none are), the learning
# phase runs fp32 and bf16 on the CPU, the 2-rank run
# uses Gloo on the CPU, the bench runs one tiny shape per model (BERT 2 x 64 at 4 x 32,
# ModernBERT 3 x 64 at 2 x 64, vocab 1000) on one thread, 1 warm-up + 2 timed steps, the shared
# peak from 1 sample per product. The phases are the same functions, fed other settings. A few
# minutes; exit 0 when everything that ran passed.
#
# The report: each phase's status and seconds, then the bench table, as markdown in
# gpu_check_report.md, and everything printed in gpu_check.log, both in $OUT when it is set
# (the device tool brings $OUT back), else in build-gpu/ (build-gpu/dry-run/ with --dry-run).
# The report is also printed at the end.
#
# Environment (device side):
#   GPU_CHECK_BUDGET_S   overall budget in seconds (default 480): every phase runs under
#                        `timeout` with what is left; the tests and the NCCL run leave
#                        GPU_CHECK_BENCH_MIN_S (default 120) of it to the bench, which is
#                        skipped with a message when the build left less than that (a bench
#                        cut short keeps the rows it finished).
#   GPU_CHECK_JOBS       ninja -j (default: nproc); GPU_CHECK_CTEST_J  ctest -j for the
#                        model|train tests (default 4)
#   MLM_PYTHON           the python whose torch to build against and to run the peers with
#                        (default: the first of python3 on PATH, /opt/torch/.venv/bin/python3
#                        that has torch; with --dry-run, .venv/bin/python)
#   BUILD_DIR            (--dry-run) the CPU build directory (default build/)
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

# --- the learning phase's curve ------------------------------------------------------------
curve_reference_file="$root/tests/fixtures/curves/tiny_cpu_fp32.json"

# curve_tokenizer BUILD TOKENIZER, then curve_run BUILD OUT_DIR TOKENIZER DEVICE PRECISION SEED:
# the run the learning phase checks and the reference is made of, the same settings for both.
# (From the repository: the config's corpus paths are relative to it.)
curve_tokenizer() {
  (cd "$root" && "$1/mlm-tokenizer" --config configs/tiny.yaml --set tokenizer.model="$2")
}

curve_run() {
  local build=$1 out=$2 tokenizer=$3 device=$4 precision=$5 seed=$6
  (cd "$root" && "$build/mlm-train" --config configs/tiny.yaml --set train.output_dir="$out" \
    --set tokenizer.model="$tokenizer" --set train.device="$device" --set train.precision="$precision" \
    --set train.seed="$seed" --set train.max_steps=200 --set logging.every_steps=50 \
    --set eval.every_steps=50 --set eval.max_batches=0 --set checkpoint.every_steps=0 \
    --set logging.progress_bar=off --set train.threads=1)
}

make_reference() {  # --reference: ten CPU fp32 runs, seeds 1-10, into $curve_reference_file
  local build=${BUILD_DIR:-$root/build} python=${MLM_PYTHON:-$root/.venv/bin/python}
  local tmp seed runs=()
  tmp=$(mktemp -d)
  curve_tokenizer "$build" "$tmp/spm_tiny.model" || exit 1
  for seed in $(seq 1 10); do
    curve_run "$build" "$tmp/seed$seed" "$tmp/spm_tiny.model" cpu fp32 "$seed" >"$tmp/seed$seed.log" 2>&1 ||
      { cat "$tmp/seed$seed.log"; exit 1; }
    runs+=("$tmp/seed$seed/metrics.jsonl")
  done
  mkdir -p "$(dirname "$curve_reference_file")"
  # Where the numbers come from, not the temporary paths they were read from.
  "$python" "$root/scripts/curve_check.py" reference "$curve_reference_file" "${runs[@]}" \
    --source "scripts/gpu_check.sh --reference: configs/tiny.yaml, cpu, fp32, 1 thread, seeds 1-10, 200 steps (curve_run)" ||
    exit 1
  rm -rf "$tmp"
}

usage() { sed -n '2,/^[^#]/{/^#/p}' "${BASH_SOURCE[0]}"; }
dry_run=0
case "${1:-}" in
  --fetch) (($# == 1)) || { usage; exit 2; }; fetch; exit 0 ;;
  --dry-run) dry_run=1 ;;
  --reference) (($# == 1)) || { usage; exit 2; }; make_reference; exit 0 ;;
  -h|--help) usage; exit 0 ;;
  "") ;;
  *) usage; exit 2 ;;
esac
(($# <= 1)) || { usage; exit 2; }

# --- step 2: the checks, on the GPU machine (or on this CPU with --dry-run) -----------------
# The settings every phase takes: the dry run changes these, never the phases.
if ((dry_run)); then
  build=${BUILD_DIR:-$root/build}
  report_dir=${OUT:-$gpu_dir/dry-run}
  device=cpu precision=fp32 dist_backend=gloo
  learn_precisions="fp32 bf16"
  ctest_max=2                # the first tests of each label, of those whose executables exist
  bench_warmup=1 bench_steps=2
  bench_peak_repeats=1       # the shared peak's samples per product: the plumbing, not the figure
  # One thread: on the shared dev machine's busy cores, a spinning team of two OpenMP threads
  # made a tiny step take 2 s instead of 0.03 s.
  bench_threads=1
  # layers hidden heads intermediate vocab; ModernBERT with 3 layers has a global one and two
  # sliding-window ones.
  bert_shape="2 64 2 256 1000"
  modernbert_shape="3 64 2 96 1000"
  # arch batch seq: one shape each, as each peer's start-up (imports) is most of its time here
  bench_cases=("bert 4 32" "modernbert 2 64")
else
  report_dir=${OUT:-$gpu_dir}
  runs_dir=$gpu_dir/runs     # not under $OUT: the device tool would bring the checkpoints back
  device=cuda precision=bf16 dist_backend=nccl
  learn_precisions="bf16 fp16"
  ctest_max=0                # every test of the label
  bench_warmup=3 bench_steps=20
  bench_peak_repeats=5
  bench_threads=$(nproc)
  bert_shape="12 768 12 3072 30522"
  modernbert_shape="22 768 12 1152 50368"
  bench_cases=("bert 32 128" "bert 16 512" "modernbert 32 128" "modernbert 8 1024")
fi
mkdir -p "$report_dir"
report_dir=$(cd "$report_dir" && pwd)  # absolute: the 2-rank run works from the repository
((dry_run)) && runs_dir=$report_dir/runs  # tiny checkpoints
log="$report_dir/gpu_check.log"
report="$report_dir/gpu_check_report.md"
bench_rows="$report_dir/gpu_check_bench.rows"  # written by the bench phase, row by row
rm -f "$bench_rows"
exec 3>&1 4>&2
exec > >(tee "$log") 2>&1
tee_pid=$!

start_s=$SECONDS
budget=${GPU_CHECK_BUDGET_S:-480}
# 16 processes at 4 shapes (the shared peak, mlm-bench, two peers), each ~10 s on an H200
# (the peers' imports and CUDA start-up).
bench_min=${GPU_CHECK_BENCH_MIN_S:-120}
failed=0
report_rows=()
# A phase that does not apply here writes why to $skip_note and exits $SKIPPED (automake's 77).
SKIPPED=77
skip_note="$report_dir/gpu_check.skip"
rm -f "$skip_note"

left() { echo $((budget - (SECONDS - start_s))); }

record() {  # record NAME SECONDS STATUS: a row of the report's phase table
  report_rows+=("| ${1//|/\\|} | ${3//|/\\|} | $2 |")
}

write_report() {  # write_report EXIT-STATUS
  {
    echo "# gpu_check report"
    echo
    if ((dry_run)); then
      echo "Dry run on the CPU build $build: $device, $precision, tiny shapes."
    else
      echo "GPU run: $device, $precision."
    fi
    echo "$(date -u '+%Y-%m-%d %H:%M:%S UTC') on ${HOSTNAME:-?}, $(nproc) cores;" \
      "git $(git -C "$root" log -1 --format=%h 2>/dev/null || echo '?');" \
      "$((SECONDS - start_s)) s of the ${budget} s budget; exit $1. Log: gpu_check.log."
    echo
    echo "| phase | status | seconds |"
    echo "| --- | --- | ---: |"
    ((${#report_rows[@]})) && printf '%s\n' "${report_rows[@]}"
    if [[ -s $bench_rows ]]; then
      echo
      echo "## bench: $device, $precision, $bench_warmup warm-up + $bench_steps timed steps"
      echo
      echo "| model, batch x seq | side | tokens/s | MFU | MFU, model shapes | peak TFLOP/s (square / model shapes) | ours / side | peak memory |"
      echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"
      cat "$bench_rows"
      echo
      echo "MFU: each side's model FLOPs per second over one peak shared by every side of a shape," \
        "measured once by mlm-bench --peak-only in the run's dtype (warmed up, best of $bench_peak_repeats): the" \
        "square products' rate (MFU) and the step's own products' FLOP-weighted rate (MFU, model" \
        "shapes). A side whose JSON says peak_source in-process measured its own. Peak memory on a GPU:" \
        "the most memory each side's tensors held (torch.cuda.max_memory_allocated, and the same" \
        "counter of the caching allocator in mlm-bench); mlm-bench adds its process's peak host RSS. At the ModernBERT shapes" \
        "\"eager (BERT)\" is scripts/peers/eager_bert.py's post-LN BERT at that size (no" \
        "hand-written ModernBERT peer): its MFU compares, its tokens/s does not."
    fi
  } >"$report"
  rm -f "$bench_rows"
}

finish() {
  local rc=$?
  ((rc == 0 && failed)) && rc=1
  write_report "$rc"
  echo
  cat "$report"
  echo
  echo "gpu_check: exit $rc; report $report"
  exec 1>&3 2>&4  # let tee write the last lines before $OUT is collected
  wait "$tee_pid" 2>/dev/null
  exit "$rc"
}
trap finish EXIT

# phase NAME CAP_S COMMAND...: runs COMMAND under timeout min(CAP_S, budget left - RESERVE_S),
# records its duration and status. A phase that fails sets the exit status but does not stop
# the rest; one that exits $SKIPPED is recorded as skipped. RESERVE_S (default 0): budget kept
# back for the phases after this one.
phase() {
  local name=$1 cap=$2
  shift 2
  local limit
  limit=$(($(left) - ${RESERVE_S:-0}))
  ((cap > 0 && cap < limit)) && limit=$cap
  if ((limit < 5)); then
    echo "== $name: SKIPPED (budget: $(left)s of ${budget}s left, ${RESERVE_S:-0}s of it kept for the bench)"
    record "$name" 0 "skipped (budget)"
    return 1
  fi
  echo
  echo "== $name (limit ${limit}s, $(left)s of the budget left)"
  local t0=$SECONDS rc
  timeout --kill-after=10 "$limit" "$@"
  rc=$?
  local what=ok
  ((rc == SKIPPED)) && what="skipped: $(cat "$skip_note" 2>/dev/null)"
  rm -f "$skip_note"
  ((rc == 124 || rc == 137)) && what="TIMED OUT after ${limit}s"
  ((rc != 0 && rc != SKIPPED && rc != 124 && rc != 137)) && what="FAILED (exit $rc)"
  ((rc != 0 && rc != SKIPPED)) && failed=1
  echo "== $name: $what in $((SECONDS - t0))s"
  record "$name" $((SECONDS - t0)) "$what"
  return "$rc"
}

skip() {  # skip NAME REASON: a phase that does not run, and why
  echo
  echo "== $1: SKIPPED ($2)"
  record "$1" 0 "skipped: $2"
}

find_python() {
  local c
  local candidates=("${MLM_PYTHON:-}" "$(command -v python3 || true)" /opt/torch/.venv/bin/python3)
  ((dry_run)) && candidates=("${MLM_PYTHON:-$root/.venv/bin/python}")  # the CPU build's
  for c in "${candidates[@]}"; do
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
  if [[ $device == cuda ]]; then
    nvidia-smi || rc=$?
  else
    echo "device cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores"
  fi
  echo
  "$build/mlm-train" --version || rc=$?
  # The peers need transformers, and on a GPU a torch that sees it.
  "$python" - "$device" <<'PY' || rc=$?
import sys, torch, transformers
print(f"python torch {torch.__version__} (CUDA {torch.version.cuda}, {torch.cuda.device_count()} "
      f"device(s)), transformers {transformers.__version__}")
if sys.argv[1] == "cuda" and not torch.cuda.is_available():
    sys.exit("this torch sees no CUDA device: the peers cannot run on cuda")
PY
  return "$rc"
}

run_ctest() {  # run_ctest LABEL-REGEX [ctest args...]: the label's tests; the first ctest_max of them when set
  local label=$1
  shift
  local select=(-L "$label")
  if ((ctest_max > 0)); then
    # Test executables that are not built list no tests (gtest discovery at test time).
    local names
    names=$(cd "$build" && ctest -N -L "$label" | sed -n 's/^ *Test *#[0-9]*: //p' | head -n "$ctest_max")
    if [[ -z $names ]]; then
      echo "no test labelled '$label' in $build: its test executables are not built" | tee "$skip_note"
      return "$SKIPPED"
    fi
    echo "the first $ctest_max of the label: $(paste -sd' ' <<<"$names")"
    select+=(-R "^($(sed 's/[][()|.*+?^$\\]/\\&/g' <<<"$names" | paste -sd'|'))\$")
  fi
  (cd "$build" && ctest --output-on-failure --no-tests=error --timeout 300 "${select[@]}" "$@")
}

dist_run() {  # two ranks of mlm-train on configs/tiny.yaml with $dist_backend on $device
  cd "$root" || return  # the config's corpus paths are relative to the repository
  local run="$runs_dir/dist-$dist_backend"
  rm -rf "$run"
  mkdir -p "$run"
  local settings=(--set "train.output_dir=$run" --set "tokenizer.model=$run/spm_tiny.model")
  # The tokenizer first, once, so the two ranks do not both train it.
  "$build/mlm-tokenizer" --config "$root/configs/tiny.yaml" "${settings[@]}" || return
  MLM_TRAIN="$build/mlm-train" "$root/scripts/launch_local.sh" 2 "$root/configs/tiny.yaml" \
    "${settings[@]}" --set train.device="$device" --set distributed.backend="$dist_backend" \
    --set train.max_steps=12 --set checkpoint.every_steps=6 --set eval.every_steps=6 \
    --set logging.every_steps=2
}

learning_run() {  # configs/tiny.yaml, 200 steps on $device in each of $learn_precisions, against the CPU's curve
  local run="$runs_dir/learning" rc=0 p
  rm -rf "$run"
  mkdir -p "$run"
  curve_tokenizer "$build" "$run/spm_tiny.model" || return
  for p in $learn_precisions; do
    curve_run "$build" "$run/$p" "$run/spm_tiny.model" "$device" "$p" 42 >"$run/$p.log" 2>&1 ||
      { tail -n 20 "$run/$p.log"; rc=1; continue; }
    "$python" "$root/scripts/curve_check.py" compare "$curve_reference_file" "$run/$p/metrics.jsonl" \
      --label "learning, $device $p" || rc=1
  done
  return "$rc"
}

# bench_row LABEL SIDE JSON [OURS-JSON]: prints one side's line and appends its row to the
# report's bench table; the ratio ours / side when OURS-JSON is given. An empty or broken JSON
# (the side failed) is a FAILED row and exit status 1.
bench_row() {
  "$python" - "$@" "$bench_rows" <<'PY'
import json, os, sys
*args, rows = sys.argv[1:]
label, side, text = args[:3]
ours_text = args[3] if len(args) > 3 else ""
try:
    r = json.loads(text)
except ValueError:
    print(f"   {side:<13} FAILED")
    with open(rows, "a") as f:
        f.write(f"| {label} | {side} | FAILED | | | | | |\n")
    sys.exit(1)
# The shared model-shape peak ($PEAK_MODEL, GFLOP/s; empty when its measurement failed).
peak_model = float(os.environ.get("PEAK_MODEL") or 0)
model_gflops = r.get("model_gflops_per_s", r["mfu"] * r["peak_gflops"])
mfu_model = f"{model_gflops / peak_model:.3f}" if peak_model > 0 else "-"
peaks = f"{r['peak_gflops'] / 1e3:.3g} / " + (f"{peak_model / 1e3:.3g}" if peak_model > 0 else "-")
ratio = ""
if ours_text:
    try:
        ratio = f"{json.loads(ours_text)['tokens_per_s'] / r['tokens_per_s']:.2f}"
    except (ValueError, KeyError, ZeroDivisionError):
        ratio = "?"
memory = ", ".join(f"{r[key]:.0f} MB {where}" for key, where in
                   (("peak_mem_mb", "GPU"), ("peak_rss_mb", "host RSS")) if key in r) or "-"
line = (f"   {side:<13} {r['tokens_per_s']:10.0f} tokens/s  MFU {r['mfu']:.3f} of "
        f"{r['peak_gflops'] / 1e3:.3g} TFLOP/s ({r.get('peak_source', '?')}), {mfu_model} of the "
        f"model shapes'  {memory}")
if "forward_s" in r:
    line += (f"  ({r['step_s'] * 1e3:.1f} ms/step: fwd {r['forward_s'] * 1e3:.1f}"
             f" bwd {r['backward_s'] * 1e3:.1f} opt {r['optimizer_s'] * 1e3:.1f} ms)")
if ratio:
    line += f"  ours / {side} {ratio}"
print(line)
with open(rows, "a") as f:
    f.write(f"| {label} | {side} | {r['tokens_per_s']:.0f} | {r['mfu']:.3f} | {mfu_model} | "
            f"{peaks} | {ratio or '-'} | {memory} |\n")
PY
}

bench_case() {  # bench_case ARCH BATCH SEQ: mlm-bench, then each peer, at ARCH's shape
  local arch=$1 batch=$2 seq=$3 shape layers hidden heads inter vocab
  shape="${arch}_shape"
  read -r layers hidden heads inter vocab <<<"${!shape}"
  local config mlm_prob ours_set peers
  case $arch in
    bert)
      config=configs/mini.yaml mlm_prob=0.15
      ours_set=(model.max_position_embeddings=512 model.sparse_head=true)
      peers=("hf:hf_bert" "eager:eager_bert") ;;
    modernbert)  # the rest of the model (RoPE, local/global layers, no biases) is the config's
      config=configs/modernbert-base.yaml mlm_prob=0.3
      ours_set=(train.grad_accum_steps=1)
      peers=("hf:hf_modernbert" "eager (BERT):eager_bert") ;;
    *) echo "bench_case: unknown architecture $arch" >&2; return 2 ;;
  esac
  local label="$arch ${layers}x$hidden, $batch x $seq" rc=0 ours
  echo "-- $label (I $inter, vocab $vocab, p $mlm_prob)"
  local bench_args=(--config "$root/$config" --json --steps "$bench_steps" --warmup "$bench_warmup"
    --set model.num_hidden_layers="$layers" model.hidden_size="$hidden"
    model.num_attention_heads="$heads" model.intermediate_size="$inter" model.vocab_size="$vocab"
    "${ours_set[@]}" train.micro_batch_size="$batch" data.seq_len="$seq"
    masking.mlm_probability="$mlm_prob" train.precision="$precision" train.threads="$bench_threads"
    train.device="$device")
  local flags=(--layers "$layers" --hidden "$hidden" --heads "$heads" --intermediate "$inter"
    --vocab "$vocab" --batch "$batch" --seq "$seq" --steps "$bench_steps" --warmup "$bench_warmup"
    --mlm-prob "$mlm_prob" --threads "$bench_threads" --device "$device")
  [[ $precision == bf16 ]] && flags+=(--bf16)
  # One peak for every side: measured once at this shape; without it each side measures its own.
  local peak peak_square="" peak_model=""
  peak=$(MLM_LOG_LEVEL=warn "$build/mlm-bench" "${bench_args[@]}" --peak-only --peak-repeats "$bench_peak_repeats") &&
    read -r peak_square peak_model < <("$python" -c \
      'import json, sys; j = json.loads(sys.argv[1]); print(j["square_gflops"], j["model_gflops"])' "$peak")
  if [[ -n $peak_square ]]; then
    printf '   shared peak: square %.1f GFLOP/s, model shapes %.1f GFLOP/s\n' "$peak_square" "$peak_model"
    bench_args+=(--peak-gflops "$peak_square")
    flags+=(--peak-gflops "$peak_square")
  else
    echo "   shared peak: FAILED ($peak); each side measures its own"
    rc=1
  fi
  ours=$(MLM_LOG_LEVEL=warn "$build/mlm-bench" "${bench_args[@]}") || rc=1
  echo "   mlm-bench: $ours"
  PEAK_MODEL=$peak_model bench_row "$label" mlm-bench "$ours" || rc=1
  local peer json
  for peer in "${peers[@]}"; do
    json=$("$python" "$root/scripts/peers/${peer#*:}.py" "${flags[@]}") || rc=1
    echo "   ${peer%%:*}: $json"
    # No ratio to a peer that trains another model.
    if [[ ${peer%%:*} == *"("* ]]; then
      PEAK_MODEL=$peak_model bench_row "$label" "${peer%%:*}" "$json" || rc=1
    else
      PEAK_MODEL=$peak_model bench_row "$label" "${peer%%:*}" "$json" "$ours" || rc=1
    fi
  done
  return "$rc"
}

bench() {  # bench "ARCH BATCH SEQ"...
  local rc=0 one
  for one in "$@"; do
    # shellcheck disable=SC2086  # the case's words are its arguments
    bench_case $one || rc=1
  done
  return "$rc"
}

echo "gpu_check$( ((dry_run)) && echo ' --dry-run'): $(date -u '+%Y-%m-%d %H:%M:%S UTC') on ${HOSTNAME:-?}, $(nproc) cores, budget ${budget}s"
echo "git: $(git -C "$root" log -1 --format='%h %s' 2>/dev/null || echo 'no git')"
python=$(find_python) || {
  echo "gpu_check: no python3 with torch found ($( ((dry_run)) && echo "$root/.venv/bin/python: run scripts/setup.sh" || echo 'set MLM_PYTHON'))" >&2
  exit 2
}
echo "python: $python ($("$python" -c 'import importlib.metadata as m; print("torch", m.version("torch"))' 2>/dev/null))"

# The phases run under timeout in a child bash: it sees these functions and variables.
export root gpu_dir debs sysroot build runs_dir python device precision dist_backend ctest_max \
  learn_precisions curve_reference_file \
  bench_warmup bench_steps bench_peak_repeats bench_threads bert_shape modernbert_shape bench_rows skip_note SKIPPED
export -f unpack_deb unpack configure info run_ctest curve_tokenizer curve_run learning_run dist_run bench_row bench_case bench
if ((dry_run)); then
  for exe in mlm-train mlm-bench mlm-tokenizer; do
    [[ -x $build/$exe ]] || {
      echo "gpu_check --dry-run: no $build/$exe: build it first (ninja -C $build mlm-train mlm-bench mlm-tokenizer), or set BUILD_DIR" >&2
      exit 2
    }
  done
  for step in unpack configure build; do skip "$step" "dry run: the CPU build in ${build#"$root"/}/"; done
else
  ls "$debs"/*.deb >/dev/null 2>&1 || {
    echo "gpu_check: no .deb files in ${debs#"$root"/}: run scripts/gpu_check.sh --fetch on the dev machine and carry build-gpu/debs" >&2
    exit 2
  }
  for tool in cmake ninja; do
    command -v "$tool" >/dev/null || { echo "gpu_check: $tool not found" >&2; exit 2; }
  done
  echo "cmake: $(cmake --version | head -1), ninja $(ninja --version), nvcc: $(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || echo none)"
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
fi

RESERVE_S=0 phase info 60 bash -c info
# The tests and the 2-rank run stop early rather than leave the bench less than its minimum
# (when the build left the bench its minimum at all).
RESERVE_S=0
(($(left) >= bench_min)) && RESERVE_S=$bench_min
phase "ctest -L gpu" 150 bash -c 'run_ctest gpu'
phase "ctest -L model|train" 180 bash -c 'run_ctest "model|train" -j "${GPU_CHECK_CTEST_J:-4}"'
phase learning 90 bash -c learning_run
# Ranks: one per GPU on cuda; on the CPU two ranks share the cores.
ranks=2
[[ $device == cuda ]] && ranks=$(nvidia-smi -L 2>/dev/null | wc -l)
if ((ranks >= 2)); then
  phase "2 ranks $dist_backend" 120 bash -c dist_run
else
  skip "2 ranks $dist_backend" "$ranks GPU(s); needs 2"
fi
if (($(left) < bench_min)); then
  skip bench "$(left)s of the ${budget}s budget left, it needs ${bench_min}s (GPU_CHECK_BENCH_MIN_S)"
else
  RESERVE_S=0 phase bench 0 bash -c 'bench "$@"' bench "${bench_cases[@]}"
fi
exit 0  # finish() makes it 1 when a phase failed
