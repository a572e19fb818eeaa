#pragma once
// BERT input embeddings: word + learned absolute position + token type, LayerNorm, dropout.
#include <torch/torch.h>

#include "mlm/config/sections/model.h"
#include "mlm/model/layers.h"

namespace mlm::model {

struct BertEmbeddingsImpl : torch::nn::Module {
  /// `padded_vocab` rows (the real vocabulary rounded up to model.pad_vocab_multiple); the
  /// `pad_id` row gets no gradient from the lookup (as nn.Embedding(padding_idx) in HF BERT).
  BertEmbeddingsImpl(const config::ModelConfig& config, int64_t padded_vocab, int64_t pad_id);

  /// input_ids, token_type_ids: [B,S] int64 (token_type_ids may be undefined = all 0).
  /// Returns [B,S,H] fp32.
  torch::Tensor forward(const torch::Tensor& input_ids, const torch::Tensor& token_type_ids);
  /// The same from word vectors [B,S,H] already looked up (ELECTRA's GDES looks them up in a
  /// matrix of its own).
  torch::Tensor embed(const torch::Tensor& words, const torch::Tensor& token_type_ids);

  torch::nn::Embedding word_embeddings{nullptr}, position_embeddings{nullptr},
      token_type_embeddings{nullptr};
  LayerNorm layer_norm{nullptr};  // registered as "LayerNorm", the HF name
  double dropout_;
};
TORCH_MODULE(BertEmbeddings);

}  // namespace mlm::model
