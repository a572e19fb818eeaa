// ELECTRA's Hugging Face weight format: transformers' ElectraForMaskedLM (the generator) and
// ElectraForPreTraining (the discriminator) key names, vocabulary unpadded, q/k/v split as
// BERT's; the pair's own layout for model.pt; the strict import of either.
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
constexpr const char* kDeltaKey = "electra.embeddings.word_embeddings_delta";
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

// The discriminator's own tensors, without the embeddings.
TensorDict discriminator_views(ElectraForPreTrainingImpl& m, const PickTensor& pick) {
  TensorDict out;
  add_electra_body(out, *m.discriminator, pick);
  auto& head = *m.discriminator_predictions;
  out.emplace_back("discriminator_predictions.dense.weight", pick(head.dense->weight));
  out.emplace_back("discriminator_predictions.dense.bias", pick(head.dense->bias));
  out.emplace_back("discriminator_predictions.dense_prediction.weight", pick(head.dense_prediction->weight));
  out.emplace_back("discriminator_predictions.dense_prediction.bias", pick(head.dense_prediction->bias));
  return out;
}

// The pair in one dict, as model.pt holds it (see electra.h).
TensorDict pair_views(ElectraForPreTrainingImpl& m, const PickTensor& pick) {
  TensorDict out;
  for (auto& [key, t] : generator_views(*m.generator, pick)) out.emplace_back("generator." + key, t);
  if (m.gdes()) out.emplace_back(std::string("discriminator.") + kDeltaKey, first_rows(pick(m.word_embeddings_delta), m.vocab_size()));
  for (auto& [key, t] : discriminator_views(m, pick)) out.emplace_back("discriminator." + key, t);
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

TensorDict ElectraForPreTrainingImpl::hf_state_dict() { return pair_views(*this, detached()); }

TensorDict ElectraForPreTrainingImpl::hf_gradients() { return pair_views(*this, gradients()); }

void ElectraForPreTrainingImpl::load_hf_state_dict(const TensorDict& state, const std::string& origin) {
  const auto source = by_name(state, origin);
  const auto expected = hf_state_dict();
  static const std::string tied_decoder = std::string("generator.") + kGeneratorDecoder;
  const auto tied = [](const std::string& k) { return k == tied_decoder; };
  const auto none = [](const std::string&) { return false; };
  check(match_keys(expected, source, tied, none), origin, shape_of(*this, "ELECTRA pair (model.objective rtd)"));
  reset_padded_rows(*generator);
  if (gdes()) {
    torch::NoGradGuard no_grad;
    word_embeddings_delta.zero_();
  }
  copy_matched(expected, source, tied);
}

ElectraHfPair to_hf_pair(ElectraForPreTrainingImpl& m) {
  ElectraHfPair pair;
  pair.generator = generator_views(*m.generator, detached());
  // The discriminator's embeddings are the generator's (under gdes its token embeddings the sum).
  for (const auto& [key, t] : pair.generator) {
    if (!under_prefix(key, kEmbeddingPrefix)) continue;
    const bool words = key == kEmbeddingPrefix + "word_embeddings.weight";
    pair.discriminator.emplace_back(
        key, words && m.gdes() ? t + first_rows(m.word_embeddings_delta.detach(), m.vocab_size()) : t);
  }
  for (auto& item : discriminator_views(m, detached())) pair.discriminator.push_back(std::move(item));
  return pair;
}

void load_hf_pair(ElectraForPreTrainingImpl& m, const ElectraHfPair& pair, const std::string& generator_origin,
                  const std::string& discriminator_origin) {
  // The generator first, with its embeddings; then the discriminator's own tensors, and its
  // embeddings checked against the generator's (shared) or taken as generator + delta (gdes).
  m.generator->load_hf_state_dict(pair.generator, generator_origin);
  const auto source = by_name(pair.discriminator, discriminator_origin);
  const auto expected = to_hf_pair(m).discriminator;
  check(match_keys(expected, source, [](const std::string&) { return false; }, is_buffer), discriminator_origin,
        shape_of(m, "ELECTRA discriminator"));
  const auto ours_by_name = by_name(expected, discriminator_origin);
  copy_matched(discriminator_views(m, detached()), source, [](const std::string&) { return false; });

  if (m.gdes()) {
    torch::NoGradGuard no_grad;
    m.word_embeddings_delta.zero_();  // its padded rows are in no file
  }
  std::vector<std::string> differing;
  for (const auto& [key, theirs] : source) {
    if (!under_prefix(key, kEmbeddingPrefix) || is_buffer(key)) continue;
    const auto& ours = ours_by_name.at(key);
    const bool words = key == kEmbeddingPrefix + "word_embeddings.weight";
    if (words && m.gdes()) {
      torch::NoGradGuard no_grad;
      m.word_embeddings_delta.narrow(0, 0, m.vocab_size())
          .copy_(theirs.to(torch::kFloat32) - m.word_embeddings().narrow(0, 0, m.vocab_size()).cpu());
    } else if (!torch::equal(theirs.to(torch::kFloat32), ours.to(torch::kFloat32).cpu())) {
      differing.push_back(key);
    }
  }
  if (!differing.empty())
    throw CheckpointError(discriminator_origin + ": the discriminator's " + join_limited(differing) +
                          " differ from the generator's (" + generator_origin +
                          "), which ELECTRA shares" +
                          (m.gdes() ? "" : "; model.embedding_sharing: gdes keeps the token embeddings apart"));
}

}  // namespace mlm::model
