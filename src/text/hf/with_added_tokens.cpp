#include "mlm/text/hf/with_added_tokens.h"

#include <nlohmann/json.hpp>

#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::text::hf {
namespace {

// ordered_json keeps the files' key order, so only the new entries differ from what came in.
using Json = nlohmann::ordered_json;

// The entry transformers' add_tokens(["term"]) writes: an ordinary word of the normalized text.
Json added_token_entry(const NewToken& token, bool with_id) {
  Json entry;
  if (with_id) entry["id"] = token.id;
  entry["content"] = token.content;
  entry["single_word"] = false;
  entry["lstrip"] = false;
  entry["rstrip"] = false;
  entry["normalized"] = true;
  entry["special"] = false;
  return entry;
}

Json parse(const std::string& text, const std::string& name, const std::string& dir) {
  auto json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) throw DataError((dir.empty() ? name : dir + "/" + name) + ": not a JSON object");
  return json;
}

}  // namespace

TokensAdded with_added_tokens(const HfTokenizer& tokenizer, const std::vector<std::string>& tokens) {
  TokensAdded out{tokenizer.files(), {}};
  auto next_id = static_cast<int32_t>(tokenizer.vocab_size());
  for (const auto& content : tokens) {
    if (const auto id = tokenizer.piece_to_id(content)) {
      log::info("text", "tokenizer.add_tokens: '{}' is already token {}: not added", content, *id);
      continue;
    }
    NewToken token{content, next_id++, {}};
    tokenizer.encode(content, token.pieces);
    out.added.push_back(std::move(token));
  }
  if (out.added.empty()) return out;

  const auto& dir = tokenizer.files().dir;
  auto json = parse(out.files.tokenizer_json, "tokenizer.json", dir);
  auto& added_tokens = json["added_tokens"];
  if (added_tokens.is_null()) added_tokens = Json::array();
  for (const auto& token : out.added) added_tokens.push_back(added_token_entry(token, /*with_id=*/true));
  out.files.tokenizer_json = json.dump(2) + "\n";

  // transformers rebuilds the added vocabulary from this map when the file has it.
  if (!out.files.tokenizer_config_json.empty()) {
    auto config = parse(out.files.tokenizer_config_json, "tokenizer_config.json", dir);
    if (config.contains("added_tokens_decoder") && config["added_tokens_decoder"].is_object()) {
      for (const auto& token : out.added)
        config["added_tokens_decoder"][std::to_string(token.id)] = added_token_entry(token, /*with_id=*/false);
      out.files.tokenizer_config_json = config.dump(2) + "\n";
    }
  }
  return out;
}

}  // namespace mlm::text::hf
