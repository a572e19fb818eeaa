#!/usr/bin/env bash
# Installs every Debian package mlm-train needs. Idempotent: does nothing when all is present.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config git ca-certificates
  libtorch-dev              # LibTorch 1.13 (CPU) with c10d headers
  libopenblas0-pthread      # without it LibTorch uses the reference BLAS (~30x slower fp32)
  libgloo-dev               # Gloo headers included by c10d's ProcessGroupGloo
  libsentencepiece-dev
  libcli11-dev libspdlog-dev libfmt-dev libyaml-cpp-dev libgtest-dev nlohmann-json3-dev zlib1g-dev
  python3 python3-torch python3-matplotlib   # reference tests, bench peer, plots
)

# npm fetches the sample corpus; a Node.js that already ships npm must not be replaced.
command -v npm >/dev/null 2>&1 || PACKAGES+=(npm)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "[setup] installing: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
