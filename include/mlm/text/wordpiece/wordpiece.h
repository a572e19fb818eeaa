#pragma once
// A BERT WordPiece tokenizer that gives the ids Hugging Face's BertTokenizerFast gives:
// added (special) tokens split out of the raw text, then BertNormalizer (clean text, spaces
// around CJK ideographs, accent stripping, lower-casing), BertPreTokenizer (split at
// whitespace, each punctuation character a word of its own), then greedy longest-match-first
// WordPiece with "##" continuations and [UNK] for a word that has no match or is too long.
// Loaded from a vocab.txt (+ tokenizer_config.json), a tokenizer.json or a directory; never
// trained here. No [CLS]/[SEP] are added by encode() (the packer adds them).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mlm::text {

class BertPreTokenizer;  // src/text/bert_pre_tokenizer.h

/// The options of HF's BertNormalizer (tokenizer.json "normalizer", or do_lower_case,
/// strip_accents and tokenize_chinese_chars of tokenizer_config.json).
struct BertNormalizerOptions {
  bool clean_text = true;            // drop U+0000, U+FFFD and control chars; whitespace → ' '
  bool handle_chinese_chars = true;  // spaces around CJK ideographs (each one a word)
  std::optional<bool> strip_accents; // NFD, then drop nonspacing marks; unset: = lowercase
  bool lowercase = true;

  bool strips_accents() const { return strip_accents.value_or(lowercase); }
};

/// A token matched in the raw text before normalization (HF "added_tokens"): the special
/// tokens, and any other the tokenizer lists.
struct AddedToken {
  std::string content;
  int32_t id = 0;
  bool special = true;
};

/// The words BertNormalizer then BertPreTokenizer make of `text`: what WordPiece splits
/// into pieces (for tests and inspection; encode() does not build strings per word).
std::vector<std::string> bert_words(std::string_view text, const BertNormalizerOptions& options);

struct WordPieceOptions {
  BertNormalizerOptions normalizer;
  std::string unk_token = "[UNK]";
  std::string continuing_subword_prefix = "##";
  int64_t max_input_chars_per_word = 100;  // longer words (in characters) become unk_token
};

class WordPiece {
 public:
  /// `tokens[id]` is the piece of id; tokens must be unique and contain options.unk_token.
  /// `added` are matched in raw text (leftmost, then longest). DataError naming `origin`
  /// otherwise.
  WordPiece(std::vector<std::string> tokens, WordPieceOptions options,
            std::vector<AddedToken> added, const std::string& origin);
  // Movable, not copyable: the lookup tables point into tokens_.
  WordPiece(WordPiece&&) = default;
  WordPiece& operator=(WordPiece&&) = default;
  WordPiece(const WordPiece&) = delete;
  WordPiece& operator=(const WordPiece&) = delete;

  /// A vocab.txt file, a tokenizer.json file, or a directory holding either (tokenizer.json
  /// preferred). See wordpiece_loading.cpp for the formats; DataError naming the file.
  static WordPiece load(const std::string& path);
  /// One token per line, id = line number; options from the sibling tokenizer_config.json
  /// when `config_json` is given, else BERT's defaults (lower-case, strip accents).
  static WordPiece from_vocab_txt(std::string_view text, const std::string& origin,
                                  std::optional<std::string_view> config_json = std::nullopt);
  /// A Hugging Face tokenizer.json whose model is WordPiece.
  static WordPiece from_tokenizer_json(std::string_view text, const std::string& origin);

  /// Appends the ids of `text` (valid UTF-8) to `out`.
  void encode(std::string_view text, std::vector<int32_t>& out) const;
  /// Pieces joined by spaces, continuations glued to their head, HF's cleanup of spaces
  /// before punctuation and contractions (the WordPiece decoder). DataError for a bad id.
  std::string decode(const std::vector<int32_t>& ids) const;

  const std::vector<std::string>& tokens() const { return tokens_; }
  const std::vector<AddedToken>& added_tokens() const { return added_; }
  const WordPieceOptions& options() const { return options_; }
  std::optional<int32_t> token_to_id(std::string_view token) const;
  int32_t unk_id() const { return unk_id_; }
  /// The piece continues a word (starts with the continuing-subword prefix).
  bool is_continuation(int32_t id) const;

 private:
  void split_added(std::string_view text, std::vector<int32_t>& out) const;
  void encode_word(std::string_view word, size_t chars, std::vector<int32_t>& out) const;

  std::vector<std::string> tokens_;
  WordPieceOptions options_;
  std::vector<AddedToken> added_;  // longest first
  std::shared_ptr<const BertPreTokenizer> pre_tokenizer_;
  std::unordered_map<std::string_view, int32_t> heads_;          // every token, verbatim
  std::unordered_map<std::string_view, int32_t> continuations_;  // "##x" keyed by "x"
  size_t max_token_bytes_ = 0;  // no match can be longer: bounds the longest-match search
  int32_t unk_id_ = 0;
  bool added_start_[256] = {};  // first bytes of added tokens, for a quick scan
};

}  // namespace mlm::text
