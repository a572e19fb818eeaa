// A Hugging Face tokenizer.json pipeline behind text::Tokenizer (tokenizer.type hf): its ids,
// its special-token roles as the run's special ids, its word heads for whole-word masking.
#include "../tokenizer_model.h"
#include "mlm/text/hf/hf_tokenizer.h"
#include "mlm/util/errors.h"

namespace mlm::text {
namespace {

class HfModel final : public TokenizerModel {
 public:
  explicit HfModel(hf::HfTokenizer tokenizer) : tokenizer_(std::move(tokenizer)) {}

  TokenizerKind kind() const override { return TokenizerKind::hf; }
  void encode(std::string_view text, std::vector<int32_t>& out) const override {
    thread_local std::vector<int32_t> ids;
    tokenizer_.encode(text, ids);
    out.insert(out.end(), ids.begin(), ids.end());
  }
  std::string decode(const std::vector<int32_t>& ids) const override {
    // An id past the pieces (a padded embedding row) decodes to nothing, as in tokenizers.
    std::vector<int32_t> known;
    for (int32_t id : ids) {
      if (id >= 0 && id < tokenizer_.vocab_size()) known.push_back(id);
    }
    return tokenizer_.decode(known, /*skip_special_tokens=*/false);  // [MASK] shows as itself
  }
  std::string id_to_piece(int32_t id) const override {
    if (id < 0 || id >= tokenizer_.vocab_size()) return "";
    return tokenizer_.id_to_piece(id);
  }
  const hf::HfTokenizer* hf() const override { return &tokenizer_; }

 private:
  hf::HfTokenizer tokenizer_;
};

// The role's id, or a DataError saying where transformers would look for it.
int32_t required_role(const std::optional<int32_t>& id, const char* role, const std::string& origin) {
  if (id) return *id;
  throw DataError("tokenizer '" + origin + "' has no " + role + " token (name it as \"" + role +
                  "_token\" in tokenizer_config.json or special_tokens_map.json beside tokenizer.json)");
}

}  // namespace

OpenedModel open_hf(hf::HfTokenizer tokenizer, const std::string& origin) {
  const auto& roles = tokenizer.special_tokens();
  OpenedModel opened;
  VocabInfo& vocab = opened.vocab;
  vocab.ids = SpecialIds{required_role(roles.pad, "pad", origin), required_role(roles.unk, "unk", origin),
                         required_role(roles.cls, "cls", origin), required_role(roles.sep, "sep", origin),
                         required_role(roles.mask, "mask", origin)};
  vocab.size = tokenizer.vocab_size();
  vocab.is_special.assign(static_cast<size_t>(vocab.size), 0);
  for (int32_t id = 0; id < vocab.size; ++id) vocab.is_special[id] = tokenizer.is_special(id);
  for (const auto& role : {roles.cls, roles.sep, roles.mask, roles.pad, roles.unk, roles.bos, roles.eos}) {
    if (role) vocab.is_special[static_cast<size_t>(*role)] = 1;
  }
  vocab.starts_word = tokenizer.word_start_pieces();
  opened.model = std::make_shared<const HfModel>(std::move(tokenizer));
  return opened;
}

}  // namespace mlm::text
