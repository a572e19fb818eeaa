#!/usr/bin/env python3
"""Reference ids for tests/text/wordpiece_agreement_test.cpp: what transformers'
BertTokenizerFast gives on a few thousand varied lines, for several normalizer settings.

  wordpiece_reference.py make FIXTURES_DIR OUT_DIR
      OUT_DIR/lines.jsonl           one JSON string per line (the lines hold newlines, tabs,
                                    control characters): fixture prose in mixed case, accents
                                    and combining marks, CJK, kana, Hangul, emoji, Arabic,
                                    Cyrillic, Greek, punctuation runs, Unicode spaces, control
                                    characters, over-long words, digits, special tokens
      OUT_DIR/vocab.txt             a WordPiece vocabulary trained with tokenizers'
                                    WordPieceTrainer on the fixture corpus and half the lines
                                    (so the other half has characters it lacks: [UNK])
      OUT_DIR/small/vocab.txt       400 tokens of the fixture prose alone: words of several pieces
      OUT_DIR/<case>/vocab.txt, tokenizer_config.json   the vocabulary and the case's options
                                    (a Hugging Face directory, as many hub BERTs ship)
      OUT_DIR/<case>/tokenizer.json the tokenizer BertTokenizerFast.from_pretrained(<case>)
                                    built, as it saves it
      OUT_DIR/<case>/ids.jsonl      that tokenizer's input_ids per line ([CLS] ... [SEP])
  wordpiece_reference.py sweep OUT_TSV
      for every code point c and each normalizer setting of SWEEP, the words BertNormalizer
      then BertPreTokenizer make of "a" c "b"; written only where they are not ["a" c "b"]:
      setting, code point (hex), JSON list of words
  wordpiece_reference.py check TOKENIZER_JSON LINES_JSONL OUT_JSONL
      ids per line from PreTrainedTokenizerFast(tokenizer_file=...) and from
      BertTokenizerFast(tokenizer_file=...); writes [ids, ids] per line.
"""
import json
import os
import random
import sys

CASES = {
    # name: (do_lower_case, strip_accents, tokenize_chinese_chars)
    "uncased": (True, None, True),
    "cased": (False, None, True),
    "cased_strip": (False, True, True),
    "cased_nostrip": (False, False, True),
    "uncased_nochinese": (True, None, False),
}
SWEEP = {
    # name: (clean_text, handle_chinese_chars, strip_accents, lowercase)
    "all": (True, True, None, True),
    "none": (False, False, False, False),
    "clean_lower": (True, False, False, True),
}
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"[unused{i}]" for i in range(5)]

WORDS = [
    "café", "naïve", "Ångström", "señor", "résumé", "Zürich", "façade", "Øresund", "Dvořák",
    "e\u0301le\u0300ve", "a\u0308", "n\u0303o", "a\u0323\u0301", "a\u0301\u0323", "o\u031b\u0303",
    "Việt Nam", "İstanbul", "ıi", "ΟΔΟΣ", "Σίσυφος", "Straße", "\u1e9eTRASSE", "ǅemal", "ﬁnance",
    "我爱自然语言处理。", "東京は日本の首都です。", "カタカナ", "ひらがな", "한국어 텍스트입니다",
    "\uf900\uf901", "\U00020000\U0002a6d6", "㐀㐁", "中文English混合",
    "😀", "👍🏽", "👨\u200d👩\u200d👧", "🇫🇷", "🥰", "🫠", "❤️",
    "مرحبا بالعالم", "שָׁלוֹם", "Привет, мир!", "Ёлка", "Καλημέρα κόσμε", "ΆΈΉ",
    "!!!", "...", "?!?", "—", "–", "«guillemets»", "“quotes”", "¿Qué?", "¡Hola!", "(a)[b]{c}",
    "@#$%^&*", "~`|\\", "§¶†‡", "…", "、。・", "«»‹›",
    "12345", "3.14159", "1,000,000", "٣٤٥", "①②③", "Ⅻ", "½", "x²",
    "[MASK]", "hello[SEP]world", "[cls]", "[UNK]", "[CLS][SEP]", "[unused0]", "[MASK",
    "\u1734", "\u166d", "\U000111c9", "\u0378", "\ue000", "\u1885", "\ua9bd", "\U00011938",
    "\u1c89", "\ua7cb", "\U00010d50", "\u08e2", "\u061d",
]
SPACES = [" ", "\t", "\n", "\r\n", "\u00a0", "\u2003", "\u3000", "\u2028", "\u202f", "\x0b",
          "\x0c", "\u0085", "  ", "\u1680"]
CONTROLS = ["\x00", "\x01", "\x1f", "\x7f", "\u200b", "\ufeff", "\ufffd", "\u200d", "\u00ad",
            "\u0085", "\x1c"]


def fixture_lines(fixtures):
    lines = []
    for name in ("train.txt", "valid.txt", "lines.txt"):
        with open(os.path.join(fixtures, "corpus", name), encoding="utf-8") as f:
            lines += [line.rstrip("\n") for line in f if line.strip()]
    return lines


def mixed_case(rng, text):
    pick = rng.random()
    if pick < 0.2:
        return text.upper()
    if pick < 0.4:
        return text.title()
    if pick < 0.5:
        return "".join(c.upper() if rng.random() < 0.5 else c for c in text)
    return text


def varied_lines(rng, prose):
    lines = []
    for text in prose:  # fixture prose, some of it recased
        lines.append(mixed_case(rng, text))
    for _ in range(2200):  # fragments joined by assorted spaces, controls and prose words
        parts = []
        for _ in range(rng.randint(1, 12)):
            pick = rng.random()
            if pick < 0.45:
                parts.append(rng.choice(WORDS))
            elif pick < 0.7:
                parts.append(mixed_case(rng, rng.choice(rng.choice(prose).split() or ["x"])))
            elif pick < 0.8:
                parts.append(rng.choice(CONTROLS))
            elif pick < 0.9:
                parts.append(rng.choice(["a", "é", "x", "语", "ab", "Ž"]) * rng.randint(95, 130))
            else:
                parts.append(str(rng.randint(0, 10 ** rng.randint(1, 12))))
            parts.append(rng.choice(SPACES) if rng.random() < 0.8 else "")
        lines.append("".join(parts))
    lines += ["", " ", "\t\n", "x" * 100, "x" * 101, "é" * 100, "é" * 101, "e\u0301" * 60,
              "a" + "\u0301" * 120, "[MASK][MASK]", "ΟΔΟΣ ΟΔΟΣ.", "İİİ", "\U0001f970" * 3]
    return lines


def train_vocab(prose, lines, path, size=4000):
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=False, strip_accents=False)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = trainers.WordPieceTrainer(vocab_size=size, special_tokens=SPECIALS)
    lowered = [t.lower() for t in prose]
    tokenizer.train_from_iterator(prose + lowered + lines[::2], trainer=trainer)
    vocab = sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])
    with open(path, "w", encoding="utf-8") as f:
        for token, _ in vocab:
            f.write(token + "\n")


def make(fixtures, out):
    from transformers import BertTokenizerFast

    rng = random.Random(15)
    prose = fixture_lines(fixtures)
    lines = varied_lines(rng, prose)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "lines.jsonl"), "w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")
    vocab = os.path.join(out, "vocab.txt")
    train_vocab(prose, lines, vocab)
    # A small vocabulary of the prose alone, in which most words take several pieces.
    os.makedirs(os.path.join(out, "small"), exist_ok=True)
    train_vocab(prose, [], os.path.join(out, "small", "vocab.txt"), size=400)
    for name, (lower, strip, chinese) in CASES.items():
        # A Hugging Face directory with vocab.txt and tokenizer_config.json only, as many hub
        # BERTs are: from_pretrained builds the fast tokenizer from them.
        case = os.path.join(out, name)
        os.makedirs(case, exist_ok=True)
        with open(os.path.join(case, "vocab.txt"), "w", encoding="utf-8") as f:
            f.write(open(vocab, encoding="utf-8").read())
        with open(os.path.join(case, "tokenizer_config.json"), "w", encoding="utf-8") as f:
            json.dump({"do_lower_case": lower, "strip_accents": strip,
                       "tokenize_chinese_chars": chinese, "tokenizer_class": "BertTokenizer"}, f)
        tokenizer = BertTokenizerFast.from_pretrained(case)
        normalizer = json.loads(tokenizer.backend_tokenizer.to_str())["normalizer"]
        assert (normalizer["lowercase"], normalizer["strip_accents"],
                normalizer["handle_chinese_chars"]) == (lower, strip, chinese), normalizer
        assert tokenizer.backend_tokenizer.get_vocab_size() == len(open(vocab).readlines())
        tokenizer.backend_tokenizer.save(os.path.join(case, "tokenizer.json"))
        with open(os.path.join(case, "ids.jsonl"), "w", encoding="utf-8") as f:
            for line in lines:
                f.write(json.dumps(tokenizer(line)["input_ids"]) + "\n")


def sweep(out):
    from tokenizers.normalizers import BertNormalizer
    from tokenizers.pre_tokenizers import BertPreTokenizer

    pre = BertPreTokenizer()
    with open(out, "w", encoding="utf-8") as f:
        for name, (clean, chinese, strip, lower) in SWEEP.items():
            normalizer = BertNormalizer(clean_text=clean, handle_chinese_chars=chinese,
                                        strip_accents=strip, lowercase=lower)
            for cp in range(0x110000):
                if 0xD800 <= cp <= 0xDFFF:
                    continue
                text = "a" + chr(cp) + "b"
                words = [w for w, _ in pre.pre_tokenize_str(normalizer.normalize_str(text))]
                if words != [text]:
                    f.write(f"{name}\t{cp:X}\t{json.dumps(words)}\n")


def check(tokenizer_json, lines_path, out):
    from transformers import BertTokenizerFast, PreTrainedTokenizerFast

    generic = PreTrainedTokenizerFast(tokenizer_file=tokenizer_json)
    bert = BertTokenizerFast(tokenizer_file=tokenizer_json)
    with open(lines_path, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as w:
        for line in f:
            text = json.loads(line)
            w.write(json.dumps([generic(text)["input_ids"], bert(text)["input_ids"]]) + "\n")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "sweep":
        sweep(sys.argv[2])
    elif len(sys.argv) == 5 and sys.argv[1] == "check":
        check(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)
