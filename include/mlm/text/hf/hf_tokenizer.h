#pragma once
// A Hugging Face `tokenizers` pipeline read from a tokenizer.json, giving the ids the Python
// library gives (tests/text/hf_pipeline_agreement_test.cpp checks several thousand lines per
// kind): added tokens split out of the raw text, normalizer, pre-tokenizer, model (BPE,
// Unigram, WordPiece, WordLevel), post-processor. Offsets, truncation and padding are not computed.
//
// Entry points:
//   HfTokenizer::load(path)                 a tokenizer.json, or a directory holding one
//   HfTokenizer::from_files(files)          the same from the files' texts (a checkpoint's copy)
//   encode(text, ids, starts_word)          ids without the post-processor's specials, and
//                                           which ids begin a pre-tokenizer word
//   encode(text, true) / encode_pair(a, b)  ids as tokenizer.encode(...) gives them
//   decode, vocab_size, id_to_piece, piece_to_id, special_tokens(), is_special(id)
//   word_start_pieces()                     which pieces begin a word (whole-word masking)
//
// Supported components: every component class of tokenizers 0.23.3, listed by
// component_types() (anything else is a DataError naming the file and the JSON key):
//   normalizer     NFC NFD NFKC NFKD Lowercase StripAccents Strip Replace Prepend Precompiled
//                  BertNormalizer Nmt ByteLevel Sequence
//   pre_tokenizer  ByteLevel Metaspace Whitespace WhitespaceSplit BertPreTokenizer Split Digits
//                  Punctuation CharDelimiterSplit UnicodeScripts FixedLength Sequence
//   model          BPE (dropout null or 0) Unigram WordPiece WordLevel
//   post_processor BertProcessing RobertaProcessing TemplateProcessing ByteLevel Sequence
//   decoder        ByteLevel Metaspace WordPiece ByteFallback Fuse Strip Replace BPEDecoder CTC
//                  Sequence (decode only)
// Sequences nest at most 32 deep.
// Regexes (Split, Replace, ByteLevel's GPT-2 pattern) run on ICU with Oniguruma's \s \w \d.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlm::text::hf {

struct Pipeline;  // src/text/hf/hf_tokenizer.cpp

/// The special-token roles, read from tokenizer_config.json / special_tokens_map.json beside
/// tokenizer.json ("cls_token", ...: a string or {"content": ...}); cls and sep otherwise from
/// the post-processor (the first and last special of the single template), unk from the model.
/// A role the files do not give is unset.
struct HfSpecialTokens {
  std::optional<int32_t> cls, sep, mask, pad, unk, bos, eos;
};

/// A tokenizer's files as texts ("" for an absent one): what load() reads, what a checkpoint
/// stores, what an export writes back unchanged.
struct HfTokenizerFiles {
  std::string tokenizer_json;           // tokenizer.json: the pipeline
  std::string tokenizer_config_json;    // tokenizer_config.json: roles, tokenizer class
  std::string special_tokens_map_json;  // special_tokens_map.json: roles
  std::string dir;                      // where they were read from, for errors ("" for none)

  /// `path`: a tokenizer.json, or a directory holding one (the other two optional beside it).
  /// DataError naming the file when tokenizer.json cannot be read.
  static HfTokenizerFiles read(const std::string& path);
};

class HfTokenizer {
 public:
  /// `path`: a tokenizer.json file or a directory holding one. DataError naming the file (and
  /// the JSON key) when it cannot be read, is not JSON, or uses an unsupported component.
  static HfTokenizer load(const std::string& path);
  /// From tokenizer.json text; `config_dir` (optional) holds tokenizer_config.json and
  /// special_tokens_map.json. `origin` names the text in errors.
  static HfTokenizer from_json(std::string_view json, const std::string& origin,
                               const std::string& config_dir = {});
  /// From the files' texts; `origin` names tokenizer.json in errors.
  static HfTokenizer from_files(HfTokenizerFiles files, const std::string& origin);
  /// The component "type" names read, by the library's module: "normalizers",
  /// "pre_tokenizers", "models", "processors", "decoders" (from the readers' own tables).
  static std::map<std::string, std::vector<std::string>> component_types();

  /// Replaces `ids` by the ids of `text` (valid UTF-8) without the post-processor's special
  /// tokens; `starts_word` (when given) by 1 for each id that begins a pre-token or is an
  /// added token, else 0: the words whole-word masking keeps together.
  void encode(std::string_view text, std::vector<int32_t>& ids,
              std::vector<uint8_t>* starts_word = nullptr) const;
  /// tokenizer.encode(text, add_special_tokens=...).ids
  std::vector<int32_t> encode(std::string_view text, bool add_special_tokens) const;
  /// tokenizer.encode(a, b, add_special_tokens=...).ids; `type_ids` gets the token types.
  std::vector<int32_t> encode_pair(std::string_view a, std::string_view b, bool add_special_tokens = true,
                                   std::vector<int32_t>* type_ids = nullptr) const;
  /// tokenizer.decode(ids, skip_special_tokens=...). DataError for an id out of range.
  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = true) const;

  /// The largest id + 1 (the model's pieces and the added tokens).
  int64_t vocab_size() const;
  /// "" for an id no piece has; DataError for an id out of range.
  const std::string& id_to_piece(int32_t id) const;
  /// Added tokens first, then the model's pieces.
  std::optional<int32_t> piece_to_id(std::string_view piece) const;
  const HfSpecialTokens& special_tokens() const;
  /// An added token marked special (never masked nor decoded with skip_special_tokens).
  bool is_special(int32_t id) const;
  /// The tokenizer.json's model type: "BPE", "Unigram", "WordPiece" or "WordLevel".
  const std::string& model_type() const;
  /// The texts it was read from.
  const HfTokenizerFiles& files() const;

  /// [vocab_size]: 1 for a piece that begins a word, as the collator's whole-word masking asks
  /// of each id alone: not a continuation (the model's continuing_subword_prefix, WordPiece's
  /// "##"), else headed by the pre-tokenizer's word marker (ByteLevel's "Ġ", Metaspace's "▁";
  /// a byte-level piece that opens with punctuation is a pre-token of its own too); added
  /// tokens, WordLevel's pieces (each a whole pre-token) and pipelines with no marker
  /// (UnicodeScripts, FixedLength, Whitespace...): every piece. A text's first word without the marker
  /// (ByteLevel without add_prefix_space) joins the word before it.
  std::vector<uint8_t> word_start_pieces() const;

 private:
  explicit HfTokenizer(std::shared_ptr<const Pipeline> pipeline) : pipeline_(std::move(pipeline)) {}
  std::vector<int32_t> apply_template(const std::vector<int32_t>& a, const std::vector<int32_t>* b,
                                      bool add_special_tokens, std::vector<int32_t>* type_ids) const;

  std::shared_ptr<const Pipeline> pipeline_;  // immutable, shared by copies
};

}  // namespace mlm::text::hf
