"""The `transformers` side of the Hugging Face round-trip and reference-parity tests
(tests/cli/architecture_round_trip_test.cpp, tests/model/body_reference_test.cpp and others).

Each subcommand does what a user of an mlm-train export would do in Python and prints one JSON
object on stdout, which the C++ test compares with what mlm-train's own tools give.

  load CLASS DIR...               from_pretrained with output_loading_info: key problems
  score BATCHES DIR...            masked loss and accuracy on mlm-data --json batches
  score_electra BATCHES DIR...    an exported ELECTRA pair (DIR/generator, DIR/discriminator) on
                                  the same batches: the generator's masked loss and accuracy; the
                                  discriminator on the batch with the generator's argmax at the
                                  masked positions (what mlm-eval samples at
                                  model.rtd_temperature=1e-6): rtd_loss per token, accuracy,
                                  precision, recall and F1 on the replaced class over the
                                  non-padding tokens, generator_sample_accuracy
  save_modernbert DIR VOCAB       a seeded small ModernBertForMaskedLM (transformers' own init, a
                                  random decoder bias) saved in DIR
  save ROOT VOCAB                 a seeded small BertForMaskedLM in ROOT/<layout> for each layout
                                  the hub holds (LAYOUTS; transformers 4 wrote the .bin ones)
  fill DIR TOP_K TEXT...          pipeline("fill-mask") predictions
  tokenize DIR LINES              AutoTokenizer ids of each line (specials included)
  added_rows HUB EXPORT TERM...   tokenizer.add_tokens: each term's export id and its row against
                                  the mean of the hub's rows of its old pieces
  classify DIR                    a few steps of BertForSequenceClassification: the losses
  hub_bert DIR CORPUS             a small BERT and its WordPiece tokenizer (trained on CORPUS), as
                                  a hub repository holds them
  modernbert_reference DIR [eager]
                                  ModernBertForMaskedLM's logits, loss and gradients on
                                  DIR/batch.safetensors, in DIR/reference.safetensors (sdpa unless
                                  eager is given)
  save_electra DIR VOCAB [gdes]   a seeded small ELECTRA pair as the hub holds Google's:
                                  DIR/generator (ElectraForMaskedLM), DIR/discriminator
                                  (ElectraForPreTraining), equal embeddings (gdes: the
                                  discriminator's word embeddings off by a delta)
  save_roberta DIR VOCAB PAD POSITIONS [xlm]
                                  a seeded small RobertaForMaskedLM (XLMRobertaForMaskedLM) with
                                  pad_token_id PAD as the hub holds roberta-base: one token type,
                                  LayerNorm eps 1e-5, a pooler in model.safetensors
  roberta_reference DIR           RobertaForMaskedLM's (or XLM-R's, as DIR/config.json names it)
                                  logits, loss and gradients on DIR/batch.safetensors, in
                                  DIR/reference.safetensors (as modernbert_reference)
  save_deberta DIR VOCAB          a seeded small DebertaV2ForMaskedLM with DeBERTa-v3's options
                                  (transformers' own init, a random MLM bias) saved in DIR
  deberta_reference DIR          DebertaV2ForMaskedLM's logits, loss and gradients on
                                  DIR/batch.safetensors, in DIR/reference.safetensors
  electra_reference DIR LAMBDA    the ELECTRA step of DIR/generator and DIR/discriminator (shared
                                  embeddings) on DIR/batch.safetensors: logits, losses and
                                  gradients in DIR/reference.safetensors
  deberta_rtd_reference DIR LAMBDA SHARING
                                  the same step for DeBERTa-v3's pair (DebertaV2ForMaskedLM,
                                  DebertaV2Model + the RTD head), SHARING shared or gdes
"""
import inspect
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


def read_batches(batches_path, model):
    """Each mlm-data --json batch of BATCHES as (inputs for model's forward, labels)."""
    takes_token_types = "token_type_ids" in inspect.signature(model.forward).parameters
    with open(batches_path) as f:
        for line in f:
            batch = json.loads(line)
            inputs = {"input_ids": torch.tensor(batch["input_ids"]),
                      "attention_mask": torch.tensor(batch["attention_mask"])}
            # ModernBertForMaskedLM has no token types: its **kwargs would swallow them unread.
            if "token_type_ids" in batch and takes_token_types:
                inputs["token_type_ids"] = torch.tensor(batch["token_type_ids"])
            yield inputs, torch.tensor(batch["labels"])


class MaskedLmScore:
    """Loss sum and correct argmax over the masked positions (labels != -100) of batches."""

    def __init__(self):
        self.loss_sum, self.correct, self.count = 0.0, 0, 0

    def add(self, logits, labels):
        """Adds one batch; returns the argmax of logits at every position [B, S]."""
        selected = labels != -100
        picked = logits.double()[selected]
        target = labels[selected]
        self.loss_sum += torch.nn.functional.cross_entropy(picked, target, reduction="sum").item()
        predicted = logits.argmax(-1)
        self.correct += (predicted[selected] == target).sum().item()
        self.count += int(selected.sum())
        return predicted

    def result(self):
        return {"mlm_loss": self.loss_sum / self.count, "masked_accuracy": self.correct / self.count,
                "num_masked": self.count}


@torch.no_grad()
def score(directory, batches_path):
    model = transformers.AutoModelForMaskedLM.from_pretrained(directory, dtype=torch.float32).eval()
    mlm = MaskedLmScore()
    for inputs, labels in read_batches(batches_path, model):
        mlm.add(model(**inputs).logits, labels)
    return mlm.result()


@torch.no_grad()
def score_electra(directory, batches_path):
    """score for an exported pair: the generator's masked loss and accuracy, then the
    discriminator on the batch corrupted by the generator's argmax at the masked positions
    (Gumbel-max sampling as the temperature goes to 0: mlm-eval --set
    model.rtd_temperature=1e-6), scored as mlm-train scores replaced-token detection."""
    generator = transformers.ElectraForMaskedLM.from_pretrained(
        f"{directory}/generator", dtype=torch.float32).eval()
    discriminator = transformers.ElectraForPreTraining.from_pretrained(
        f"{directory}/discriminator", dtype=torch.float32).eval()
    mlm = MaskedLmScore()
    loss_sum, tokens, correct, true_positives, predicted, replaced, sampled_right = 0.0, 0, 0, 0, 0, 0, 0
    for inputs, labels in read_batches(batches_path, generator):
        samples = mlm.add(generator(**inputs).logits, labels)
        selected = labels != -100
        ids = inputs["input_ids"]
        corrupted = torch.where(selected, samples, ids)
        # A sample equal to the original token is no replacement.
        is_replaced = corrupted != torch.where(selected, labels, ids)
        logits = discriminator(**{**inputs, "input_ids": corrupted}).logits
        counted = inputs["attention_mask"] == 1  # [CLS] and [SEP] too, padding not
        logits, is_replaced = logits[counted].double(), is_replaced[counted]
        loss_sum += torch.nn.functional.binary_cross_entropy_with_logits(
            logits, is_replaced.double(), reduction="sum").item()
        calls = logits > 0
        tokens += int(counted.sum())
        correct += (calls == is_replaced).sum().item()
        true_positives += (calls & is_replaced).sum().item()
        predicted += calls.sum().item()
        replaced += is_replaced.sum().item()
        sampled_right += (samples[selected] == labels[selected]).sum().item()
    precision = true_positives / predicted if predicted else 0.0
    recall = true_positives / replaced if replaced else 0.0
    return {**mlm.result(), "tokens": tokens, "rtd_loss": loss_sum / tokens, "rtd_accuracy": correct / tokens,
            "rtd_precision": precision, "rtd_recall": recall,
            "rtd_f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
            "generator_sample_accuracy": sampled_right / mlm.count}


def save(directory, vocab_size, weight_format, shard_size=None):
    torch.manual_seed(1234)
    config = transformers.BertConfig(
        vocab_size=int(vocab_size), hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=128, max_position_embeddings=128, pad_token_id=0)
    model = transformers.BertForMaskedLM(config)
    # A trained-looking head: a random bias, so the import of every tensor shows in the scores.
    with torch.no_grad():
        model.cls.predictions.bias.normal_(0, 0.5)
    if weight_format == "safetensors":
        model.save_pretrained(directory, **({"max_shard_size": shard_size} if shard_size else {}))
    else:
        # transformers 5 saves safetensors only; hub repositories of older models hold
        # pytorch_model.bin, sharded with an index as transformers 4 wrote them.
        model.config.save_pretrained(directory)
        save_bin(model.state_dict(), directory, shard_size)
    return {"saved": directory}


def save_bin(state, directory, shard_size):
    if not shard_size:
        torch.save(state, f"{directory}/pytorch_model.bin")
        return
    limit = int(shard_size.rstrip("KB")) * 1000
    shards, current, size = [], {}, 0
    for name, tensor in state.items():
        if current and size + tensor.numel() * tensor.element_size() > limit:
            shards.append(current)
            current, size = {}, 0
        current[name] = tensor
        size += tensor.numel() * tensor.element_size()
    shards.append(current)
    weight_map = {}
    for i, shard in enumerate(shards):
        file = f"pytorch_model-{i + 1:05d}-of-{len(shards):05d}.bin"
        torch.save(shard, f"{directory}/{file}")
        weight_map.update({name: file for name in shard})
    with open(f"{directory}/pytorch_model.bin.index.json", "w") as f:
        json.dump({"metadata": {}, "weight_map": weight_map}, f)


def save_modernbert(directory, vocab_size):
    torch.manual_seed(1234)
    config = transformers.ModernBertConfig(
        vocab_size=int(vocab_size), hidden_size=64, intermediate_size=96, num_hidden_layers=4,
        num_attention_heads=4, local_attention=16, max_position_embeddings=128, pad_token_id=0,
        bos_token_id=None, eos_token_id=None, cls_token_id=None, sep_token_id=None)
    model = transformers.ModernBertForMaskedLM(config)
    with torch.no_grad():  # a trained-looking model: every tensor shows in the scores
        model.decoder.bias.normal_(0, 0.5)
        for module in model.modules():
            if isinstance(module, torch.nn.LayerNorm):
                module.weight.normal_(1, 0.2)
    model.save_pretrained(directory)
    return {"saved": directory}


def save_electra(directory, vocab_size, sharing="shared"):
    """A seeded small generator and discriminator (transformers' own init) laid out as the hub
    holds Google's pairs (google/electra-small-generator and -discriminator): each its own
    save_pretrained. Their embeddings are equal, as a pair trained with shared embeddings holds
    them; with gdes (DeBERTa-v3's gradient-disentangled sharing) the discriminator's word
    embeddings are the generator's plus a delta, as such a run exports them."""
    if sharing not in ("shared", "gdes"):
        fail(f"embedding sharing '{sharing}': expected shared or gdes")
    torch.manual_seed(1234)
    common = {"vocab_size": int(vocab_size), "embedding_size": 32, "max_position_embeddings": 64,
              "hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0, "pad_token_id": 0}
    discriminator = transformers.ElectraForPreTraining(transformers.ElectraConfig(
        hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=256, **common))
    generator = transformers.ElectraForMaskedLM(transformers.ElectraConfig(
        hidden_size=16, num_hidden_layers=2, num_attention_heads=1, intermediate_size=64, **common))
    with torch.no_grad():  # a trained-looking pair: a load that skips a tensor shows in the scores
        generator.generator_lm_head.bias.normal_(0, 0.5)
        head = discriminator.discriminator_predictions
        for bias in (head.dense.bias, head.dense_prediction.bias):
            bias.normal_(0, 0.5)
        for module in (*generator.modules(), *discriminator.modules()):
            if isinstance(module, torch.nn.LayerNorm):
                module.weight.normal_(1, 0.2)
        # In place: the generator's head stays tied to its word embeddings.
        generator.electra.embeddings.load_state_dict(discriminator.electra.embeddings.state_dict())
        if sharing == "gdes":
            words = discriminator.electra.embeddings.word_embeddings.weight
            words.add_(torch.randn_like(words) * 0.02)
    generator.save_pretrained(f"{directory}/generator")
    discriminator.save_pretrained(f"{directory}/discriminator")
    return {"generator": f"{directory}/generator", "discriminator": f"{directory}/discriminator"}


def save_roberta(directory, vocab_size, pad_id, positions, variant="roberta"):
    """A RoBERTa as the hub holds roberta-base (type_vocab_size 1, layer_norm_eps 1e-5,
    max_position_embeddings = the longest sequence + pad id + 1) with transformers' own init, a
    trained-looking head, and the pooler RobertaModel has, which hub checkpoints keep but
    RobertaForMaskedLM neither builds nor reads."""
    from safetensors.torch import load_file, save_file

    if variant not in ("roberta", "xlm"):
        fail(f"variant '{variant}': expected roberta or xlm")
    torch.manual_seed(1234)
    config_class, model_class = ((transformers.RobertaConfig, transformers.RobertaForMaskedLM) if variant == "roberta"
                                 else (transformers.XLMRobertaConfig, transformers.XLMRobertaForMaskedLM))
    pad = int(pad_id)
    config = config_class(
        vocab_size=int(vocab_size), hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=128, max_position_embeddings=int(positions), type_vocab_size=1, layer_norm_eps=1e-5,
        pad_token_id=pad, bos_token_id=None, eos_token_id=None)
    model = model_class(config)
    with torch.no_grad():  # a trained-looking model: every tensor shows in the scores
        model.lm_head.bias.normal_(0, 0.5)
        for module in model.modules():
            if isinstance(module, torch.nn.LayerNorm):
                module.weight.normal_(1, 0.2)
    model.save_pretrained(directory)
    weights = load_file(f"{directory}/model.safetensors")
    pooler = torch.nn.Linear(64, 64)
    weights["roberta.pooler.dense.weight"] = pooler.weight.detach().clone()
    weights["roberta.pooler.dense.bias"] = pooler.bias.detach().clone()
    save_file(weights, f"{directory}/model.safetensors", metadata={"format": "pt"})
    return {"saved": directory}


def roberta_reference(directory):
    """The parity reference of mlm-train's RoBERTa: one fp32 forward and backward of the class
    DIR/config.json names (RobertaForMaskedLM or XLMRobertaForMaskedLM), eager attention, in
    train() mode (the config's dropouts must be 0), on DIR/batch.safetensors (input_ids,
    attention_mask, labels). Position ids are transformers' own (from input_ids and
    pad_token_id); no token types. Writes DIR/reference.safetensors as modernbert_reference does
    (the tied decoder once, as the word embeddings')."""
    from safetensors.torch import load_file

    config = quiet_config(directory, "eager")
    if config.model_type not in ("roberta", "xlm-roberta"):
        fail(f"{directory}/config.json: model_type '{config.model_type}', expected roberta or xlm-roberta")
    dropouts = {k: getattr(config, k) for k in ("hidden_dropout_prob", "attention_probs_dropout_prob")}
    if any(dropouts.values()):
        fail(f"{directory}/config.json: the reference runs in train() mode, dropouts must be 0: {dropouts}")
    cls = getattr(transformers, config.architectures[0])
    model = load_checked(cls, directory, config, "eager", tied={"lm_head.decoder.weight", "lm_head.decoder.bias"})
    batch = load_file(f"{directory}/batch.safetensors")
    return masked_lm_step(directory, model, batch["labels"], input_ids=batch["input_ids"],
                          attention_mask=batch["attention_mask"])


# name: (format, shard size)
LAYOUTS = {"safetensors": ("safetensors", None), "bin": ("bin", None),
           "sharded": ("safetensors", "100KB"), "sharded_bin": ("bin", "100KB")}


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


def added_rows(hub, export, terms):
    """tokenizer.add_tokens seen from transformers: each term's id in the export's tokenizer, the
    pieces the hub's tokenizer splits it into, and how far the export's row of it is from the mean
    of the hub's rows of those pieces (the old rows' largest change beside it)."""
    before, after = transformers.AutoTokenizer.from_pretrained(hub), transformers.AutoTokenizer.from_pretrained(export)
    old = transformers.AutoModelForMaskedLM.from_pretrained(hub).get_input_embeddings().weight.detach()
    new = transformers.AutoModelForMaskedLM.from_pretrained(export).get_input_embeddings().weight.detach()
    out = {"rows_before": old.shape[0], "rows_after": new.shape[0], "len_before": len(before),
           "len_after": len(after), "terms": {}}
    kept = min(len(before), old.shape[0])
    out["old_rows_max_change"] = (new[:kept] - old[:kept]).abs().max().item()
    for term in terms:
        pieces = before(term, add_special_tokens=False)["input_ids"]
        term_id = after.convert_tokens_to_ids(term)
        mean = old[pieces].mean(0)
        out["terms"][term] = {"id": term_id, "pieces": pieces,
                              "in_a_line": after(f"the {term} and {term}.", add_special_tokens=False)["input_ids"],
                              "distance_from_mean": (new[term_id] - mean).abs().max().item()}
    return out


def classify(directory):
    """Fine-tunes the export on a toy task: is the sentence about animals or numbers."""
    torch.manual_seed(0)
    tok = transformers.AutoTokenizer.from_pretrained(directory)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(directory, num_labels=2)
    animals = ["the cat sat on the mat", "a dog ran in the park", "the bird sang in the tree",
               "a horse ate the hay", "the fish swam in the lake", "a cow stood in the field"]
    numbers = ["one two three four", "five six seven eight", "ten eleven twelve",
               "nine and nineteen", "two plus two is four", "three times three is nine"]
    texts, labels = animals + numbers, [0] * len(animals) + [1] * len(numbers)
    batch = tok(texts, padding=True, return_tensors="pt")
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-3)
    model.train()
    losses = []
    for _ in range(30):
        loss = model(**batch, labels=torch.tensor(labels)).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return {"losses": losses}


def hub_bert(directory, corpus):
    """What a user starts continued pretraining from: a BERT and its uncased WordPiece tokenizer."""
    import tokenizers
    from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers

    wordpiece = tokenizers.Tokenizer(models.WordPiece(unk_token="[UNK]"))
    wordpiece.normalizer = normalizers.BertNormalizer(lowercase=True)
    wordpiece.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    wordpiece.train([corpus], trainers.WordPieceTrainer(vocab_size=800, special_tokens=specials))
    cls, sep = wordpiece.token_to_id("[CLS]"), wordpiece.token_to_id("[SEP]")
    wordpiece.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    wordpiece.decoder = decoders.WordPiece()
    tok = transformers.BertTokenizerFast(tokenizer_object=wordpiece, do_lower_case=True, unk_token="[UNK]",
                                         sep_token="[SEP]", pad_token="[PAD]", cls_token="[CLS]",
                                         mask_token="[MASK]", model_max_length=128)
    tok.save_pretrained(directory)
    torch.manual_seed(7)
    config = transformers.BertConfig(vocab_size=len(tok), hidden_size=64, num_hidden_layers=2,
                                     num_attention_heads=4, intermediate_size=128,
                                     max_position_embeddings=128, pad_token_id=tok.pad_token_id)
    transformers.BertForMaskedLM(config).save_pretrained(directory)
    return {"vocab_size": len(tok), "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
            "intermediate_size": 128, "max_position_embeddings": 128}


def hub_encoder(family, directory, corpus):
    """What a user continues pretraining, as the hub lays it out: a small seeded model of FAMILY
    with the tokenizer kind its published checkpoints use, trained on CORPUS by tokenizers:
    bert (uncased WordPiece), modernbert (GPT-2 byte-level BPE, [CLS]/[SEP] template, rows padded
    to a multiple of 64 as ModernBERT-base's 50368), roberta (byte-level BPE, <s> </s>), xlmr
    (Metaspace Unigram, <mask> last). Returns the model.* keys a run over it sets."""
    if family == "bert":
        return hub_bert(directory, corpus)
    import tokenizers
    from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers

    roles = {"unk_token": "<unk>", "pad_token": "<pad>", "mask_token": "<mask>", "bos_token": "<s>",
             "eos_token": "</s>", "cls_token": "<s>", "sep_token": "</s>"}
    if family in ("modernbert", "roberta"):
        tok = tokenizers.Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        tok.decoder = decoders.ByteLevel()
        alphabet = pre_tokenizers.ByteLevel.alphabet()
        if family == "roberta":
            tok.train([corpus], trainers.BpeTrainer(vocab_size=800, initial_alphabet=alphabet,
                                                    special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"]))
            tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
            fast = transformers.RobertaTokenizerFast(tokenizer_object=tok, model_max_length=128, **roles)
        else:
            tok.train([corpus], trainers.BpeTrainer(vocab_size=800, initial_alphabet=alphabet,
                                                    special_tokens=["<|endoftext|>", "<|padding|>"]))
            tok.add_special_tokens(["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"])
            cls, sep = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
            tok.post_processor = processors.TemplateProcessing(
                single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
            fast = transformers.PreTrainedTokenizerFast(
                tokenizer_object=tok, model_max_length=128, unk_token="[UNK]", cls_token="[CLS]", sep_token="[SEP]",
                pad_token="[PAD]", mask_token="[MASK]")
    elif family == "xlmr":
        tok = tokenizers.Tokenizer(models.Unigram())
        tok.normalizer = normalizers.NFKC()
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always")
        tok.decoder = decoders.Metaspace(replacement="\u2581", prepend_scheme="always")
        tok.train([corpus], trainers.UnigramTrainer(vocab_size=800, unk_token="<unk>",
                                                    special_tokens=["<s>", "<pad>", "</s>", "<unk>"]))
        tok.add_special_tokens(["<mask>"])
        tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
        fast = transformers.XLMRobertaTokenizerFast(tokenizer_object=tok, model_max_length=128, **roles)
    else:
        fail(f"unknown family {family}: expected bert, modernbert, roberta or xlmr")
    fast.save_pretrained(directory)
    torch.manual_seed(7)
    shape = {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128}
    if family == "modernbert":
        rows = (len(fast) + 63) // 64 * 64
        config = transformers.ModernBertConfig(
            vocab_size=rows, max_position_embeddings=128, local_attention=16, global_attn_every_n_layers=2,
            pad_token_id=fast.pad_token_id, cls_token_id=fast.cls_token_id, sep_token_id=fast.sep_token_id,
            bos_token_id=None, eos_token_id=None, **shape)
        transformers.ModernBertForMaskedLM(config).save_pretrained(directory)
        return {**shape, "architecture": "modernbert", "vocab_size": rows, "max_position_embeddings": 128,
                "local_attention": 16, "global_attn_every_n_layers": 2}
    cls = transformers.RobertaConfig if family == "roberta" else transformers.XLMRobertaConfig
    config = cls(vocab_size=len(fast), max_position_embeddings=130, type_vocab_size=1,
                 pad_token_id=fast.pad_token_id, bos_token_id=fast.bos_token_id, eos_token_id=fast.eos_token_id, **shape)
    model = (transformers.RobertaForMaskedLM if family == "roberta" else transformers.XLMRobertaForMaskedLM)(config)
    model.save_pretrained(directory)
    return {**shape, "architecture": "roberta" if family == "roberta" else "xlm_roberta",
            "max_position_embeddings": 130, "type_vocab_size": 1}


def modernbert_reference(directory, attention="sdpa"):
    """The parity reference of mlm-train's ModernBERT: one fp32 forward and backward of
    ModernBertForMaskedLM, in train() mode (the config's dropouts must be 0), on
    DIR/batch.safetensors (input_ids, attention_mask, labels, optionally document_ids).

    Writes DIR/reference.safetensors: logits [M, V] at the selected positions (labels != -100, in
    b * S + s order), loss_sum (cross-entropy summed over them), correct (argmax == label) and
    grad.<name> of every named parameter (the tied decoder weight once, as the embeddings') after
    backward of loss_sum / M. Returns selected (M), loss_sum and params (the grad.* tensors)."""
    from safetensors.torch import load_file

    if attention not in ("sdpa", "eager"):
        fail(f"attention implementation '{attention}': expected sdpa or eager")
    model = load_modernbert(directory, attention)
    batch = load_file(f"{directory}/batch.safetensors")
    ids, padding, labels = batch["input_ids"], batch["attention_mask"], batch["labels"]
    if "document_ids" in batch:
        mask = document_masks(model, ids, padding, batch["document_ids"])
    else:
        mask = padding  # as a user passes it: HF builds its full and sliding-window masks
    return masked_lm_step(directory, model, labels, input_ids=ids, attention_mask=mask)


def masked_lm_step(directory, model, labels, **inputs):
    """One train() forward of `model` on `inputs`, scored at labels != -100 (b * S + s order), and
    backward of the loss sum / M. Writes DIR/reference.safetensors: logits [M, V], loss_sum,
    correct (argmax == label) and grad.<name> of every named parameter (a tied weight once).
    Returns selected (M), loss_sum and params (the grad.* tensors)."""
    from safetensors.torch import save_file

    selected = labels != -100
    count = int(selected.sum())
    if count == 0:
        fail(f"{directory}/batch.safetensors selects no position (every label is -100)")

    model.train()
    logits = model(**inputs).logits[selected]
    target = labels[selected]
    loss_sum = torch.nn.functional.cross_entropy(logits, target, reduction="sum")
    (loss_sum / count).backward()

    out = {"logits": logits.detach(), "loss_sum": loss_sum.detach(),
           "correct": (logits.argmax(-1) == target).sum().to(torch.int64)}
    params = 0
    for name, p in model.named_parameters():  # a tied weight is yielded once
        out[f"grad.{name}"] = p.grad if p.grad is not None else torch.zeros_like(p)
        params += 1
    save_file({k: v.contiguous() for k, v in out.items()}, f"{directory}/reference.safetensors")
    return {"selected": count, "loss_sum": loss_sum.item(), "params": params}


def save_deberta(directory, vocab_size):
    """A small DebertaV2ForMaskedLM as the hub's deberta-v3 configs set it up (buckets, shared
    keys, p2c|c2p as a string, layer-normed relative embeddings, no absolute positions, no token
    types), seeded, saved by transformers itself."""
    torch.manual_seed(5)
    config = transformers.DebertaV2Config(
        vocab_size=int(vocab_size), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=48, max_position_embeddings=64, type_vocab_size=0, layer_norm_eps=1e-7,
        relative_attention=True, position_buckets=16, max_relative_positions=-1, pos_att_type="p2c|c2p",
        share_att_key=True, norm_rel_ebd="layer_norm", position_biased_input=False, pad_token_id=0,
        hidden_act="gelu", pooler_hidden_act="gelu", pooler_dropout=0)
    model = transformers.DebertaV2ForMaskedLM(config)
    with torch.no_grad():
        model.cls.predictions.bias.normal_()
    model.save_pretrained(directory)
    return {"params": sum(1 for _ in model.named_parameters())}


def save_deberta_hub(directory, corpus, pieces, vocab_size):
    """A microsoft/deberta-v3-* hub directory at a tiny size, laid out as the hub holds it: one
    network (the discriminator) in pytorch_model.bin with the hub's key set (deberta.*,
    mask_predictions.{dense,LayerNorm,classifier}.*, lm_predictions.lm_head.{dense,LayerNorm}.*
    and .bias), config.json with the v3 options as the hub writes them (pos_att_type the string
    "p2c|c2p", no legacy key), spm.model ([PAD] [CLS] [SEP] [UNK] as ids 0-3, no [MASK]: the
    tokenizer adds it after the pieces) and tokenizer_config.json. Every tensor is perturbed off
    transformers' init (biases and norms not 0 / 1), so that a tensor left unread shows."""
    import os
    import sentencepiece

    os.makedirs(directory, exist_ok=True)
    sentencepiece.SentencePieceTrainer.train(
        input=corpus, model_prefix=f"{directory}/spm", vocab_size=int(pieces), model_type="unigram",
        pad_id=0, pad_piece="[PAD]", bos_id=1, bos_piece="[CLS]", eos_id=2, eos_piece="[SEP]", unk_id=3,
        unk_piece="[UNK]", minloglevel=2)
    os.remove(f"{directory}/spm.vocab")
    config = {"model_type": "deberta-v2", "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu",
              "hidden_dropout_prob": 0.1, "hidden_size": 32, "initializer_range": 0.02, "intermediate_size": 48,
              "max_position_embeddings": 128, "relative_attention": True, "position_buckets": 16,
              "norm_rel_ebd": "layer_norm", "share_att_key": True, "pos_att_type": "p2c|c2p",
              "layer_norm_eps": 1e-7, "max_relative_positions": -1, "position_biased_input": False,
              "num_attention_heads": 4, "num_hidden_layers": 2, "type_vocab_size": 0, "vocab_size": int(vocab_size)}
    with open(f"{directory}/config.json", "w") as f:
        json.dump(config, f, indent=2)
    with open(f"{directory}/tokenizer_config.json", "w") as f:
        json.dump({"do_lower_case": False, "vocab_type": "spm"}, f)
    torch.manual_seed(11)
    encoder = transformers.DebertaV2Model(transformers.DebertaV2Config(**config))
    hidden = config["hidden_size"]
    state = {f"deberta.{k}": v for k, v in encoder.state_dict().items()}
    heads = {"mask_predictions.dense.weight": [hidden, hidden], "mask_predictions.dense.bias": [hidden],
             "mask_predictions.LayerNorm.weight": [hidden], "mask_predictions.LayerNorm.bias": [hidden],
             "mask_predictions.classifier.weight": [1, hidden], "mask_predictions.classifier.bias": [1],
             "lm_predictions.lm_head.dense.weight": [hidden, hidden], "lm_predictions.lm_head.dense.bias": [hidden],
             "lm_predictions.lm_head.LayerNorm.weight": [hidden], "lm_predictions.lm_head.LayerNorm.bias": [hidden],
             "lm_predictions.lm_head.bias": [int(vocab_size)]}
    for key, shape in heads.items():
        state[key] = torch.ones(shape) if key.endswith("LayerNorm.weight") else torch.zeros(shape)
    with torch.no_grad():
        for tensor in state.values():
            tensor.add_(torch.randn_like(tensor) * 0.05)
    torch.save({k: v.contiguous() for k, v in state.items()}, f"{directory}/pytorch_model.bin")
    return {"keys": sorted(state)}


def deberta_hidden(directory, inputs_path, out_path):
    """DebertaV2Model's last hidden states (eval, fp32, eager) of DIR, as AutoModel reads the hub's
    deberta-v3 directories, on INPUTS (input_ids, attention_mask), written to OUT; the keys it
    left unread or found missing."""
    from safetensors.torch import load_file, save_file

    config = quiet_config(directory, "eager")
    model, info = transformers.AutoModel.from_pretrained(directory, config=config, dtype=torch.float32,
                                                         output_loading_info=True)
    model.eval()
    batch = load_file(inputs_path)
    with torch.no_grad():
        hidden = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).last_hidden_state
    save_file({"hidden": hidden.contiguous()}, out_path)
    return {"class": type(model).__name__, "missing": sorted(info["missing_keys"]),
            "unexpected": sorted(info["unexpected_keys"])}


def deberta_reference(directory):
    """The parity reference of mlm-train's DeBERTa-v2: one fp32 forward and backward of
    DebertaV2ForMaskedLM (eager attention, its only one), in train() mode (the config's dropouts
    must be 0), on DIR/batch.safetensors (input_ids, attention_mask, labels, optionally
    token_type_ids). Writes DIR/reference.safetensors as modernbert_reference does (the tied
    decoder weight and bias once, under the word embeddings' and cls.predictions.bias's names)."""
    from safetensors.torch import load_file

    config = quiet_config(directory, "eager")
    if config.model_type != "deberta-v2":
        fail(f"{directory}/config.json: model_type '{config.model_type}', expected deberta-v2")
    dropouts = {k: getattr(config, k) for k in ("hidden_dropout_prob", "attention_probs_dropout_prob")}
    if any(dropouts.values()):
        fail(f"{directory}/config.json: the reference runs in train() mode, dropouts must be 0: {dropouts}")
    model = load_checked(transformers.DebertaV2ForMaskedLM, directory, config, "eager",
                         tied={"cls.predictions.decoder.weight", "cls.predictions.decoder.bias"})
    if model.cls.predictions.decoder.weight is not model.deberta.embeddings.word_embeddings.weight:
        fail(f"{directory}: cls.predictions.decoder.weight is not tied to the word embeddings")
    batch = load_file(f"{directory}/batch.safetensors")
    return masked_lm_step(directory, model, batch["labels"], input_ids=batch["input_ids"],
                          attention_mask=batch["attention_mask"], token_type_ids=batch.get("token_type_ids"))


def electra_reference(directory, rtd_weight):
    """The parity reference of mlm-train's ELECTRA objective: one fp32 step of the generator
    (ElectraForMaskedLM, DIR/generator) and the discriminator (ElectraForPreTraining,
    DIR/discriminator) with ELECTRA's shared embeddings (one module, so both losses reach it),
    eager attention, in train() mode (the configs' dropouts must be 0), on DIR/batch.safetensors:
    input_ids, attention_mask, token_type_ids [B, S] (what the generator sees), masked_positions
    [M] (b * S + s, ascending), masked_labels [M] and samples [M] (the generator's replacements,
    given, so that nothing is sampled here).

    The discriminator reads input_ids with the samples at the masked positions and is scored
    against input_ids with the labels there (a sample equal to its label is no replacement);
    backward of mlm_loss_sum / M + LAMBDA * rtd_loss_sum / tokens (tokens: attention_mask's ones).
    Writes DIR/reference.safetensors: mlm_logits [M, V], mlm_loss_sum, mlm_correct, rtd_logits
    [B, S], rtd_loss_sum (BCE over the tokens), replaced [B, S] (the discriminator's targets) and
    the gradient of every parameter as generator.<name> (the shared embeddings' among them, the
    tied head weight once, as the word embeddings') and discriminator.<name> (its own, the
    embeddings left out). Returns the counts, the losses and params (the gradient tensors)."""
    from safetensors.torch import load_file, save_file

    generator = load_electra(f"{directory}/generator", transformers.ElectraForMaskedLM)
    discriminator = load_electra(f"{directory}/discriminator", transformers.ElectraForPreTraining)
    if generator.generator_lm_head.weight is not generator.electra.embeddings.word_embeddings.weight:
        fail(f"{directory}/generator: generator_lm_head.weight is not tied to the word embeddings")
    theirs = discriminator.electra.embeddings.state_dict()
    differ = sorted(name for name, tensor in generator.electra.embeddings.state_dict().items()
                    if name not in theirs or not torch.equal(tensor, theirs[name]))
    if differ:
        fail(f"{directory}: the generator's and the discriminator's embeddings differ ({', '.join(differ)}):"
             " not a pair with shared embeddings")
    discriminator.electra.embeddings = generator.electra.embeddings

    batch = load_file(f"{directory}/batch.safetensors")
    ids, padding, types = batch["input_ids"], batch["attention_mask"], batch["token_type_ids"]
    positions, labels, samples = batch["masked_positions"], batch["masked_labels"], batch["samples"]
    count, tokens = positions.numel(), int(padding.sum())
    if count == 0:
        fail(f"{directory}/batch.safetensors masks no position")
    original = ids.reshape(-1).index_put((positions,), labels).view_as(ids)
    corrupted = ids.reshape(-1).index_put((positions,), samples).view_as(ids)
    replaced = corrupted.ne(original).float()

    generator.train()
    discriminator.train()
    logits = generator(input_ids=ids, attention_mask=padding, token_type_ids=types).logits
    mlm_logits = logits.reshape(-1, logits.size(-1)).index_select(0, positions)
    mlm_loss_sum = torch.nn.functional.cross_entropy(mlm_logits, labels, reduction="sum")
    rtd_logits = discriminator(input_ids=corrupted, attention_mask=padding, token_type_ids=types).logits
    tokens_at = padding.bool()
    rtd_loss_sum = torch.nn.functional.binary_cross_entropy_with_logits(
        rtd_logits[tokens_at], replaced[tokens_at], reduction="sum")
    loss = mlm_loss_sum / count + float(rtd_weight) * rtd_loss_sum / tokens
    loss.backward()

    out = {"mlm_logits": mlm_logits.detach(), "mlm_loss_sum": mlm_loss_sum.detach(),
           "mlm_correct": (mlm_logits.argmax(-1) == labels).sum().to(torch.int64),
           "rtd_logits": rtd_logits.detach(), "rtd_loss_sum": rtd_loss_sum.detach(), "replaced": replaced}
    grads = [(f"generator.{name}", p) for name, p in generator.named_parameters()]  # tied: once
    grads += [(f"discriminator.{name}", p) for name, p in discriminator.named_parameters()
              if not name.startswith("electra.embeddings.")]
    for name, p in grads:
        out[name] = p.grad if p.grad is not None else torch.zeros_like(p)
    save_file({k: v.contiguous() for k, v in out.items()}, f"{directory}/reference.safetensors")
    return {"masked": count, "tokens": tokens, "replaced": int(replaced.sum()),
            "mlm_loss_sum": mlm_loss_sum.item(), "rtd_loss_sum": rtd_loss_sum.item(),
            "loss": loss.item(), "params": len(grads)}


class DebertaRtdHead(torch.nn.Module):
    """DeBERTa-v3's replaced-token-detection head as the public DeBERTa code describes it (the
    hub's mask_predictions.*): LayerNorm(h + h[:, 0]), dense, the activation, classifier -> 1."""

    def __init__(self, config):
        super().__init__()
        self.dense = torch.nn.Linear(config.hidden_size, config.hidden_size)
        self.LayerNorm = torch.nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.classifier = torch.nn.Linear(config.hidden_size, 1)
        self.act = transformers.activations.ACT2FN[config.hidden_act]

    def forward(self, hidden):
        return self.classifier(self.act(self.dense(self.LayerNorm(hidden + hidden[:, :1])))).squeeze(-1)


class GdesWords(torch.nn.Module):
    """Gradient-disentangled embedding sharing: the generator's token vectors, no gradient back to
    them, plus the discriminator's own delta (padding_idx's row gets none)."""

    def __init__(self, generator_words, delta):
        super().__init__()
        object.__setattr__(self, "source", generator_words)  # not a submodule: not the discriminator's
        self.delta = torch.nn.Parameter(delta)

    def forward(self, ids):
        return (torch.nn.functional.embedding(ids, self.source.weight.detach())
                + torch.nn.functional.embedding(ids, self.delta, padding_idx=self.source.padding_idx))


DEBERTA_TABLES = ("embeddings.word_embeddings.", "embeddings.position_embeddings.",
                  "embeddings.token_type_embeddings.")


def load_deberta_discriminator(directory):
    """DIR as AutoModel reads it (DebertaV2Model; no missing key, nothing unexpected but the RTD
    head's mask_predictions.*) and the head, read from the weights file itself."""
    from safetensors.torch import load_file

    config = quiet_config(directory, "eager")
    if config.model_type != "deberta-v2":
        fail(f"{directory}/config.json: model_type '{config.model_type}', expected deberta-v2")
    model, info = transformers.AutoModel.from_pretrained(directory, config=config, dtype=torch.float32,
                                                         output_loading_info=True)
    unexpected = [k for k in info["unexpected_keys"] if not k.startswith("mask_predictions.")]
    if info["missing_keys"] or unexpected or info["mismatched_keys"] or type(model) is not transformers.DebertaV2Model:
        fail(f"{directory}: not a DebertaV2Model: {type(model).__name__}, missing {info['missing_keys']}, "
             f"unexpected {unexpected}, mismatched {info['mismatched_keys']}")
    head = DebertaRtdHead(config)
    weights = load_file(f"{directory}/model.safetensors")
    head.load_state_dict({k[len("mask_predictions."):]: v for k, v in weights.items()
                          if k.startswith("mask_predictions.")})
    return model, head


def deberta_rtd_reference(directory, rtd_weight, sharing):
    """electra_reference for DeBERTa-v3's pair: DIR/generator (DebertaV2ForMaskedLM) and
    DIR/discriminator (DebertaV2Model and the RTD head), the discriminator reading the generator's
    word, position and token-type tables (sharing shared: the same modules; gdes: the generator's
    token vectors detached plus a delta, the discriminator's file less the generator's), its own
    embed_proj and LayerNorm. Gradients as electra_reference names them (the discriminator's
    deberta.* and mask_predictions.*, under gdes the delta as
    discriminator.deberta.embeddings.word_embeddings_delta)."""
    from safetensors.torch import load_file, save_file

    config = quiet_config(f"{directory}/generator", "eager")
    dropouts = {k: getattr(config, k) for k in ("hidden_dropout_prob", "attention_probs_dropout_prob")}
    if any(dropouts.values()):
        fail(f"{directory}/generator/config.json: the reference runs in train() mode, dropouts must be 0: {dropouts}")
    generator = load_checked(transformers.DebertaV2ForMaskedLM, f"{directory}/generator", config, "eager",
                             tied={"cls.predictions.decoder.weight", "cls.predictions.decoder.bias"})
    discriminator, head = load_deberta_discriminator(f"{directory}/discriminator")
    ours, theirs = generator.deberta.embeddings, discriminator.embeddings
    for table in ("position_embeddings", "token_type_embeddings") + (("word_embeddings",) if sharing == "shared" else ()):
        if getattr(ours, table) is None:
            continue
        if not torch.equal(getattr(ours, table).weight, getattr(theirs, table).weight):
            fail(f"{directory}: the generator's and the discriminator's {table} differ: not a {sharing} pair")
        setattr(theirs, table, getattr(ours, table))
    if sharing == "gdes":
        theirs.word_embeddings = GdesWords(ours.word_embeddings,
                                           (theirs.word_embeddings.weight - ours.word_embeddings.weight).detach())

    batch = load_file(f"{directory}/batch.safetensors")
    ids, padding = batch["input_ids"], batch["attention_mask"]
    types = batch.get("token_type_ids")
    positions, labels, samples = batch["masked_positions"], batch["masked_labels"], batch["samples"]
    count, tokens = positions.numel(), int(padding.sum())
    original = ids.reshape(-1).index_put((positions,), labels).view_as(ids)
    corrupted = ids.reshape(-1).index_put((positions,), samples).view_as(ids)
    replaced = corrupted.ne(original).float()

    for module in (generator, discriminator, head):
        module.train()
    logits = generator(input_ids=ids, attention_mask=padding, token_type_ids=types).logits
    mlm_logits = logits.reshape(-1, logits.size(-1)).index_select(0, positions)
    mlm_loss_sum = torch.nn.functional.cross_entropy(mlm_logits, labels, reduction="sum")
    hidden = discriminator(input_ids=corrupted, attention_mask=padding, token_type_ids=types).last_hidden_state
    rtd_logits = head(hidden)
    rtd_loss_sum = torch.nn.functional.binary_cross_entropy_with_logits(
        rtd_logits[padding.bool()], replaced[padding.bool()], reduction="sum")
    loss = mlm_loss_sum / count + float(rtd_weight) * rtd_loss_sum / tokens
    loss.backward()

    out = {"mlm_logits": mlm_logits.detach(), "mlm_loss_sum": mlm_loss_sum.detach(),
           "mlm_correct": (mlm_logits.argmax(-1) == labels).sum().to(torch.int64),
           "rtd_logits": rtd_logits.detach(), "rtd_loss_sum": rtd_loss_sum.detach(), "replaced": replaced}
    grads = [(f"generator.{name}", p) for name, p in generator.named_parameters()]  # tied: once
    grads += [(f"discriminator.deberta.{name}", p) for name, p in discriminator.named_parameters()
              if not name.startswith(DEBERTA_TABLES)]
    grads += [(f"discriminator.mask_predictions.{name}", p) for name, p in head.named_parameters()]
    if sharing == "gdes":
        grads.append(("discriminator.deberta.embeddings.word_embeddings_delta", theirs.word_embeddings.delta))
    for name, p in grads:
        out[name] = p.grad if p.grad is not None else torch.zeros_like(p)
    save_file({k: v.contiguous() for k, v in out.items()}, f"{directory}/reference.safetensors")
    return {"masked": count, "tokens": tokens, "replaced": int(replaced.sum()),
            "mlm_loss_sum": mlm_loss_sum.item(), "rtd_loss_sum": rtd_loss_sum.item(),
            "loss": loss.item(), "params": len(grads)}


def load_electra(directory, cls):
    """cls (ElectraForMaskedLM or ElectraForPreTraining) from DIR in fp32 with eager attention;
    key problems end the process as load_checked says."""
    config = quiet_config(directory, "eager")
    if config.model_type != "electra":
        fail(f"{directory}/config.json: model_type '{config.model_type}', expected electra")
    dropouts = {k: getattr(config, k) for k in ("hidden_dropout_prob", "attention_probs_dropout_prob")}
    if any(dropouts.values()):
        fail(f"{directory}/config.json: the reference runs in train() mode, dropouts must be 0: {dropouts}")
    return load_checked(cls, directory, config, "eager", tied="generator_lm_head.weight")


def load_modernbert(directory, attention):
    """ModernBertForMaskedLM from DIR in fp32; key problems end the process as load_checked says."""
    config = quiet_config(directory, attention)
    if config.model_type != "modernbert":
        fail(f"{directory}/config.json: model_type '{config.model_type}', expected modernbert")
    dropouts = {k: getattr(config, k) for k in ("embedding_dropout", "attention_dropout", "mlp_dropout")}
    if any(dropouts.values()):
        fail(f"{directory}/config.json: the reference runs in train() mode, dropouts must be 0: {dropouts}")
    return load_checked(transformers.ModernBertForMaskedLM, directory, config, attention, tied="decoder.weight")


def quiet_config(directory, attention):
    """DIR's config with the attention implementation set; transformers' logging and progress
    bars off, so that a failure leaves stderr one line."""
    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    return transformers.AutoConfig.from_pretrained(directory, attn_implementation=attention)


def load_checked(cls, directory, config, attention, tied):
    """cls.from_pretrained(DIR) in fp32; any key problem but the tied (absent) head weight `tied`
    (a name or a set of names), or another attention implementation than the one asked for, ends
    the process with one line on stderr."""
    # ignore_mismatched_sizes: a wrong shape is reported below instead of raised with a table.
    model, info = cls.from_pretrained(
        directory, config=config, dtype=torch.float32, output_loading_info=True, ignore_mismatched_sizes=True)
    problems = {
        "missing": sorted(set(info["missing_keys"]) - ({tied} if isinstance(tied, str) else set(tied))),
        "unexpected": sorted(info["unexpected_keys"]),
        "mismatched": sorted(f"{k} {list(file)} in the file, {list(ours)} in the model"
                             for k, file, ours in info["mismatched_keys"]),
        "errors": [str(e) for e in info.get("error_msgs", [])],
    }
    problems = {k: v for k, v in problems.items() if v}
    if problems:
        fail(f"{directory}: the weights do not load as {cls.__name__}: {json.dumps(problems)}")
    if model.config._attn_implementation != attention:
        fail(f"asked for {attention} attention, transformers chose {model.config._attn_implementation}")
    return model


def document_masks(model, input_ids, padding, document_ids):
    """HF's own full and sliding-window masks, built from the padding mask as ModernBertModel.forward
    builds them, each narrowed to the query's own document (the dict the model takes as its mask).

    Both functions return [B, 1, S, S]: for sdpa bool (True = attend), for eager additive float
    (0 = attend, the dtype's minimum = not). They are made to materialize the mask (no None for
    "attend everywhere"), so the form is always one of those two."""
    from transformers.masking_utils import create_bidirectional_mask, create_bidirectional_sliding_window_mask

    config = model.config
    embeds = torch.empty(*input_ids.shape, config.hidden_size, dtype=model.dtype)  # shape and dtype only
    kwargs = {"config": config, "inputs_embeds": embeds, "attention_mask": padding,
              "allow_is_bidirectional_skip": False}
    same_document = document_ids[:, None, :, None] == document_ids[:, None, None, :]
    full = create_bidirectional_mask(**kwargs)
    sliding = create_bidirectional_sliding_window_mask(**kwargs)  # |q - k| <= local_attention // 2
    return {"full_attention": narrow_mask(full, same_document),
            "sliding_attention": narrow_mask(sliding, same_document)}


def narrow_mask(mask, allowed):
    """mask AND allowed, in mask's own form, and a query always sees itself: a padding query sees
    no padding key, so with documents it could see no key at all, and what a row of nothing gives
    is each kernel's own choice (here sdpa gives zeros, eager a mean of every value). Padding
    outputs reach no loss, so this changes nothing the reference reports."""
    itself = torch.eye(mask.shape[-1], dtype=torch.bool)
    if mask.dtype == torch.bool:
        return (mask & allowed) | itself
    keep = ((mask == 0) & allowed) | itself
    return torch.where(keep, torch.zeros((), dtype=mask.dtype), torch.finfo(mask.dtype).min)


def fail(message):
    """Ends the process: status 1, the message as one line on stderr."""
    raise SystemExit(f"hf_client.py: {message}".replace("\n", " "))


def main(argv):
    command, args = argv[1], argv[2:]
    if command == "load":
        result = {d: load(d, args[0]) for d in args[1:]}
    elif command == "score":
        result = {d: score(d, args[0]) for d in args[1:]}
    elif command == "score_electra":
        result = {d: score_electra(d, args[0]) for d in args[1:]}
    elif command == "save":
        result = {name: save(f"{args[0]}/{name}", args[1], *layout) for name, layout in LAYOUTS.items()}
    elif command == "save_modernbert":
        result = save_modernbert(*args)
    elif command == "fill":
        result = fill(args[0], args[1], args[2:])
    elif command == "tokenize":
        result = tokenize(*args)
    elif command == "classify":
        result = classify(*args)
    elif command == "added_rows":
        result = added_rows(args[0], args[1], args[2:])
    elif command == "hub_bert":
        result = hub_bert(*args)
    elif command == "hub_encoder":
        result = hub_encoder(*args)
    elif command == "modernbert_reference":
        result = modernbert_reference(*args)
    elif command == "save_electra":
        result = save_electra(*args)
    elif command == "save_roberta":
        result = save_roberta(*args)
    elif command == "roberta_reference":
        result = roberta_reference(*args)
    elif command == "save_deberta":
        result = save_deberta(*args)
    elif command == "save_deberta_hub":
        result = save_deberta_hub(*args)
    elif command == "deberta_hidden":
        result = deberta_hidden(*args)
    elif command == "deberta_reference":
        result = deberta_reference(*args)
    elif command == "electra_reference":
        result = electra_reference(*args)
    elif command == "deberta_rtd_reference":
        result = deberta_rtd_reference(*args)
    else:
        raise SystemExit(f"unknown command {command}")
    print(json.dumps(result))


if __name__ == "__main__":
    main(sys.argv)
