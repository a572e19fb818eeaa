#!/usr/bin/env python3
"""Linear probes of frozen encoders: how much of two sentence-pair tasks a logistic regression
reads off an encoder's mean-pooled last hidden states. A downstream comparison that is fair to
a BERT export and to an ELECTRA discriminator alike: neither label is a function of the tokens
either model was pretrained to predict (masked tokens, replaced tokens).

    .venv/bin/python scripts/probe_linear.py MODEL_DIR [MODEL_DIR...] --train data/sample/train.txt \\
        --valid data/sample/valid.txt [--pairs N] [--seed S] [--json]

MODEL_DIR: an mlm-export directory (BERT: read as BertModel) or an ELECTRA pair (its
discriminator/, read as ElectraModel; the pair root or discriminator/ itself). The corpora hold
one sentence per line, documents separated by blank lines. Tasks, each balanced 50/50 and built
from consecutive sentences (A, B) of one document, deterministically from the seed:
  sentence_order   A B (1) or B A (0)
  same_document    A B (1) or A and the successor sentence of a pair from another document (0)
N pairs per task from --train (default 4000) and N / 4 from --valid, fewer where a file has
fewer consecutive pairs. Features: "[CLS] A [SEP] B [SEP]" as the model's tokenizer encodes a
pair (token types included, truncated to 128 tokens), the last hidden states averaged over the
non-padding tokens, in fp32. The probe: logistic regression on features standardised with the
train pairs' mean and deviation, an L2 penalty of fixed weight (L2), full-batch L-BFGS, trained
on the train pairs and scored on the valid pairs. Prints accuracy and loss per task and model
beside the majority baseline (the train pairs' majority label) as a Markdown table, or with
--json one object: pairs, majority, and per model its encoder, class, feature seconds and per
task valid accuracy and loss. With 1000 valid pairs an accuracy's standard error is ~0.016.
"""
import argparse
import json
import os
import random
import sys
import time

import torch
import transformers

TASKS = ("sentence_order", "same_document")
MAX_LENGTH = 128
BATCH = 64
L2 = 1e-3  # on the mean loss; fixed, not chosen on the valid pairs


def read_documents(path):
    """The documents of PATH (blank-line separated) as lists of sentences, those with >= 2."""
    documents, current = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                current.append(line)
            elif current:
                documents.append(current)
                current = []
    documents.append(current)
    return [d for d in documents if len(d) >= 2]


def make_pairs(documents, count, rng):
    """{task: [(A, B, label)]}, count pairs each (fewer if there are fewer consecutive pairs)."""
    if len(documents) < 2:
        sys.exit("error: the same_document task needs two documents of two sentences or more")
    consecutive = [(d, i) for d, sentences in enumerate(documents) for i in range(len(sentences) - 1)]
    count = min(count, len(consecutive))
    pairs = {}
    for task in TASKS:
        chosen = rng.sample(consecutive, count)
        labels = [1] * (count // 2) + [0] * (count - count // 2)
        rng.shuffle(labels)
        rows = []
        for (d, i), label in zip(chosen, labels):
            a, b = documents[d][i], documents[d][i + 1]
            if label == 0 and task == "sentence_order":
                a, b = b, a
            elif label == 0:
                # A successor, as b is, so that a sentence's place in its document tells nothing.
                other, j = rng.choice(consecutive)
                while other == d:
                    other, j = rng.choice(consecutive)
                b = documents[other][j + 1]
            rows.append((a, b, label))
        pairs[task] = rows
    return pairs


def encoder_dir(model_dir):
    """The directory whose encoder is probed: an ELECTRA pair's discriminator, else MODEL_DIR."""
    discriminator = os.path.join(model_dir, "discriminator")
    return discriminator if os.path.isfile(os.path.join(discriminator, "config.json")) else model_dir


@torch.no_grad()
def features(tokenizer, model, pairs):
    """Mean-pooled last hidden states [N, hidden] of the pairs."""
    # Batches of similar lengths pad less; the rows go back to the pairs' order at the end.
    order = sorted(range(len(pairs)), key=lambda k: len(pairs[k][0]) + len(pairs[k][1]))
    pooled = torch.empty(len(pairs), model.config.hidden_size)
    for start in range(0, len(order), BATCH):
        rows = order[start:start + BATCH]
        batch = tokenizer([pairs[k][0] for k in rows], [pairs[k][1] for k in rows], padding=True,
                          truncation=True, max_length=MAX_LENGTH, return_tensors="pt")
        hidden = model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled[rows] = (hidden * mask).sum(1) / mask.sum(1)
    return pooled


def probe(train_x, train_y, valid_x, valid_y):
    """Valid accuracy and mean loss of a logistic regression trained on the train features (from
    zero weights with full batches: deterministic)."""
    mean, std = train_x.mean(0), train_x.std(0).clamp_min(1e-6)
    train_x, valid_x = ((x.double() - mean) / std for x in (train_x, valid_x))
    train_y, valid_y = train_y.double(), valid_y.double()
    weight = torch.zeros(train_x.size(1), dtype=torch.float64, requires_grad=True)
    bias = torch.zeros((), dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.LBFGS([weight, bias], max_iter=500, tolerance_grad=1e-9,
                                  line_search_fn="strong_wolfe")

    def closure():
        optimizer.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(train_x @ weight + bias, train_y)
        loss = loss + 0.5 * L2 * weight.square().sum()
        loss.backward()
        return loss

    optimizer.step(closure)
    with torch.no_grad():
        logits = valid_x @ weight + bias
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, valid_y).item()
        accuracy = ((logits > 0).double() == valid_y).double().mean().item()
    return {"accuracy": accuracy, "loss": loss}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", metavar="MODEL_DIR")
    parser.add_argument("--train", required=True, help="sentence-per-line corpus for the probes' training pairs")
    parser.add_argument("--valid", required=True, help="the same for the scored pairs")
    parser.add_argument("--pairs", type=int, default=4000, help="train pairs per task (valid: a quarter)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="one JSON object instead of a table")
    args = parser.parse_args()
    transformers.utils.logging.set_verbosity_error()  # the unused pretraining heads' notices
    transformers.utils.logging.disable_progress_bar()

    rng = random.Random(args.seed)
    splits = {"train": make_pairs(read_documents(args.train), args.pairs, rng),
              "valid": make_pairs(read_documents(args.valid), max(args.pairs // 4, 1), rng)}
    result = {"pairs": {t: {s: len(splits[s][t]) for s in splits} for t in TASKS}, "majority": {}, "models": {}}
    labels = {s: {t: torch.tensor([y for _, _, y in splits[s][t]]) for t in TASKS} for s in splits}
    for task in TASKS:
        majority = int(labels["train"][task].double().mean() >= 0.5)
        result["majority"][task] = (labels["valid"][task] == majority).double().mean().item()
    for model_dir in args.models:
        directory = encoder_dir(model_dir)
        started = time.monotonic()
        tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
        model = transformers.AutoModel.from_pretrained(directory, dtype=torch.float32).eval()
        entry = {"encoder": directory, "class": type(model).__name__}
        x = {}
        for task in TASKS:
            both = features(tokenizer, model, splits["train"][task] + splits["valid"][task])
            x[task] = both.split([len(splits["train"][task]), len(splits["valid"][task])])
        entry["feature_s"] = time.monotonic() - started
        for task in TASKS:
            entry[task] = probe(x[task][0], labels["train"][task], x[task][1], labels["valid"][task])
        result["models"][model_dir] = entry
        print(f"{model_dir}: {entry['class']}, features in {entry['feature_s']:.0f} s", file=sys.stderr)

    if args.json:
        print(json.dumps(result))
        return
    pairs = ", ".join(f"{t} {p['train']}/{p['valid']}" for t, p in result["pairs"].items())
    print(f"valid accuracy (loss) of a linear probe; train/valid pairs: {pairs}\n")
    print("| model | " + " | ".join(TASKS) + " |")
    print("|---|" + "---|" * len(TASKS))
    print("| majority | " + " | ".join(f"{result['majority'][t]:.4f}" for t in TASKS) + " |")
    for model_dir, entry in result["models"].items():
        print(f"| {model_dir} | " + " | ".join(f"{entry[t]['accuracy']:.4f} ({entry[t]['loss']:.3f})"
                                               for t in TASKS) + " |")


if __name__ == "__main__":
    main()
