// The Hugging Face weight format: key names, q/k/v split, vocabulary unpadding, and the
// strict-but-forgiving import (one error listing every problem).
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>

#include "mlm/model/bert/bert.h"
#include "mlm/model/bert/bert_keys.h"
#include "../hf/key_report.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::model {
namespace {

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

BertHfNames BertHfNames::of(config::Architecture architecture) {
  if (config::is_roberta(architecture)) return {"roberta.", "lm_head.", "lm_head.dense", "lm_head.layer_norm"};
  return {"bert.", "cls.predictions.", "cls.predictions.transform.dense", "cls.predictions.transform.LayerNorm"};
}

// The HF layout of `pick(parameter)` for every parameter: the weights (detach) or their gradients.
static TensorDict hf_views(BertForPreTrainingImpl& m, const PickTensor& pick) {
  const auto names = BertHfNames::of(m.config().architecture);
  const auto& e = names.encoder;
  const int64_t vocab = m.vocab_size();
  TensorDict out;
  auto add = [&](const std::string& name, const torch::Tensor& t) { out.emplace_back(name, t); };
  const auto words = narrow_rows(pick(m.word_embeddings()), 0, vocab);  // shared by the decoder
  add_hf_embedding_views(out, e + "embeddings.", *m.bert->embeddings, words, pick);
  for (size_t i = 0; i < m.bert->layers->size(); ++i)
    add_hf_layer_views(out, fmt::format("{}encoder.layer.{}.", e, i), *m.bert->layers[i]->as<BertLayer>(), pick);
  if (m.bert->final_layer_norm) add_norm(out, e + "encoder.final_layer_norm", m.bert->final_layer_norm, pick);
  if (m.bert->pooler_dense) add_linear(out, e + "pooler.dense", m.bert->pooler_dense, pick);
  const auto bias = narrow_rows(pick(m.predictions->bias), 0, vocab);  // shared by decoder.bias
  add(names.head + "bias", bias);
  add_linear(out, names.head_dense, m.predictions->transform_dense, pick);
  add_norm(out, names.head_norm, m.predictions->transform_norm, pick);
  add(names.head + "decoder.weight", words);
  add(names.head + "decoder.bias", bias);
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
  const auto names = BertHfNames::of(model.config().architecture);
  const auto& e = names.encoder;
  const std::string decoder_weight = names.head + "decoder.weight", decoder_bias = names.head + "decoder.bias",
                    head_bias = names.head + "bias";
  // Normalise the file's names: gamma/beta, and the bare encoder (BertModel, RobertaModel)
  // without its prefix.
  bool bare = true;
  for (const auto& [key, _] : state)
    if (key.starts_with(e) || key.starts_with("cls.") || key.starts_with(names.head)) bare = false;
  std::map<std::string, torch::Tensor> source;
  for (const auto& [key, tensor] : state) {
    std::string name = normalise_key(bare ? e + key : key);
    if (!source.emplace(name, tensor).second)
      throw CheckpointError(origin + ": key " + name + " appears twice");
  }
  // HF buffers (arange, zeros), not weights; older checkpoints saved them.
  source.erase(e + "embeddings.position_ids");
  source.erase(e + "embeddings.token_type_ids");

  // Keys the file may lack: the tied decoder copies; the whole MLM head of a bare encoder; the
  // head's bias when the file names it only as the decoder's.
  auto optional_key = [&](const std::string& key) {
    if (key == decoder_weight || key == decoder_bias) return true;
    if (key == head_bias && source.count(decoder_bias)) return true;
    return bare && key.starts_with(names.head);
  };
  // Keys the file may have that this model does not use: the pooler (hub RoBERTa checkpoints
  // hold one; transformers' *ForMaskedLM ignores it too) and NSP head (objective mlm).
  auto ignorable_key = [&](const std::string& key) {
    return !model.has_nsp_head() && (key.starts_with(e + "pooler.") || key.starts_with("cls.seq_relationship."));
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
    log::info("model", "{}: ignoring {} pooler/NSP tensors (this model has neither: model.objective is mlm)", origin,
              ignored);
  if (bare)
    log::warn("model", "{}: a bare encoder (no '{}' prefix): the MLM head keeps its initialisation", origin, e);

  torch::NoGradGuard no_grad;
  // Padded vocabulary rows are not in the file: reset them to their initial zero.
  model.word_embeddings().zero_();
  model.predictions->bias.zero_();
  if (!source.count(head_bias) && source.count(decoder_bias)) source[head_bias] = source[decoder_bias];
  for (const auto& [key, target] : expected) {
    if (key == decoder_weight || key == decoder_bias) continue;
    auto it = source.find(key);
    if (it != source.end()) target.copy_(it->second);
  }
  auto decoder = source.find(decoder_weight);
  if (decoder != source.end() &&
      !torch::equal(decoder->second.to(torch::kFloat32), expected.front().second.to(torch::kFloat32).cpu()))
    log::warn("model", "{}: {} differs from the word embeddings; the decoder is tied here, so the word "
              "embeddings are used", origin, decoder_weight);
}

}  // namespace mlm::model
