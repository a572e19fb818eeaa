// DeBERTa's networks in the replaced-token-detection pair (rtd/rtd_pair.h) and its RTD head.
#include "mlm/model/deberta/deberta_rtd.h"

namespace mlm::model {
namespace {

class DebertaRtdNetworks : public RtdNetworks {
 public:
  std::shared_ptr<RtdGeneratorImpl> generator(const config::ModelConfig& generator_config, int64_t vocab_size,
                                              int64_t pad_id) const override {
    return std::make_shared<DebertaV2ForMaskedLMImpl>(generator_config, vocab_size, pad_id);
  }
  std::shared_ptr<RtdDiscriminatorImpl> discriminator(const config::ModelConfig& config, int64_t padded_vocab,
                                                      int64_t pad_id) const override {
    return std::make_shared<DebertaV2ModelImpl>(config, padded_vocab, pad_id, /*own_tables=*/false);
  }
  std::shared_ptr<RtdHeadImpl> head(const config::ModelConfig& config) const override {
    return std::make_shared<DebertaRtdHeadImpl>(config);
  }
  std::string head_name() const override { return "mask_predictions"; }
  // No transformers class holds DeBERTa's RTD head: the discriminator is read as the encoder
  // (DebertaV2Model, or a classifier fine-tuned from it), mask_predictions.* left unused, as
  // transformers reads the hub's deberta-v3 checkpoints.
  std::string discriminator_class() const override { return "DebertaV2Model"; }
};

}  // namespace

DebertaRtdHeadImpl::DebertaRtdHeadImpl(const config::ModelConfig& c) : act_(c.hidden_act) {
  dense = register_module("dense", torch::nn::Linear(c.hidden_size, c.hidden_size));
  layer_norm = register_module("LayerNorm", LayerNorm(c.hidden_size, c.layer_norm_eps));
  classifier = register_module("classifier", torch::nn::Linear(c.hidden_size, 1));
}

torch::Tensor DebertaRtdHeadImpl::forward(const torch::Tensor& hidden) {
  // Every token's state is read next to the first token's (the sequence's context), normed.
  const auto states = layer_norm(hidden + hidden.select(1, 0).unsqueeze(1));
  return linear(classifier, activation(linear(dense, states), act_)).squeeze(-1);
}

const RtdNetworks& deberta_rtd_networks() {
  static const DebertaRtdNetworks networks;
  return networks;
}

}  // namespace mlm::model
