#pragma once
// The tokenizer half of a Hugging Face export: the files `AutoTokenizer.from_pretrained`
// reads (tokenizer.json, tokenizer_config.json, special_tokens_map.json) plus what mlm-train
// reads back: tokenizer.model for sentencepiece, vocab.txt beside tokenizer.json for WordPiece.
// An hf tokenizer's own files are written back unchanged.
#include <cstdint>
#include <string>

#include "mlm/text/tokenizer.h"

namespace mlm::text {

/// Writes the tokenizer files into the existing directory `dir`, each through a temporary
/// renamed into place; `model_max_length` is the model's position count. CheckpointError naming
/// the file when one cannot be written (as for the weights beside them).
void write_hf_tokenizer(const Tokenizer& tokenizer, const std::string& dir, int64_t model_max_length);

}  // namespace mlm::text
