#!/usr/bin/env bash
# Builds a small multilingual corpus, one language per directory: OUT_DIR/<lang>/{train,valid}.txt
# for German, French, Spanish and Dutch, from the translated manual pages of the Debian 12
# packages manpages-de, manpages-fr, manpages-es and manpages-nl (made with 4.18.1-1 of
# manpages-l10n: about 9 : 4 : 3 : 1 in text, so the languages' sizes differ as a mixture's
# do). Licence: GPL-3+ (usr/share/doc/manpages-<lang>/copyright in each package).
# Needs only apt-get, dpkg-deb and python3: the packages are downloaded and unpacked in a temp
# dir, never installed. The roff markup is stripped (macros dropped, their text kept; no-fill
# blocks, tables and code examples dropped); one document per manual-page section (>= 2
# paragraphs or 200 characters), one paragraph per line, blank-line separated; every 20th
# document goes to valid.txt (5%). Idempotent: does nothing when every file exists.
#   scripts/get_multilingual_corpus.sh [OUT_DIR]   (default data/multilingual)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/data/multilingual}"
langs=(de fr es nl)
missing=0
for lang in "${langs[@]}"; do
  [[ -s "$out/$lang/train.txt" && -s "$out/$lang/valid.txt" ]] || missing=1
done
if [[ $missing == 0 ]]; then
  echo "multilingual corpus already present in $out"
  exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
packages=()
for lang in "${langs[@]}"; do packages+=("manpages-$lang"); done
# No revision pinned: Debian updates replace the old .deb in the archive.
if ! (cd "$tmp" && apt-get download "${packages[@]}") >"$tmp/apt.log" 2>&1; then
  cat "$tmp/apt.log" >&2
  echo "error: apt-get download ${packages[*]} failed" \
       "(no or stale package lists? run: sudo apt-get update)" >&2
  exit 1
fi
for lang in "${langs[@]}"; do
  deb="$(echo "$tmp"/manpages-"$lang"_*.deb)"
  echo "source: manpages-$lang $(dpkg-deb -f "$deb" Version) (Debian)"
  dpkg-deb -x "$deb" "$tmp/x-$lang"
done

python3 - "$tmp" "$out" "${langs[@]}" <<'PY'
import gzip, os, re, sys

tmp, out, langs = sys.argv[1], sys.argv[2], sys.argv[3:]

# Escapes with text (the rest are dropped): dashes, quotes, spaces.
NAMED = {"em": "—", "en": "–", "aq": "'", "dq": '"', "lq": "“", "rq": "”", "oq": "‘", "cq": "’",
         "Fo": "«", "Fc": "»", "bu": "•", "co": "©", "mu": "×", "hy": "-", "ti": "~", "rs": "\\",
         "at": "@", "sh": "#", "Do": "$", "ha": "^", "ga": "`", "lB": "[", "rB": "]"}
ESCAPE = re.compile(r"\\(\((..)|\[([^\]]*)\]|f(\(..|\[[^\]]*\]|.)|s[-+]?\d+|\*(\(..|\[[^\]]*\]|.)|"
                    r"[-e&c ~0|^%:]|.)")
TEXT_MACROS = {"B", "I", "BR", "RB", "IR", "RI", "BI", "IB", "SM", "SB", "UR", "MT"}
BREAK_MACROS = {"PP", "P", "LP", "TP", "IP", "HP", "TQ", "SH", "SS", "sp", "RS", "RE"}

def unescape(text):
    def one(m):
        whole = m.group(1)
        if m.group(2):
            return NAMED.get(m.group(2), "")
        if m.group(3) is not None:
            return NAMED.get(m.group(3), "")
        if whole[0] in "fs*":
            return ""
        return {"-": "-", "e": "\\", " ": " ", "~": " ", "0": " "}.get(whole, "")
    return ESCAPE.sub(one, text)

def macro_args(rest):
    args = re.findall(r'"([^"]*)"|(\S+)', rest)
    return [a or b for a, b in args]

def sections(lines):
    """Yields each .SH section's paragraphs (lists of text lines)."""
    paragraphs, current, skip_until = [], [], None
    def end_paragraph():
        nonlocal current
        text = " ".join(" ".join(current).split())
        if text:
            paragraphs.append(text)
        current = []
    for raw in lines:
        line = raw.rstrip("\n")
        if skip_until:
            if re.match(r"^[.']\s*(%s)\b" % skip_until, line):
                skip_until = None
            continue
        if line.startswith((".\\\"", "'\\\"", "\\\"")) or line in (".", "'"):
            continue
        m = re.match(r"^[.']\s*(\S+)\s*(.*)$", line)
        if m:
            name, rest = m.group(1), m.group(2)
            if name in ("nf", "EX"):
                end_paragraph(); skip_until = "fi" if name == "nf" else "EE"; continue
            if name == "TS":
                end_paragraph(); skip_until = "TE"; continue
            if name == "de":
                skip_until = r"\.\."; continue
            if name == "SH":
                end_paragraph()
                if paragraphs:
                    yield paragraphs
                paragraphs = []
                continue
            if name in BREAK_MACROS:
                end_paragraph()
                if name in ("TP", "IP", "TQ"):
                    continue
            if name in TEXT_MACROS:
                current.append(unescape(" ".join(macro_args(rest))))
            continue
        current.append(unescape(line))
    end_paragraph()
    if paragraphs:
        yield paragraphs

for lang in langs:
    root = os.path.join(tmp, "x-" + lang, "usr", "share", "man", lang)
    docs = []
    for dirpath, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            if not name.endswith(".gz"):
                continue
            with gzip.open(os.path.join(dirpath, name), "rt", encoding="utf-8", errors="replace") as f:
                lines = f.readlines()
            if len(lines) < 3 and any(l.startswith(".so") for l in lines):
                continue  # a link to another page
            for paragraphs in sections(lines):
                # Real prose: paragraphs with letters, not option lists of a word or two.
                prose = [p for p in paragraphs if len(p) >= 40 and sum(c.isalpha() for c in p) > len(p) / 2]
                if len(prose) >= 2 or sum(map(len, prose)) >= 200:
                    docs.append("\n".join(prose))
    os.makedirs(os.path.join(out, lang), exist_ok=True)
    with open(os.path.join(out, lang, "train.txt"), "w", encoding="utf-8") as train, \
         open(os.path.join(out, lang, "valid.txt"), "w", encoding="utf-8") as valid:
        for i, doc in enumerate(docs):
            (valid if i % 20 == 19 else train).write(doc + "\n\n")
    size = sum(len(d) + 2 for d in docs)
    print(f"{lang}: {len(docs)} documents, {size / 1e6:.1f} MB of text ({len(docs) // 20} in valid.txt)")
PY
