#include "mlm/util/errors.h"
#include "../tokenizer_model.h"

namespace mlm::text {
namespace {

class WordPieceModel final : public TokenizerModel {
 public:
  explicit WordPieceModel(WordPiece wordpiece) : wordpiece_(std::move(wordpiece)) {}

  TokenizerKind kind() const override { return TokenizerKind::wordpiece; }
  void encode(std::string_view text, std::vector<int32_t>& out) const override {
    wordpiece_.encode(text, out);
  }
  std::string decode(const std::vector<int32_t>& ids) const override {
    return wordpiece_.decode(ids);
  }
  std::string id_to_piece(int32_t id) const override {
    if (id < 0 || static_cast<size_t>(id) >= wordpiece_.tokens().size()) return "";
    return wordpiece_.tokens()[id];
  }
  const WordPiece* wordpiece() const override { return &wordpiece_; }

 private:
  WordPiece wordpiece_;
};

// [PAD], [unused0], [UNK]...: BERT vocabularies bracket their reserved and special tokens.
bool is_bracketed(const std::string& token) {
  return token.size() > 2 && token.front() == '[' && token.back() == ']' &&
         token.find(' ') == std::string::npos;
}

}  // namespace

OpenedModel open_wordpiece(WordPiece wordpiece, const std::string& origin) {
  const std::string missing = missing_special_pieces(
      [&](const char* piece) { return wordpiece.token_to_id(piece).has_value(); });
  if (!missing.empty()) {
    throw DataError("tokenizer '" + origin + "' lacks the special tokens " + missing +
                    " (a BERT vocabulary has [PAD] [UNK] [CLS] [SEP] [MASK])");
  }
  if (wordpiece.options().unk_token != "[UNK]") {
    throw DataError("tokenizer '" + origin + "': its unknown token is '" +
                    wordpiece.options().unk_token + "', expected [UNK]");
  }
  OpenedModel opened;
  VocabInfo& vocab = opened.vocab;
  vocab.ids = SpecialIds{*wordpiece.token_to_id("[PAD]"), *wordpiece.token_to_id("[UNK]"),
                         *wordpiece.token_to_id("[CLS]"), *wordpiece.token_to_id("[SEP]"),
                         *wordpiece.token_to_id("[MASK]")};
  const auto& tokens = wordpiece.tokens();
  vocab.size = static_cast<int64_t>(tokens.size());
  vocab.is_special.assign(tokens.size(), 0);
  vocab.starts_word.assign(tokens.size(), 0);
  for (size_t id = 0; id < tokens.size(); ++id) {
    vocab.is_special[id] = is_bracketed(tokens[id]);
    vocab.starts_word[id] = !wordpiece.is_continuation(static_cast<int32_t>(id));
  }
  for (const auto& token : wordpiece.added_tokens()) {
    if (token.special) vocab.is_special[token.id] = 1;
  }
  opened.model = std::make_shared<const WordPieceModel>(std::move(wordpiece));
  return opened;
}

}  // namespace mlm::text
