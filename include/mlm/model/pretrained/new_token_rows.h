#pragma once
// tokenizer.add_tokens on a continued model: the pretrained vocabulary tensors grown to the
// tokenizer's new size, each new token's row the mean of the rows of the pieces it replaced
// (the common recipe after transformers' resize_token_embeddings).
#include <cstdint>
#include <string>
#include <vector>

#include "mlm/model/tensor_dict.h"

namespace mlm::model {

struct NewTokenRow {
  int64_t id = 0;
  std::vector<int64_t> pieces;  // the ids the token tokenized into before it was added
};

/// In `state` (Hugging Face names), every vocabulary tensor (word embeddings, decoder weight and
/// bias, the MLM head's bias) with fewer than `rows` rows gets zero rows appended up to `rows`,
/// then row `id` of each becomes the mean of its `pieces` rows. A model padded past its pieces
/// (rows already enough) only gets the mean rows. CheckpointError naming `origin` when a
/// vocabulary tensor lacks a piece's row or has more than `rows` rows.
void add_new_token_rows(TensorDict& state, int64_t rows, const std::vector<NewTokenRow>& added,
                        const std::string& origin);

}  // namespace mlm::model
