#!/usr/bin/env bash
# Installs what mlm-train needs; idempotent and quick when everything is there.
#   1. Debian packages: compiler, build tools, the C++ libraries the project links.
#   2. .venv/ (project-local, ignored by git): the pinned Python packages of
#      scripts/requirements.txt. Its torch wheel is also the LibTorch 2.x (CUDA build) that
#      CMake links; see CMakeLists.txt.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

PACKAGES=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  libgloo-dev               # Gloo headers included by c10d's ProcessGroupGloo (the wheel has none)
  libsentencepiece-dev
  libcli11-dev libspdlog-dev libfmt-dev libyaml-cpp-dev libgtest-dev nlohmann-json3-dev zlib1g-dev
  libzstd-dev               # .zst corpora
  libicu-dev                # Unicode normalization and categories for the WordPiece tokenizer
  python3 python3-venv
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "[setup] installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The venv is up to date when its stamp holds the requirements it was made from.
venv="$root/.venv"
requirements="$root/scripts/requirements.txt"
stamp="$venv/.mlm-requirements"
if [ -x "$venv/bin/python" ] && cmp -s "$requirements" "$stamp"; then
  exit 0
fi
echo "[setup] making $venv from scripts/requirements.txt (first time: a ~3 GB download)"
"${PYTHON:-python3}" -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$requirements"
cp "$requirements" "$stamp"
