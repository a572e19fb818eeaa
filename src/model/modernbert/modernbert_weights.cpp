// ModernBERT's Hugging Face weight format: the module tree already carries transformers' names,
// so the format is the named parameters with the vocabulary unpadded, plus decoder.weight (the
// token embeddings, tied). The import is strict: one error lists every missing, unexpected and
// mis-shaped tensor.
#include <map>

#include "../hf/key_report.h"
#include "mlm/model/modernbert/modernbert.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::model {
namespace {

constexpr const char* kDecoderWeight = "decoder.weight";

// `pick(parameter)` for every parameter under its HF name: the weights (detached) or gradients.
TensorDict hf_views(ModernBertForMaskedLMImpl& m, const std::function<torch::Tensor(const torch::Tensor&)>& pick) {
  const auto words = m.word_embeddings();
  const auto unpadded = [&](const torch::Tensor& t) { return t.defined() ? t.narrow(0, 0, m.vocab_size()) : t; };
  const auto words_view = unpadded(pick(words));  // one tensor for both names: tied
  TensorDict out;
  for (const auto& item : m.named_parameters()) {
    const auto& parameter = item.value();
    if (parameter.is_same(words)) out.emplace_back(item.key(), words_view);
    else if (parameter.is_same(m.decoder_bias)) out.emplace_back(item.key(), unpadded(pick(parameter)));
    else out.emplace_back(item.key(), pick(parameter));
  }
  out.emplace_back(kDecoderWeight, words_view);
  return out;
}

}  // namespace

TensorDict ModernBertForMaskedLMImpl::hf_state_dict() {
  return hf_views(*this, [](const torch::Tensor& p) { return p.detach(); });
}

TensorDict ModernBertForMaskedLMImpl::hf_gradients() {
  return hf_views(*this, [](const torch::Tensor& p) { return p.grad(); });
}

void ModernBertForMaskedLMImpl::load_hf_state_dict(const TensorDict& state, const std::string& origin) {
  std::map<std::string, torch::Tensor> source;
  for (const auto& [key, tensor] : state) {
    if (!source.emplace(key, tensor).second) throw CheckpointError(origin + ": key " + key + " appears twice");
  }
  const auto expected = hf_state_dict();
  const auto match = match_keys(
      expected, source, [](const std::string& key) { return key == kDecoderWeight; },  // tied: optional
      [](const std::string&) { return false; });
  if (!match.ok())
    throw CheckpointError(origin + ": weights do not match the ModernBERT model (vocab " + std::to_string(vocab_size()) +
                          ", hidden " + std::to_string(config_.hidden_size) + ", layers " +
                          std::to_string(config_.num_hidden_layers) + ")" + match.describe());

  torch::NoGradGuard no_grad;
  // Padded vocabulary rows are not in the file: reset them to their initial zero.
  word_embeddings().zero_();
  if (decoder_bias.defined()) decoder_bias.zero_();
  for (const auto& [key, target] : expected) {
    if (key != kDecoderWeight) target.copy_(source.at(key));
  }
  const auto decoder = source.find(kDecoderWeight);
  if (decoder != source.end() &&
      !torch::equal(decoder->second.to(torch::kFloat32), word_embeddings().narrow(0, 0, vocab_size()).cpu()))
    log::warn("model", "{}: decoder.weight differs from the token embeddings; the decoder is tied here, "
              "so the token embeddings are used", origin);
}

}  // namespace mlm::model
