"""Encodes texts with AutoTokenizer.from_pretrained(dir), for sentencepiece_json_test.cpp.

usage: hf_tokenizer_probe.py DIR REQUEST.json RESPONSE.json
REQUEST: {"texts": [str], "pairs": [[str, str]], "fill_mask": str or null}
RESPONSE: the tokenizer's class, its special tokens and ids, the ids of every text (with
[CLS]/[SEP]), ids and token_type_ids of every pair, decoded texts, and (with fill_mask) the
number of predictions pipeline("fill-mask") gives for that text with a tiny random BERT.
"""
import json
import sys

from transformers import AutoTokenizer


def main(directory, request_path, response_path):
    with open(request_path, encoding="utf-8") as f:
        request = json.load(f)
    tokenizer = AutoTokenizer.from_pretrained(directory)
    response = {
        "class": type(tokenizer).__name__,
        "is_fast": bool(getattr(tokenizer, "is_fast", False)),
        "special_tokens": {name: getattr(tokenizer, name) for name in
                           ("pad_token", "unk_token", "cls_token", "sep_token", "mask_token")},
        "special_ids": {name: getattr(tokenizer, name + "_id") for name in
                        ("pad_token", "unk_token", "cls_token", "sep_token", "mask_token")},
        "ids": [tokenizer(text)["input_ids"] for text in request["texts"]],
        "decoded": [tokenizer.decode(tokenizer(text)["input_ids"], skip_special_tokens=True)
                    for text in request["texts"]],
        "pair_ids": [],
        "pair_type_ids": [],
    }
    for a, b in request["pairs"]:
        encoded = tokenizer(a, b)
        response["pair_ids"].append(encoded["input_ids"])
        response["pair_type_ids"].append(encoded["token_type_ids"])
    if request.get("fill_mask"):
        from transformers import BertConfig, BertForMaskedLM, pipeline
        model = BertForMaskedLM(BertConfig(vocab_size=len(tokenizer), hidden_size=32,
                                           num_hidden_layers=1, num_attention_heads=2,
                                           intermediate_size=64))
        fill = pipeline("fill-mask", model=model, tokenizer=tokenizer, top_k=3)
        response["fill_mask_predictions"] = len(fill(request["fill_mask"]))
    with open(response_path, "w", encoding="utf-8") as f:
        json.dump(response, f)


if __name__ == "__main__":
    main(*sys.argv[1:4])
