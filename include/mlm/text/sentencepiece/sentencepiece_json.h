#pragma once
// mlm-train's sentencepiece tokenizer as Hugging Face files: tokenizer.json (the `tokenizers`
// library's format), tokenizer_config.json and special_tokens_map.json, so that
// AutoTokenizer.from_pretrained(dir) gives the ids Tokenizer::encode gives, with
// [CLS] A [SEP] (B [SEP]) around them. Pure functions (bytes in, JSON out); the exporter
// writes the files. docs/ARCHITECTURE.md, "Hugging Face tokenizer", lists what cannot agree.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "mlm/text/vocab_info.h"

namespace mlm::text {

/// tokenizer.json for a serialized sentencepiece model (Tokenizer::serialized_model()), written
/// the way transformers' SpmConverter would: Unigram or BPE model, sentencepiece's own
/// normalization table (Precompiled), Metaspace pre-tokenizer and decoder, the special pieces
/// as added tokens, [CLS]/[SEP] templates. DataError naming `origin` when the bytes are not a
/// sentencepiece model, the special pieces are not at `ids`, or the model uses settings
/// mlm-train never writes and tokenizer.json cannot express (WORD/CHAR models, whitespace as
/// suffix, unescaped whitespace).
nlohmann::json sentencepiece_tokenizer_json(const std::string& model_proto, const SpecialIds& ids,
                                            const std::string& origin = "tokenizer model");

/// tokenizer_config.json beside it: a fast tokenizer class that loads tokenizer.json as it is,
/// the special tokens, and the longest input the model takes.
nlohmann::json tokenizer_config_json(int64_t model_max_length);

/// special_tokens_map.json: the five special tokens by their transformers names.
nlohmann::json special_tokens_map_json();

}  // namespace mlm::text
