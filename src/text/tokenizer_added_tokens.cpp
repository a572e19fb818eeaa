// Tokenizer::with_added_tokens: tokenizer.add_tokens on the run's tokenizer facade.
#include "mlm/text/hf/hf_tokenizer.h"
#include "mlm/text/hf/with_added_tokens.h"
#include "mlm/text/tokenizer.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::text {

Tokenizer Tokenizer::with_added_tokens(const std::vector<std::string>& tokens) const {
  const hf::HfTokenizer* pipeline = hf();
  if (!pipeline)
    throw ConfigError("tokenizer.add_tokens: needs tokenizer.type hf (a tokenizer.json pipeline)",
                      "tokenizer.add_tokens");
  auto result = hf::with_added_tokens(*pipeline, tokens);
  if (result.added.empty()) return *this;
  const auto origin = path_.empty() ? std::string("tokenizer.json") : path_;
  Tokenizer grown = from_hf(hf::HfTokenizer::from_files(std::move(result.files), origin), origin);
  grown.path_ = path_;
  for (const auto& token : result.added) {
    grown.vocab_.added_tokens.push_back({token.id, token.pieces});
    log::info("text", "tokenizer.add_tokens: '{}' is token {} (was {} piece(s))", token.content, token.id,
              token.pieces.size());
  }
  return grown;
}

}  // namespace mlm::text
