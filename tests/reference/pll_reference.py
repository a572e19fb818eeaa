"""minicons' MaskedLMScorer (the pinned reference client for pseudo-log-likelihood) on model
directories, as tests/cli/pll_agreement_test.cpp compares mlm-eval --pll with it.

  pll_reference.py SENTENCES PAIRS DIR...
prints {DIR: {variant: {"scores": [PLL per sentence], "pairs": [[good, bad] per pair],
"seconds": time spent on the sentences}}} for the variants original and within_word_l2r;
SENTENCES one per line (blank lines skipped), PAIRS JSON Lines with sentence_good / sentence_bad
("" for none). Each sentence is scored alone (no padding), as mlm-eval scores it.
"""
import json
import sys
import time

import transformers
from minicons import scorer


def score_directory(directory, sentences, pairs):
    tokenizer = transformers.AutoTokenizer.from_pretrained(directory, use_fast=True)
    # transformers 5 dropped batch_encode_plus, which minicons 0.3.39 calls; it was the
    # tokenizer's own __call__ on a batch.
    tokenizer.batch_encode_plus = lambda texts, **kwargs: tokenizer(texts, **kwargs)
    model = scorer.MaskedLMScorer(directory, "cpu", tokenizer=tokenizer)
    total = lambda x: x.sum(0).item()  # the pseudo-log-likelihood: natural log, summed
    out = {}
    for variant in ("original", "within_word_l2r"):
        score = lambda s: model.sequence_score([s], reduction=total, PLL_metric=variant)[0]
        start = time.perf_counter()
        scores = [score(s) for s in sentences]
        seconds = time.perf_counter() - start
        out[variant] = {"scores": scores, "seconds": seconds,
                        "pairs": [[score(p["sentence_good"]), score(p["sentence_bad"])] for p in pairs]}
    return out


def main(sentences_path, pairs_path, *directories):
    with open(sentences_path, encoding="utf-8") as f:
        sentences = [line.rstrip("\n") for line in f if line.strip()]
    pairs = []
    if pairs_path:
        with open(pairs_path, encoding="utf-8") as f:
            pairs = [json.loads(line) for line in f if line.strip()]
    print(json.dumps({d: score_directory(d, sentences, pairs) for d in directories}))


if __name__ == "__main__":
    main(*sys.argv[1:])
