"""The distillation losses of mlm-train written out from the papers, on transformers' models.

    distill_reference.py DIR

DIR/teacher and DIR/student: Hugging Face exports (BERT, ModernBERT, ELECTRA or DeBERTa-v2); DIR/batch.safetensors:
input_ids, attention_mask [B, S], labels [B, S] (-100 = not masked); DIR/settings.json:
mlm_weight, kl_weight, temperature, kl_all_positions, cos_weight, relation_weight,
relation_heads, teacher_layer, student_layer, masked, tokens (the divisors).

  MLM: cross-entropy of the student at the masked positions, summed, / masked.
  KL:  DistilBERT (Sanh et al. 2019): KLDivLoss(log_softmax(s/T), softmax(t/T)) * T^2 over the
       masked positions (all real tokens: kl_all_positions), summed / masked (tokens).
  COS: DistilBERT: CosineEmbeddingLoss(h_s, h_t, target 1) over the real tokens, summed / tokens;
       across widths h_s is first projected by DIR/projection.safetensors (weight, bias: a Linear
       student width -> teacher width), whose gradients are written as grad.projection.*.
  REL: MiniLMv2 (Wang et al. 2021): for Q, K, V of one layer of each model, split into
       relation_heads heads of d_r = H / heads, R = softmax(X X^T / sqrt(d_r)) over the real keys;
       sum over relations, heads and real query tokens of KL(R_t || R_s), / (heads * tokens).

The student runs in train() mode (its dropouts must be 0), the teacher in eval() without
gradients. Writes DIR/reference.safetensors: loss, mlm, kl, cos, rel and grad.<name> of every
student parameter after backward of the weighted loss."""
import json
import math
import sys

import torch
import torch.nn.functional as F
import transformers
from safetensors.torch import load_file, save_file


def load(directory):
    transformers.utils.logging.set_verbosity_error()
    config = transformers.AutoConfig.from_pretrained(directory, attn_implementation="eager")
    return transformers.AutoModelForMaskedLM.from_pretrained(directory, config=config, dtype=torch.float32)


def attention_projections(model, layer):
    """Hooks that keep q|k|v [B, S, 3H] of `layer`'s attention input in the returned dict."""
    kept = {}
    if model.config.model_type == "modernbert":
        model.model.layers[layer].attn.Wqkv.register_forward_hook(lambda m, i, o: kept.__setitem__("qkv", o))
    else:
        attention = model.base_model.encoder.layer[layer].attention.self
        names = ("query_proj", "key_proj", "value_proj") if model.config.model_type == "deberta-v2" else ("query", "key", "value")
        for name, part in zip(names, ("query", "key", "value")):
            # The first call only: DeBERTa's shared key/query projections run again on the relative
            # embeddings (the hook returns None, leaving the output as it is).
            getattr(attention, name).register_forward_hook(lambda m, i, o, n=part: None if n in kept else kept.__setitem__(n, o))
    return kept


def last_hidden(model):
    """A hook that keeps the encoder's output (after ModernBERT's final norm) in the returned dict."""
    kept = {}
    model.base_model.register_forward_hook(lambda m, i, o: kept.__setitem__("hidden", o.last_hidden_state))
    return kept


def qkv_of(kept):
    return kept["qkv"] if "qkv" in kept else torch.cat([kept["query"], kept["key"], kept["value"]], -1)


def relation_kl(student_qkv, teacher_qkv, real, heads):
    total = 0.0
    key_mask = ~real[:, None, None, :]
    for part in range(3):
        def relation(qkv):
            x = qkv.chunk(3, -1)[part]
            b, s, h = x.shape
            x = x.reshape(b, s, heads, h // heads).transpose(1, 2)
            scores = x @ x.transpose(-1, -2) / math.sqrt(h // heads)
            return F.log_softmax(scores.masked_fill(key_mask, float("-inf")), -1)
        t, s = relation(teacher_qkv), relation(student_qkv)
        # KL(R_t || R_s) per query row; a padding key has probability 0 and adds nothing.
        rows = torch.where(key_mask, 0.0, t.exp() * (t - s)).sum(-1)  # [B, A, S]
        total = total + rows.masked_select(real[:, None, :]).sum()
    return total


def main(directory):
    settings = json.load(open(f"{directory}/settings.json"))
    batch = load_file(f"{directory}/batch.safetensors")
    ids, padding, labels = batch["input_ids"], batch["attention_mask"], batch["labels"]
    real = padding.bool()
    selected = labels != -100
    teacher, student = load(f"{directory}/teacher"), load(f"{directory}/student")
    teacher.eval()
    student.train()
    t_layer = settings["teacher_layer"] % teacher.config.num_hidden_layers
    s_layer = settings["student_layer"] % student.config.num_hidden_layers
    t_kept, s_kept = attention_projections(teacher, t_layer), attention_projections(student, s_layer)
    t_hidden, s_hidden = last_hidden(teacher), last_hidden(student)

    with torch.no_grad():
        t_out = teacher(input_ids=ids, attention_mask=padding)
    s_out = student(input_ids=ids, attention_mask=padding)

    masked, tokens = settings["masked"], settings["tokens"]
    mlm = F.cross_entropy(s_out.logits[selected], labels[selected], reduction="sum") / masked

    scored = real if settings["kl_all_positions"] else selected
    T = settings["temperature"]
    kl = F.kl_div(F.log_softmax(s_out.logits[scored] / T, -1), F.softmax(t_out.logits[scored] / T, -1),
                  reduction="sum") * T * T / (tokens if settings["kl_all_positions"] else masked)

    h_s, h_t = s_hidden["hidden"][real], t_hidden["hidden"][real]
    projection = {}
    if h_s.shape[-1] != h_t.shape[-1] and settings["cos_weight"] > 0:
        projection = {k: v.clone().requires_grad_(True) for k, v in load_file(f"{directory}/projection.safetensors").items()}
        h_s = F.linear(h_s, projection["weight"], projection["bias"])
    cos = (F.cosine_embedding_loss(h_s, h_t, torch.ones(h_s.shape[0]), reduction="sum") / tokens
           if h_s.shape[-1] == h_t.shape[-1] else torch.zeros(()))

    heads = settings["relation_heads"] or teacher.config.num_attention_heads
    rel = relation_kl(qkv_of(s_kept), qkv_of(t_kept), real, heads) / (heads * tokens)

    loss = (settings["mlm_weight"] * mlm + settings["kl_weight"] * kl + settings["cos_weight"] * cos
            + settings["relation_weight"] * rel)
    loss.backward()
    out = {"loss": loss.detach(), "mlm": mlm.detach(), "kl": kl.detach(), "cos": cos.detach(), "rel": rel.detach()}
    for name, p in student.named_parameters():
        out[f"grad.{name}"] = p.grad if p.grad is not None else torch.zeros_like(p)
    for name, p in projection.items():
        out[f"grad.projection.{name}"] = p.grad
    save_file({k: v.contiguous() for k, v in out.items()}, f"{directory}/reference.safetensors")
    print(json.dumps({k: float(v) for k, v in out.items() if not k.startswith("grad.")}))


if __name__ == "__main__":
    main(sys.argv[1])
