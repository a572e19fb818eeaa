#!/usr/bin/env bash
# The torch-free executables (mlm-data, mlm-tokenizer, the tests of the torch-free stages) load
# no LibTorch library at all, neither named in their NEEDED entries nor pulled in by another
# library: linking one costs ~0.3 s and ~500 MB before main.
#   no_libtorch_test.sh EXECUTABLE...
set -euo pipefail
status=0
for exe in "$@"; do
  loaded=$(ldd "$exe" | awk '$1 ~ /^lib(c10|torch|shm)[a-z_]*\.so/ { print $1 }' | sort -u)
  if [[ -n "$loaded" ]]; then
    echo "FAIL $exe loads LibTorch: $(tr '\n' ' ' <<<"$loaded")"
    status=1
  else
    echo "ok   $exe: no LibTorch library"
  fi
done
exit "$status"
