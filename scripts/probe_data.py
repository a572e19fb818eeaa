#!/usr/bin/env python3
"""Builds the fine-tuning probe tasks of scripts/get_probe_data.sh from unpacked Debian packages.

    python3 scripts/probe_data.py WORDNET_DIR PYDOC_SOURCES_DIR OUT_DIR

WORDNET_DIR: wordnet-base's usr/share/wordnet (data.noun); PYDOC_SOURCES_DIR: python3.11-doc's
usr/share/doc/python3.11/html/_sources. Standard library only, so the system python3 runs it.
Writes OUT_DIR/<task>/{train,validation,test}.jsonl and prints the counts per split and label.

Tasks (no label is a token the masked LM predicts: they are WordNet's lexicographer files and
relations, and the kinds of Python object the documentation's authors marked up):
  wordnet_topic     a noun synset's definition -> its lexicographer file (noun.animal, ...),
                    24 classes (noun.Tops and noun.motive have 51 and 42 synsets: too few), at
                    most CAP_PER_TOPIC definitions per class
  wordnet_hypernym  "lemma: definition" of synsets A and B -> hypernym (B is a direct hypernym
                    of A), hyponym (A is one of B), or unrelated (B is another synset of the
                    lexicographer file of A's hypernym, neither a direct hypernym nor hyponym of
                    A); the three pairs of one edge share a split
  wordnet_similarity  two noun definitions -> their synsets' Wu-Palmer similarity (a number in
                    (0, 1], regression), computed here from the hypernym graph, pairs drawn so
                    that every tenth of the range holds about as many (SIMILARITY_PER_BIN)
  pydoc_entities    a sentence of the Python 3.11 documentation, one word per token, with BIO
                    tags of the Python objects its authors marked up with :func:, :class:,
                    :meth:, :mod:, :exc:, :attr:, :const:, :data:

Splits are a fixed hash (SHA-1) of each example's key: 0 -> test, 1 -> validation, other
digits -> train (10% / 10% / 80%), so they do not depend on any random state nor on file order.
Example order in each file is the sorted hash order: shuffled, but the same on every machine.
"""
import hashlib
import json
import os
import re
import sys
from collections import Counter, defaultdict

# WordNet 3.0's noun lexicographer files, numbered as in lexnames(5WN) (03 .. 28).
NOUN_LEXFILES = {
    3: "Tops", 4: "act", 5: "animal", 6: "artifact", 7: "attribute", 8: "body", 9: "cognition",
    10: "communication", 11: "event", 12: "feeling", 13: "food", 14: "group", 15: "location",
    16: "motive", 17: "object", 18: "person", 19: "phenomenon", 20: "plant", 21: "possession",
    22: "process", 23: "quantity", 24: "relation", 25: "shape", 26: "state", 27: "substance",
    28: "time"}
TOPICS = [n for k, n in sorted(NOUN_LEXFILES.items()) if n not in ("Tops", "motive")]
CAP_PER_TOPIC = 600            # ~12k train examples: minutes for a tiny model on 2 cores
HYPERNYM_EDGES = 5000          # 3 examples per edge: 15k, ~12k train
RELATIONS = ["hypernym", "hyponym", "unrelated"]
SIMILARITY_PER_BIN = 1500     # 10 bins of width 0.1: ~12k pairs (the lowest bins fill less)
ENTITY_ROLES = {"func": "FUNC", "meth": "METH", "class": "CLASS", "mod": "MOD", "exc": "EXC",
                "attr": "ATTR", "const": "CONST", "data": "DATA"}
ENTITY_TYPES = ["FUNC", "METH", "CLASS", "MOD", "EXC", "ATTR", "CONST", "DATA"]
ENTITY_SENTENCES = 12000       # of the ~24k that have a marked-up object
SPLITS = ("train", "validation", "test")


def h(key):
    return int.from_bytes(hashlib.sha1(key.encode("utf-8")).digest()[:8], "big")


def split_of(key):
    d = h("split:" + key) % 10
    return "test" if d == 0 else "validation" if d == 1 else "train"


def write_task(out, task, examples, describe):
    """examples: (key, record). Writes the three splits, each in hash order."""
    parts = {s: [] for s in SPLITS}
    for key, rec in sorted(examples, key=lambda e: h("order:" + e[0])):
        parts[split_of(key)].append(rec)
    os.makedirs(os.path.join(out, task), exist_ok=True)
    for s, recs in parts.items():
        path = os.path.join(out, task, s + ".jsonl")
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            for r in recs:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        os.replace(path + ".tmp", path)
    print(f"{task}: " + ", ".join(f"{s} {len(parts[s])}" for s in SPLITS))
    for s in SPLITS:
        print(f"  {s:10s} " + describe(parts[s]))


def label_counts(recs, field="label"):
    c = Counter(r[field] for r in recs)
    return " ".join(f"{k}={v}" for k, v in sorted(c.items()))


# ---------------------------------------------------------------------------------- WordNet
def read_nouns(wordnet_dir):
    """offset -> (lexfile name, first lemma, definition, hypernym offsets)."""
    nouns = {}
    with open(os.path.join(wordnet_dir, "data.noun"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("  "):               # the licence header
                continue
            head, _, gloss = line.partition(" | ")
            fields = head.split()
            offset, lexfile = fields[0], int(fields[1])
            nwords = int(fields[3], 16)
            lemma = fields[4].replace("_", " ")
            lemma = re.sub(r"\([a-z]+\)$", "", lemma)   # syntactic markers such as (p)
            i = 4 + 2 * nwords
            nptr = int(fields[i])
            hypers = [fields[i + 1 + 4 * k + 1] for k in range(nptr)
                      if fields[i + 1 + 4 * k] == "@"]   # "@i" (instance) is left out
            # The definition is the gloss up to its first quoted example.
            definition = re.split(r';\s*"', gloss.strip(), maxsplit=1)[0].strip().rstrip(";")
            nouns[offset] = (NOUN_LEXFILES[lexfile], lemma, definition, hypers)
    return nouns


def wordnet_topic(nouns):
    # A definition shared by synsets of two files (rare) has no one label: drop it.
    files = defaultdict(set)
    for lexfile, _, d, _ in nouns.values():
        files[d].add(lexfile)
    by_topic = defaultdict(list)
    for off, (lexfile, _, d, _) in nouns.items():
        if lexfile in TOPICS and len(files[d]) == 1 and len(d.split()) >= 3:
            by_topic[lexfile].append((d, off))
    examples, seen = [], set()
    for topic in TOPICS:
        # The CAP_PER_TOPIC definitions of smallest hash: a fixed sample, flattening the
        # 11.6k (artifact) to 341 (shape) spread of the file sizes.
        picked = sorted(by_topic[topic], key=lambda e: h("topic:" + e[1]))
        for d, off in picked:
            if d in seen:
                continue
            seen.add(d)
            examples.append((d, {"text": d, "label": "noun." + topic}))
            if sum(1 for _, r in examples if r["label"] == "noun." + topic) >= CAP_PER_TOPIC:
                break
    return examples


def wordnet_hypernym(nouns):
    hypo = defaultdict(set)
    for off, (_, _, _, hypers) in nouns.items():
        for b in hypers:
            hypo[b].add(off)
    by_file = defaultdict(list)
    for off, (lexfile, _, d, _) in sorted(nouns.items()):
        if len(d.split()) >= 3:
            by_file[lexfile].append(off)
    edges = sorted(((a, b) for a, (_, _, d, hs) in nouns.items() for b in hs
                    if len(d.split()) >= 3 and len(nouns[b][2].split()) >= 3),
                   key=lambda e: h("edge:" + e[0] + e[1]))[:HYPERNYM_EDGES]
    text = lambda o: f"{nouns[o][1]}: {nouns[o][2]}"
    examples = []
    for a, b in edges:
        key = a + "-" + b
        # A negative from the hypernym's own file, so that the topic alone does not tell it.
        pool = by_file[nouns[b][0]]
        related = {a, b} | set(nouns[a][3]) | hypo[a]
        k = h("neg:" + key) % len(pool)
        while pool[k] in related:
            k = (k + 1) % len(pool)
        c = pool[k]
        examples += [(key, {"text": text(a), "text_pair": text(b), "label": "hypernym"}),
                     (key, {"text": text(b), "text_pair": text(a), "label": "hyponym"}),
                     (key, {"text": text(a), "text_pair": text(c), "label": "unrelated"})]
    return examples


def wordnet_similarity(nouns):
    """Pairs of noun definitions -> Wu & Palmer's similarity of their synsets,
    2 depth(lcs) / (dist(a, lcs) + dist(b, lcs) + 2 depth(lcs)), where depth counts the synsets
    on the shortest hypernym path to the root (entity: 1), dist the hypernym edges from a synset
    up to an ancestor, and lcs is the deepest common ancestor (a or b itself included). Regular
    hypernyms only (@, not instances' @i), so only synsets under entity take part. (NLTK's
    wup_similarity measures the lcs by its longest path instead; this is computed here, not
    with NLTK.)"""
    hypo = defaultdict(list)
    for off, (_, _, _, hypers) in sorted(nouns.items()):
        for b in hypers:
            hypo[b].append(off)
    root = "00001740"                                  # entity
    ancestors_of = {}

    def ancestors(s):
        """ancestor -> fewest hypernym edges from s (s itself: 0)."""
        if s not in ancestors_of:
            out = {s: 0}
            for p in nouns[s][3]:
                for a, d in ancestors(p).items():
                    if d + 1 < out.get(a, 1 << 30):
                        out[a] = d + 1
            ancestors_of[s] = out
        return ancestors_of[s]

    depth = lambda s: ancestors(s)[root] + 1

    def wup(a, b):
        aa, bb = ancestors(a), ancestors(b)
        common = [c for c in aa if c in bb]
        lcs = max(common, key=lambda c: (depth(c), -(aa[c] + bb[c]), c))
        d = depth(lcs)
        return 2.0 * d / (aa[lcs] + bb[lcs] + 2.0 * d)

    eligible = sorted((off for off, (_, _, d, _) in nouns.items()
                       if len(d.split()) >= 3 and root in ancestors(off) and off != root),
                      key=lambda o: h("sim:" + o))
    by_file = defaultdict(list)
    for off in eligible:
        by_file[nouns[off][0]].append(off)
    bins = defaultdict(int)
    examples, seen = [], set()
    pick = lambda pool, key: pool[h(key) % len(pool)] if pool else None
    for a in eligible:
        if all(bins[k] >= SIMILARITY_PER_BIN for k in range(10)):
            break
        parents = nouns[a][3]
        parent = pick(parents, "parent:" + a)
        grand = pick(nouns[parent][3], "grand:" + a) if parent else None
        candidates = [parent,
                      pick(hypo[parent], "sibling:" + a) if parent else None,
                      pick(hypo[pick(hypo[grand], "uncle:" + a)], "cousin:" + a) if grand and hypo[grand] else None,
                      pick(hypo[a], "child:" + a),
                      pick(by_file[nouns[a][0]], "file:" + a),
                      pick(eligible, "any:" + a)]
        for b in candidates:
            if b is None or b == a:
                continue
            if len(nouns[b][2].split()) < 3 or root not in ancestors(b):
                continue
            key = min(a, b) + "-" + max(a, b)
            if key in seen or nouns[a][2] == nouns[b][2]:
                continue
            score = round(wup(a, b), 4)
            k = min(int(score * 10), 9)
            if bins[k] >= SIMILARITY_PER_BIN:
                continue
            bins[k] += 1
            seen.add(key)
            first, second = (a, b) if h("side:" + key) % 2 == 0 else (b, a)
            examples.append((key, {"text": nouns[first][2], "text_pair": nouns[second][2],
                                   "similarity": score}))
    return examples


def similarity_counts(recs):
    c = Counter(min(int(r["similarity"] * 10), 9) for r in recs)
    return " ".join(f"{k / 10:.1f}-{(k + 1) / 10:.1f}={c[k]}" for k in range(10))


# ---------------------------------------------------------------------- Python documentation
ROLE = re.compile(r":(?:py:)?([a-z]+(?::[a-z]+)?):`((?:[^`\\]|\\.)+)`")
NOSPLIT = ("e.g.", "i.e.", "etc.", "vs.", "cf.", "Mr.", "Dr.", "No.")
BOUNDARY = re.compile(r"""[.?!]["')]*\s+(?=["'(]?[A-Z\x02])""")
WORD = re.compile(r"\w+(?:[-'.]\w+)*|\S")


def paragraphs(lines):
    """Prose paragraphs of a reStructuredText file: runs of non-blank lines that are not a
    directive, comment, literal block, table, doctest or heading adornment. Directive bodies
    (function and class descriptions, notes) are read as prose at their own indentation."""
    para, indent, literal_from = [], 0, None
    out = []
    def flush():
        if para:
            out.append(" ".join(para))
        para.clear()
    for line in lines:
        s = line.strip()
        ind = len(line) - len(line.lstrip())
        if literal_from is not None:                 # inside a literal block
            if not s or ind > literal_from:
                continue
            literal_from = None
        if not s:
            if para and para[-1].endswith("::"):
                literal_from = indent
            flush()
            continue
        if not para:
            indent = ind
        elif ind != indent:                          # a definition list body, a quote
            flush()
            indent = ind
        if (s.startswith((".. ", ">>>", "...", "+-", "+=", "|", "* ", "- ", "#. "))
                or s == ".." or re.fullmatch(r"([=\-~^\"'`#*+_.])\1{2,}", s)
                or re.fullmatch(r"=+( +=+)+", s) or re.match(r"\d+\. ", s)):
            flush()
            para.append("\1")                        # poisons the paragraph: dropped below
            continue
        para.append(s)
    flush()
    return [p for p in out if "\1" not in p]


def render(p):
    """Inline markup -> text; each marked-up object becomes \x02i\x03 with ents[i] its
    (type, text as Sphinx shows it). Returns None where markup that has no plain reading
    (a reference to a title defined elsewhere, a substitution) is left."""
    ents = []
    def role(m):
        name, text = m.group(1), m.group(2).replace("\\", "")
        t = re.match(r"(.*?)\s*<[^<>]*>$", text)
        shown = t.group(1) if t and t.group(1) else text
        if name in ("ref", "doc", "token") and not (t and t.group(1)):
            return "\1"
        shown = shown.lstrip("!")
        if shown.startswith("~"):
            shown = shown[1:].rsplit(".", 1)[-1]
        if name in ENTITY_ROLES:
            # Sphinx appends "()" to functions and methods (add_function_parentheses).
            if name in ("func", "meth") and not shown.endswith(")"):
                shown += "()"
            ents.append((ENTITY_ROLES[name], shown))
            return f"\x02{len(ents) - 1}\x03"
        if name.startswith("c:") or name in ("issue", "gh", "source"):
            return "\1"                              # C API, changelog: not this task's prose
        prefix = {"pep": "PEP ", "rfc": "RFC "}.get(name, "")
        return prefix + shown
    p = re.sub(r"``(.+?)``", lambda m: m.group(1).replace("`", "\1"), p)
    p = ROLE.sub(role, p)
    p = re.sub(r"`([^`]+?)(\s*<[^<>]*>)?`__?", r"\1", p)
    p = re.sub(r"\[#?\w*\]_", "", p)
    p = re.sub(r"\*\*(.+?)\*\*", r"\1", p)
    p = re.sub(r"(?<![\w*])\*([^*\s](?:[^*]*[^*\s])?)\*(?![\w*])", r"\1", p)
    p = re.sub(r"\\ ?", "", p)
    if p.endswith("::"):
        p = p[:-1]
    if re.search(r"[`|\1]|::|\*", p):
        return None, ents
    return " ".join(p.split()), ents


def sentences(p):
    start = 0
    for m in BOUNDARY.finditer(p):
        head = p[:m.start() + 1]
        if not head.endswith(NOSPLIT) and not re.search(r"\b[A-Z]\.$", head):
            yield p[start:m.end()].strip()
            start = m.end()
    yield p[start:].strip()


def tag(sentence, ents):
    tokens, tags = [], []
    for piece in re.split(r"(\x02\d+\x03)", sentence):
        m = re.fullmatch(r"\x02(\d+)\x03", piece)
        if m:
            kind, text = ents[int(m.group(1))]
            words = text.split()
            tokens += words
            tags += ["B-" + kind] + ["I-" + kind] * (len(words) - 1)
        else:
            words = WORD.findall(piece)
            tokens += words
            tags += ["O"] * len(words)
    return tokens, tags


def pydoc_entities(src):
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(src) for f in fs
                   if f.endswith(".rst.txt"))
    # The C API and the changelogs are left out: other roles (c:func) and issue lists.
    files = [f for f in files if not re.search(r"/(c-api|whatsnew|extending)/", f)]
    examples, seen = [], set()
    for path in files:
        with open(path, encoding="utf-8") as f:
            lines = [l.rstrip().expandtabs() for l in f]
        for p in paragraphs(lines):
            text, ents = render(p)
            if text is None:
                continue
            for s in sentences(text):
                tokens, tags = tag(s, ents)
                if (not any(t != "O" for t in tags) or not 5 <= len(tokens) <= 64
                        or tokens[-1] not in (".", "?", "!") or not tokens[0][:1].isupper()
                        and not tags[0].startswith("B-")):
                    continue
                key = " ".join(tokens)
                if key in seen:                      # a sentence repeated across pages
                    continue
                seen.add(key)
                examples.append((key, {"tokens": tokens, "tags": tags}))
    # A fixed sample of ENTITY_SENTENCES: the smallest hashes.
    examples.sort(key=lambda e: h("pick:" + e[0]))
    return examples[:ENTITY_SENTENCES]


def entity_counts(recs):
    c = Counter(t[2:] for r in recs for t in r["tags"] if t.startswith("B-"))
    return (f"{sum(len(r['tokens']) for r in recs)} words, entities: "
            + " ".join(f"{k}={c[k]}" for k in ENTITY_TYPES))


def main():
    wordnet_dir, pydoc_dir, out = sys.argv[1:4]
    nouns = read_nouns(wordnet_dir)
    write_task(out, "wordnet_topic", wordnet_topic(nouns), label_counts)
    write_task(out, "wordnet_hypernym", wordnet_hypernym(nouns), label_counts)
    write_task(out, "wordnet_similarity", wordnet_similarity(nouns), similarity_counts)
    write_task(out, "pydoc_entities", pydoc_entities(pydoc_dir), entity_counts)


if __name__ == "__main__":
    main()
