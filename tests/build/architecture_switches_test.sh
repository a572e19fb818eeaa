#!/usr/bin/env bash
# An architecture is one folder and one registration: outside model/<arch>/ (a folder with an
# <arch>_spec.cpp) and the registration (enums.h names it; src/model/architectures.cpp registers
# its spec, src/model/architecture_keys.cpp its model.* keys), no source switches on
# model.architecture, compares it, or casts to an architecture's classes; the rest of the house,
# config/ included, asks the architecture's spec (include/mlm/model/architecture_spec.h) or its
# keys (include/mlm/config/architecture_keys.h).
#   architecture_switches_test.sh REPO_ROOT
set -euo pipefail
root="$1"
cd "$root"

# The architecture folders: those that define a spec.
arch_dirs=()
for spec in src/model/*/*_spec.cpp; do
  arch=$(basename "$(dirname "$spec")")
  arch_dirs+=("src/model/$arch/" "include/mlm/model/$arch/")
done
if [ ${#arch_dirs[@]} -eq 0 ]; then
  echo "FAIL no src/model/<arch>/<arch>_spec.cpp found"
  exit 1
fi

allowed() {  # allowed FILE: inside an architecture's folder, or the registration
  local f="$1"
  case "$f" in
    include/mlm/config/enums.h|src/model/architectures.cpp|src/model/architecture_keys.cpp) return 0 ;;
  esac
  for d in "${arch_dirs[@]}"; do
    [[ "$f" == "$d"* ]] && return 0
  done
  return 1
}

# Every class and module an architecture's headers declare (DebertaV2LayerImpl, TORCH_MODULE's
# DebertaV2Layer, ...): a cast to any of them, or a module's as<...>(), names the architecture.
classes=$(for d in "${arch_dirs[@]}"; do
  [ -d "$d" ] || continue
  # definitions only: a forward declaration ("class ArchitectureKeys;") is another folder's class
  grep -rhoE '^(class|struct) [A-Z][A-Za-z0-9_]*[ {]|TORCH_MODULE\([A-Za-z0-9_]+\)' "$d" --include='*.h' || true
done | sed -E 's/^(class|struct) //; s/[ {]$//; s/^TORCH_MODULE\((.*)\)$/\1/' | sort -u | paste -sd'|' -)
if [ -z "$classes" ]; then
  echo "FAIL no class declared in ${arch_dirs[*]}"
  exit 1
fi

# Naming one architecture's value (a switch or a comparison), asking which family it is in, or
# casting to one architecture's classes.
pattern="Architecture::|is_roberta\\(|((dynamic|static|dynamic_pointer|static_pointer)_cast|as)<[^>]*\\b($classes)"
status=0
count=0
while IFS= read -r hit; do
  file=${hit%%:*}
  allowed "$file" && continue
  echo "FAIL $hit"
  status=1
  count=$((count + 1))
done < <(grep -rnE "$pattern" src include --include='*.cpp' --include='*.h' || true)
if [ "$status" -eq 0 ]; then
  echo "ok   no switch on or cast by architecture outside ${arch_dirs[*]} and the registration"
else
  echo "$count line(s) switch on or cast by architecture outside its folder: ask its ArchitectureSpec or ArchitectureKeys instead"
fi
exit "$status"
