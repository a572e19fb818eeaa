#!/usr/bin/env bash
# An architecture is one folder and one registration: outside model/<arch>/ (a folder with an
# <arch>_spec.cpp), config/ and the registration (src/model/architectures.cpp), no source
# switches on model.architecture, compares it, or casts to an architecture's classes; the rest
# of the house asks the architecture's spec (include/mlm/model/architecture_spec.h).
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

allowed() {  # allowed FILE: inside an architecture's folder, config/, or the registration
  local f="$1"
  case "$f" in
    src/config/*|include/mlm/config/*|src/model/architectures.cpp) return 0 ;;
  esac
  for d in "${arch_dirs[@]}"; do
    [[ "$f" == "$d"* ]] && return 0
  done
  return 1
}

# Naming one architecture's value (a switch or a comparison), asking which family it is in, or
# casting to one architecture's model classes.
pattern='Architecture::|is_roberta\(|(dynamic|static|dynamic_pointer|static_pointer)_cast<[^>]*(Bert|Electra|Roberta)'
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
  echo "ok   no switch on or cast by architecture outside ${arch_dirs[*]}, config/ and src/model/architectures.cpp"
else
  echo "$count line(s) switch on or cast by architecture outside its folder: ask its ArchitectureSpec instead"
fi
exit "$status"
