#include "mlm/model/pretrained/new_token_rows.h"

#include <fmt/format.h>

#include <torch/torch.h>

#include <string_view>

#include "mlm/util/errors.h"

namespace mlm::model {
namespace {

// The tensors indexed by token id in the architectures' Hugging Face names: BERT's and
// RoBERTa's word_embeddings, ModernBERT's tok_embeddings, the decoders ("decoder.weight",
// ELECTRA's "generator_lm_head.weight") and the head biases ("cls.predictions.bias",
// "lm_head.bias", "decoder.bias").
bool indexed_by_token(const std::string& name) {
  for (const char* tail : {"word_embeddings.weight", "tok_embeddings.weight", "decoder.weight", "decoder.bias",
                           "predictions.bias", "lm_head.bias", "lm_head.weight"}) {
    const std::string_view end(tail);
    if (name.size() >= end.size() && name.compare(name.size() - end.size(), end.size(), end) == 0) return true;
  }
  return false;
}

}  // namespace

void add_new_token_rows(TensorDict& state, int64_t rows, const std::vector<NewTokenRow>& added,
                        const std::string& origin) {
  if (added.empty()) return;
  torch::NoGradGuard no_grad;
  for (auto& [name, tensor] : state) {
    if (!indexed_by_token(name) || tensor.dim() < 1) continue;
    const int64_t have = tensor.size(0);
    if (have > rows)
      throw CheckpointError(fmt::format("{}: {} has {} rows, more than the tokenizer's {} with tokenizer.add_tokens",
                                        origin, name, have, rows));
    torch::Tensor grown = tensor;
    if (have < rows) {
      auto shape = tensor.sizes().vec();
      shape[0] = rows - have;
      grown = torch::cat({tensor, torch::zeros(shape, tensor.options())});
    } else {
      grown = tensor.clone();  // the file's tensor may be shared or memory-mapped
    }
    for (const auto& token : added) {
      if (token.pieces.empty()) continue;  // a term that tokenized into nothing keeps its row
      for (int64_t piece : token.pieces) {
        if (piece < 0 || piece >= have)
          throw CheckpointError(fmt::format("{}: {} has {} rows, but token {} was piece {}", origin, name, have,
                                            token.id, piece));
      }
      const auto index = torch::tensor(token.pieces, torch::kLong);
      grown[token.id].copy_(grown.index_select(0, index).to(torch::kFloat).mean(0).to(grown.scalar_type()));
    }
    tensor = grown;
  }
}

}  // namespace mlm::model
