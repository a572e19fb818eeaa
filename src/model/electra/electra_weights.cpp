// ELECTRA's Hugging Face weight format: transformers' ElectraForMaskedLM (the generator) and
// ElectraForPreTraining (the discriminator's body) key names, vocabulary unpadded, q/k/v split
// as BERT's; the strict import of the generator (the pair's: rtd/rtd_pair_weights.cpp).
#include <fmt/format.h>

#include <map>

#include "../hf/key_report.h"
#include "mlm/model/bert/bert.h"
#include "mlm/model/electra/electra.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::model {
namespace {

constexpr const char* kGeneratorDecoder = "generator_lm_head.weight";  // tied: the word embeddings
const std::string kEmbeddingPrefix = "electra.embeddings.";

PickTensor detached() {
  return [](const torch::Tensor& p) { return p.detach(); };
}
PickTensor gradients() {
  return [](const torch::Tensor& p) { return p.grad(); };
}

torch::Tensor first_rows(const torch::Tensor& t, int64_t rows) { return t.defined() ? t.narrow(0, 0, rows) : t; }

bool under_prefix(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// "electra.embeddings_project" and "electra.encoder.layer.N." of one network.
void add_electra_body(TensorDict& out, ElectraBodyImpl& body, const PickTensor& pick) {
  if (body.embeddings_project) {
    out.emplace_back("electra.embeddings_project.weight", pick(body.embeddings_project->weight));
    out.emplace_back("electra.embeddings_project.bias", pick(body.embeddings_project->bias));
  }
  for (size_t i = 0; i < body.layers->size(); ++i)
    add_hf_layer_views(out, fmt::format("electra.encoder.layer.{}.", i), *body.layers[i]->as<BertLayer>(), pick);
}

TensorDict generator_views(ElectraForMaskedLMImpl& g, const PickTensor& pick) {
  const int64_t vocab = g.vocab_size();
  const auto words = first_rows(pick(g.word_embeddings()), vocab);
  TensorDict out;
  add_hf_embedding_views(out, kEmbeddingPrefix, *g.embeddings, words, pick);
  add_electra_body(out, *g.body, pick);
  auto& head = *g.predictions;
  out.emplace_back("generator_predictions.LayerNorm.weight", pick(head.transform_norm->weight));
  out.emplace_back("generator_predictions.LayerNorm.bias", pick(head.transform_norm->bias));
  out.emplace_back("generator_predictions.dense.weight", pick(head.transform_dense->weight));
  out.emplace_back("generator_predictions.dense.bias", pick(head.transform_dense->bias));
  out.emplace_back(kGeneratorDecoder, words);
  out.emplace_back("generator_lm_head.bias", first_rows(pick(head.bias), vocab));
  return out;
}

std::map<std::string, torch::Tensor> by_name(const TensorDict& state, const std::string& origin) {
  std::map<std::string, torch::Tensor> source;
  for (const auto& [key, tensor] : state)
    if (!source.emplace(key, tensor).second) throw CheckpointError(origin + ": key " + key + " appears twice");
  return source;
}

// transformers' Electra buffers (arange positions, zero token types), no weights.
bool is_buffer(const std::string& key) {
  return key == "electra.embeddings.position_ids" || key == "electra.embeddings.token_type_ids";
}

std::string shape_of(const MaskedLmImpl& m, const std::string& what) {
  return fmt::format("the {} (vocab {}, hidden {}, layers {}, embedding {})", what, m.vocab_size(),
                     m.config().hidden_size, m.config().num_hidden_layers, config::electra_embedding_size(m.config()));
}

// Copies `source` into `expected` (views of the parameters); keys `skip` names are left alone.
void copy_matched(const TensorDict& expected, const std::map<std::string, torch::Tensor>& source,
                  const std::function<bool(const std::string&)>& skip) {
  torch::NoGradGuard no_grad;
  for (const auto& [key, target] : expected) {
    const auto it = source.find(key);
    if (it != source.end() && !skip(key)) target.copy_(it->second);
  }
}

void check(const KeyMatch& match, const std::string& origin, const std::string& model) {
  if (!match.ok()) throw CheckpointError(origin + ": weights do not match " + model + match.describe());
}

void warn_untied_decoder(const std::map<std::string, torch::Tensor>& source, const torch::Tensor& words,
                         const std::string& origin) {
  const auto decoder = source.find(kGeneratorDecoder);
  if (decoder != source.end() && !torch::equal(decoder->second.to(torch::kFloat32), words.to(torch::kFloat32).cpu()))
    log::warn("model", "{}: generator_lm_head.weight differs from the word embeddings; the decoder is tied here, "
              "so the word embeddings are used", origin);
}

void reset_padded_rows(ElectraForMaskedLMImpl& g) {
  torch::NoGradGuard no_grad;
  g.word_embeddings().zero_();
  g.predictions->bias.zero_();
}

}  // namespace

TensorDict ElectraForMaskedLMImpl::hf_state_dict() { return generator_views(*this, detached()); }

TensorDict ElectraForMaskedLMImpl::hf_gradients() { return generator_views(*this, gradients()); }

void ElectraForMaskedLMImpl::load_hf_state_dict(const TensorDict& state, const std::string& origin) {
  const auto source = by_name(state, origin);
  const auto expected = hf_state_dict();
  check(match_keys(expected, source, [](const std::string& k) { return k == kGeneratorDecoder; }, is_buffer), origin,
        shape_of(*this, "ELECTRA generator"));
  reset_padded_rows(*this);
  copy_matched(expected, source, [](const std::string& k) { return k == kGeneratorDecoder; });
  warn_untied_decoder(source, word_embeddings().narrow(0, 0, vocab_size()), origin);
}

TensorDict ElectraBodyImpl::hf_views(const PickTensor& pick) {
  TensorDict out;
  add_electra_body(out, *this, pick);
  return out;
}

std::string ElectraForMaskedLMImpl::word_embeddings_key() const { return kEmbeddingPrefix + "word_embeddings.weight"; }

// The discriminator reads the generator's whole embeddings module (its LayerNorm too).
bool ElectraForMaskedLMImpl::is_shared_key(const std::string& key) const {
  return under_prefix(key, kEmbeddingPrefix) && !is_buffer(key);
}

bool ElectraForMaskedLMImpl::is_tied_decoder_key(const std::string& key) const { return key == kGeneratorDecoder; }

bool ElectraForMaskedLMImpl::is_buffer_key(const std::string& key) const { return is_buffer(key); }

}  // namespace mlm::model
