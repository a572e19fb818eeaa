// DeBERTa-v3's pair in the Hugging Face format: the generator as DebertaV2ForMaskedLM, the
// discriminator as the hub's deberta-v3 checkpoints hold it (deberta.*, mask_predictions.*), and
// the pair's own layout for model.pt (see deberta_rtd.h).
#include <filesystem>
#include <map>

#include "../hf/key_report.h"
#include "mlm/model/bert/bert.h"
#include "mlm/model/deberta/deberta_config_json.h"
#include "mlm/model/deberta/deberta_rtd.h"
#include "mlm/model/hf/hf_directory.h"
#include "mlm/util/errors.h"

namespace mlm::model {
namespace {

const std::string kPairTablesPrefix = "deberta.embeddings.";
const std::string kPairWordsKey = "deberta.embeddings.word_embeddings.weight";
const std::string kPairDeltaKey = "discriminator.deberta.embeddings.word_embeddings_delta";

// The generator's tables, which the discriminator reads (its own embed_proj and LayerNorm are not).
bool is_shared_table(const std::string& key) {
  return key == kPairWordsKey || key == kPairTablesPrefix + "position_embeddings.weight" ||
         key == kPairTablesPrefix + "token_type_embeddings.weight";
}

// The discriminator's own tensors under their hub names, `pick` of each parameter.
TensorDict discriminator_own_views(DebertaV2ForPreTrainingImpl& m, const PickTensor& pick) {
  TensorDict out;
  for (const auto& item : m.discriminator->named_parameters()) out.emplace_back("deberta." + item.key(), pick(item.value()));
  for (const auto& item : m.mask_predictions->named_parameters())
    out.emplace_back("mask_predictions." + item.key(), pick(item.value()));
  return out;
}

TensorDict deberta_pair_views(DebertaV2ForPreTrainingImpl& m, const TensorDict& generator, const PickTensor& pick) {
  TensorDict out;
  for (const auto& [key, t] : generator) out.emplace_back("generator." + key, t);
  if (m.gdes()) {
    const auto delta = pick(m.word_embeddings_delta);
    out.emplace_back(kPairDeltaKey, delta.defined() ? delta.narrow(0, 0, m.vocab_size()) : delta);
  }
  for (auto& [key, t] : discriminator_own_views(m, pick)) out.emplace_back("discriminator." + key, t);
  return out;
}

bool is_tied_generator_copy(const std::string& key) {
  return key == "generator.cls.predictions.decoder.weight" || key == "generator.cls.predictions.decoder.bias";
}

}  // namespace

TensorDict DebertaV2ForPreTrainingImpl::hf_state_dict() {
  return deberta_pair_views(*this, generator->hf_state_dict(), [](const torch::Tensor& p) { return p.detach(); });
}

TensorDict DebertaV2ForPreTrainingImpl::hf_gradients() {
  return deberta_pair_views(*this, generator->hf_gradients(), [](const torch::Tensor& p) { return p.grad(); });
}

void DebertaV2ForPreTrainingImpl::load_hf_state_dict(const TensorDict& state, const std::string& origin) {
  std::map<std::string, torch::Tensor> source;
  for (const auto& [key, tensor] : state)
    if (!source.emplace(key, tensor).second) throw CheckpointError(origin + ": key " + key + " appears twice");
  const auto expected = hf_state_dict();
  const auto match = match_keys(expected, source, is_tied_generator_copy, [](const std::string&) { return false; });
  if (!match.ok())
    throw CheckpointError(origin + ": weights do not match the DeBERTa generator and discriminator (model.objective "
                          "rtd; vocab " + std::to_string(vocab_size()) + ", hidden " +
                          std::to_string(config_.hidden_size) + ", layers " +
                          std::to_string(config_.num_hidden_layers) + ")" + match.describe());
  torch::NoGradGuard no_grad;
  // Padded vocabulary rows are in no file: reset them to their initial zero.
  word_embeddings().zero_();
  generator->predictions->bias.zero_();
  if (gdes()) word_embeddings_delta.zero_();
  for (const auto& [key, target] : expected)
    if (!is_tied_generator_copy(key)) target.copy_(source.at(key));
}

DebertaHfPair to_hf_pair(DebertaV2ForPreTrainingImpl& m) {
  DebertaHfPair pair;
  pair.generator = m.generator->hf_state_dict();
  for (const auto& [key, t] : pair.generator) {
    if (!is_shared_table(key)) continue;
    const bool summed = key == kPairWordsKey && m.gdes();
    pair.discriminator.emplace_back(
        key, summed ? t + m.word_embeddings_delta.detach().narrow(0, 0, m.vocab_size()) : t);
  }
  for (auto& item : discriminator_own_views(m, [](const torch::Tensor& p) { return p.detach(); }))
    pair.discriminator.push_back(std::move(item));
  return pair;
}

void write_deberta_pair(DebertaV2ForPreTrainingImpl& model, const std::string& dir, WeightFormat format) {
  namespace fs = std::filesystem;
  const auto pair = to_hf_pair(model);
  const auto write = [&](const char* network, const nlohmann::json& config_json, const TensorDict& weights) {
    write_hf_files((fs::path(dir) / network).string(), config_json, weights, format);
  };
  write("generator", deberta_config_json(*model.generator), pair.generator);
  // No transformers class holds DeBERTa's RTD head: the discriminator is read as the encoder
  // (DebertaV2Model, or a classifier fine-tuned from it), mask_predictions.* left unused, as
  // transformers reads the hub's deberta-v3 checkpoints.
  auto discriminator_json = deberta_config_json(model);
  discriminator_json["architectures"] = {"DebertaV2Model"};
  // How the tables were shared, for reading the pair back (transformers keeps unknown fields).
  discriminator_json["embedding_sharing"] = model.gdes() ? "gdes" : "shared";
  write("discriminator", discriminator_json, pair.discriminator);
}

}  // namespace mlm::model
