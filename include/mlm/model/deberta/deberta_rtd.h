#pragma once
// DeBERTa-v3's objective (model.architecture deberta_v2, model.objective rtd): replaced-token
// detection as ELECTRA trains it (mlm-train's ElectraForPreTraining: the same sampling, the
// same losses, the same embedding sharing), with DeBERTa networks. The generator is a
// DebertaV2ForMaskedLM (by default the discriminator's width and layers, half as many); its
// Gumbel-max samples replace the selected positions; the discriminator, a DebertaV2Model, tells
// every non-padding token original or replaced through DeBERTa's RTD head (the public DeBERTa
// code's LMMaskPredictionHead, the hub's mask_predictions.*: LayerNorm(h + h[CLS]), dense, the
// activation, classifier H -> 1).
//
// The generator's word, position and token-type tables are the discriminator's too (shared);
// under gdes (DeBERTa-v3's default) the discriminator's token vectors are the generator's,
// detached, plus a delta initialised to zero. Each network keeps its own embed_proj and
// embeddings LayerNorm, which are as wide as the network (DeBERTa's code shares the tables only).
//
// Module tree (named_parameters()):
//   generator.{deberta,cls}.*  (DebertaV2ForMaskedLM's),
//   word_embeddings_delta (gdes only: [padded_vocab, E]),
//   discriminator.{embeddings.{embed_proj,LayerNorm},encoder}.*  (a DebertaV2Model without tables),
//   mask_predictions.{dense,LayerNorm,classifier}.*
//
// The Hugging Face format (deberta_rtd_weights.cpp): the generator as DebertaV2ForMaskedLM,
// the discriminator as the hub's deberta-v3 checkpoints lay it out (deberta.* with the tables,
// under gdes the token embeddings the sum, and mask_predictions.*), which DebertaV2Model and
// DebertaV2ForSequenceClassification load. hf_state_dict() holds the pair as "generator.<key>"
// and "discriminator.<key>", the discriminator's tables left out and under gdes its delta as
// discriminator.deberta.embeddings.word_embeddings_delta, so that model.pt restores every
// parameter bit for bit.
#include <torch/torch.h>

#include <string>

#include "mlm/model/deberta/deberta.h"
#include "mlm/model/hf/weight_format.h"
#include "mlm/model/layers.h"

namespace mlm::model {

/// DeBERTa's replaced-token-detection head ("mask_predictions").
struct DebertaRtdHeadImpl : torch::nn::Module {
  explicit DebertaRtdHeadImpl(const config::ModelConfig& config);
  /// hidden [B,S,H] -> one logit per token [B,S] (replaced when > 0).
  torch::Tensor forward(const torch::Tensor& hidden);

  torch::nn::Linear dense{nullptr}, classifier{nullptr};
  LayerNorm layer_norm{nullptr};  // "LayerNorm"

 private:
  config::Activation act_;
};
TORCH_MODULE(DebertaRtdHead);

class DebertaV2ForPreTrainingImpl : public MaskedLmImpl {
 public:
  /// `config`: the discriminator's shape and the rtd keys; the generator's follows from
  /// generator_config(). Initialised as transformers initialises DebertaV2 modules.
  DebertaV2ForPreTrainingImpl(const config::ModelConfig& config, int64_t vocab_size, int64_t pad_id);

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

  DebertaV2ForMaskedLM generator{nullptr};
  torch::Tensor word_embeddings_delta;  // [padded_vocab, E], gdes only
  DebertaV2Model discriminator{nullptr};
  DebertaRtdHead mask_predictions{nullptr};

 private:
  /// The discriminator's embeddings [B,S,H] of `ids`: the generator's tables (under gdes its
  /// token vectors detached, plus the delta's), then the discriminator's projection and norm.
  torch::Tensor discriminator_embeddings(const MlmInputs& inputs, const torch::Tensor& ids);
};
TORCH_MODULE(DebertaV2ForPreTraining);

/// The two networks as `transformers` loads them: DebertaV2ForMaskedLM keys, and the
/// discriminator's deberta.* (its tables the generator's; gdes: the token embeddings summed)
/// with mask_predictions.*, vocabulary unpadded.
struct DebertaHfPair {
  TensorDict generator, discriminator;
};
DebertaHfPair to_hf_pair(DebertaV2ForPreTrainingImpl& model);

/// Writes DIR/generator (DebertaV2ForMaskedLM) and DIR/discriminator (DebertaV2Model's
/// config.json with embedding_sharing added, the weights as the hub's deberta-v3 checkpoints
/// hold them); DIR must exist.
void write_deberta_pair(DebertaV2ForPreTrainingImpl& model, const std::string& dir, WeightFormat format);

// ---- such a directory read back (deberta_rtd_directory.cpp) ------------------------------------

/// DIR/generator/config.json (model_type deberta-v2) and DIR/discriminator/config.json exist.
bool is_deberta_pair_dir(const std::string& dir);

/// The objective rtd config of a pair directory on top of `base`: the discriminator's shape, the
/// generator ratios from the two widths and depths, the embedding sharing the discriminator's
/// config.json names (mlm-export writes it), else `base`'s.
/// CheckpointError naming the file for vocabularies that differ or a generator whose heads or
/// intermediate size are not those mlm-train derives.
config::ModelConfig deberta_pair_config(const std::string& dir, config::ModelConfig base);

/// Loads a pair directory into `model`: one CheckpointError listing each shape difference, or
/// naming the discriminator's tables that differ from the generator's (under gdes its token
/// embeddings less the generator's are the delta).
void init_deberta_pair(DebertaV2ForPreTrainingImpl& model, const std::string& dir);

// ---- a hub deberta-v3 checkpoint, the discriminator alone (deberta_hub_pair.cpp) -------------

/// Loads a Hugging Face directory holding one DeBERTa network with its RTD head (deberta.*,
/// mask_predictions.*, optionally lm_predictions.lm_head.* or cls.predictions.*: the hub's
/// microsoft/deberta-v3-*) into `model`: the discriminator from the file, the generator as
/// built with the file's tables (gdes: delta 0) and the file's MLM head when its width fits
/// (else a warning naming the keys). CheckpointError naming the file for a config.json whose
/// shape or DeBERTa options differ from the model's (each key listed), a directory without
/// mask_predictions.*, and any missing, unexpected or mis-shaped tensor.
void init_deberta_pair_from_discriminator(DebertaV2ForPreTrainingImpl& model, const std::string& dir);

}  // namespace mlm::model
