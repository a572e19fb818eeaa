"""The `tokenizers` library against a tokenizer directory mlm-train trained.

  python tokenizer_training_reference.py KIND OURS_DIR TRAIN_FILE HELDOUT_FILE OUT_JSON

KIND: roberta | modernbert | bert | bert_cased. Trains the library's own trainer
(ByteLevelBPETokenizer's BpeTrainer, BertWordPieceTokenizer's WordPieceTrainer) at the same
vocabulary size and settings on the same lines (each non-blank line of TRAIN_FILE, as mlm-train
counts words), then writes OUT_JSON:
  {"ids": [...]}           per held-out line: the library's ids for OURS_DIR/tokenizer.json,
  "auto_ids": [...]        AutoTokenizer(OURS_DIR)'s input_ids (with the special tokens),
  "vocab_overlap", "merges_equal_prefix", "same_vocab", "same_merges",
  "tokens_per_byte": {"ours": x, "library": y}  on the held-out lines.
"""
import json
import sys
import time

from tokenizers import Tokenizer, AddedToken, decoders, models, normalizers, pre_tokenizers, trainers


def lines_of(path):
    with open(path, encoding="utf-8") as f:
        return [l for l in f.read().split("\n") if l.strip(" \t\r")]


def library_tokenizer(kind, ours, train):
    model = ours["model"]
    vocab_size = len(model["vocab"])
    added = [t["content"] for t in ours["added_tokens"]]
    min_frequency = int(sys.argv[6]) if len(sys.argv) > 6 else 2
    if kind in ("roberta", "modernbert"):
        tok = Tokenizer(models.BPE())
        if kind == "modernbert":
            tok.normalizer = normalizers.NFC()
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        specials = added[:5] if kind == "roberta" else added[:2]
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, min_frequency=min_frequency, show_progress=False,
                                      special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    else:
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
        tok.normalizer = normalizers.BertNormalizer(lowercase=kind == "bert")
        tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
        tok.decoder = decoders.WordPiece()
        trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, min_frequency=min_frequency, show_progress=False,
                                            special_tokens=added[:5], limit_alphabet=1000)
    start = time.time()
    tok.train_from_iterator(train, trainer)
    return tok, time.time() - start


def main(kind, ours_dir, train_file, heldout_file, out_json):
    from transformers import AutoTokenizer
    ours_tok = Tokenizer.from_file(ours_dir + "/tokenizer.json")
    ours = json.loads(ours_tok.to_str())
    auto = AutoTokenizer.from_pretrained(ours_dir)
    heldout = lines_of(heldout_file)
    lib, seconds = library_tokenizer(kind, ours, lines_of(train_file))
    theirs = json.loads(lib.to_str())
    ids = [e.ids for e in ours_tok.encode_batch(heldout, add_special_tokens=False)]
    nbytes = sum(len(l.encode("utf-8")) for l in heldout)
    lib_tokens = sum(len(e.ids) for e in lib.encode_batch(heldout, add_special_tokens=False))
    ov, tv = set(ours["model"]["vocab"]), set(theirs["model"]["vocab"])
    out = {"ids": ids, "auto_ids": [auto(l)["input_ids"] for l in heldout],
           "vocab_size": {"ours": len(ov), "library": len(tv)},
           "vocab_overlap": len(ov & tv) / max(1, len(ov | tv)),
           "same_vocab": ours["model"]["vocab"] == theirs["model"]["vocab"],
           "tokens_per_byte": {"ours": sum(len(i) for i in ids) / nbytes, "library": lib_tokens / nbytes},
           "library_seconds": seconds}
    if "merges" in ours["model"]:
        om = [tuple(m) for m in ours["model"]["merges"]]
        tm = [tuple(m) for m in theirs["model"]["merges"]]
        prefix = 0
        while prefix < min(len(om), len(tm)) and om[prefix] == tm[prefix]:
            prefix += 1
        out.update({"merges": {"ours": len(om), "library": len(tm)}, "merges_equal_prefix": prefix,
                    "merges_overlap": len(set(om) & set(tm)) / max(1, len(set(om) | set(tm))),
                    "same_merges": om == tm})
    with open(out_json, "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main(*sys.argv[1:6])
