#!/usr/bin/env python3
"""Reference outputs for BERT's cases of tests/model/body_reference_test.cpp, llm.c style.

Builds a tiny BERT with PyTorch's own nn modules and the exact Hugging Face BERT math
(BertEmbeddings, BertSelfAttention, BertSelfOutput, BertIntermediate, MlmOutput,
BertLMPredictionHead with the decoder tied to the word embeddings, pooler + NSP head), plus the
pre-LN variant mlm-train offers. Nothing from `transformers` is imported; the module tree is
laid out so that state_dict() has the transformers key names.

Writes to tests/fixtures/model/ (run once, commit the output):
  bert_{post,pre}_weights.pt            model.state_dict() (an OrderedDict, as HF saves it)
  bert_{post,pre}_{pad,nopad}_case.pt   inputs, logits at the selected positions, loss sums,
                                        accuracy counts and gradients of several parameters

The backward pass is taken of mlm_loss_sum / M (+ nsp_loss_sum / B for the NSP model), which is
what the trainer does with the sums the C++ model returns.

Usage: .venv/bin/python tests/reference/make_bert_reference.py [output_dir]
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, HIDDEN, LAYERS, HEADS, INTER, MAX_POS, TYPES, PAD_ID = 97, 32, 2, 4, 64, 16, 2, 0
BATCH, SEQ, EPS = 3, 12, 1e-12


def act_fn(name):
    return (lambda x: F.gelu(x)) if name == "gelu" else (lambda x: F.gelu(x, approximate="tanh"))


class Embeddings(nn.Module):
    def __init__(self):
        super().__init__()
        self.word_embeddings = nn.Embedding(VOCAB, HIDDEN, padding_idx=PAD_ID)
        self.position_embeddings = nn.Embedding(MAX_POS, HIDDEN)
        self.token_type_embeddings = nn.Embedding(TYPES, HIDDEN)
        self.LayerNorm = nn.LayerNorm(HIDDEN, eps=EPS)

    def forward(self, ids, types):
        x = self.word_embeddings(ids) + self.token_type_embeddings(types)
        x = x + self.position_embeddings(torch.arange(ids.shape[1]))
        return self.LayerNorm(x)


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.query = nn.Linear(HIDDEN, HIDDEN)
        self.key = nn.Linear(HIDDEN, HIDDEN)
        self.value = nn.Linear(HIDDEN, HIDDEN)

    def forward(self, x, bias):
        b, s, _ = x.shape
        d = HIDDEN // HEADS
        split = lambda t: t.view(b, s, HEADS, d).permute(0, 2, 1, 3)
        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(d)
        if bias is not None:
            scores = scores + bias
        probs = torch.softmax(scores, dim=-1)
        return torch.matmul(probs, v).permute(0, 2, 1, 3).reshape(b, s, HIDDEN)


class DenseNorm(nn.Module):  # BertSelfOutput / MlmOutput (dense + LayerNorm)
    def __init__(self, n_in):
        super().__init__()
        self.dense = nn.Linear(n_in, HIDDEN)
        self.LayerNorm = nn.LayerNorm(HIDDEN, eps=EPS)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.self = SelfAttention()
        self.output = DenseNorm(HIDDEN)


class Intermediate(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(HIDDEN, INTER)


class Layer(nn.Module):
    def __init__(self, norm, act):
        super().__init__()
        self.norm, self.act = norm, act_fn(act)
        self.attention = Attention()
        self.intermediate = Intermediate()
        self.output = DenseNorm(INTER)

    def forward(self, x, bias):
        att, out = self.attention, self.output
        if self.norm == "post":  # HF BertLayer
            h = att.output.LayerNorm(att.output.dense(att.self(x, bias)) + x)
            return out.LayerNorm(out.dense(self.act(self.intermediate.dense(h))) + h)
        # pre-LN: attention.output.LayerNorm before attention, output.LayerNorm before the FFN
        h = x + att.output.dense(att.self(att.output.LayerNorm(x), bias))
        return h + out.dense(self.act(self.intermediate.dense(out.LayerNorm(h))))


class Encoder(nn.Module):
    def __init__(self, norm, act):
        super().__init__()
        self.layer = nn.ModuleList([Layer(norm, act) for _ in range(LAYERS)])
        if norm == "pre":
            self.final_layer_norm = nn.LayerNorm(HIDDEN, eps=EPS)

    def forward(self, x, bias):
        for layer in self.layer:
            x = layer(x, bias)
        return self.final_layer_norm(x) if hasattr(self, "final_layer_norm") else x


class Pooler(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(HIDDEN, HIDDEN)


class BertModel(nn.Module):
    def __init__(self, norm, act, nsp):
        super().__init__()
        self.embeddings = Embeddings()
        self.encoder = Encoder(norm, act)
        if nsp:
            self.pooler = Pooler()


class Transform(nn.Module):
    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(HIDDEN, HIDDEN)
        self.LayerNorm = nn.LayerNorm(HIDDEN, eps=EPS)


class Predictions(nn.Module):  # BertLMPredictionHead
    def __init__(self):
        super().__init__()
        self.transform = Transform()
        self.decoder = nn.Linear(HIDDEN, VOCAB, bias=False)
        self.bias = nn.Parameter(torch.zeros(VOCAB))
        self.decoder.bias = self.bias


class Cls(nn.Module):
    def __init__(self, nsp):
        super().__init__()
        self.predictions = Predictions()
        if nsp:
            self.seq_relationship = nn.Linear(HIDDEN, 2)


class Bert(nn.Module):
    def __init__(self, norm, act, nsp):
        super().__init__()
        self.act = act_fn(act)
        self.bert = BertModel(norm, act, nsp)
        self.cls = Cls(nsp)
        self.cls.predictions.decoder.weight = self.bert.embeddings.word_embeddings.weight  # tied

    def head(self, h):
        p = self.cls.predictions
        h = p.transform.LayerNorm(self.act(p.transform.dense(h)))
        return p.decoder(h)

    def forward(self, ids, types, mask, positions):
        # HF extended attention mask, with mlm-train's finite -1e30 instead of finfo.min
        # (identical after the softmax: both underflow to exactly 0).
        bias = None if mask is None else (1.0 - mask[:, None, None, :].float()) * -1e30
        hidden = self.bert.encoder(self.bert.embeddings(ids, types), bias)
        flat = hidden.reshape(-1, HIDDEN)
        sparse = self.head(flat[positions])
        dense = self.head(flat)[positions]
        assert torch.allclose(sparse, dense, atol=1e-6), "sparse and dense head differ"
        pooled = torch.tanh(self.bert.pooler.dense(hidden[:, 0])) if hasattr(self.bert, "pooler") else None
        return sparse, pooled


def make_case(generator, padded):
    lengths = [12, 9, 5] if padded else [SEQ] * BATCH
    ids = torch.randint(5, VOCAB, (BATCH, SEQ), generator=generator)
    types = torch.zeros(BATCH, SEQ, dtype=torch.long)
    mask = torch.zeros(BATCH, SEQ, dtype=torch.long)
    for b, n in enumerate(lengths):
        ids[b, 0], ids[b, n - 1] = 2, 3  # [CLS] ... [SEP]
        ids[b, n:] = PAD_ID
        mask[b, :n] = 1
        types[b, n // 2:n] = 1
    positions, labels = [], []
    for b, n in enumerate(lengths):
        for s in range(1, n - 1):
            if torch.rand(1, generator=generator).item() < 0.3:
                positions.append(b * SEQ + s)
                labels.append(ids[b, s].item())
                ids[b, s] = 4  # [MASK]
    return {
        "input_ids": ids, "token_type_ids": types, "attention_mask": mask,
        "masked_positions": torch.tensor(positions, dtype=torch.long),
        "masked_labels": torch.tensor(labels, dtype=torch.long),
        "nsp_labels": torch.tensor([0, 1, 1], dtype=torch.long),
    }


GRAD_KEYS = [
    "bert.embeddings.word_embeddings.weight",
    "bert.embeddings.position_embeddings.weight",
    "bert.embeddings.token_type_embeddings.weight",
    "bert.embeddings.LayerNorm.weight",
    "bert.encoder.layer.0.attention.self.query.weight",
    "bert.encoder.layer.0.attention.self.key.bias",
    "bert.encoder.layer.1.attention.self.value.weight",
    "bert.encoder.layer.0.attention.output.dense.weight",
    "bert.encoder.layer.0.intermediate.dense.weight",
    "bert.encoder.layer.1.output.dense.bias",
    "bert.encoder.layer.1.output.LayerNorm.weight",
    "cls.predictions.transform.dense.weight",
    "cls.predictions.transform.LayerNorm.bias",
    "cls.predictions.bias",
]


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "model")
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(1234)
    for norm, act, nsp in [("post", "gelu", True), ("pre", "gelu_tanh", False)]:
        model = Bert(norm, act, nsp)
        with torch.no_grad():  # random everything, so a wrong parameter cannot hide at 1 or 0
            for name, p in model.named_parameters():
                if "LayerNorm.weight" in name or name.endswith("final_layer_norm.weight"):
                    p.copy_(1.0 + 0.2 * torch.randn_like(p))
                elif name.endswith("bias"):
                    p.copy_(0.1 * torch.randn_like(p))
                else:
                    p.copy_(0.2 * torch.randn_like(p))
        torch.save(model.state_dict(), os.path.join(out_dir, f"bert_{norm}_weights.pt"))
        generator = torch.Generator().manual_seed(7 if norm == "post" else 8)
        for padded in (True, False):
            case = make_case(generator, padded)
            model.zero_grad()
            mask = case["attention_mask"] if padded else None
            logits, pooled = model(case["input_ids"], case["token_type_ids"], mask, case["masked_positions"])
            labels = case["masked_labels"]
            mlm_sum = F.cross_entropy(logits, labels, reduction="sum")
            loss = mlm_sum / labels.numel()
            out = dict(case)
            out["mlm_logits"] = logits.detach()
            out["mlm_loss_sum"] = mlm_sum.detach()
            out["mlm_correct"] = (logits.argmax(1) == labels).sum()
            grad_keys = list(GRAD_KEYS)
            if nsp:
                nsp_logits = model.cls.seq_relationship(pooled)
                nsp_sum = F.cross_entropy(nsp_logits, case["nsp_labels"], reduction="sum")
                loss = loss + nsp_sum / BATCH
                out["nsp_loss_sum"] = nsp_sum.detach()
                out["nsp_correct"] = (nsp_logits.argmax(1) == case["nsp_labels"]).sum()
                grad_keys += ["bert.pooler.dense.weight", "cls.seq_relationship.weight"]
            if norm == "pre":
                grad_keys += ["bert.encoder.final_layer_norm.weight"]
            loss.backward()
            params = dict(model.named_parameters())
            for key in grad_keys:
                out["grad." + key] = params[key].grad.detach().clone()
            name = f"bert_{norm}_{'pad' if padded else 'nopad'}_case.pt"
            torch.save(out, os.path.join(out_dir, name))
            print(f"{name}: M={labels.numel()} mlm_loss_sum={mlm_sum.item():.6f} loss={loss.item():.6f}")


if __name__ == "__main__":
    main()
