// Reading a WordPiece vocabulary: a BERT vocab.txt (+ tokenizer_config.json), a Hugging Face
// tokenizer.json, or a directory holding either.
#include <algorithm>
#include <cstdint>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "mlm/text/tokenizer.h"
#include "mlm/text/wordpiece/wordpiece.h"
#include "mlm/util/errors.h"
#include "mlm/util/read_file.h"

namespace fs = std::filesystem;

namespace mlm::text {
namespace {

std::string read_tokenizer_file(const fs::path& path) {
  auto bytes = read_file(path);
  if (!bytes) throw DataError("tokenizer '" + path.string() + "' cannot be read");
  return std::move(*bytes);
}

nlohmann::json parse_json(std::string_view text, const std::string& origin) {
  auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    throw DataError("tokenizer '" + origin + "' is not valid JSON (expected an object)");
  }
  return json;
}

// A token setting is a string or an AddedToken object {"content": ...}.
std::optional<std::string> token_content(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("content") && value["content"].is_string()) {
    return value["content"].get<std::string>();
  }
  return std::nullopt;
}

template <class T>
T field(const nlohmann::json& object, const char* key, T fallback, const std::string& origin) {
  if (!object.contains(key) || object[key].is_null()) return fallback;
  try {
    return object[key].get<T>();
  } catch (const nlohmann::json::exception&) {
    throw DataError("tokenizer '" + origin + "': '" + key + "' has the wrong type (" +
                    object[key].dump() + ")");
  }
}

std::optional<bool> optional_bool(const nlohmann::json& object, const char* key,
                                  const std::string& origin) {
  if (!object.contains(key) || object[key].is_null()) return std::nullopt;
  if (!object[key].is_boolean()) {
    throw DataError("tokenizer '" + origin + "': '" + key + "' must be true, false or null");
  }
  return object[key].get<bool>();
}

BertNormalizerOptions normalizer_of(const nlohmann::json& normalizer, const std::string& origin) {
  if (normalizer.is_null()) return {false, false, false, false};  // no normalization
  const std::string type = field<std::string>(normalizer, "type", "", origin);
  if (type != "BertNormalizer") {
    throw DataError("tokenizer '" + origin + "': normalizer '" + type +
                    "' is not supported (only BertNormalizer)");
  }
  BertNormalizerOptions options;
  options.clean_text = field(normalizer, "clean_text", true, origin);
  options.handle_chinese_chars = field(normalizer, "handle_chinese_chars", true, origin);
  options.strip_accents = optional_bool(normalizer, "strip_accents", origin);
  options.lowercase = field(normalizer, "lowercase", true, origin);
  return options;
}

// A JSON integer as int64, an unsigned one past int64 saturated (so it stays out of range).
int64_t integer_id(const nlohmann::json& id) {
  if (id.is_number_unsigned()) return static_cast<int64_t>(std::min<uint64_t>(id.get<uint64_t>(), INT64_MAX));
  return id.get<int64_t>();
}

// Special tokens a vocab.txt tokenizer registers as added tokens (matched in raw text): the
// five BERT ones plus those tokenizer_config.json names, when the vocabulary has them.
std::vector<AddedToken> added_from_vocab(const std::vector<std::string>& tokens,
                                         const nlohmann::json& config, const std::string& unk) {
  std::vector<std::string> names = {unk, "[SEP]", "[PAD]", "[CLS]", "[MASK]"};
  for (const char* key : {"sep_token", "pad_token", "cls_token", "mask_token"}) {
    if (config.contains(key)) {
      if (auto name = token_content(config[key])) names.push_back(*name);
    }
  }
  if (config.contains("added_tokens_decoder") && config["added_tokens_decoder"].is_object()) {
    for (const auto& [id, token] : config["added_tokens_decoder"].items()) {
      if (auto name = token_content(token)) names.push_back(*name);
    }
  }
  if (config.contains("additional_special_tokens") && config["additional_special_tokens"].is_array()) {
    for (const auto& token : config["additional_special_tokens"]) {
      if (auto name = token_content(token)) names.push_back(*name);
    }
  }
  std::vector<AddedToken> added;
  for (size_t id = 0; id < tokens.size(); ++id) {
    for (const auto& name : names) {
      if (tokens[id] == name) {
        added.push_back({tokens[id], static_cast<int32_t>(id), true});
        break;
      }
    }
  }
  return added;
}

}  // namespace

WordPiece WordPiece::from_vocab_txt(std::string_view text, const std::string& origin,
                                    std::optional<std::string_view> config_json) {
  std::vector<std::string> tokens;
  size_t line = 0;
  while (!text.empty()) {
    ++line;
    const size_t end = text.find('\n');
    std::string_view token = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (!token.empty() && token.back() == '\r') token.remove_suffix(1);
    if (token.empty()) {
      throw DataError("tokenizer '" + origin + "': line " + std::to_string(line) +
                      " is empty (a vocab.txt has one token per line)");
    }
    // A token's id is its line's index, an int32 (no real vocab.txt comes near).
    if (tokens.size() == static_cast<size_t>(INT32_MAX)) {
      throw DataError("tokenizer '" + origin + "': line " + std::to_string(line) +
                      " is past the 2147483647 tokens 32-bit ids can number");
    }
    tokens.emplace_back(token);
  }
  nlohmann::json config = nlohmann::json::object();
  const std::string config_origin = origin + " (tokenizer_config.json)";
  if (config_json) config = parse_json(*config_json, config_origin);
  WordPieceOptions options;
  options.normalizer.lowercase = field(config, "do_lower_case", true, config_origin);
  options.normalizer.strip_accents = optional_bool(config, "strip_accents", config_origin);
  options.normalizer.handle_chinese_chars =
      field(config, "tokenize_chinese_chars", true, config_origin);
  if (config.contains("unk_token")) {
    if (auto unk = token_content(config["unk_token"])) options.unk_token = *unk;
  }
  auto added = added_from_vocab(tokens, config, options.unk_token);
  return WordPiece(std::move(tokens), std::move(options), std::move(added), origin);
}

WordPiece WordPiece::from_tokenizer_json(std::string_view text, const std::string& origin) {
  const auto json = parse_json(text, origin);
  if (!json.contains("model") || !json["model"].is_object()) {
    throw DataError("tokenizer '" + origin + "' has no \"model\" object (not a tokenizer.json)");
  }
  const auto& model = json["model"];
  const std::string type = field<std::string>(model, "type", "", origin);
  if (type != "WordPiece") {
    throw DataError("tokenizer '" + origin + "' holds a " + (type.empty() ? "untyped" : type) +
                    " model, not WordPiece");
  }
  if (!model.contains("vocab") || !model["vocab"].is_object() || model["vocab"].empty()) {
    throw DataError("tokenizer '" + origin + "': model.vocab is missing or empty");
  }
  // Ids must cover 0..n-1 once each; added tokens may extend the model's vocabulary. So no id
  // reaches the count of entries: checked before the tables grow to it.
  static const nlohmann::json kNoEntries = nlohmann::json::array();
  const nlohmann::json& added_entries =
      json.contains("added_tokens") && json["added_tokens"].is_array() ? json["added_tokens"] : kNoEntries;
  const size_t entries = model["vocab"].size() + added_entries.size();
  std::vector<std::string> tokens(model["vocab"].size());
  std::vector<uint8_t> seen(tokens.size(), 0);
  // `where` names the entry: "model.vocab 'the'" or "added_tokens[3] '[MASK]'". An id past
  // the entries leaves a gap: it is not placed, and the gap check below names it.
  std::string past_the_entries;
  const auto place = [&](const std::string& token, int64_t id, const std::string& where) {
    if (id < 0) throw DataError("tokenizer '" + origin + "': " + where + " has a negative id");
    if (static_cast<size_t>(id) >= entries) {
      if (past_the_entries.empty()) past_the_entries = where + " has id " + std::to_string(id);
      return;
    }
    if (static_cast<size_t>(id) >= tokens.size()) {
      tokens.resize(static_cast<size_t>(id) + 1);
      seen.resize(tokens.size(), 0);
    }
    if (seen[id] && tokens[id] != token) {
      throw DataError("tokenizer '" + origin + "': id " + std::to_string(id) + " is both '" +
                      tokens[id] + "' and '" + token + "'");
    }
    tokens[id] = token;
    seen[id] = 1;
  };
  for (const auto& [token, id] : model["vocab"].items()) {
    if (!id.is_number_integer()) {
      throw DataError("tokenizer '" + origin + "': the id of '" + token + "' is not an integer");
    }
    place(token, integer_id(id), "model.vocab '" + token + "'");
  }
  std::vector<AddedToken> added;
  for (size_t k = 0; k < added_entries.size(); ++k) {
    const auto& entry = added_entries[k];
    const auto content = token_content(entry);
    if (!content || !entry.contains("id") || !entry["id"].is_number_integer()) {
      throw DataError("tokenizer '" + origin + "': an added token lacks content or id: " +
                      entry.dump());
    }
    const int64_t id = integer_id(entry["id"]);
    place(*content, id, "added_tokens[" + std::to_string(k) + "] '" + *content + "'");
    added.push_back({*content, static_cast<int32_t>(id), field(entry, "special", true, origin)});
  }
  for (size_t id = 0; id <= seen.size(); ++id) {
    if (id == seen.size() ? !past_the_entries.empty() : !seen[id]) {
      throw DataError("tokenizer '" + origin + "': no token has id " + std::to_string(id) +
                      " (ids must run from 0 without gaps)" +
                      (past_the_entries.empty() ? "" : "; " + past_the_entries));
    }
  }
  WordPieceOptions options;
  options.unk_token = field<std::string>(model, "unk_token", "[UNK]", origin);
  options.continuing_subword_prefix =
      field<std::string>(model, "continuing_subword_prefix", "##", origin);
  options.max_input_chars_per_word = field<int64_t>(model, "max_input_chars_per_word", 100, origin);
  options.normalizer =
      normalizer_of(json.contains("normalizer") ? json["normalizer"] : nlohmann::json(), origin);
  const auto pre = json.contains("pre_tokenizer") ? json["pre_tokenizer"] : nlohmann::json();
  const std::string pre_type = pre.is_object() ? field<std::string>(pre, "type", "", origin) : "";
  if (pre_type != "BertPreTokenizer") {
    throw DataError("tokenizer '" + origin + "': pre_tokenizer '" +
                    (pre.is_null() ? std::string("null") : pre_type) +
                    "' is not supported (only BertPreTokenizer)");
  }
  return WordPiece(std::move(tokens), std::move(options), std::move(added), origin);
}

WordPiece WordPiece::load(const std::string& path) {
  fs::path file = path;
  if (fs::is_directory(file)) {
    if (fs::exists(file / "tokenizer.json")) {
      file /= "tokenizer.json";
    } else if (fs::exists(file / "vocab.txt")) {
      file /= "vocab.txt";
    } else {
      throw DataError("tokenizer directory '" + path + "' holds neither tokenizer.json nor vocab.txt");
    }
  }
  const std::string text = read_tokenizer_file(file);
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    return from_tokenizer_json(text, file.string());
  }
  const fs::path config = file.parent_path() / "tokenizer_config.json";
  if (fs::exists(config)) return from_vocab_txt(text, file.string(), read_tokenizer_file(config));
  return from_vocab_txt(text, file.string());
}

}  // namespace mlm::text
