"""Tokenizers for hf_pipeline_agreement_test.cpp, built and trained here with the `tokenizers`
library (and `sentencepiece` for the Unigram models), and the ids that library gives.

usage: hf_pipeline_reference.py TRAIN.txt LINES.jsonl OUT_DIR
       hf_pipeline_reference.py encode DIR LINES.jsonl   (DIR/tokenizer.json exists: only the
                                                          reference files are written into DIR)
TRAIN.txt: training text; LINES.jsonl: one JSON string per line (the first 500 are trained on
as well, the rest are unseen). For each kind, OUT_DIR/<kind>/ gets tokenizer.json (and
tokenizer_config.json where the kind names its roles) and reference.jsonl, one object per line:
{"ids": with the post-processor's specials, "plain": without, "words": word_ids of "plain",
 "pair": ids of (line, next line) with specials, "types": their type ids,
 "decoded": decode(ids, skip_special_tokens=True)}
plus OUT_DIR/<kind>/speed.json: the time to encode all lines once more, one encode call per
line ("seconds") and one encode_batch call on one thread ("batch_seconds"), and their bytes.

The kinds reproduce the pipelines (component types and options) of published tokenizer.json
files with a small vocabulary of their own: RoBERTa, ModernBERT, XLM-R, Mistral/Llama 2
(BPE with byte fallback), BERT; the library's SentencePieceBPETokenizer and
SentencePieceUnigramTokenizer as trained in Python; WordLevel over WhitespaceSplit and Whitespace
words and over characters with the CTC decoder; and variants that exercise the remaining
components and options. OUT_DIR/classes.json lists the component classes of the library's
modules (what a tokenizer.json may name).
"""
import base64
import copy
import json
import os
import sys
import time

os.environ["RAYON_NUM_THREADS"] = "1"  # encode_batch on one thread: the speed figure compares one core

import sentencepiece as spm
import tokenizers
from tokenizers import (AddedToken, Regex, Tokenizer, decoders, models, normalizers,
                        pre_tokenizers, processors, trainers)
from tokenizers.implementations import SentencePieceBPETokenizer, SentencePieceUnigramTokenizer

METASPACE = "\u2581"
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                  r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def reload(tokenizer_json):
    """The dict as the library reads it back (so a hand-edited file is checked by it)."""
    return Tokenizer.from_str(json.dumps(tokenizer_json))


def as_dict(tokenizer):
    return json.loads(tokenizer.to_str())


def template(single, pair, specials, tokenizer):
    return processors.TemplateProcessing(
        single=single, pair=pair,
        special_tokens=[(s, tokenizer.token_to_id(s)) for s in specials])


def roberta(train):
    tok = Tokenizer(models.BPE(continuing_subword_prefix="", end_of_word_suffix="", fuse_unk=False))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    specials = ["<s>", "<pad>", "</s>", "<unk>", AddedToken("<mask>", lstrip=True, special=True)]
    tok.train_from_iterator(train, trainers.BpeTrainer(
        vocab_size=3000, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        continuing_subword_prefix="", end_of_word_suffix=""))
    tok.post_processor = processors.RobertaProcessing(
        ("</s>", tok.token_to_id("</s>")), ("<s>", tok.token_to_id("<s>")), trim_offsets=True,
        add_prefix_space=False)
    d = as_dict(tok)
    d["model"]["merges"] = [" ".join(m) for m in d["model"]["merges"]]  # RoBERTa's "a b" format
    config = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "sep_token": "</s>",
              "cls_token": "<s>", "pad_token": "<pad>",
              "mask_token": {"content": "<mask>", "lstrip": True, "__type": "AddedToken"}}
    return d, config


def modernbert(train):
    tok = Tokenizer(models.BPE(fuse_unk=False, byte_fallback=False, ignore_merges=False))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(train, trainers.BpeTrainer(
        vocab_size=3000, special_tokens=["<|endoftext|>", "<|padding|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    # Non-special added tokens matched in the normalized text (GPT-NeoX's space runs), and
    # ModernBERT's specials.
    tok.add_tokens([AddedToken(" " * n, normalized=True, special=False) for n in (24, 8, 4, 2)])
    tok.add_tokens([AddedToken("|||IP_ADDRESS|||", normalized=True, special=False)])
    tok.add_special_tokens(["[UNK]", "[CLS]", "[SEP]", "[PAD]",
                            AddedToken("[MASK]", lstrip=True, special=True, normalized=False)])
    tok.post_processor = template("[CLS]:0 $A:0 [SEP]:0", "[CLS]:0 $A:0 [SEP]:0 $B:0 [SEP]:0",
                                  ["[CLS]", "[SEP]"], tok)
    config = {"cls_token": "[CLS]", "sep_token": "[SEP]", "mask_token": "[MASK]", "pad_token": "[PAD]",
              "unk_token": "[UNK]"}
    return as_dict(tok), config


def with_byte_pieces(d):
    vocab = d["model"]["vocab"]
    for b in range(256):
        vocab.setdefault("<0x%02X>" % b, len(vocab))
    return d


def mistral(train):
    """BPE over Metaspace words with byte fallback, as transformers converts Llama/Mistral."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=METASPACE, prepend_scheme="first", split=True)
    tok.train_from_iterator(train, trainers.BpeTrainer(
        vocab_size=3000, special_tokens=["<unk>", "<s>", "</s>"], limit_alphabet=150))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement=METASPACE, prepend_scheme="first", split=False)
    tok.decoder = decoders.Sequence([decoders.Replace(METASPACE, " "), decoders.ByteFallback(),
                                     decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    tok.post_processor = template("<s>:0 $A:0", "<s>:0 $A:0 <s>:1 $B:1", ["<s>"], tok)
    config = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}
    return with_byte_pieces(as_dict(tok)), config


def llama(train):
    """The older Llama conversion: Prepend + Replace normalizer, no pre-tokenizer."""
    d, config = mistral(train)
    d["normalizer"] = {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": METASPACE},
        {"type": "Replace", "pattern": {"String": " "}, "content": METASPACE}]}
    d["pre_tokenizer"] = None
    return d, config


def proto_field(data, wanted):
    """The bytes of length-delimited field `wanted` in a protobuf message."""
    i = 0
    while i < len(data):
        key, i = varint(data, i)
        field, wire = key >> 3, key & 7
        if wire == 0:
            _, i = varint(data, i)
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            n, i = varint(data, i)
            if field == wanted:
                return data[i:i + n]
            i += n
        else:
            raise ValueError("unexpected wire type %d" % wire)
    return b""


def varint(data, i):
    value, shift = 0, 0
    while True:
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, i


def xlmr(train_path, out_dir, byte_fallback=False, rule="nmt_nfkc"):
    """A sentencepiece Unigram converted as transformers' XLMRobertaConverter does."""
    prefix = os.path.join(out_dir, "spm")
    spm.SentencePieceTrainer.train(
        input=train_path, model_prefix=prefix, vocab_size=2000, model_type="unigram",
        character_coverage=0.995, byte_fallback=byte_fallback, normalization_rule_name=rule,
        hard_vocab_limit=False, minloglevel=2)
    sp = spm.SentencePieceProcessor(model_file=prefix + ".model")
    charsmap = proto_field(proto_field(sp.serialized_model_proto(), 3), 2)
    vocab = [["<s>", 0.0], ["<pad>", 0.0], ["</s>", 0.0], ["<unk>", 0.0]]
    vocab += [[sp.id_to_piece(i), sp.get_score(i)] for i in range(3, sp.get_piece_size())]
    vocab += [["<mask>", 0.0]]
    special = lambda i, c, lstrip=False: {"id": i, "content": c, "single_word": False, "lstrip": lstrip,
                                          "rstrip": False, "normalized": False, "special": True}
    mask = len(vocab) - 1
    seq = lambda s, t: {"Sequence": {"id": s, "type_id": t}}
    tok = lambda s, t: {"SpecialToken": {"id": s, "type_id": t}}
    d = {
        "version": "1.0", "truncation": None, "padding": None,
        "added_tokens": [special(0, "<s>"), special(1, "<pad>"), special(2, "</s>"), special(3, "<unk>"),
                         special(mask, "<mask>", lstrip=True)],
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(charsmap).decode()},
            {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
        "pre_tokenizer": {"type": "Metaspace", "replacement": METASPACE, "prepend_scheme": "always",
                          "split": True},
        "post_processor": {"type": "TemplateProcessing",
                           "single": [tok("<s>", 0), seq("A", 0), tok("</s>", 0)],
                           "pair": [tok("<s>", 0), seq("A", 0), tok("</s>", 0), tok("</s>", 0), seq("B", 0),
                                    tok("</s>", 0)],
                           "special_tokens": {"<s>": {"id": "<s>", "ids": [0], "tokens": ["<s>"]},
                                              "</s>": {"id": "</s>", "ids": [2], "tokens": ["</s>"]}}},
        "decoder": {"type": "Metaspace", "replacement": METASPACE, "prepend_scheme": "always", "split": True},
        "model": {"type": "Unigram", "unk_id": 3, "vocab": vocab, "byte_fallback": byte_fallback},
    }
    config = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "sep_token": "</s>",
              "cls_token": "<s>", "pad_token": "<pad>", "mask_token": "<mask>"}
    return d, config


def bert(train):
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True,
                                                strip_accents=None, lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece(prefix="##")
    tok.train_from_iterator(train, trainers.WordPieceTrainer(
        vocab_size=3000, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"], limit_alphabet=300))
    tok.post_processor = processors.BertProcessing(("[SEP]", tok.token_to_id("[SEP]")),
                                                   ("[CLS]", tok.token_to_id("[CLS]")))
    return as_dict(tok), {"mask_token": "[MASK]", "pad_token": "[PAD]"}


def bpe_options(train):
    """Suffixes and prefixes, ignore_merges, unk, and the simpler normalizers and splitters."""
    tok = Tokenizer(models.BPE(unk_token="[UNK]", continuing_subword_prefix="##", end_of_word_suffix="</w>",
                               ignore_merges=True))
    tok.normalizer = normalizers.Sequence([normalizers.NFKD(), normalizers.StripAccents(),
                                           normalizers.Lowercase(), normalizers.Strip()])
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(" ", behavior="merged_with_next"), pre_tokenizers.Punctuation("contiguous"),
        pre_tokenizers.Digits(individual_digits=True)])
    tok.decoder = decoders.BPEDecoder(suffix="</w>")
    tok.train_from_iterator(train, trainers.BpeTrainer(
        vocab_size=3000, special_tokens=["[UNK]", "[CLS]", "[SEP]"], limit_alphabet=200,
        continuing_subword_prefix="##", end_of_word_suffix="</w>"))
    tok.post_processor = template("[CLS] $A [SEP]", "[CLS] $A [SEP] $B:1 [SEP]:1", ["[CLS]", "[SEP]"], tok)
    return as_dict(tok), None


SENTENCEPIECE_SPECIALS = ["<unk>", "<pad>", "<s>", "</s>", "<mask>"]
SENTENCEPIECE_ROLES = {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>", "sep_token": "</s>",
                       "cls_token": "<s>", "pad_token": "<pad>", "mask_token": "<mask>"}


def sentencepiece_bpe(train):
    """The library's SentencePieceBPETokenizer as trained in Python (NFKC, Metaspace)."""
    impl = SentencePieceBPETokenizer(unk_token="<unk>")
    impl.train_from_iterator(train, vocab_size=3000, special_tokens=SENTENCEPIECE_SPECIALS, limit_alphabet=300,
                             show_progress=False)
    tok = impl._tokenizer
    tok.post_processor = template("<s> $A </s>", "<s> $A </s> $B:1 </s>:1", ["<s>", "</s>"], tok)
    return as_dict(tok), SENTENCEPIECE_ROLES


def sentencepiece_unigram(train):
    """The library's SentencePieceUnigramTokenizer (Nmt, NFKC, space runs, Metaspace)."""
    impl = SentencePieceUnigramTokenizer()
    impl.train_from_iterator(train, vocab_size=2000, special_tokens=SENTENCEPIECE_SPECIALS, unk_token="<unk>",
                             show_progress=False)
    tok = impl._tokenizer
    tok.post_processor = template("<s> $A </s>", "<s> $A </s> </s> $B </s>", ["<s>", "</s>"], tok)
    return as_dict(tok), SENTENCEPIECE_ROLES


def word_level(train, pre_tokenizer, normalizer=None, decoder=None):
    """A WordLevel model over the pre-tokenizer's words, trained by WordLevelTrainer."""
    tok = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    if normalizer is not None:
        tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer
    if decoder is not None:
        tok.decoder = decoder
    tok.train_from_iterator(train, trainers.WordLevelTrainer(
        vocab_size=4000, min_frequency=2, special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "<pad>"],
        show_progress=False))
    tok.post_processor = processors.BertProcessing(("[SEP]", tok.token_to_id("[SEP]")),
                                                   ("[CLS]", tok.token_to_id("[CLS]")))
    return as_dict(tok), {"mask_token": "[MASK]", "pad_token": "[PAD]", "unk_token": "[UNK]", "cls_token": "[CLS]",
                          "sep_token": "[SEP]"}


def library_classes():
    """The component classes of each module of the library: what a tokenizer.json may name."""
    bases = {"normalizers": normalizers.Normalizer, "pre_tokenizers": pre_tokenizers.PreTokenizer,
             "models": models.Model, "processors": processors.PostProcessor, "decoders": decoders.Decoder}
    return {"version": tokenizers.__version__,
            "classes": {name: sorted(n for n, c in vars(getattr(tokenizers, name)).items()
                                     if isinstance(c, type) and issubclass(c, base) and c is not base)
                        for name, base in bases.items()}}


def byte_level_variant(base, pre_tokenizer, normalizer=None):
    d = copy.deepcopy(base)
    d["pre_tokenizer"] = pre_tokenizer
    if normalizer is not None:
        d["normalizer"] = normalizer
    return d, None


def split(pattern, behavior, invert=False, regex=True):
    return {"type": "Split", "pattern": {"Regex" if regex else "String": pattern}, "behavior": behavior,
            "invert": invert}


def byte_level(prefix=False, regex=False):
    return {"type": "ByteLevel", "add_prefix_space": prefix, "trim_offsets": True, "use_regex": regex}


def reference(d, lines, out):
    tok = reload(d)
    with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(d, f, ensure_ascii=False)
    with open(os.path.join(out, "reference.jsonl"), "w", encoding="utf-8") as f:
        for i, line in enumerate(lines):
            full, plain = tok.encode(line), tok.encode(line, add_special_tokens=False)
            pair = tok.encode(line, lines[(i + 1) % len(lines)])
            f.write(json.dumps({"ids": full.ids, "plain": plain.ids, "words": plain.word_ids,
                                "pair": pair.ids, "types": pair.type_ids,
                                "decoded": tok.decode(full.ids, skip_special_tokens=True)},
                               ensure_ascii=False) + "\n")
    start = time.perf_counter()
    for line in lines:
        tok.encode(line, add_special_tokens=False)
    seconds = time.perf_counter() - start
    start = time.perf_counter()
    tok.encode_batch(lines, add_special_tokens=False)
    batch_seconds = time.perf_counter() - start
    with open(os.path.join(out, "speed.json"), "w") as f:
        json.dump({"seconds": seconds, "batch_seconds": batch_seconds, "lines": len(lines),
                   "bytes": sum(len(l.encode()) for l in lines)}, f)


def main(train_path, lines_path, out_dir):
    with open(lines_path, encoding="utf-8") as f:
        lines = [json.loads(line) for line in f]
    with open(train_path, encoding="utf-8") as f:
        train = f.read().splitlines() + lines[:500]
    train_file = os.path.join(out_dir, "train.txt")
    with open(train_file, "w", encoding="utf-8") as f:
        f.write("\n".join(l.replace("\n", " ").replace("\r", " ") for l in train) + "\n")
    kinds = {"roberta": lambda d: roberta(train), "modernbert": lambda d: modernbert(train),
             "mistral": lambda d: mistral(train), "llama": lambda d: llama(train),
             "xlmr": lambda d: xlmr(train_file, d),
             "unigram_byte_fallback": lambda d: xlmr(train_file, d, byte_fallback=True, rule="nmt_nfkc_cf"),
             "bert": lambda d: bert(train), "bpe_options": lambda d: bpe_options(train),
             "sentencepiece_bpe": lambda d: sentencepiece_bpe(train),
             "sentencepiece_unigram": lambda d: sentencepiece_unigram(train),
             "word_level": lambda d: word_level(train, pre_tokenizers.WhitespaceSplit()),
             "word_level_whitespace": lambda d: word_level(
                 train, pre_tokenizers.Whitespace(),
                 normalizers.Sequence([normalizers.NFD(), normalizers.StripAccents(), normalizers.Lowercase()]),
                 decoders.WordPiece(prefix="##", cleanup=True)),
             # Wav2Vec2's kind: characters of the text, the word delimiter for a space, CTC decoding.
             "ctc_characters": lambda d: word_level(
                 train, pre_tokenizers.FixedLength(length=1),
                 normalizers.Sequence([normalizers.Lowercase(), normalizers.Replace(" ", "|")]),
                 decoders.CTC(pad_token="<pad>", word_delimiter_token="|", cleanup=True))}
    with open(os.path.join(out_dir, "classes.json"), "w") as f:
        json.dump(library_classes(), f)
    built, configs = {}, {}
    for name, make in kinds.items():
        out = os.path.join(out_dir, name)
        os.makedirs(out, exist_ok=True)
        d, config = make(out)
        built[name], configs[name] = d, config
        if config:
            with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
                json.dump(config, f)
        reference(d, lines, out)
    # Pre-tokenizer and normalizer variants over RoBERTa's byte-level vocabulary.
    base = built["roberta"]
    variants = {
        "llama3_split": (pre_tokenizers_seq([split(LLAMA3_PATTERN, "Isolated"), byte_level()]), None),
        "split_behaviors": (pre_tokenizers_seq([
            split(r"\p{N}+", "Contiguous"), split(r"\s", "MergedWithPrevious"),
            split(r"[\p{P}]", "MergedWithNext", invert=True), byte_level(prefix=True)]),
            {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"},
                                                 {"type": "Replace", "pattern": {"String": "``"}, "content": "\""}]}),
        "split_removed_inverted": (pre_tokenizers_seq([
            split("\\w+|[^\\w\\s]+", "Removed", invert=True), split(" ", "Isolated", regex=False),
            byte_level(prefix=True)]), {"type": "NFD"}),
        "whitespace_digits": (pre_tokenizers_seq([
            {"type": "Whitespace"}, {"type": "Digits", "individual_digits": False},
            {"type": "Punctuation", "behavior": "MergedWithPrevious"}, byte_level(prefix=True, regex=True)]),
            {"type": "Sequence", "normalizers": [{"type": "NFKD"}, {"type": "StripAccents"},
                                                 {"type": "Strip", "strip_left": True, "strip_right": False}]}),
        "unicode_scripts": (pre_tokenizers_seq([{"type": "UnicodeScripts"}, byte_level(prefix=True)]),
                            {"type": "Nmt"}),
        "unicode_scripts_split": (pre_tokenizers_seq([
            {"type": "WhitespaceSplit"}, {"type": "UnicodeScripts"}, {"type": "Digits", "individual_digits": True},
            byte_level(prefix=False, regex=True)]),
            {"type": "Sequence", "normalizers": [{"type": "Nmt"}, {"type": "NFKC"}]}),
        "fixed_length": (pre_tokenizers_seq([{"type": "FixedLength", "length": 3}, byte_level()]),
                         {"type": "Sequence", "normalizers": [{"type": "Nmt"}, {"type": "Lowercase"}]}),
        "fixed_length_default": (pre_tokenizers_seq([{"type": "Whitespace"}, {"type": "FixedLength"},
                                                     byte_level(prefix=True)]), None),
        # The ByteLevel normalizer maps the text, a Split on its space character makes the words.
        "byte_level_normalizer": ({"type": "Split", "pattern": {"String": "\u0120"}, "behavior": "MergedWithNext",
                                   "invert": False},
                                  {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "ByteLevel"}]}),
        "whitespace_split_bert": (pre_tokenizers_seq([
            {"type": "WhitespaceSplit"}, {"type": "BertPreTokenizer"}, {"type": "CharDelimiterSplit", "delimiter": "e"},
            byte_level(prefix=False, regex=True)]),
            {"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True, "strip_accents": None,
             "lowercase": False}),
    }
    for name, (pre, norm) in variants.items():
        out = os.path.join(out_dir, name)
        os.makedirs(out, exist_ok=True)
        d, _ = byte_level_variant(base, pre, norm)
        with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
            json.dump(configs["roberta"], f)  # RoBERTa's specials: the masking tests load these too
        reference(d, lines, out)
    # Added tokens with every option, matched before and after a normalizer.
    tok = reload(built["roberta"])
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    tok.add_tokens([AddedToken("the", single_word=True), AddedToken("ing", lstrip=True, rstrip=True),
                    AddedToken("Ｆｕｌｌ", normalized=True), AddedToken("CAFÉ", normalized=False, single_word=True),
                    AddedToken("ed ", rstrip=True, normalized=False), AddedToken("\u2581", normalized=False)])
    tok.add_special_tokens([AddedToken("<sep>", rstrip=True, lstrip=True), AddedToken("<se", normalized=False)])
    write_kind(out_dir, "added_token_options", as_dict(tok), lines)
    # Metaspace's other prepend schemes, over Mistral's vocabulary.
    for scheme, split_words in (("never", True), ("always", False)):
        d = copy.deepcopy(built["mistral"])
        d["pre_tokenizer"] = {"type": "Metaspace", "replacement": METASPACE, "prepend_scheme": scheme,
                              "split": split_words}
        d["decoder"] = {"type": "Metaspace", "replacement": METASPACE, "prepend_scheme": scheme,
                        "split": split_words}
        write_kind(out_dir, "metaspace_" + scheme, d, lines)


def write_kind(out_dir, name, d, lines):
    out = os.path.join(out_dir, name)
    os.makedirs(out, exist_ok=True)
    reference(d, lines, out)


def pre_tokenizers_seq(steps):
    return {"type": "Sequence", "pretokenizers": steps}


def encode_only(directory, lines_path):
    with open(lines_path, encoding="utf-8") as f:
        lines = [json.loads(line) for line in f]
    with open(os.path.join(directory, "tokenizer.json"), encoding="utf-8") as f:
        reference(json.load(f), lines, directory)


if __name__ == "__main__":
    if sys.argv[1] == "encode":
        encode_only(*sys.argv[2:4])
    else:
        main(*sys.argv[1:4])
