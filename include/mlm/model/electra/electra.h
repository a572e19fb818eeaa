#pragma once
// ELECTRA (model.architecture electra): BERT layers behind an embedding projection (the
// embeddings E wide, each network projecting E -> its width where they differ).
//
// ElectraForMaskedLM is the generator, a MaskedLm of its own (architecture electra with
// objective mlm, and the generator half of an export). ElectraForPreTraining (objective rtd)
// holds a generator and the encoder being trained, the discriminator, as one MaskedLm: the
// generator sees the masked sequence and is scored on the selected positions (mlm_loss_sum,
// mlm_correct); its Gumbel-max samples replace those positions, and the discriminator tells
// every non-padding token of the corrupted sequence original or replaced (rtd_* of MlmOutput).
//
// Module tree (named_parameters()) of ElectraForPreTraining:
//   generator.embeddings.{word_embeddings,position_embeddings,token_type_embeddings,
//     LayerNorm}.*  (shared by both networks; the word embeddings are the generator's tied
//     decoder), generator.body.{embeddings_project,encoder.layer.N}.*,
//     generator.predictions.{transform.dense,transform.LayerNorm,bias},
//   word_embeddings_delta (gdes only: the discriminator's own token-embedding delta),
//   discriminator.{embeddings_project,encoder.layer.N}.*,
//   discriminator_predictions.{dense,dense_prediction}.*
//
// The Hugging Face format (electra_weights.cpp): the generator as ElectraForMaskedLM, the
// discriminator as ElectraForPreTraining, each with the embeddings (under gdes the
// discriminator's token embeddings are the sum). ElectraForPreTraining's hf_state_dict() holds
// the pair as "generator.<key>" and "discriminator.<key>", the discriminator's shared
// embeddings left out and under gdes its delta as
// discriminator.electra.embeddings.word_embeddings_delta, so that model.pt restores every
// parameter bit for bit.
#include <torch/torch.h>

#include <optional>
#include <string>

#include "mlm/config/sections/model.h"
#include "mlm/model/bert/embeddings.h"
#include "mlm/model/bert/mlm_head.h"
#include "mlm/model/masked_lm.h"

namespace mlm::model {

/// One network after the embeddings ("electra" less its embeddings): the projection E -> H
/// where they differ, then BERT layers.
struct ElectraBodyImpl : torch::nn::Module {
  /// `shape`: the network's own sizes (hidden_size, layers, heads, intermediate).
  ElectraBodyImpl(const config::ModelConfig& shape, int64_t embedding_size);

  /// embedded [B,S,E] -> [B,S,H], the real tokens alone projected and through the layers when
  /// `layout` is unpadded; with `positions` [B,R] the last layer runs there only: [B,R,H].
  torch::Tensor forward(const torch::Tensor& embedded, const torch::Tensor& attention_bias,
                        const TokenLayout& layout, const torch::Tensor& positions = {});

  torch::nn::Linear embeddings_project{nullptr};
  torch::nn::ModuleList layers{nullptr};  // "encoder.layer"
  bool checkpoint_layers = false;         // model.activation_checkpointing
};
TORCH_MODULE(ElectraBody);

/// The generator's config inside objective rtd: `config` with the generator's shape
/// (config::generator_shape) and objective mlm.
config::ModelConfig generator_config(const config::ModelConfig& config);

class ElectraForMaskedLMImpl : public MaskedLmImpl {
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

  /// The logits [M, padded_vocab] of the selected positions of `inputs`, the embeddings
  /// [B,S,E] already made; the last layer runs on those positions only under sparse_head.
  torch::Tensor selected_logits(const MlmInputs& inputs, const torch::Tensor& embedded,
                                const torch::Tensor& attention_bias, const TokenLayout& layout);
  /// score() for ElectraForPreTraining, which scores the generator's logits itself.
  MlmOutput score_logits(const torch::Tensor& logits, const torch::Tensor& labels, bool return_logits) const {
    return score(logits, labels, return_logits);
  }

  BertEmbeddings embeddings{nullptr};
  ElectraBody body{nullptr};
  MlmHead predictions{nullptr};  // dense H -> E, gelu, LayerNorm(E), the tied decoder
};
TORCH_MODULE(ElectraForMaskedLM);

/// ElectraDiscriminatorPredictions: dense H->H, the activation, dense_prediction H->1.
struct DiscriminatorHeadImpl : torch::nn::Module {
  explicit DiscriminatorHeadImpl(const config::ModelConfig& config);
  /// hidden [B,S,H] -> one logit per token [B,S] (replaced when > 0).
  torch::Tensor forward(const torch::Tensor& hidden);

  torch::nn::Linear dense{nullptr}, dense_prediction{nullptr};

 private:
  config::Activation act_;
};
TORCH_MODULE(DiscriminatorHead);

class ElectraForPreTrainingImpl : public MaskedLmImpl {
 public:
  /// `config`: the discriminator's shape and the rtd keys; the generator's shape follows from
  /// generator_config(). Initialised as transformers' Electra (BERT's init).
  ElectraForPreTrainingImpl(const config::ModelConfig& config, int64_t vocab_size, int64_t pad_id);

  MlmOutput forward(const MlmInputs& inputs, bool return_logits = false) override;
  torch::Tensor last_hidden_states(const MlmInputs& inputs) override;
  void init_weights() override;
  torch::Tensor word_embeddings() const override { return generator->word_embeddings(); }
  TensorDict hf_state_dict() override;
  TensorDict hf_gradients() override;
  void load_hf_state_dict(const TensorDict& state, const std::string& origin_for_errors) override;
  void apply_phase_settings(const config::ModelConfig& phase) override {
    MaskedLmImpl::apply_phase_settings(phase);
    generator->apply_phase_settings(phase);
    discriminator->checkpoint_layers = phase.activation_checkpointing;
  }
  bool has_rtd() const override { return true; }

  bool gdes() const { return word_embeddings_delta.defined(); }

  ElectraForMaskedLM generator{nullptr};
  torch::Tensor word_embeddings_delta;  // [padded_vocab, E], gdes only
  ElectraBody discriminator{nullptr};
  DiscriminatorHead discriminator_predictions{nullptr};

 private:
  /// The discriminator's embeddings of `ids`: the shared ones, or under gdes the generator's
  /// token vectors (no gradient) plus the delta's.
  torch::Tensor discriminator_embeddings(const torch::Tensor& ids, const torch::Tensor& token_type_ids);
};
TORCH_MODULE(ElectraForPreTraining);

// ---- Hugging Face weight format (electra_weights.cpp) ------------------------------------------

/// The two models as `transformers` loads them: ElectraForMaskedLM keys (generator_lm_head.*
/// the tied decoder) and ElectraForPreTraining keys, each with the embeddings (gdes: the
/// discriminator's token embeddings summed, a new tensor), vocabulary unpadded.
struct ElectraHfPair {
  TensorDict generator, discriminator;
};
ElectraHfPair to_hf_pair(ElectraForPreTrainingImpl& model);

/// Loads a pair read from two Hugging Face directories. Every problem (missing, unexpected or
/// mismatched keys of either, embeddings of the two that differ where they are shared) is one
/// CheckpointError naming the origin. Under gdes the delta is the discriminator's token
/// embeddings less the generator's.
void load_hf_pair(ElectraForPreTrainingImpl& model, const ElectraHfPair& pair,
                  const std::string& generator_origin, const std::string& discriminator_origin);

}  // namespace mlm::model
