// tokenizers' WordPiece model (tokenizers/src/models/wordpiece/): greedy longest match from
// the left, later pieces looked up with the continuation prefix; a word with no match at
// some point, or longer than max_input_chars_per_word characters, is the unknown piece.
#include "components.h"
#include "unicode_chars.h"
#include "vocabulary.h"

namespace mlm::text::hf {
namespace wordpiece_detail {

class WordPieceModel : public Model {
 public:
  WordPieceModel(const JsonReader& json) : vocab_(Vocabulary::from_object(json)) {
    const auto unk = json.string_or("unk_token", "[UNK]");
    unk_id_ = vocab_.find(unk);
    if (!unk_id_) json.fail("'" + unk + "' is not in the vocabulary", "unk_token");
    prefix_ = json.string_or("continuing_subword_prefix", "##");
    max_chars_ = json.has("max_input_chars_per_word") ? json.integer("max_input_chars_per_word") : 100;
  }

  const std::vector<std::string>& pieces() const override { return vocab_.pieces(); }
  std::optional<int32_t> piece_to_id(std::string_view piece) const override { return vocab_.find(piece); }
  std::optional<int32_t> unk_id() const override { return unk_id_; }
  std::optional<bool> piece_starts_word(std::string_view piece) const override {
    return piece.substr(0, prefix_.size()) != prefix_;
  }

  void tokenize(std::string_view word, std::vector<int32_t>& out) const override {
    int64_t chars = 0;
    for (char c : word) chars += !is_utf8_continuation(c);
    if (chars > max_chars_) {
      out.push_back(*unk_id_);
      return;
    }
    thread_local std::string candidate;
    const size_t before = out.size();
    for (size_t start = 0; start < word.size();) {
      size_t end = std::min(word.size(), start + vocab_.max_piece_bytes());
      std::optional<int32_t> found;
      while (end > start) {
        while (end < word.size() && is_utf8_continuation(word[end])) --end;  // a boundary
        if (end <= start) break;
        std::string_view piece = word.substr(start, end - start);
        if (start > 0) {
          candidate.assign(prefix_);
          candidate.append(piece);
          piece = candidate;
        }
        if ((found = vocab_.find(piece))) break;
        --end;
      }
      if (!found) {
        out.resize(before);
        out.push_back(*unk_id_);
        return;
      }
      out.push_back(*found);
      start = end;
    }
  }

 private:
  Vocabulary vocab_;
  std::optional<int32_t> unk_id_;
  std::string prefix_;
  int64_t max_chars_ = 100;
};

}  // namespace wordpiece_detail

std::unique_ptr<Model> make_wordpiece(const JsonReader& json) {
  return std::make_unique<wordpiece_detail::WordPieceModel>(json);
}

namespace wordpiece_detail {

using Entry = Registered<std::unique_ptr<Model>>;

const std::vector<Entry>& model_table() {
  static const std::vector<Entry> entries = {
      {"BPE", make_bpe}, {"Unigram", make_unigram}, {"WordPiece", make_wordpiece}, {"WordLevel", make_word_level}};
  return entries;
}

}  // namespace wordpiece_detail

std::unique_ptr<Model> make_model(const JsonReader& json) {
  return registered(wordpiece_detail::model_table(), json, "model").make(json);
}

std::vector<std::string> model_types() { return type_names(wordpiece_detail::model_table()); }

}  // namespace mlm::text::hf
