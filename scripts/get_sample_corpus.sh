#!/usr/bin/env bash
# Builds the sample corpus data/sample/{train,valid}.txt: the English prose of the Python 3.11
# documentation, from the reStructuredText sources shipped in the Debian 12 package
# python3.11-doc (made with 3.11.2-6+deb12u9: 5.7 MB of text). Licence: the documentation is
# under the PSF License Agreement, its code examples also under Zero-Clause BSD (license.rst.txt
# in the package; usr/share/doc/python3.11-doc/copyright gives the Python/PSF license).
# Needs only apt-get, dpkg-deb and python3: the package is downloaded and unpacked in a temp
# dir, never installed, so no root is needed. One document per section (>= 2 sentences), one
# sentence per line, blank-line separated; every 50th document goes to valid.txt (2%).
# Idempotent: does nothing when both files exist.
#   scripts/get_sample_corpus.sh [OUT_DIR]   (default data/sample)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/data/sample}"
if [[ -s "$out/train.txt" && -s "$out/valid.txt" ]]; then
  echo "sample corpus already present in $out"
  exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# No revision pinned: Debian security updates replace the old .deb in the archive.
if ! (cd "$tmp" && apt-get download python3.11-doc) >"$tmp/apt.log" 2>&1; then
  cat "$tmp/apt.log" >&2
  echo "error: apt-get download python3.11-doc failed" \
       "(no or stale package lists? run: sudo apt-get update)" >&2
  exit 1
fi
deb="$(echo "$tmp"/python3.11-doc_*.deb)"
echo "source: python3.11-doc $(dpkg-deb -f "$deb" Version) (Debian)"
dpkg-deb -x "$deb" "$tmp/x"
mkdir -p "$out"

python3 - "$tmp/x/usr/share/doc/python3.11/html/_sources" "$out" <<'PY'
import os, re, sys

src, out = sys.argv[1], sys.argv[2]

ADORN = re.compile(r"""^([=\-~^"'`#*+_.])\1{2,}$""")     # heading under/overline, transition
TABLE = re.compile(r"^=+( +=+)+$")                          # simple-table border
ITEM = re.compile(r"^([-*+•]|\d+[.)]|\(\d+\)|#\.|[a-z][.)]|:[\w ,.-]+:)( +|$)")  # list/field
SKIP_BLOCK = ("+-", "+=", "|", ">>>")                       # grid table, line block, doctest
# Directives whose bodies are prose (API descriptions, admonitions, version notes): without
# them the library reference is mostly empty. All other directives are dropped with their body.
PROSE = re.compile(r"^\.\. (c:)?(function|method|classmethod|staticmethod|abstractmethod|"
                   r"coroutinefunction|coroutinemethod|decorator|decoratormethod|class|exception|"
                   r"attribute|data|member|type|var|macro|describe|object|opcode|cmdoption|envvar|"
                   r"pdbcommand|note|warning|seealso|impl-detail|important|caution|tip|attention|"
                   r"versionadded|versionchanged|deprecated|deprecated-removed)::")

def indented_until(lines, i):
    """Index of the first line after i that is neither blank nor indented."""
    i += 1
    while i < len(lines) and (not lines[i].strip() or lines[i][0] == " "):
        i += 1
    return i

def unwrap(lines):
    """Replaces each prose directive by its dedented body, recursively."""
    res, i = [], 0
    while i < len(lines):
        if PROSE.match(lines[i]):
            j = indented_until(lines, i)
            body = lines[i + 1:j]
            cut = min((len(l) - len(l.lstrip()) for l in body if l.strip()), default=0)
            res += [""] + unwrap([l[cut:] for l in body]) + [""]
            i = j
        else:
            res.append(lines[i])
            i += 1
    return res

def sections(lines):
    """Yields the paragraphs (joined lines) of each heading-delimited section."""
    sec, para, item = [], [], False
    def flush():
        nonlocal para, item
        if para:
            sec.append(" ".join(para))
        para, item = [], False
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if not line.strip():
            flush()
        elif line[0] == " ":
            if item and not ITEM.match(line.lstrip()) and not line.lstrip().startswith(">>>"):
                para.append(line.strip())   # continuation of a list item
            else:                           # literal/quote/definition block: not prose
                flush()
                i = indented_until(lines, i) - 1
        elif ADORN.match(line):
            if para and not item:
                para.pop()                  # an underline: the last line was the title
            elif i + 2 < n and ADORN.match(lines[i + 2]):
                i += 2                      # overline, title, underline
            flush()
            if sec:
                yield sec
            sec = []
        elif TABLE.match(line):             # a simple table ends at a border before a blank line
            flush()
            i += 1
            end = lambda k: TABLE.match(lines[k]) and (k + 1 == n or not lines[k + 1].strip())
            while i < n and not end(i):
                i += 1
        elif line == ".." or line.startswith(".. "):  # directive, comment, label, footnote
            flush()
            i = indented_until(lines, i) - 1
        elif line.startswith(SKIP_BLOCK):
            flush()
            while i + 1 < n and lines[i + 1].strip():
                i += 1
        elif ITEM.match(line) and (item or not para):
            flush()
            para, item = [ITEM.sub("", line)], True
        else:
            para.append(line)
        i += 1
    flush()
    if sec:
        yield sec

def role(m):
    """Renders :role:`text` the way Sphinx shows it."""
    name, text = m.group(1), m.group(2)
    t = re.match(r"(.*?)\s*<[^<>]*>$", text)
    if t and t.group(1):
        return t.group(1)                   # explicit title
    if name in ("ref", "doc", "token"):
        return "\1"                         # shows a title defined elsewhere: drop the sentence
    text = text.replace("\\", "").lstrip("!")
    if text.startswith("~"):
        text = text[1:].rsplit(".", 1)[-1]
    prefix = {"pep": "PEP ", "rfc": "RFC ", "issue": "bpo-", "gh": "gh-"}.get(name)
    if prefix:
        return prefix + text.split("#")[0]
    if name == "abbr":
        return text.split(" (")[0]
    return text.replace("{", "").replace("}", "") if name == "samp" else text

def inline(p):
    """Resolves the inline markup of a paragraph to plain text."""
    if p.endswith("::"):                    # as Sphinx: "text::" -> "text:", "text ::" -> "text"
        p = p[:-2] if p[:-2].endswith(" ") else p[:-1]
    lits = []
    def keep(s):                            # protects literal text from the rules below
        lits.append(s)
        return f"\0{len(lits) - 1}\0"
    p = re.sub(r"``(.+?)``", lambda m: keep(m.group(1)), p)
    p = re.sub(r":([\w:.-]+):`(.+?)`", lambda m: keep(role(m)), p)
    p = re.sub(r"\\(.)", lambda m: "" if m.group(1) == " " else keep(m.group(1)), p)
    p = re.sub(r"`([^`]+?)(\s*<[^<>]*>)?`__?", r"\1", p)   # hyperlinks, default role
    p = re.sub(r"\[#?\w*\]_", "", p)                      # footnote references
    # |release| and |version| are 3.11; other substitutions are defined elsewhere: drop those.
    p = re.sub(r"\|(\w+)\|_?", lambda m: "3.11" if m.group(1) in ("release", "version")
               else "\1", p)
    p = re.sub(r"\*\*(.+?)\*\*", r"\1", p)
    p = re.sub(r"(?<![\w*])\*([^*\s](?:[^*]*[^*\s])?)\*(?![\w*])", r"\1", p)
    p = re.sub(r"\b([A-Za-z][\w-]*)__?(?!\w)", r"\1", p)  # word_ references
    p = p.replace("---", "\u2014").replace(" -- ", " \u2013 ")
    p = re.sub(r"\0(\d+)\0", lambda m: lits[int(m.group(1))], p)
    return " ".join(p.split())

NOSPLIT = ("e.g.", "i.e.", "etc.", "vs.", "cf.", "Mr.", "Dr.", "No.")
BOUNDARY = re.compile(r"""[.?!]["')]*\s+(?=["'(]?[A-Z])""")

def sentences(p):
    start = 0
    for m in BOUNDARY.finditer(p):
        head = p[:m.start() + 1]
        if not head.endswith(NOSPLIT) and not re.search(r"\b[A-Z]\.$", head):  # nor initials
            yield p[start:m.end()].strip()
            start = m.end()
    yield p[start:].strip()

def clean(s):
    """A sentence of >= 3 words that ends like one and has no markup left."""
    return (len(s.split()) >= 3 and re.search(r"[A-Za-z]", s)
            and re.search(r"""[.?!]["')]?$""", s) and not re.search(r"[`\0\1]|::", s))

files = sorted(os.path.join(d, f) for d, _, fs in os.walk(src)
               for f in fs if f.endswith(".rst.txt"))
docs = []
for path in files:
    with open(path, encoding="utf-8") as f:
        lines = [l.rstrip().expandtabs() for l in f]
    for sec in sections(unwrap(lines)):
        sents = [s for p in sec for s in sentences(inline(p)) if clean(s)]
        if len(sents) >= 2:
            docs.append("\n".join(sents))

parts = {"train.txt": [d for k, d in enumerate(docs) if k % 50], "valid.txt": docs[::50]}
size = 0
for name, part in parts.items():
    tmp = os.path.join(out, name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n\n".join(part) + "\n")
    os.replace(tmp, os.path.join(out, name))
    size += os.path.getsize(os.path.join(out, name))
n = sum(d.count("\n") + 1 for d in docs)
print(f"{len(files)} files -> {n} sentences, {len(docs)} documents ({len(parts['train.txt'])} "
      f"train, {len(parts['valid.txt'])} valid), {size} bytes in {out}")
PY
