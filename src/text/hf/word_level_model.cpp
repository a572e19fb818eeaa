// tokenizers' WordLevel model (tokenizers/src/models/wordlevel/): each pre-token is one
// piece, its id from the vocabulary or the unknown piece's. Every piece is a whole word.
#include "components.h"
#include "vocabulary.h"

namespace mlm::text::hf {
namespace word_level_detail {

class WordLevelModel : public Model {
 public:
  explicit WordLevelModel(const JsonReader& json) : vocab_(Vocabulary::from_object(json)) {
    // The library fails on the first word it lacks when unk_token is not in the vocabulary;
    // refused here at load rather than in the middle of a run.
    const auto unk = json.string_or("unk_token", "<unk>");
    unk_id_ = vocab_.find(unk);
    if (!unk_id_) json.fail("'" + unk + "' is not in the vocabulary", "unk_token");
  }

  const std::vector<std::string>& pieces() const override { return vocab_.pieces(); }
  std::optional<int32_t> piece_to_id(std::string_view piece) const override { return vocab_.find(piece); }
  std::optional<int32_t> unk_id() const override { return unk_id_; }
  std::optional<bool> piece_starts_word(std::string_view) const override { return true; }
  void tokenize(std::string_view word, std::vector<int32_t>& out) const override {
    out.push_back(vocab_.find(word).value_or(*unk_id_));
  }

 private:
  Vocabulary vocab_;
  std::optional<int32_t> unk_id_;
};

}  // namespace word_level_detail

std::unique_ptr<Model> make_word_level(const JsonReader& json) {
  return std::make_unique<word_level_detail::WordLevelModel>(json);
}

}  // namespace mlm::text::hf
