#pragma once
// The masked-language-model head ("cls.predictions"): dense H->H, activation, LayerNorm, then
// the decoder (ELECTRA's generator: dense H->E, E the embedding width), whose weight is the word-embedding matrix (tied: passed in, never registered
// here, so an optimizer sees it once) plus the head's own bias over the (padded) vocabulary.
#include <torch/torch.h>

#include "mlm/config/sections/model.h"
#include "mlm/model/layers.h"

namespace mlm::model {

struct MlmHeadImpl : torch::nn::Module {
  MlmHeadImpl(const config::ModelConfig& config, int64_t padded_vocab)
      : MlmHeadImpl(config.hidden_size, config.hidden_size, config.hidden_act, config.layer_norm_eps,
                    padded_vocab) {}
  /// hidden -> embedding_width, then the decoder [padded_vocab, embedding_width].
  MlmHeadImpl(int64_t hidden, int64_t embedding_width, config::Activation act, double eps,
              int64_t padded_vocab);

  /// hidden: [N,H]; decoder_weight: the word embeddings [padded_vocab,H].
  /// Returns logits [N, padded_vocab] (the caller slices off the padded rows).
  torch::Tensor forward(const torch::Tensor& hidden, const torch::Tensor& decoder_weight);

  torch::nn::Linear transform_dense{nullptr};  // "transform.dense"
  LayerNorm transform_norm{nullptr};           // "transform.LayerNorm"
  torch::Tensor bias;                          // "bias" [padded_vocab]

 private:
  config::Activation act_;
};
TORCH_MODULE(MlmHead);

}  // namespace mlm::model
