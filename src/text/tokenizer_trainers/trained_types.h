#pragma once
// Which tokenizer.type values are trained, and into what. Shared by the training dispatch
// (train_tokenizer.cpp) and load_or_train_tokenizer.cpp.
#include "mlm/config/enums.h"

namespace mlm::text::tokenizer_trainers {

/// hf tokenizers come with the model they belong to; the other kinds train.
inline bool is_loaded_only(config::TokenizerType type) { return type == config::TokenizerType::hf; }

/// What a loaded-only type loads, for error messages.
inline const char* loaded_only_source(config::TokenizerType) {
  return "a Hugging Face tokenizer.json or a directory holding one";
}

/// byte_level_bpe and wordpiece train a tokenizer.json directory (train_tokenizer_json.h);
/// unigram and bpe a sentencepiece model file (sentencepiece_trainer.h).
inline bool trains_tokenizer_json(config::TokenizerType type) {
  return type == config::TokenizerType::byte_level_bpe || type == config::TokenizerType::wordpiece;
}

}  // namespace mlm::text::tokenizer_trainers
