#!/usr/bin/env python3
"""A tiny, randomly initialised masked-LM export for trying tests/reference/finetune_reference.py
(and the C++ fine-tuning against it) in seconds: a WordPiece vocabulary trained with
`tokenizers` on the given text files, and a BertForMaskedLM or ModernBertForMaskedLM saved
with save_pretrained beside its fast tokenizer (electra: an ElectraForPreTraining discriminator;
roberta: a RobertaForMaskedLM with one token type, beside a tokenizer that, as RoBERTa's, gives
no token types; deberta: a DebertaV2ForMaskedLM with the hub deberta-v3 checkpoints' options:
log-bucketed relative positions, shared position keys, p2c|c2p as a string, layer-normed
relative embeddings, no absolute positions, no token types).

    .venv/bin/python tests/reference/make_tiny_hf_model.py OUT_DIR TEXT_FILE... \\
        [--arch bert|modernbert|electra|roberta|deberta] [--vocab 4000] [--seed 0]

TEXT_FILE: plain text, or JSONL whose "text", "text_pair" and "tokens" fields are read.
"""
import argparse
import json

import torch
import transformers
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers


def texts(paths):
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if not path.endswith(".jsonl"):
                    yield line
                    continue
                r = json.loads(line)
                for k in ("text", "text_pair"):
                    if k in r:
                        yield r[k]
                if "tokens" in r:
                    yield " ".join(r["tokens"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("files", nargs="+")
    ap.add_argument("--arch", choices=("bert", "modernbert", "electra", "roberta", "deberta"), default="bert")
    ap.add_argument("--vocab", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(texts(args.files), trainers.WordPieceTrainer(
        vocab_size=args.vocab, special_tokens=special))
    cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    # RoBERTa's tokenizer gives no token types (one type, 0, for both segments of a pair).
    no_types = {"model_input_names": ["input_ids", "attention_mask"]} if args.arch == "roberta" else {}
    fast = transformers.BertTokenizerFast(tokenizer_object=tok, do_lower_case=True, **no_types)
    fast.save_pretrained(args.out)

    torch.manual_seed(args.seed)
    v = tok.get_vocab_size()
    if args.arch == "bert":
        config = transformers.BertConfig(
            vocab_size=v, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
            intermediate_size=128, max_position_embeddings=128, pad_token_id=0)
        model = transformers.BertForMaskedLM(config)
    elif args.arch == "roberta":  # positions from pad id + 1: 130 rows, as 514 for 512 tokens
        config = transformers.RobertaConfig(
            vocab_size=v, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
            intermediate_size=128, max_position_embeddings=130, type_vocab_size=1,
            layer_norm_eps=1e-5, pad_token_id=0, bos_token_id=cls, eos_token_id=sep)
        model = transformers.RobertaForMaskedLM(config)
    elif args.arch == "electra":  # a discriminator, as the hub holds ELECTRA's
        config = transformers.ElectraConfig(
            vocab_size=v, embedding_size=32, hidden_size=64, num_hidden_layers=2,
            num_attention_heads=2, intermediate_size=128, max_position_embeddings=128,
            pad_token_id=0)
        model = transformers.ElectraForPreTraining(config)
    elif args.arch == "deberta":  # deberta-v3's options, as the hub's config.json gives them
        config = transformers.DebertaV2Config(
            vocab_size=v, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
            intermediate_size=128, max_position_embeddings=128, type_vocab_size=0,
            relative_attention=True, position_buckets=16, max_relative_positions=-1,
            pos_att_type="p2c|c2p", share_att_key=True, norm_rel_ebd="layer_norm",
            position_biased_input=False, layer_norm_eps=1e-7, pad_token_id=0)
        model = transformers.DebertaV2ForMaskedLM(config)
    else:
        config = transformers.ModernBertConfig(
            vocab_size=v, hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
            intermediate_size=128, max_position_embeddings=128, pad_token_id=0,
            cls_token_id=cls, sep_token_id=sep, bos_token_id=cls, eos_token_id=sep,
            global_attn_every_n_layers=2, local_attention=32)
        model = transformers.ModernBertForMaskedLM(config)
    model.save_pretrained(args.out)
    print(f"{args.arch}: vocabulary {v}, {sum(p.numel() for p in model.parameters())} "
          f"parameters -> {args.out}")


if __name__ == "__main__":
    main()
