"""The `transformers` side of the Hugging Face round-trip tests (tests/cli/hf_round_trip_test.cpp).

Each subcommand does what a user of an mlm-train export would do in Python and prints one JSON
object on stdout, which the C++ test compares with what mlm-train's own tools give.

  load DIR CLASS                  from_pretrained with output_loading_info: key problems
  score DIR BATCHES               masked loss and accuracy on mlm-data --json batches
  save DIR VOCAB FORMAT [SHARD]   a seeded small BertForMaskedLM saved by transformers
  fill DIR TOP_K TEXT...          pipeline("fill-mask") predictions
  tokenize DIR LINES              AutoTokenizer ids of each line (specials included)
  classify DIR                    a few steps of BertForSequenceClassification: the losses
"""
import json
import sys

import torch
import transformers


def load(directory, class_name):
    cls = getattr(transformers, class_name)
    model, info = cls.from_pretrained(directory, output_loading_info=True)
    return {
        "class": type(model).__name__,
        "missing": sorted(info["missing_keys"]),
        "unexpected": sorted(info["unexpected_keys"]),
        "mismatched": sorted(str(k) for k in info["mismatched_keys"]),
        "errors": [str(e) for e in info.get("error_msgs", [])],
    }


@torch.no_grad()
def score(directory, batches_path):
    model = transformers.AutoModelForMaskedLM.from_pretrained(directory, dtype=torch.float32).eval()
    loss_sum, correct, count = 0.0, 0, 0
    with open(batches_path) as f:
        for line in f:
            batch = json.loads(line)
            ids = torch.tensor(batch["input_ids"])
            logits = model(
                input_ids=ids,
                attention_mask=torch.tensor(batch["attention_mask"]),
                token_type_ids=torch.tensor(batch["token_type_ids"]),
            ).logits.double()
            labels = torch.tensor(batch["labels"])
            selected = labels != -100
            picked = logits[selected]
            target = labels[selected]
            loss_sum += torch.nn.functional.cross_entropy(picked, target, reduction="sum").item()
            correct += (picked.argmax(-1) == target).sum().item()
            count += int(selected.sum())
    return {"mlm_loss": loss_sum / count, "masked_accuracy": correct / count, "num_masked": count}


def save(directory, vocab_size, weight_format, shard_size=None):
    torch.manual_seed(1234)
    config = transformers.BertConfig(
        vocab_size=int(vocab_size), hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=128, max_position_embeddings=128, pad_token_id=0)
    model = transformers.BertForMaskedLM(config)
    # A trained-looking head: a random bias, so the import of every tensor shows in the scores.
    with torch.no_grad():
        model.cls.predictions.bias.normal_(0, 0.5)
    kwargs = {"safe_serialization": weight_format == "safetensors"}
    if shard_size:
        kwargs["max_shard_size"] = shard_size
    model.save_pretrained(directory, **kwargs)
    return {"saved": directory}


def fill(directory, top_k, texts):
    pipe = transformers.pipeline("fill-mask", model=directory, tokenizer=directory, top_k=int(top_k), device="cpu")
    out = []
    for text in texts:
        result = pipe(text)
        if result and isinstance(result[0], dict):  # one mask: a flat list
            result = [result]
        out.append([[{"token": r["token"], "token_str": r["token_str"], "score": r["score"]} for r in mask]
                    for mask in result])
    return {"texts": out}


def tokenize(directory, lines_path):
    tok = transformers.AutoTokenizer.from_pretrained(directory)
    with open(lines_path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    return {"class": type(tok).__name__, "mask_token_id": tok.mask_token_id, "pad_token_id": tok.pad_token_id,
            "ids": [tok(line)["input_ids"] for line in lines]}


def classify(directory):
    """Fine-tunes the export on a toy task: is the sentence about animals or numbers."""
    torch.manual_seed(0)
    tok = transformers.AutoTokenizer.from_pretrained(directory)
    model = transformers.BertForSequenceClassification.from_pretrained(directory, num_labels=2)
    animals = ["the cat sat on the mat", "a dog ran in the park", "the bird sang in the tree",
               "a horse ate the hay", "the fish swam in the lake", "a cow stood in the field"]
    numbers = ["one two three four", "five six seven eight", "ten eleven twelve",
               "nine and nineteen", "two plus two is four", "three times three is nine"]
    texts, labels = animals + numbers, [0] * len(animals) + [1] * len(numbers)
    batch = tok(texts, padding=True, return_tensors="pt")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train()
    losses = []
    for _ in range(12):
        loss = model(**batch, labels=torch.tensor(labels)).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return {"losses": losses}


def main(argv):
    command, args = argv[1], argv[2:]
    if command == "load":
        result = load(*args)
    elif command == "score":
        result = score(*args)
    elif command == "save":
        result = save(*args)
    elif command == "fill":
        result = fill(args[0], args[1], args[2:])
    elif command == "tokenize":
        result = tokenize(*args)
    elif command == "classify":
        result = classify(*args)
    else:
        raise SystemExit(f"unknown command {command}")
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv)
