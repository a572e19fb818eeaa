#pragma once
// The model behind a text::Tokenizer: sentencepiece (through the bridge), WordPiece, or a
// Hugging Face tokenizer.json pipeline. Each kind is opened by one function that also
// describes its vocabulary for later stages.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "mlm/text/hf/hf_tokenizer.h"
#include "mlm/text/tokenizer.h"
#include "mlm/text/vocab_info.h"
#include "mlm/text/wordpiece/wordpiece.h"

namespace mlm::text {

class TokenizerModel {
 public:
  virtual ~TokenizerModel() = default;
  virtual TokenizerKind kind() const = 0;
  /// Appends the ids of `text` to `out`.
  virtual void encode(std::string_view text, std::vector<int32_t>& out) const = 0;
  virtual std::string decode(const std::vector<int32_t>& ids) const = 0;
  virtual std::string id_to_piece(int32_t id) const = 0;
  virtual const WordPiece* wordpiece() const { return nullptr; }
  virtual const hf::HfTokenizer* hf() const { return nullptr; }
};

struct OpenedModel {
  std::shared_ptr<const TokenizerModel> model;
  VocabInfo vocab;
};

/// From sentencepiece model proto bytes. DataError naming `origin` when they do not parse or
/// lack a special piece.
OpenedModel open_sentencepiece(const std::string& model_proto, const std::string& origin);
/// DataError naming `origin` when a special token is missing.
OpenedModel open_wordpiece(WordPiece wordpiece, const std::string& origin);
/// DataError naming `origin` when the tokenizer's files give no cls, sep, mask, pad or unk token.
OpenedModel open_hf(hf::HfTokenizer tokenizer, const std::string& origin);

/// "[PAD], [MASK]": the special pieces `has` says are missing; empty when none is.
template <class Has>
std::string missing_special_pieces(Has&& has) {
  std::string missing;
  for (const char* piece : kSpecialPieces) {
    if (has(piece)) continue;
    missing += missing.empty() ? "" : ", ";
    missing += piece;
  }
  return missing;
}

}  // namespace mlm::text
