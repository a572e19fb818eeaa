#pragma once
// One factory per pipeline stage: each reads its tokenizer.json object ("type" and options)
// and refuses a type or option it does not implement with one DataError naming the key.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "json_reader.h"
#include "pipeline.h"

namespace mlm::text::hf {

class OnigRegex;

/// One "type" a stage reads and how it builds it. Each stage's factory looks the type up in
/// its table, so the table is both what is read and what HfTokenizer::component_types() lists.
template <class Made, class... Extra>
struct Registered {
  const char* type;
  Made (*make)(const JsonReader& json, Extra... extra);
};

/// How deep Sequences may nest. Each level is a recursion of the reader and a key one element
/// longer ("normalizer.normalizers[0].normalizers[0]..."): a hostile file of a million levels
/// would overflow the stack; published files nest one or two.
constexpr long kMaxSequenceNesting = 32;

/// The entry of json's "type" in `table`, or a DataError naming the key and listing the table
/// (or saying that Sequences nest past kMaxSequenceNesting).
template <class Made, class... Extra>
const Registered<Made, Extra...>& registered(const std::vector<Registered<Made, Extra...>>& table,
                                             const JsonReader& json, const char* stage) {
  if (std::count(json.key().begin(), json.key().end(), '[') > kMaxSequenceNesting) {
    json.fail("Sequences nest more than " + std::to_string(kMaxSequenceNesting) + " levels deep");
  }
  const std::string type = json.has("type") ? json.type() : std::string();
  std::string known;
  for (const auto& entry : table) {
    if (type == entry.type) return entry;
    known += (known.empty() ? "" : ", ") + std::string(entry.type);
  }
  json.fail(std::string(stage) + " type '" + type + "' is not supported (" + known + ")", "type");
}

template <class Made, class... Extra>
std::vector<std::string> type_names(const std::vector<Registered<Made, Extra...>>& table) {
  std::vector<std::string> out;
  for (const auto& entry : table) out.push_back(entry.type);
  return out;
}

/// The tables behind make_normalizer, make_pre_tokenizer, make_model, make_template and
/// make_decoder, by the library's module names (tokenizers.normalizers, ...): the type names
/// they read.
std::vector<std::string> normalizer_types();
std::vector<std::string> pre_tokenizer_types();
std::vector<std::string> model_types();
std::vector<std::string> processor_types();
std::vector<std::string> decoder_types();

/// Types: normalizer_types() (normalizers.cpp; Nmt and ByteLevel in nmt_byte_level_normalizers.cpp).
std::unique_ptr<Normalizer> make_normalizer(const JsonReader& json);
std::unique_ptr<Normalizer> make_nmt(const JsonReader& json);
std::unique_ptr<Normalizer> make_byte_level_normalizer(const JsonReader& json);
/// Types: pre_tokenizer_types() (pre_tokenizers.cpp; UnicodeScripts in unicode_scripts.cpp,
/// FixedLength in fixed_length.cpp).
std::unique_ptr<PreTokenizer> make_pre_tokenizer(const JsonReader& json);
std::unique_ptr<PreTokenizer> make_unicode_scripts(const JsonReader& json);
std::unique_ptr<PreTokenizer> make_fixed_length(const JsonReader& json);
/// Types: BPE (bpe.cpp), Unigram (unigram.cpp), WordPiece (wordpiece_model.cpp), WordLevel
/// (word_level_model.cpp).
std::unique_ptr<Model> make_model(const JsonReader& json);
/// A Split/Replace "pattern" ({"String": s} or {"Regex": r}): sets one of the two.
void read_pattern(const JsonReader& json, std::string& literal, std::unique_ptr<OnigRegex>& regex);
std::unique_ptr<Model> make_bpe(const JsonReader& json);
std::unique_ptr<Model> make_unigram(const JsonReader& json);
std::unique_ptr<Model> make_wordpiece(const JsonReader& json);
std::unique_ptr<Model> make_word_level(const JsonReader& json);
/// Types: processor_types() (post_processors.cpp); nothing for one that adds no token. Every special id must be below
/// `vocab_size` (the model's pieces and the added tokens): DataError naming the key otherwise.
std::optional<Template> make_template(const JsonReader& json, size_t vocab_size);

}  // namespace mlm::text::hf
