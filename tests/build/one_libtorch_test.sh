#!/usr/bin/env bash
# Every executable loads its LibTorch libraries (c10, torch, torch_cpu, c10_cuda, torch_cuda)
# from one directory, each once: two c10s in one process (the wheel's and Debian's
# libtorch-dev 1.13) abort at start. Reads each executable's NEEDED entries (readelf) and
# where the loader resolves them (ldd).
#   one_libtorch_test.sh EXECUTABLE...
set -euo pipefail
status=0
for exe in "$@"; do
  needed=$(readelf -d "$exe" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  # One soname per library: libc10.so beside libc10.so.1.13 is two c10s.
  dupes=$(grep -E '^lib(c10|torch)[a-z_]*\.so' <<<"$needed" | sed 's/\.so.*//' | sort | uniq -d || true)
  if [[ -n "$dupes" ]]; then
    echo "FAIL $exe needs more than one of: $dupes ($(tr '\n' ' ' <<<"$needed"))"
    status=1
  fi
  resolved=$(ldd "$exe" | awk '$1 ~ /^lib(c10|torch)[a-z_]*\.so/ { print $1, $3 }')
  if grep -q 'not$' <<<"$resolved" || grep -q ' $' <<<"$resolved"; then
    echo "FAIL $exe: a LibTorch library is not found: $(tr '\n' ' ' <<<"$resolved")"
    status=1
  fi
  dirs=$(awk 'NF == 2 { sub(/\/[^\/]*$/, "", $2); print $2 }' <<<"$resolved" | sort -u)
  if (($(grep -c . <<<"$dirs") > 1)); then
    echo "FAIL $exe loads LibTorch from several directories: $(tr '\n' ' ' <<<"$dirs")"
    status=1
  fi
  names=$(awk '{ sub(/\.so.*/, "", $1); print $1 }' <<<"$resolved" | sort | uniq -d)
  if [[ -n "$names" ]]; then
    echo "FAIL $exe loads two copies of: $names"
    status=1
  fi
  ((status)) || echo "ok   $exe: $(grep -c . <<<"$resolved" || true) LibTorch libraries from ${dirs:-nowhere}"
done
exit "$status"
