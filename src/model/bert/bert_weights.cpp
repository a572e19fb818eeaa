// The Hugging Face weight format: key names, q/k/v split, vocabulary unpadding, and the
// strict-but-forgiving import (one error listing every problem).
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

#include "mlm/model/bert/bert.h"
#include "../hf/key_report.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::model {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// TF-era checkpoints name LayerNorm parameters gamma/beta; transformers renames them on load.
std::string normalise_key(std::string key) {
  auto replace_tail = [&](const std::string& from, const std::string& to) {
    if (key.size() >= from.size() && key.compare(key.size() - from.size(), from.size(), from) == 0)
      key = key.substr(0, key.size() - from.size()) + to;
  };
  replace_tail("LayerNorm.gamma", "LayerNorm.weight");
  replace_tail("LayerNorm.beta", "LayerNorm.bias");
  return key;
}

}  // namespace

namespace {

torch::Tensor narrow_rows(const torch::Tensor& t, int64_t start, int64_t length) {
  return t.defined() ? t.narrow(0, start, length) : t;
}

void add_linear(TensorDict& out, const std::string& name, const torch::nn::Linear& l, const PickTensor& pick) {
  out.emplace_back(name + ".weight", pick(l->weight));
  out.emplace_back(name + ".bias", pick(l->bias));
}

void add_norm(TensorDict& out, const std::string& name, const LayerNorm& n, const PickTensor& pick) {
  out.emplace_back(name + ".weight", pick(n->weight));
  out.emplace_back(name + ".bias", pick(n->bias));
}

}  // namespace

void add_hf_layer_views(TensorDict& out, const std::string& p, BertLayerImpl& layer, const PickTensor& pick) {
  const auto w = pick(layer.qkv->weight), b = pick(layer.qkv->bias);
  const int64_t h = layer.qkv->weight.size(1);
  const char* names[] = {"query", "key", "value"};
  for (int64_t j = 0; j < 3; ++j) {
    out.emplace_back(p + "attention.self." + names[j] + ".weight", narrow_rows(w, j * h, h));
    out.emplace_back(p + "attention.self." + names[j] + ".bias", narrow_rows(b, j * h, h));
  }
  add_linear(out, p + "attention.output.dense", layer.attention_dense, pick);
  add_norm(out, p + "attention.output.LayerNorm", layer.attention_norm, pick);
  add_linear(out, p + "intermediate.dense", layer.intermediate_dense, pick);
  add_linear(out, p + "output.dense", layer.output_dense, pick);
  add_norm(out, p + "output.LayerNorm", layer.output_norm, pick);
}

void add_hf_embedding_views(TensorDict& out, const std::string& p, BertEmbeddingsImpl& emb,
                            const torch::Tensor& words, const PickTensor& pick) {
  out.emplace_back(p + "word_embeddings.weight", words);
  out.emplace_back(p + "position_embeddings.weight", pick(emb.position_embeddings->weight));
  out.emplace_back(p + "token_type_embeddings.weight", pick(emb.token_type_embeddings->weight));
  add_norm(out, p + "LayerNorm", emb.layer_norm, pick);
}

// The HF layout of `pick(parameter)` for every parameter: the weights (detach) or their gradients.
static TensorDict hf_views(BertForPreTrainingImpl& m, const PickTensor& pick) {
  const int64_t vocab = m.vocab_size();
  TensorDict out;
  auto add = [&](const std::string& name, const torch::Tensor& t) { out.emplace_back(name, t); };
  const auto words = narrow_rows(pick(m.word_embeddings()), 0, vocab);  // shared by the decoder
  add_hf_embedding_views(out, "bert.embeddings.", *m.bert->embeddings, words, pick);
  for (size_t i = 0; i < m.bert->layers->size(); ++i)
    add_hf_layer_views(out, fmt::format("bert.encoder.layer.{}.", i), *m.bert->layers[i]->as<BertLayer>(), pick);
  if (m.bert->final_layer_norm) add_norm(out, "bert.encoder.final_layer_norm", m.bert->final_layer_norm, pick);
  if (m.bert->pooler_dense) add_linear(out, "bert.pooler.dense", m.bert->pooler_dense, pick);
  const auto bias = narrow_rows(pick(m.predictions->bias), 0, vocab);  // shared by decoder.bias
  add("cls.predictions.bias", bias);
  add_linear(out, "cls.predictions.transform.dense", m.predictions->transform_dense, pick);
  add_norm(out, "cls.predictions.transform.LayerNorm", m.predictions->transform_norm, pick);
  add("cls.predictions.decoder.weight", words);
  add("cls.predictions.decoder.bias", bias);
  if (m.seq_relationship) add_linear(out, "cls.seq_relationship", m.seq_relationship, pick);
  return out;
}

TensorDict to_hf_state_dict(BertForPreTrainingImpl& model) {
  return hf_views(model, [](const torch::Tensor& p) { return p.detach(); });
}

TensorDict to_hf_gradients(BertForPreTrainingImpl& model) {
  return hf_views(model, [](const torch::Tensor& p) { return p.grad(); });
}

void load_hf_state_dict(BertForPreTrainingImpl& model, const TensorDict& state, const std::string& origin) {
  // Normalise the file's names: gamma/beta, and the bare BertModel without "bert.".
  bool bare = true;
  for (const auto& [key, _] : state)
    if (starts_with(key, "bert.") || starts_with(key, "cls.")) bare = false;
  std::map<std::string, torch::Tensor> source;
  for (const auto& [key, tensor] : state) {
    std::string name = normalise_key(bare ? "bert." + key : key);
    if (!source.emplace(name, tensor).second)
      throw CheckpointError(origin + ": key " + name + " appears twice");
  }
  source.erase("bert.embeddings.position_ids");  // an HF buffer (arange), not a weight

  // Keys the file may lack: the tied decoder copies; the whole MLM head of a bare encoder; the
  // head's bias when the file names it only as the decoder's.
  auto optional_key = [&](const std::string& key) {
    if (key == "cls.predictions.decoder.weight" || key == "cls.predictions.decoder.bias") return true;
    if (key == "cls.predictions.bias" && source.count("cls.predictions.decoder.bias")) return true;
    return bare && starts_with(key, "cls.predictions.");
  };
  // Keys the file may have that this model does not use: pooler and NSP head (objective mlm).
  auto ignorable_key = [&](const std::string& key) {
    return !model.has_nsp_head() && (starts_with(key, "bert.pooler.") || starts_with(key, "cls.seq_relationship."));
  };

  const auto expected = to_hf_state_dict(model);
  const auto match = match_keys(expected, source, optional_key, ignorable_key);
  if (!match.ok())
    throw CheckpointError(origin + ": weights do not match the model (vocab " + std::to_string(model.vocab_size()) +
                          ", hidden " + std::to_string(model.config().hidden_size) + ", layers " +
                          std::to_string(model.config().num_hidden_layers) + ")" + match.describe());
  // An ignorable key is never one the model expects (it has no pooler or NSP head then).
  const auto ignored = std::count_if(source.begin(), source.end(), [&](const auto& item) { return ignorable_key(item.first); });
  if (ignored > 0)
    log::info("model", "{}: ignoring {} pooler/NSP tensors (model.objective is mlm)", origin, ignored);
  if (bare)
    log::warn("model", "{}: a bare BertModel (no 'bert.' prefix): the MLM head keeps its initialisation", origin);

  torch::NoGradGuard no_grad;
  // Padded vocabulary rows are not in the file: reset them to their initial zero.
  model.word_embeddings().zero_();
  model.predictions->bias.zero_();
  if (!source.count("cls.predictions.bias") && source.count("cls.predictions.decoder.bias"))
    source["cls.predictions.bias"] = source["cls.predictions.decoder.bias"];
  for (const auto& [key, target] : expected) {
    if (key == "cls.predictions.decoder.weight" || key == "cls.predictions.decoder.bias") continue;
    auto it = source.find(key);
    if (it != source.end()) target.copy_(it->second);
  }
  auto decoder = source.find("cls.predictions.decoder.weight");
  if (decoder != source.end() &&
      !torch::equal(decoder->second.to(torch::kFloat32), expected.front().second.to(torch::kFloat32).cpu()))
    log::warn("model", "{}: cls.predictions.decoder.weight differs from the word embeddings; "
              "the decoder is tied here, so the word embeddings are used", origin);
}

}  // namespace mlm::model
