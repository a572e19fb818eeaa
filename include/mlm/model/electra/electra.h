#pragma once
// ELECTRA (model.architecture electra): BERT layers behind an embedding projection (the
// embeddings E wide, each network projecting E -> its width where they differ).
//
// ElectraForMaskedLM is the generator, a MaskedLm of its own (architecture electra with
// objective mlm, and the generator half of an export). Objective rtd is the pair of
// rtd/rtd_pair.h with ELECTRA's networks (electra_rtd.cpp): this generator, an ElectraBody as
// the discriminator (which reads the generator's whole embeddings module: tables, LayerNorm)
// and the DiscriminatorHead (module name discriminator_predictions).
//
// Module tree (named_parameters()) of the pair:
//   generator.embeddings.{word_embeddings,position_embeddings,token_type_embeddings,
//     LayerNorm}.*  (shared by both networks; the word embeddings are the generator's tied
//     decoder), generator.body.{embeddings_project,encoder.layer.N}.*,
//     generator.predictions.{transform.dense,transform.LayerNorm,bias},
//   word_embeddings_delta (gdes only: the discriminator's own token-embedding delta),
//   discriminator.{embeddings_project,encoder.layer.N}.*,
//   discriminator_predictions.{dense,dense_prediction}.*
//
// The Hugging Face format (electra_weights.cpp): the generator as ElectraForMaskedLM, the
// discriminator as ElectraForPreTraining, each with the embeddings (electra.embeddings.*).
#include <torch/torch.h>

#include <optional>
#include <string>

#include "mlm/config/sections/model.h"
#include "mlm/model/bert/embeddings.h"
#include "mlm/model/bert/mlm_head.h"
#include "mlm/model/masked_lm.h"
#include "mlm/model/rtd/rtd_networks.h"

namespace mlm::model {

/// One network after the embeddings ("electra" less its embeddings): the projection E -> H
/// where they differ, then BERT layers.
struct ElectraBodyImpl : RtdDiscriminatorImpl {
  /// `shape`: the network's own sizes (hidden_size, layers, heads, intermediate).
  ElectraBodyImpl(const config::ModelConfig& shape, int64_t embedding_size);

  /// embedded [B,S,E] -> [B,S,H], the real tokens alone projected and through the layers when
  /// `layout` is unpadded; with `positions` [B,R] the last layer runs there only: [B,R,H].
  torch::Tensor forward(const torch::Tensor& embedded, const torch::Tensor& attention_bias,
                        const TokenLayout& layout, const torch::Tensor& positions = {});

  // As the pair's discriminator: forward() on the generator's embeddings.
  torch::Tensor hidden_states(const torch::Tensor& embedded, const MlmInputs& inputs,
                              const torch::Tensor& attention_bias, const TokenLayout& layout) override {
    return forward(embedded, attention_bias, layout);
  }
  void set_checkpoint_layers(bool on) override { checkpoint_layers = on; }
  /// electra.embeddings_project.* and electra.encoder.layer.N.* (q/k/v split as BERT's).
  TensorDict hf_views(const PickTensor& pick) override;

  torch::nn::Linear embeddings_project{nullptr};
  torch::nn::ModuleList layers{nullptr};  // "encoder.layer"
  bool checkpoint_layers = false;         // model.activation_checkpointing
  ForwardTaps* taps = nullptr;            // distillation's, set by the generator's forward
};
TORCH_MODULE(ElectraBody);

class ElectraForMaskedLMImpl : public RtdGeneratorImpl {
 public:
  /// `config`: this network's own shape (hidden_size, layers, ...) and embedding_size.
  ElectraForMaskedLMImpl(const config::ModelConfig& config, int64_t vocab_size, int64_t pad_id);

  MlmOutput forward(const MlmInputs& inputs, bool return_logits = false) override;
  torch::Tensor last_hidden_states(const MlmInputs& inputs) override;
  void init_weights() override;
  torch::Tensor word_embeddings() const override { return embeddings->word_embeddings->weight; }
  TensorDict hf_state_dict() override;
  TensorDict hf_gradients() override;
  void load_hf_state_dict(const TensorDict& state, const std::string& origin_for_errors) override;
  void apply_phase_settings(const config::ModelConfig& phase) override {
    MaskedLmImpl::apply_phase_settings(phase);
    body->checkpoint_layers = phase.activation_checkpointing;
  }

  // ---- as the pair's generator (rtd/rtd_networks.h) ----
  torch::Tensor selected_logits(const MlmInputs& inputs) override;
  torch::Tensor token_vectors(const torch::Tensor& ids) override { return embeddings->word_embeddings(ids); }
  torch::Tensor add_shared_tables(const torch::Tensor& words, const MlmInputs& inputs) override {
    return embeddings->embed(words, inputs.token_type_ids);
  }
  torch::Tensor decoder_bias() const override { return predictions->bias; }
  std::string word_embeddings_key() const override;
  bool is_shared_key(const std::string& key) const override;
  bool is_tied_decoder_key(const std::string& key) const override;
  bool is_buffer_key(const std::string& key) const override;

  BertEmbeddings embeddings{nullptr};
  ElectraBody body{nullptr};
  MlmHead predictions{nullptr};  // dense H -> E, gelu, LayerNorm(E), the tied decoder
};
TORCH_MODULE(ElectraForMaskedLM);

/// ElectraDiscriminatorPredictions: dense H->H, the activation, dense_prediction H->1.
struct DiscriminatorHeadImpl : RtdHeadImpl {
  explicit DiscriminatorHeadImpl(const config::ModelConfig& config);
  /// hidden [B,S,H] -> one logit per token [B,S] (replaced when > 0).
  torch::Tensor forward(const torch::Tensor& hidden) override;

  torch::nn::Linear dense{nullptr}, dense_prediction{nullptr};

 private:
  config::Activation act_;
};
TORCH_MODULE(DiscriminatorHead);

/// ELECTRA's part of the replaced-token-detection pair (electra_rtd.cpp).
const RtdNetworks& electra_rtd_networks();

}  // namespace mlm::model
