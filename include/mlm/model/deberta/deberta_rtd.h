#pragma once
// DeBERTa-v3's objective (model.architecture deberta_v2, model.objective rtd): the
// replaced-token-detection pair of rtd/rtd_pair.h with DeBERTa networks. The generator is a
// DebertaV2ForMaskedLM (by default the discriminator's width and layers, half as many); the
// discriminator a DebertaV2Model without tables, which reads the generator's word, position and
// token-type tables (each network keeps its own embed_proj and embeddings LayerNorm, as wide as
// the network: DeBERTa's code shares the tables only); the RTD head is the public DeBERTa
// code's LMMaskPredictionHead, the hub's mask_predictions.*: LayerNorm(h + h[CLS]), dense, the
// activation, classifier H -> 1.
//
// Module tree (named_parameters()):
//   generator.{deberta,cls}.*  (DebertaV2ForMaskedLM's),
//   word_embeddings_delta (gdes only: [padded_vocab, E]),
//   discriminator.{embeddings.{embed_proj,LayerNorm},encoder}.*  (a DebertaV2Model without tables),
//   mask_predictions.{dense,LayerNorm,classifier}.*
//
// The Hugging Face format: the generator as DebertaV2ForMaskedLM, the discriminator as the
// hub's deberta-v3 checkpoints lay it out (deberta.* with the tables, under gdes the token
// embeddings the sum, and mask_predictions.*), which DebertaV2Model and
// DebertaV2ForSequenceClassification load (config.json names DebertaV2Model: no transformers
// class holds the RTD head).
#include <torch/torch.h>

#include <string>

#include "mlm/model/deberta/deberta.h"
#include "mlm/model/layers.h"
#include "mlm/model/rtd/rtd_pair.h"

namespace mlm::model {

/// DeBERTa's replaced-token-detection head ("mask_predictions").
struct DebertaRtdHeadImpl : RtdHeadImpl {
  explicit DebertaRtdHeadImpl(const config::ModelConfig& config);
  /// hidden [B,S,H] -> one logit per token [B,S] (replaced when > 0).
  torch::Tensor forward(const torch::Tensor& hidden) override;

  torch::nn::Linear dense{nullptr}, classifier{nullptr};
  LayerNorm layer_norm{nullptr};  // "LayerNorm"

 private:
  config::Activation act_;
};
TORCH_MODULE(DebertaRtdHead);

/// DeBERTa's part of the replaced-token-detection pair.
const RtdNetworks& deberta_rtd_networks();

// ---- a hub deberta-v3 checkpoint, the discriminator alone (deberta_hub_pair.cpp) -------------

/// Loads a Hugging Face directory holding one DeBERTa network with its RTD head (deberta.*,
/// mask_predictions.*, optionally lm_predictions.lm_head.* or cls.predictions.*: the hub's
/// microsoft/deberta-v3-*) into `model`: the discriminator from the file, the generator as
/// built with the file's tables (gdes: delta 0) and the file's MLM head when its width fits
/// (else a warning naming the keys). CheckpointError naming the file for a config.json whose
/// shape or DeBERTa options differ from the model's (each key listed), a directory without
/// mask_predictions.*, and any missing, unexpected or mis-shaped tensor.
void init_deberta_pair_from_discriminator(RtdPairImpl& model, const std::string& dir);

}  // namespace mlm::model
