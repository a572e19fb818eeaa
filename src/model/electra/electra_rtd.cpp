// ELECTRA's networks in the replaced-token-detection pair (rtd/rtd_pair.h): ElectraForMaskedLM
// as the generator, an ElectraBody as the discriminator, the DiscriminatorHead; exported as
// transformers' ElectraForPreTraining.
#include "mlm/model/electra/electra.h"

namespace mlm::model {
namespace {

class ElectraRtdNetworks : public RtdNetworks {
 public:
  std::shared_ptr<RtdGeneratorImpl> generator(const config::ModelConfig& generator_config, int64_t vocab_size,
                                              int64_t pad_id) const override {
    return std::make_shared<ElectraForMaskedLMImpl>(generator_config, vocab_size, pad_id);
  }
  std::shared_ptr<RtdDiscriminatorImpl> discriminator(const config::ModelConfig& config, int64_t,
                                                      int64_t) const override {
    return std::make_shared<ElectraBodyImpl>(config, config::electra_embedding_size(config));
  }
  std::shared_ptr<RtdHeadImpl> head(const config::ModelConfig& config) const override {
    return std::make_shared<DiscriminatorHeadImpl>(config);
  }
  std::string head_name() const override { return "discriminator_predictions"; }
  std::string discriminator_class() const override { return "ElectraForPreTraining"; }
};

}  // namespace

const RtdNetworks& electra_rtd_networks() {
  static const ElectraRtdNetworks networks;
  return networks;
}

}  // namespace mlm::model
