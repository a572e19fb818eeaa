#pragma once
// The replaced-token-detection pair (model.objective rtd) of any architecture whose spec gives
// rtd_networks(): ELECTRA's and DeBERTa-v3's pretraining. The generator sees the masked
// sequence and is scored on the selected positions (mlm_loss_sum, mlm_correct); its Gumbel-max
// samples replace those positions; the discriminator tells every non-padding token of the
// corrupted sequence original or replaced (the rtd_* of MlmOutput).
//
// The generator's word, position and token-type tables are the discriminator's too (shared);
// under gdes (gradient-disentangled embedding sharing, DeBERTa-v3's) the discriminator's token
// vectors are the generator's, detached, plus a delta that starts at zero.
//
// Module tree (named_parameters()), in this order (the order init_weights draws in):
//   generator.*  (the architecture's masked LM, with the tables),
//   word_embeddings_delta (gdes only: [padded_vocab, E]),
//   discriminator.*  (the architecture's body without tables),
//   <head_name>.*  (the RTD head: discriminator_predictions for ELECTRA, mask_predictions for DeBERTa).
//
// The Hugging Face format (rtd_pair_weights.cpp): the generator as its masked LM, the
// discriminator as one file with the shared tables (under gdes its token embeddings the sum).
// hf_state_dict() holds the pair as "generator.<key>" and "discriminator.<key>", the
// discriminator's tables left out and under gdes its delta as
// discriminator.<word embeddings key less ".weight">_delta, so that model.pt restores every
// parameter bit for bit.
#include <torch/torch.h>

#include <memory>
#include <string>

#include "mlm/model/rtd/rtd_networks.h"

namespace mlm::model {

class ArchitectureSpec;

class RtdPairImpl : public MaskedLmImpl {
 public:
  /// `config`: the discriminator's shape and the rtd keys; the generator's shape follows from
  /// generator_config(). `spec` gives the networks (rtd_networks()) and names the pair in
  /// messages. Initialised as the architecture's reference initialises its modules.
  RtdPairImpl(const ArchitectureSpec& spec, const config::ModelConfig& config, int64_t vocab_size, int64_t pad_id);

  MlmOutput forward(const MlmInputs& inputs, bool return_logits = false) override;
  torch::Tensor last_hidden_states(const MlmInputs& inputs) override;
  void init_weights() override;
  torch::Tensor word_embeddings() const override { return generator->word_embeddings(); }
  TensorDict hf_state_dict() override;
  TensorDict hf_gradients() override;
  void load_hf_state_dict(const TensorDict& state, const std::string& origin_for_errors) override;
  void apply_phase_settings(const config::ModelConfig& phase) override;
  bool has_rtd() const override { return true; }
  RtdPairImpl* rtd_pair() override { return this; }

  bool gdes() const { return word_embeddings_delta.defined(); }
  const ArchitectureSpec& spec() const { return spec_; }
  const RtdNetworks& networks() const { return networks_; }

  std::shared_ptr<RtdGeneratorImpl> generator;
  torch::Tensor word_embeddings_delta;  // [padded_vocab, E], gdes only
  std::shared_ptr<RtdDiscriminatorImpl> discriminator;
  std::shared_ptr<RtdHeadImpl> head;

 private:
  /// The discriminator's embeddings of `ids`: the generator's tables (under gdes its token
  /// vectors detached, plus the delta's).
  torch::Tensor discriminator_embeddings(const torch::Tensor& ids, const MlmInputs& inputs);
  /// `pick` of the pair in model.pt's layout (see above), the generator's part given.
  TensorDict pair_views(const TensorDict& generator_part, const PickTensor& pick);

  const ArchitectureSpec& spec_;
  const RtdNetworks& networks_;
};
TORCH_MODULE(RtdPair);

// ---- the Hugging Face format of the two networks (rtd_pair_weights.cpp) ------------------------

/// The two networks as `transformers` loads them: the generator's masked-LM keys, and the
/// discriminator's own keys with the shared tables (gdes: the token embeddings summed, a new
/// tensor), vocabulary unpadded.
struct RtdHfPair {
  TensorDict generator, discriminator;
};
RtdHfPair to_hf_pair(RtdPairImpl& model);

/// Loads the two networks read from two Hugging Face files. Every problem (missing, unexpected
/// or mismatched keys of either, shared tables of the two that differ) is one CheckpointError
/// naming the origin. Under gdes the delta is the discriminator's token embeddings less the
/// generator's.
void load_hf_pair(RtdPairImpl& model, const RtdHfPair& pair, const std::string& generator_origin,
                  const std::string& discriminator_origin);

}  // namespace mlm::model
