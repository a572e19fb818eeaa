#!/usr/bin/env bash
# Builds the fine-tuning probe tasks (issue #27) in data/probes/<task>/{train,validation,test}.jsonl
# from two Debian 12 packages (versions as made: see docs/PROBES.md for counts and label sets):
#   wordnet-base 1:3.0-37   WordNet 3.0, (c) 2006 Princeton University, WordNet 3.0 licence
#                           (permissive, BSD-like: usr/share/doc/wordnet-base/copyright)
#                           -> wordnet_topic (definition -> noun lexicographer file, 24 classes)
#                              wordnet_hypernym (two "lemma: definition" texts -> hypernym |
#                              hyponym | unrelated)
#                              wordnet_similarity (two definitions -> Wu-Palmer similarity of
#                              their synsets, regression, balanced over the range)
#   python3.11-doc 3.11.2-6+deb12u9   the Python 3.11 documentation sources, PSF License
#                           Agreement -> pydoc_entities (sentences, BIO tags of the Python
#                           objects the authors marked up: FUNC METH CLASS MOD EXC ATTR CONST DATA)
# No label is a token a masked LM is pretrained to predict. The splits are a fixed hash of each
# example (scripts/probe_data.py), never a random state. Needs only apt-get, dpkg-deb and
# python3: the packages are downloaded and unpacked in a temp dir, never installed, so no root
# is needed. Idempotent: does nothing when every task's three files exist.
#   scripts/get_probe_data.sh [OUT_DIR]   (default data/probes)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/data/probes}"
tasks=(wordnet_topic wordnet_hypernym wordnet_similarity pydoc_entities)
missing=0
for t in "${tasks[@]}"; do
  for s in train validation test; do
    [[ -s "$out/$t/$s.jsonl" ]] || missing=1
  done
done
if [[ $missing == 0 ]]; then
  echo "probe data already present in $out"
  exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# No revision pinned: Debian security updates replace the old .deb in the archive.
for pkg in wordnet-base python3.11-doc; do
  if ! (cd "$tmp" && apt-get download "$pkg") >"$tmp/apt.log" 2>&1; then
    cat "$tmp/apt.log" >&2
    echo "error: apt-get download $pkg failed" \
         "(no or stale package lists? run: sudo apt-get update)" >&2
    exit 1
  fi
  deb="$(echo "$tmp/${pkg}"_*.deb)"
  echo "source: $pkg $(dpkg-deb -f "$deb" Version) (Debian)"
  dpkg-deb -x "$deb" "$tmp/x"
done

python3 "$root/scripts/probe_data.py" "$tmp/x/usr/share/wordnet" \
  "$tmp/x/usr/share/doc/python3.11/html/_sources" "$out"
