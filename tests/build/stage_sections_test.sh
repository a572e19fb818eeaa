#!/usr/bin/env bash
# The stages below the trainer are handed their settings, never the whole RunConfig
# (docs/ARCHITECTURE.md): a file of text/, data/, masking/, model/ or dist/ includes only the
# config section headers (config/sections/), enums.h, data_plan.h (data/ and masking/),
# validate_masking.h (the collator), and architecture_keys.h and value_checks.h (model/: each
# architecture's model.* keys and their checks), and never names RunConfig.
#   stage_sections_test.sh SOURCE_DIR
set -euo pipefail
root=$1
dirs=()
for stage in text data masking model dist; do dirs+=("$root/src/$stage" "$root/include/mlm/$stage"); done
allowed='sections/[a-z_]+\.h|enums\.h|source_weights\.h|data_plan\.h|validate_masking\.h|architecture_keys\.h|value_checks\.h'
includes=$(grep -rnP "#include \"mlm/config/(?!($allowed)\")" "${dirs[@]}" || true)
named=$(grep -rnw 'RunConfig' "${dirs[@]}" || true)
if [[ -n "$includes$named" ]]; then
  echo "FAIL these files see more of the config than their sections:"
  printf '%s\n' "$includes" "$named" | sed '/^$/d'
  exit 1
fi
echo "ok   text, data, masking, model, dist: section headers, the data plan and the architectures' keys only"
