#pragma once
// Which tokens play the roles cls, sep, mask, pad, unk, bos, eos: transformers reads them
// from tokenizer_config.json and special_tokens_map.json, not from tokenizer.json.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "mlm/text/hf/hf_tokenizer.h"
#include "pipeline.h"

namespace mlm::text::hf {

/// The roles `files`' tokenizer_config.json and special_tokens_map.json name ("<role>_token": a
/// string or {"content": ...}; special_tokens_map.json wins), resolved with `to_id`; cls and sep
/// not named there: the first and last special items of `single` (the post-processor's
/// template, may be null); unk not named: `model_unk`. DataError naming the file when a file
/// is not JSON or names a token the vocabulary lacks.
HfSpecialTokens read_special_roles(const HfTokenizerFiles& files,
                                   const std::function<std::optional<int32_t>(std::string_view)>& to_id,
                                   const std::vector<Template::Item>* single, std::optional<int32_t> model_unk);

}  // namespace mlm::text::hf
