#pragma once
// tokenizer.add_tokens: domain terms made single tokens, as transformers' tokenizer.add_tokens
// does (not special, "normalized": true, ids after the largest id), written into the files'
// texts so that checkpoints and exports carry them and AutoTokenizer reads the same ids.
#include <cstdint>
#include <string>
#include <vector>

#include "mlm/text/hf/hf_tokenizer.h"

namespace mlm::text::hf {

struct NewToken {
  std::string content;
  int32_t id = 0;
  std::vector<int32_t> pieces;  // the ids `content` tokenized into before it was added
};

struct TokensAdded {
  HfTokenizerFiles files;       // tokenizer.json's "added_tokens" extended (and
                                // tokenizer_config.json's "added_tokens_decoder" when it has one)
  std::vector<NewToken> added;  // in the order given, ids ascending
};

/// `tokens` that the tokenizer already knows (a piece or an added token) are skipped with a
/// log line, as transformers' add_tokens counts them out.
TokensAdded with_added_tokens(const HfTokenizer& tokenizer, const std::vector<std::string>& tokens);

}  // namespace mlm::text::hf
