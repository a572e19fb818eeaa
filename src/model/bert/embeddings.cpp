#include "mlm/model/bert/embeddings.h"
#include "mlm/model/bert/bert_keys.h"

#include "mlm/model/kernels/dropout.h"

namespace mlm::model {

BertEmbeddingsImpl::BertEmbeddingsImpl(const config::ModelConfig& c, int64_t padded_vocab,
                                       int64_t pad_id)
    : dropout_(c.hidden_dropout_prob), padding_offset_(config::is_roberta(c.architecture)), pad_id_(pad_id) {
  namespace nn = torch::nn;
  word_embeddings = register_module(
      "word_embeddings", nn::Embedding(nn::EmbeddingOptions(padded_vocab, c.hidden_size).padding_idx(pad_id)));
  auto positions = nn::EmbeddingOptions(c.max_position_embeddings, c.hidden_size);
  // RoBERTa's padding position reads the pad_id row, which (as in transformers) learns nothing.
  if (padding_offset_) positions.padding_idx(pad_id);
  position_embeddings = register_module("position_embeddings", nn::Embedding(positions));
  token_type_embeddings =
      register_module("token_type_embeddings", nn::Embedding(c.type_vocab_size, c.hidden_size));
  layer_norm = register_module("LayerNorm", LayerNorm(c.hidden_size, c.layer_norm_eps));
}

torch::Tensor BertEmbeddingsImpl::forward(const torch::Tensor& input_ids,
                                          const torch::Tensor& token_type_ids) {
  TORCH_CHECK(input_ids.dim() == 2, "input_ids must be [B,S], got ", input_ids.sizes());
  return embed(word_embeddings(input_ids), token_type_ids, position_ids(input_ids));
}

torch::Tensor BertEmbeddingsImpl::position_ids(const torch::Tensor& input_ids) const {
  if (!padding_offset_) return {};
  // Counted along each row, so a packed row's documents continue one numbering, as BERT's
  // 0..S-1 does (model.attend_across_documents false masks attention, not positions).
  const auto tokens = input_ids.ne(pad_id_).to(torch::kInt64);
  return tokens.cumsum(1) * tokens + pad_id_;
}

void BertEmbeddingsImpl::zero_padding_position() {
  if (!padding_offset_) return;
  torch::NoGradGuard no_grad;
  position_embeddings->weight[pad_id_].zero_();
}

torch::Tensor BertEmbeddingsImpl::embed(const torch::Tensor& words, const torch::Tensor& token_type_ids,
                                        const torch::Tensor& positions) {
  const int64_t seq_len = words.size(1);
  const int64_t rows = position_embeddings->weight.size(0);
  const int64_t first = padding_offset_ ? pad_id_ + 1 : 0;
  TORCH_CHECK(seq_len + first <= rows, "sequence length ", seq_len, " (positions from ", first,
              ") exceeds model.max_position_embeddings ", rows);
  const auto index_options = torch::TensorOptions().dtype(torch::kInt64).device(words.device());
  auto types = token_type_ids.defined() ? token_type_ids
                                        : torch::zeros({words.size(0), seq_len}, index_options);
  // Same summation order as Hugging Face: (word + type) + position.
  auto x = words + token_type_embeddings(types);
  x = x + position_embeddings(positions.defined() ? positions : torch::arange(seq_len, index_options));
  x = layer_norm(x);
  return kernels::dropout(x, dropout_, is_training());
}

}  // namespace mlm::model
