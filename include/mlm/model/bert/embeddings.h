#pragma once
// BERT input embeddings: word + learned absolute position + token type, LayerNorm, dropout.
// RoBERTa's (model.architecture roberta, xlm_roberta) differ in the position ids alone: the
// non-padding tokens are numbered from pad_id + 1 and the padding gets pad_id, whose row of
// the position table gets no gradient (fairseq's make_positions, as transformers computes it).
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
  /// matrix of its own); `positions` [B,S] undefined = 0, 1, ..., S-1.
  torch::Tensor embed(const torch::Tensor& words, const torch::Tensor& token_type_ids,
                      const torch::Tensor& positions = {});
  /// RoBERTa's position ids of input_ids [B,S]: pad_id + (the count of non-padding ids up to
  /// and including each one) for a token, pad_id for the padding. Undefined for BERT (0..S-1).
  torch::Tensor position_ids(const torch::Tensor& input_ids) const;

  /// Zeroes RoBERTa's padding row of the position table, as transformers initialises it
  /// (nn.Embedding(padding_idx)); nothing for BERT.
  void zero_padding_position();

  torch::nn::Embedding word_embeddings{nullptr}, position_embeddings{nullptr},
      token_type_embeddings{nullptr};
  LayerNorm layer_norm{nullptr};  // registered as "LayerNorm", the HF name
  double dropout_;
  bool padding_offset_;  // RoBERTa's position numbering
  int64_t pad_id_;
};
TORCH_MODULE(BertEmbeddings);

}  // namespace mlm::model
