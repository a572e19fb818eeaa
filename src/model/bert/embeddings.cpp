#include "mlm/model/bert/embeddings.h"

#include "mlm/model/kernels/dropout.h"

namespace mlm::model {

BertEmbeddingsImpl::BertEmbeddingsImpl(const config::ModelConfig& c, int64_t padded_vocab,
                                       int64_t pad_id)
    : dropout_(c.hidden_dropout_prob) {
  namespace nn = torch::nn;
  word_embeddings = register_module(
      "word_embeddings", nn::Embedding(nn::EmbeddingOptions(padded_vocab, c.hidden_size).padding_idx(pad_id)));
  position_embeddings = register_module(
      "position_embeddings", nn::Embedding(c.max_position_embeddings, c.hidden_size));
  token_type_embeddings =
      register_module("token_type_embeddings", nn::Embedding(c.type_vocab_size, c.hidden_size));
  layer_norm = register_module("LayerNorm", LayerNorm(c.hidden_size, c.layer_norm_eps));
}

torch::Tensor BertEmbeddingsImpl::forward(const torch::Tensor& input_ids,
                                          const torch::Tensor& token_type_ids) {
  TORCH_CHECK(input_ids.dim() == 2, "input_ids must be [B,S], got ", input_ids.sizes());
  return embed(word_embeddings(input_ids), token_type_ids);
}

torch::Tensor BertEmbeddingsImpl::embed(const torch::Tensor& words, const torch::Tensor& token_type_ids) {
  const int64_t seq_len = words.size(1);
  TORCH_CHECK(seq_len <= position_embeddings->weight.size(0), "sequence length ", seq_len,
              " exceeds model.max_position_embeddings ", position_embeddings->weight.size(0));
  const auto index_options = torch::TensorOptions().dtype(torch::kInt64).device(words.device());
  auto types = token_type_ids.defined() ? token_type_ids
                                        : torch::zeros({words.size(0), seq_len}, index_options);
  auto positions = torch::arange(seq_len, index_options);
  // Same summation order as Hugging Face: (word + type) + position.
  auto x = words + token_type_embeddings(types);
  x = x + position_embeddings(positions);
  x = layer_norm(x);
  return kernels::dropout(x, dropout_, is_training());
}

}  // namespace mlm::model
