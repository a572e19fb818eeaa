#pragma once
// One factory per pipeline stage: each reads its tokenizer.json object ("type" and options)
// and refuses a type or option it does not implement with one DataError naming the key.
#include <memory>
#include <optional>

#include "json_reader.h"
#include "pipeline.h"

namespace mlm::text::hf {

class OnigRegex;

/// Types: NFC NFD NFKC NFKD Lowercase StripAccents Strip Replace Prepend Precompiled
/// BertNormalizer Sequence (normalizers.cpp).
std::unique_ptr<Normalizer> make_normalizer(const JsonReader& json);
/// Types: ByteLevel Metaspace Whitespace WhitespaceSplit BertPreTokenizer Split Digits
/// Punctuation CharDelimiterSplit Sequence (pre_tokenizers.cpp).
std::unique_ptr<PreTokenizer> make_pre_tokenizer(const JsonReader& json);
/// Types: BPE (bpe.cpp), Unigram (unigram.cpp), WordPiece (wordpiece_model.cpp).
std::unique_ptr<Model> make_model(const JsonReader& json);
/// A Split/Replace "pattern" ({"String": s} or {"Regex": r}): sets one of the two.
void read_pattern(const JsonReader& json, std::string& literal, std::unique_ptr<OnigRegex>& regex);
std::unique_ptr<Model> make_bpe(const JsonReader& json);
std::unique_ptr<Model> make_unigram(const JsonReader& json);
std::unique_ptr<Model> make_wordpiece(const JsonReader& json);
/// Types: BertProcessing RobertaProcessing TemplateProcessing ByteLevel Sequence
/// (post_processors.cpp); nothing for one that adds no token. Every special id must be below
/// `vocab_size` (the model's pieces and the added tokens): DataError naming the key otherwise.
std::optional<Template> make_template(const JsonReader& json, size_t vocab_size);

}  // namespace mlm::text::hf
