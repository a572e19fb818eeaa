#pragma once
// The factory of the MaskedLm seam: model.architecture's registered spec builds it
// (architectures.h).
#include "mlm/config/sections/model.h"
#include "mlm/model/masked_lm.h"

namespace mlm::model {

/// Rows of the word embedding and the tied decoder: model.vocab_size, or the tokenizer's pieces
/// when it is 0. More rows than pieces are allowed (a ModernBERT pads its 50,280 to 50,368).
inline int64_t embedding_rows(const config::ModelConfig& config, int64_t tokenizer_pieces) {
  return config.vocab_size > 0 ? config.vocab_size : tokenizer_pieces;
}

/// The model.architecture of `config`, initialised (seed with torch::manual_seed first).
MaskedLm make_masked_lm(const config::ModelConfig& config, int64_t vocab_size, int64_t pad_id);

}  // namespace mlm::model
