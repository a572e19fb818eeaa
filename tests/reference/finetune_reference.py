#!/usr/bin/env python3
"""The transformers side of the fine-tuning parity check (issue #27): fine-tunes a Hugging Face
export on a probe task of configs/probes/ with a plain PyTorch loop that reproduces the
Trainer's recipe, in an order a C++ implementation can reproduce exactly.

    .venv/bin/python tests/reference/finetune_reference.py MODEL_DIR configs/probes/TASK.yaml \\
        [--steps N] [--seed S] [--no-dropout] [--max-train N] [--no-early-stopping]
        [--save-init DIR] [--save-final DIR] [--out FILE.json]

MODEL_DIR: a BertForMaskedLM / ModernBertForMaskedLM export (config.json, weights, tokenizer
files); its encoder is read by AutoModelFor{Sequence,Token}Classification, the new head is
initialised after torch.manual_seed(seed) (--save-init writes that starting model, head
included, so that another implementation can start from the same weights).

The recipe (the Trainer's defaults for these arguments, written out):
  - data: the train file in file order, never shuffled (the probe files are already in a fixed
    hashed order), --max-train keeps the first N; batches of batch_size, the last one short;
    each batch padded to its longest sequence; truncation to max_seq_len (pairs: longest_first)
  - token tasks: the label on the first sub-token of each word, -100 on the others and on the
    special tokens (run_ner with label_all_tokens=False); words cut off by truncation are not
    scored, as in run_ner
  - optimiser: torch.optim.AdamW, betas (0.9, 0.999), eps 1e-8, weight_decay on the parameters
    Trainer.get_decay_parameter_names picks (all but biases and norm weights), 0 on the rest
  - schedule: linear warmup over ceil(warmup_ratio * total_steps) steps, then linear decay to 0
    at total_steps (get_linear_schedule_with_warmup); total_steps = epochs * ceil(n / batch)
    or --steps N (then the data repeats epoch after epoch, as Trainer's max_steps)
  - step: mean loss of the batch (the model's own cross-entropy), backward, gradient norm
    clipped at 1.0, optimiser step, scheduler step, zero_grad
  - evaluation at each epoch end (and at the last step when --steps ends inside an epoch) on
    the validation file; early stopping after early_stopping_patience evaluations without a
    strictly better value of the task's metric; the test file is scored with the best weights
  - --no-dropout: every dropout probability in the model config set to 0 and the model kept in
    eval mode, so that the run is deterministic and comparable step by step

Metrics are computed here: accuracy, macro-F1 (over the labels present in gold or prediction,
as scikit-learn), Matthews correlation (multi-class, as scikit-learn), and entity-level span F1
over BIO tags as seqeval's default (conlleval-style) mode. The JSON output holds the loss,
learning rate and pre-clipping gradient norm of every step, the validation metrics of every
evaluation, the best epoch and the test metrics.
"""
import argparse
import copy
import inspect
import json
import math
import os
import sys
import time

import torch
import transformers
import yaml

METRICS = ("accuracy", "macro_f1", "matthews", "span_f1")


# --------------------------------------------------------------------------------- metrics
def accuracy(gold, pred):
    return sum(g == p for g, p in zip(gold, pred)) / max(len(gold), 1)


def macro_f1(gold, pred):
    labels = sorted(set(gold) | set(pred))
    f1s = []
    for c in labels:
        tp = sum(g == c and p == c for g, p in zip(gold, pred))
        fp = sum(g != c and p == c for g, p in zip(gold, pred))
        fn = sum(g == c and p != c for g, p in zip(gold, pred))
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return sum(f1s) / max(len(f1s), 1)


def matthews(gold, pred):
    """Multi-class MCC (Gorodkin's R_K), as sklearn.metrics.matthews_corrcoef."""
    labels = sorted(set(gold) | set(pred))
    n = len(gold)
    c = sum(g == p for g, p in zip(gold, pred))
    t = {k: sum(g == k for g in gold) for k in labels}
    p = {k: sum(q == k for q in pred) for k in labels}
    cov_yp = c * n - sum(t[k] * p[k] for k in labels)
    cov_pp = n * n - sum(p[k] ** 2 for k in labels)
    cov_yy = n * n - sum(t[k] ** 2 for k in labels)
    return cov_yp / math.sqrt(cov_yy * cov_pp) if cov_yy and cov_pp else 0.0


def entities(tags):
    """(type, start, end) chunks of a BIO sequence as seqeval's get_entities (default mode):
    a chunk ends before an O, a B-, or an I- of another type; an I- after O or after another
    type starts a chunk."""
    chunks, start, kind = [], None, None
    for i, t in enumerate(list(tags) + ["O"]):
        prefix, _, typ = t.partition("-") if t != "O" else ("O", "", "")
        ends = start is not None and (prefix in ("O", "B") or typ != kind)
        if ends:
            chunks.append((kind, start, i - 1))
            start, kind = None, None
        if prefix in ("B", "I") and start is None:
            start, kind = i, typ
    return chunks


def span_f1(gold_seqs, pred_seqs):
    gold = {(k,) + e for k, s in enumerate(gold_seqs) for e in entities(s)}
    pred = {(k,) + e for k, s in enumerate(pred_seqs) for e in entities(s)}
    tp = len(gold & pred)
    p = tp / len(pred) if pred else 0.0
    r = tp / len(gold) if gold else 0.0
    return 2 * p * r / (p + r) if p + r else 0.0


# ------------------------------------------------------------------------------------ data
def read_jsonl(path, limit=None):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rows.append(json.loads(line))
                if limit is not None and len(rows) == limit:
                    break
    return rows


def encode(task, tok, rows, accepted):
    """Features per example: the tokenizer's outputs that the model's forward takes (ModernBERT
    has no token types), unpadded, and the label(s)."""
    lid = {l: i for i, l in enumerate(task["labels"])}
    feats = []
    for r in rows:
        if task["kind"] == "sequence_classification":
            pair = r[task["text_pair_field"]] if task.get("text_pair_field") else None
            enc = tok(r[task["text_field"]], pair, truncation=True,
                      max_length=task["max_seq_len"])
            enc = {k: v for k, v in enc.items() if k in accepted}
            enc["labels"] = lid[r[task["label_field"]]]
        else:
            words, tags = r[task["tokens_field"]], r[task["label_field"]]
            enc = tok(words, is_split_into_words=True, truncation=True,
                      max_length=task["max_seq_len"])
            labels, prev = [], None
            for w in enc.word_ids():
                labels.append(-100 if w is None or w == prev else lid[tags[w]])
                prev = w
            enc = {k: v for k, v in enc.items() if k in accepted}
            enc["labels"] = labels
        feats.append(enc)
    return feats


def collate(feats, pad_id):
    """Pads to the longest sequence of the batch, on the right."""
    n = max(len(f["input_ids"]) for f in feats)
    batch = {}
    for key in feats[0]:
        if key == "labels" and not isinstance(feats[0][key], list):
            batch[key] = torch.tensor([f[key] for f in feats])
            continue
        fill = {"input_ids": pad_id, "labels": -100}.get(key, 0)
        batch[key] = torch.tensor([f[key] + [fill] * (n - len(f[key])) for f in feats])
    return batch


def batches(feats, size):
    return [feats[i:i + size] for i in range(0, len(feats), size)]


# ----------------------------------------------------------------------------- train, eval
@torch.no_grad()
def evaluate(model, task, feats, batch_size, pad_id):
    was_training = model.training
    model.eval()
    labels = task["labels"]
    gold, pred = [], []
    for b in batches(feats, batch_size):
        batch = collate(b, pad_id)
        y = batch.pop("labels")
        logits = model(**batch).logits
        p = logits.argmax(-1)
        if task["kind"] == "sequence_classification":
            gold += [labels[i] for i in y.tolist()]
            pred += [labels[i] for i in p.tolist()]
        else:
            for yy, pp in zip(y.tolist(), p.tolist()):
                keep = [k for k, v in enumerate(yy) if v != -100]
                gold.append([labels[yy[k]] for k in keep])
                pred.append([labels[pp[k]] for k in keep])
    model.train(was_training)
    if task["kind"] == "sequence_classification":
        return {"accuracy": accuracy(gold, pred), "macro_f1": macro_f1(gold, pred),
                "matthews": matthews(gold, pred), "examples": len(gold)}
    flat_g = [t for s in gold for t in s]
    flat_p = [t for s in pred for t in s]
    return {"span_f1": span_f1(gold, pred), "accuracy": accuracy(flat_g, flat_p),
            "examples": len(gold), "words": len(flat_g)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model_dir")
    ap.add_argument("task_yaml")
    ap.add_argument("--steps", type=int, help="train exactly N optimiser steps")
    ap.add_argument("--seed", type=int, help="default: the task file's finetune.seed")
    ap.add_argument("--no-dropout", action="store_true")
    ap.add_argument("--max-train", type=int, help="use the first N training examples")
    ap.add_argument("--no-early-stopping", action="store_true",
                    help="run every step (--steps or all epochs) whatever the validation says")
    ap.add_argument("--save-init", help="save the model as initialised (head included) here")
    ap.add_argument("--save-final", help="save the model scored on test (the best weights) here")
    ap.add_argument("--root", default=".", help="the task file's data paths are relative to it")
    ap.add_argument("--out", help="write the JSON here (default: stdout)")
    args = ap.parse_args()

    with open(args.task_yaml, encoding="utf-8") as f:
        spec = yaml.safe_load(f)
    task, ft = spec["task"], spec["finetune"]
    # mlm-train's defaults for what a task file leaves out (src/config/task_config.cpp).
    for key, default in (("kind", "sequence_classification"), ("text_field", "text"),
                         ("label_field", "label"), ("tokens_field", "tokens"), ("metric", "accuracy"),
                         ("max_seq_len", 128)):
        task.setdefault(key, default)
    for key, default in (("epochs", 3), ("learning_rate", 5e-5), ("batch_size", 32),
                         ("warmup_ratio", 0.1), ("weight_decay", 0.01),
                         ("early_stopping_patience", 1), ("seed", 42)):
        ft.setdefault(key, default)
    if task["metric"] not in METRICS:
        sys.exit(f"unknown metric {task['metric']!r}")
    seed = ft["seed"] if args.seed is None else args.seed
    path = lambda k: os.path.join(args.root, task[k])
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)

    config = transformers.AutoConfig.from_pretrained(
        args.model_dir, num_labels=len(task["labels"]),
        id2label=dict(enumerate(task["labels"])),
        label2id={l: i for i, l in enumerate(task["labels"])})
    if args.no_dropout:
        for k, v in config.to_dict().items():
            if "dropout" in k and isinstance(v, float):
                setattr(config, k, 0.0)
    auto = (transformers.AutoModelForSequenceClassification
            if task["kind"] == "sequence_classification"
            else transformers.AutoModelForTokenClassification)
    model = auto.from_pretrained(args.model_dir, config=config)
    tok = transformers.AutoTokenizer.from_pretrained(args.model_dir)
    if task["kind"] == "token_classification" and not tok.is_fast:
        sys.exit("token tasks need a fast tokenizer (word_ids)")
    if args.save_init:
        model.save_pretrained(args.save_init)
        tok.save_pretrained(args.save_init)

    accepted = set(inspect.signature(model.forward).parameters)
    train = encode(task, tok, read_jsonl(path("train"), args.max_train), accepted)
    valid = encode(task, tok, read_jsonl(path("validation")), accepted)
    test = encode(task, tok, read_jsonl(path("test")), accepted)
    bs = ft["batch_size"]
    train_batches = batches(train, bs)
    total = args.steps if args.steps else ft["epochs"] * len(train_batches)
    warmup = math.ceil(total * ft["warmup_ratio"])

    decay = set(transformers.Trainer.get_decay_parameter_names(None, model))
    params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    opt = torch.optim.AdamW(
        [{"params": [p for n, p in params if n in decay], "weight_decay": ft["weight_decay"]},
         {"params": [p for n, p in params if n not in decay], "weight_decay": 0.0}],
        lr=float(ft["learning_rate"]), betas=(0.9, 0.999), eps=1e-8)
    sched = transformers.get_linear_schedule_with_warmup(opt, warmup, total)

    pad_id = tok.pad_token_id
    model.train(not args.no_dropout)
    losses, lrs, norms, evals = [], [], [], []
    best, best_state, best_epoch, bad = None, None, None, 0
    patience = math.inf if args.no_early_stopping else ft["early_stopping_patience"]
    step, t0 = 0, time.time()
    while step < total:
        for b in train_batches:
            lrs.append(sched.get_last_lr()[0])
            loss = model(**collate(b, pad_id)).loss
            loss.backward()
            norms.append(torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0).item())
            opt.step()
            sched.step()
            opt.zero_grad()
            losses.append(loss.item())
            step += 1
            epoch_end = step % len(train_batches) == 0
            if not (epoch_end or step == total):
                continue
            m = evaluate(model, task, valid, bs, pad_id)
            epoch = round(step / len(train_batches), 4)
            evals.append({"epoch": epoch, "step": step, "validation": m})
            print(f"epoch {epoch} step {step} loss {loss.item():.4f} "
                  f"valid {task['metric']} {m[task['metric']]:.4f}", file=sys.stderr)
            if best is None or m[task["metric"]] > best:
                best, best_epoch, bad = m[task["metric"]], epoch, 0
                best_state = copy.deepcopy(model.state_dict())
            else:
                bad += 1
            if step == total or bad >= patience:
                break
        if step == total or bad >= patience:
            break
    model.load_state_dict(best_state)
    test_m = evaluate(model, task, test, bs, pad_id)
    if args.save_final:
        model.save_pretrained(args.save_final)
        tok.save_pretrained(args.save_final)

    out = {"task": task["name"], "kind": task["kind"], "model_dir": args.model_dir,
           "model_class": type(model).__name__, "transformers": transformers.__version__,
           "torch": torch.__version__, "seed": seed, "no_dropout": args.no_dropout,
           "train_examples": len(train), "batch_size": bs,
           "steps_per_epoch": len(train_batches), "total_steps": total,
           "warmup_steps": warmup, "steps_run": step, "seconds": round(time.time() - t0, 2),
           "metric": task["metric"], "losses": losses, "learning_rates": lrs,
           "grad_norms": norms, "evaluations": evals, "best_epoch": best_epoch,
           "validation_best": best, "test": test_m}
    text = json.dumps(out, indent=1)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    else:
        print(text)
    print(f"{task['name']}: best epoch {best_epoch}, valid {task['metric']} {best:.4f}, "
          f"test {task['metric']} {test_m[task['metric']]:.4f}", file=sys.stderr)


if __name__ == "__main__":
    main()
