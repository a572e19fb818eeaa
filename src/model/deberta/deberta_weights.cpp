// DeBERTa's Hugging Face weight format: the module tree already carries transformers' names
// (DebertaV2ForMaskedLM with its default legacy head), so the format is the named parameters
// with the vocabulary unpadded, plus the tied cls.predictions.decoder.{weight,bias}. The import
// reads the non-legacy head (lm_predictions.lm_head.*) too, and passes over the RTD head
// (mask_predictions.*) of a hub deberta-v3 checkpoint with a warning naming it, as
// transformers' DebertaV2ForMaskedLM does; otherwise it is strict: one error lists every
// missing, unexpected and mis-shaped tensor.
#include <map>

#include "../hf/key_report.h"
#include "mlm/model/deberta/deberta.h"
#include "mlm/model/deberta/deberta_head_layouts.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::model {
namespace {

constexpr const char* kDebertaDecoderWeight = "cls.predictions.decoder.weight";
constexpr const char* kDebertaDecoderBias = "cls.predictions.decoder.bias";

bool is_deberta_tied_copy(const std::string& key) { return key == kDebertaDecoderWeight || key == kDebertaDecoderBias; }

// A buffer older transformers releases saved (arange of the positions), no weight.
bool is_deberta_position_ids(const std::string& key) { return key == "deberta.embeddings.position_ids"; }

// `pick(parameter)` for every parameter under its HF name: the weights (detached) or gradients.
TensorDict deberta_hf_views(DebertaV2ForMaskedLMImpl& m, const std::function<torch::Tensor(const torch::Tensor&)>& pick) {
  const auto words = m.word_embeddings();
  const auto bias = m.predictions->bias;
  const auto unpadded = [&](const torch::Tensor& t) { return t.defined() ? t.narrow(0, 0, m.vocab_size()) : t; };
  const auto words_view = unpadded(pick(words));  // one tensor for both names: tied
  const auto bias_view = unpadded(pick(bias));
  TensorDict out;
  for (const auto& item : m.named_parameters()) {
    const auto& parameter = item.value();
    if (parameter.is_same(words)) out.emplace_back(item.key(), words_view);
    else if (parameter.is_same(bias)) out.emplace_back(item.key(), bias_view);
    else out.emplace_back(item.key(), pick(parameter));
  }
  out.emplace_back(kDebertaDecoderWeight, words_view);
  out.emplace_back(kDebertaDecoderBias, bias_view);
  return out;
}

}  // namespace

TensorDict DebertaV2ModelImpl::hf_views(const PickTensor& pick) {
  TensorDict out;
  for (const auto& item : named_parameters()) out.emplace_back("deberta." + item.key(), pick(item.value()));
  return out;
}

std::string DebertaV2ForMaskedLMImpl::word_embeddings_key() const { return "deberta.embeddings.word_embeddings.weight"; }

// The generator's tables, which the discriminator reads (its own embed_proj and LayerNorm are not).
bool DebertaV2ForMaskedLMImpl::is_shared_key(const std::string& key) const {
  return key == word_embeddings_key() || key == "deberta.embeddings.position_embeddings.weight" ||
         key == "deberta.embeddings.token_type_embeddings.weight";
}

bool DebertaV2ForMaskedLMImpl::is_tied_decoder_key(const std::string& key) const { return is_deberta_tied_copy(key); }

bool DebertaV2ForMaskedLMImpl::is_buffer_key(const std::string& key) const { return is_deberta_position_ids(key); }

TensorDict DebertaV2ForMaskedLMImpl::hf_state_dict() {
  return deberta_hf_views(*this, [](const torch::Tensor& p) { return p.detach(); });
}

TensorDict DebertaV2ForMaskedLMImpl::hf_gradients() {
  return deberta_hf_views(*this, [](const torch::Tensor& p) { return p.grad(); });
}

void DebertaV2ForMaskedLMImpl::load_hf_state_dict(const TensorDict& state, const std::string& origin) {
  std::map<std::string, torch::Tensor> source;
  std::vector<std::string> rtd_head;
  for (const auto& [key, tensor] : with_legacy_head_keys(state, origin)) {
    if (key.rfind("mask_predictions.", 0) == 0) {
      rtd_head.push_back(key);
      continue;
    }
    if (!source.emplace(key, tensor).second) throw CheckpointError(origin + ": key " + key + " appears twice");
  }
  if (!rtd_head.empty())
    log::warn("model", "{}: {} belong to the discriminator's RTD head, which a masked LM has no use for: not "
              "loaded (model.objective rtd continues the pair)", origin, join_limited(rtd_head));
  const auto expected = hf_state_dict();
  const auto match = match_keys(expected, source, is_deberta_tied_copy, is_deberta_position_ids);
  if (!match.ok())
    throw CheckpointError(origin + ": weights do not match the DeBERTa-v2 model (vocab " + std::to_string(vocab_size()) +
                          ", hidden " + std::to_string(config_.hidden_size) + ", layers " +
                          std::to_string(config_.num_hidden_layers) + ")" + match.describe());

  torch::NoGradGuard no_grad;
  // Padded vocabulary rows are not in the file: reset them to their initial zero.
  word_embeddings().zero_();
  predictions->bias.zero_();
  for (const auto& [key, target] : expected) {
    if (!is_deberta_tied_copy(key)) target.copy_(source.at(key));
  }
  const auto decoder = source.find(kDebertaDecoderWeight);
  if (decoder != source.end() &&
      !torch::equal(decoder->second.to(torch::kFloat32), word_embeddings().narrow(0, 0, vocab_size()).cpu()))
    log::warn("model", "{}: {} differs from the word embeddings; the decoder is tied here, so the word "
              "embeddings are used", origin, kDebertaDecoderWeight);
}

}  // namespace mlm::model
