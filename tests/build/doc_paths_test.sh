#!/usr/bin/env bash
# Every repository path that README.md and docs/*.md name exists.
#   doc_paths_test.sh REPO_ROOT
# A repository path is a word of a document (prose, `code`, fenced blocks) or a link target
# that starts with a top-level directory of the repository (src/, include/, tests/, scripts/,
# configs/, docs/, fuzz/, third_party/, .ci/ ...) or is a top-level file (CMakeLists.txt,
# README.md ...). The top level is what git tracks (or, without git, what is on disk less the
# ignored outputs: build*/, runs/, data/, .venv/ ...), so paths under build or run outputs are
# never repository paths. Links are taken relative to their document. Placeholders match as
# patterns: `<stage>` and `*` match any name, `{a,b}` either; a word with `...` is skipped.
# A link's #anchor into a Markdown file must be one of that file's headings (GitHub's slugs).
# README.md links every docs/*.md.
# Source files named from inside the tree (`model/kernels/philox.h`, `trainer.cpp`: a word
# with a C++, Python, shell or CMake extension) must be the tail of a repository file; a bare
# Python or shell name may be someone else's script and is not checked.
set -euo pipefail
root="${1:-.}"
exec python3 - "$root" <<'PY'
import fnmatch, glob, itertools, os, re, subprocess, sys

root = os.path.abspath(sys.argv[1])
IGNORED = {".git", ".venv", "runs", "data", "tokenizer", "node_modules", "out"}

def repository_files():
    try:
        out = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True,
                             check=True).stdout.split("\n")
        files = [p for p in out if p]
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for d, dirs, names in os.walk(root):
        if d == root:
            dirs[:] = [x for x in dirs if x not in IGNORED and not x.startswith("build")]
        files += [os.path.relpath(os.path.join(d, x), root) for x in names]
    return files

FILES = repository_files()
TOP = {p.split("/")[0] + ("/" if "/" in p else "") for p in FILES}
TOP_DIRS = sorted(n for n in TOP if n.endswith("/"))
TOP_FILES = sorted(n for n in TOP if not n.endswith("/"))

docs = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))

LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
WORD = re.compile(r"[^\s`'\"()\[\]|,;]+")
STRIP = ".,:;!?*_'\"`()[]<>"

def expand_braces(s):
    m = re.search(r"\{([^{}]*)\}", s)
    if not m:
        return [s]
    return list(itertools.chain.from_iterable(
        expand_braces(s[:m.start()] + alt + s[m.end():]) for alt in m.group(1).split(",")))

def exists(rel):
    """rel: a path relative to the root, maybe with <placeholders>, *, {a,b}."""
    rel = rel.split("#")[0]
    rel = re.sub(r":\d+(-\d+)?$", "", rel)           # file.cpp:123
    if not rel:
        return True
    for alt in expand_braces(rel):
        pat = re.sub(r"<[^<>/]*>", "*", alt)
        path = os.path.join(root, pat)
        if any(c in pat for c in "*?["):
            if glob.glob(path.rstrip("/")):
                return True
        elif os.path.exists(path):
            return True
    return False

SOURCE = re.compile(r"\.(h|hpp|cpp|cc|py|sh|cmake)$")
CXX = re.compile(r"\.(h|hpp|cpp|cc)$")

def is_tail(tok):
    """tok names a repository file from inside the tree: some file ends with /tok."""
    for alt in expand_braces(tok):
        pat = "*/" + re.sub(r"<[^<>/]*>", "*", alt)
        if any(fnmatch.fnmatchcase("/" + f, pat) for f in FILES):
            return True
    return False

def is_repo_path(tok):
    if tok in TOP_FILES:
        return True
    return any(tok.startswith(d) for d in TOP_DIRS)

def anchors(md):
    """GitHub's anchors of a Markdown file's headings (outside fenced blocks)."""
    out, count, fenced = set(), {}, False
    with open(md, encoding="utf-8") as f:
        for line in f:
            if line.lstrip().startswith("```"):
                fenced = not fenced
            m = None if fenced else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
            n = count.get(slug, 0)
            count[slug] = n + 1
            out.add(slug if n == 0 else f"{slug}-{n}")
    return out

failures = []
checked = 0
for doc in docs:
    name = os.path.relpath(doc, root)
    base = os.path.dirname(doc)
    with open(doc, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for n, line in enumerate(lines, 1):
        seen = set()
        # Link targets, relative to the document.
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue
            target, _, anchor = target.partition("#")
            if not target:
                target = os.path.basename(doc)
            rel = os.path.relpath(os.path.normpath(os.path.join(base, target)), root)
            if target.endswith("/"):
                rel += "/"
            seen.add(target)
            checked += 1
            if rel.startswith("..") or not exists(rel):
                failures.append(f"{name}:{n}: link target {target} ({rel}) does not exist")
            elif anchor and rel.endswith(".md") and anchor not in anchors(os.path.join(root, rel)):
                failures.append(f"{name}:{n}: {rel} has no heading for #{anchor}")
        # Words that name a path from the root.
        for word in WORD.findall(LINK.sub(lambda m: "]", line)):
            tok = word.strip(STRIP) if not word.endswith("/") else word.lstrip(STRIP).rstrip(".,:;")
            tok = re.sub(r"^[A-Za-z_]+=", "", tok)     # KEY=path
            if tok.startswith("./"):
                tok = tok[2:]
            if not tok or "..." in tok or "…" in tok or tok in seen or not is_repo_path(tok):
                continue
            seen.add(tok)
            checked += 1
            if not exists(tok):
                failures.append(f"{name}:{n}: {tok} does not exist")
        # Source files named from inside the tree, in `code`.
        for word in re.findall(r"`([^`\s]+)`", line):
            tok = re.sub(r":\d+(-\d+)?$", "", word.strip(".,:;()"))
            if (not tok or tok in seen or is_repo_path(tok) or "..." in tok
                    or re.match(r"^[a-z][a-z0-9+.-]*:", tok)):
                continue
            if ("/" in tok and SOURCE.search(tok)) or ("/" not in tok and CXX.search(tok)):
                seen.add(tok)
                checked += 1
                if not is_tail(tok):
                    failures.append(f"{name}:{n}: {tok} is no repository file's path")

readme = open(docs[0], encoding="utf-8").read()
for doc in docs[1:]:
    rel = os.path.relpath(doc, root)
    if not re.search(r"\]\(" + re.escape(rel) + r"(#[^)]*)?\)", readme):
        failures.append(f"README.md: no link to {rel}")

for f in failures:
    print("FAIL " + f)
print(f"{checked} path mentions checked in {len(docs)} documents, {len(failures)} missing "
      f"(top-level: {' '.join(TOP_DIRS + TOP_FILES)})")
sys.exit(1 if failures else 0)
PY
