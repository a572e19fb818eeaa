"""Writes the committed seed inputs of the fuzz targets (fuzz/seeds/<target>/) that the
repository has no fixture file for: tokenizer.json pipelines, safetensors and torch.save files,
config.json files. Run it with the project's venv (transformers, tokenizers, torch) when a
reader learns a new component, and commit what changes:

    .venv/bin/python fuzz/make_seeds.py

scripts/fuzz.sh adds the fixture files themselves (configs/, tests/fixtures/) at each run.

tokenizer.json: every kind of tests/text/hf_pipeline_reference.py (the pipelines of published
tokenizers and the variants the agreement test covers), trained with a small vocabulary on the
first lines of tests/fixtures/corpus/lines.txt so that each seed is a few kilobytes; a kind that
names its roles gets its tokenizer_config.json after a NUL byte (the target's input format).
"""
import io
import json
import os
import shutil
import struct
import sys
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEEDS = os.path.join(ROOT, "fuzz", "seeds")
sys.path.insert(0, os.path.join(ROOT, "tests", "text"))


def reset(target):
    path = os.path.join(SEEDS, target)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def write(target_dir, name, data):
    with open(os.path.join(target_dir, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode("utf-8"))


def tokenizer_seeds():
    import sentencepiece as spm
    from tokenizers import trainers
    import hf_pipeline_reference as ref

    small = 300
    for name in ("BpeTrainer", "WordPieceTrainer", "WordLevelTrainer"):
        cls = getattr(trainers, name)
        setattr(trainers, name, lambda *a, _cls=cls, **k: _cls(*a, **{**k, "vocab_size": small}))
    spm_train = spm.SentencePieceTrainer.train
    # The identity rule keeps the Precompiled normalizer's charsmap (nmt_nfkc's is 250 KB) out.
    spm.SentencePieceTrainer.train = lambda **k: spm_train(
        **{**k, "vocab_size": small, "normalization_rule_name": "identity"})
    ref.reference = lambda d, lines, out: json.dump(d, open(os.path.join(out, "tokenizer.json"), "w"),
                                                    ensure_ascii=False)
    out = reset("tokenizer_json_fuzzer")
    with open(os.path.join(ROOT, "tests", "fixtures", "corpus", "lines.txt"), encoding="utf-8") as f:
        lines = [l.rstrip("\n") for l in f if l.strip()][:120]
    with tempfile.TemporaryDirectory() as tmp:
        train = os.path.join(tmp, "train.txt")
        with open(train, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        lines_path = os.path.join(tmp, "lines.jsonl")
        with open(lines_path, "w", encoding="utf-8") as f:
            f.write("\n".join(json.dumps(l) for l in lines[:20]) + "\n")
        built = os.path.join(tmp, "built")
        os.makedirs(built)
        ref.main(train, lines_path, built)
        for kind in sorted(os.listdir(built)):
            path = os.path.join(built, kind, "tokenizer.json")
            if not os.path.exists(path):
                continue
            data = open(path, "rb").read()
            config = os.path.join(built, kind, "tokenizer_config.json")
            if os.path.exists(config):
                data += b"\0" + open(config, "rb").read()
            write(out, kind, data)


def weight_seeds():
    import torch

    # Storage sizes 0, 1, 2, 4, 8, 16, 64 and 1024 bytes, in the order torch.save numbers its
    # records: torch_save_fuzzer's odd inputs are a data.pkl over records of exactly these sizes.
    m = torch.arange(16, dtype=torch.float32)
    tensors = {
        "empty": torch.zeros(0), "byte": torch.tensor([7], dtype=torch.uint8),
        "half": torch.tensor([1.5], dtype=torch.float16), "float": torch.tensor([2.5]),
        "long": torch.tensor([-3], dtype=torch.int64), "matrix": torch.ones(2, 2),
        "row": m, "big": torch.arange(256, dtype=torch.float32).reshape(16, 16),
    }
    tensors["row_view"] = m.view(4, 4).t()  # a strided view of "row"'s storage
    tensors["bool"] = torch.tensor([True, False])
    tensors["bf16"] = torch.tensor([1.0, -2.0], dtype=torch.bfloat16)
    pt = reset("torch_save_fuzzer")
    st = reset("safetensors_fuzzer")
    buffer = io.BytesIO()
    torch.save({k: v for k, v in list(tensors.items())[:9]}, buffer)
    write(pt, "every_storage_size.pt", b"\0" + buffer.getvalue())
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as z:
        pickle = [n for n in z.namelist() if n.endswith("/data.pkl")][0]
        write(pt, "every_storage_size.pkl", b"\1" + z.read(pickle))
    ordered = torch.nn.Linear(3, 2).state_dict()  # an OrderedDict, as model.state_dict() saves
    buffer = io.BytesIO()
    torch.save(ordered, buffer)
    write(pt, "ordered_dict.pt", b"\0" + buffer.getvalue())

    def safetensors(named):
        header, data = {"__metadata__": {"format": "pt"}}, b""
        names = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16", torch.int64: "I64",
                 torch.uint8: "U8", torch.bool: "BOOL", torch.float64: "F64", torch.int32: "I32"}
        for name, t in named.items():
            raw = t.contiguous().view(torch.uint8).numpy().tobytes() if t.numel() else b""
            header[name] = {"dtype": names[t.dtype], "shape": list(t.shape),
                            "data_offsets": [len(data), len(data) + len(raw)]}
            data += raw
        text = json.dumps(header).encode()
        text += b" " * ((8 - len(text) % 8) % 8)
        return struct.pack("<Q", len(text)) + text + data

    write(st, "every_dtype.safetensors", safetensors({k: v for k, v in tensors.items() if k != "row_view"}))
    write(st, "linear.safetensors", safetensors(ordered))
    write(st, "empty.safetensors", safetensors({}))


def config_json_seeds():
    from transformers import BertConfig, ElectraConfig, ModernBertConfig, RobertaConfig, XLMRobertaConfig

    out = reset("config_json_fuzzer")
    small = dict(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=64, max_position_embeddings=64)
    configs = {
        "bert": BertConfig(**small), "roberta": RobertaConfig(**small, pad_token_id=1),
        "xlm_roberta": XLMRobertaConfig(**small, pad_token_id=1),
        "modernbert": ModernBertConfig(**small, global_attn_every_n_layers=2, local_attention=16),
        "electra": ElectraConfig(**small, embedding_size=16),
    }
    for name, config in configs.items():
        write(out, name + ".json", config.to_json_string())
    generator = ElectraConfig(vocab_size=100, hidden_size=16, num_hidden_layers=2, num_attention_heads=1,
                              intermediate_size=64, embedding_size=16, architectures=["ElectraForMaskedLM"])
    discriminator = ElectraConfig(vocab_size=100, hidden_size=64, num_hidden_layers=2, num_attention_heads=1,
                                  intermediate_size=256, embedding_size=16, architectures=["ElectraForPreTraining"])
    write(out, "electra_pair", generator.to_json_string() + "\0" + discriminator.to_json_string())


if __name__ == "__main__":
    tokenizer_seeds()
    weight_seeds()
    config_json_seeds()
