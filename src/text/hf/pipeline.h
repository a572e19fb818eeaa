#pragma once
// The stages of a Hugging Face tokenizers pipeline as this project runs them for ids only
// (no offsets): normalizer → pre-tokenizer → model, after added tokens are split out, then the
// post-processor's template. Internal to the hf room; include/mlm/text/hf/hf_tokenizer.h is
// the public face.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlm::text::hf {

/// Pre-tokens back to back in one buffer (no allocation per piece once it has grown).
struct Pieces {
  struct Piece {
    uint32_t begin, end;  // bytes in `bytes`
    bool at_text_start;   // begins where the whole input text begins (Metaspace "first")
  };
  std::string bytes;
  std::vector<Piece> pieces;

  void clear() {
    bytes.clear();
    pieces.clear();
  }
  void add(std::string_view text, bool at_text_start) {
    if (text.empty()) return;  // the library drops empty splits
    const auto begin = static_cast<uint32_t>(bytes.size());
    bytes.append(text);
    pieces.push_back({begin, static_cast<uint32_t>(bytes.size()), at_text_start});
  }
  std::string_view view(const Piece& p) const {
    return std::string_view(bytes).substr(p.begin, p.end - p.begin);
  }
};

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  /// Rewrites `text` (valid UTF-8) in place.
  virtual void normalize(std::string& text) const = 0;
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  /// Appends the pre-tokens of `text` to `out`; `at_text_start`: `text` begins the input.
  virtual void split(std::string_view text, bool at_text_start, Pieces& out) const = 0;
  /// Whether a model piece begins a pre-token, as far as its own characters tell (a word
  /// marker at its head); nullopt when this pre-tokenizer leaves no mark.
  virtual std::optional<bool> piece_starts_word(std::string_view /*piece*/) const { return std::nullopt; }
};

class Model {
 public:
  virtual ~Model() = default;
  /// Appends the ids of one pre-token to `out`.
  virtual void tokenize(std::string_view word, std::vector<int32_t>& out) const = 0;
  /// pieces()[id] is the piece of id ("" for an id the model lacks).
  virtual const std::vector<std::string>& pieces() const = 0;
  virtual std::optional<int32_t> piece_to_id(std::string_view piece) const = 0;
  /// The unknown piece's id, when the model has one.
  virtual std::optional<int32_t> unk_id() const = 0;
  /// Whether a piece begins a word, for models that mark continuations (a continuing
  /// subword prefix); nullopt for the others.
  virtual std::optional<bool> piece_starts_word(std::string_view /*piece*/) const { return std::nullopt; }
};

/// What a post-processor adds around one or two sequences: every kind this project reads
/// (BertProcessing, RobertaProcessing, TemplateProcessing, ByteLevel's no-op) is a template.
struct Template {
  struct Item {
    int sequence = -1;         // 0 ($A) or 1 ($B); -1 for special ids
    std::vector<int32_t> ids;  // the special token's ids
    int32_t type_id = 0;
  };
  std::vector<Item> single, pair;
};

}  // namespace mlm::text::hf
