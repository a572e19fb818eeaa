#include "mlm/text/tokenizer.h"

#include <nlohmann/json.hpp>

#include <filesystem>

#include "mlm/text/hf/hf_tokenizer.h"
#include "mlm/text/wordpiece/wordpiece_files.h"
#include "mlm/util/errors.h"
#include "mlm/text/regex_budget.h"
#include "mlm/util/read_file.h"
#include "tokenizer_model.h"

namespace fs = std::filesystem;

namespace mlm::text {
namespace {

std::string read_bytes(const std::string& path) {
  auto bytes = read_file(path);
  if (!bytes) throw DataError("tokenizer model '" + path + "' cannot be read");
  return std::move(*bytes);
}

// A tokenizer.json (or a checkpoint's copy of one) is a JSON object; a sentencepiece model
// proto starts with a field tag byte (0x0A), never '{'.
bool looks_like_json(std::string_view bytes) {
  const size_t first = bytes.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && bytes[first] == '{';
}

// A vocab.txt is text: no byte below 0x20 but tab, newline and return. A model proto has
// tag and length bytes below 0x20 (each piece's score is tagged 0x15).
bool looks_like_text(std::string_view bytes) {
  for (const char c : bytes) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 && b != '\t' && b != '\n' && b != '\r') return false;
  }
  return !bytes.empty();
}

// A tokenizer.json whose model is WordPiece: the WordPiece loader's, as before tokenizer.type
// hf (which reads any pipeline, WordPiece's too). Text that is not JSON goes there as well,
// for its error.
bool is_wordpiece_pipeline(std::string_view bytes) {
  const auto json = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("model") || !json["model"].is_object()) return true;
  const auto& model = json["model"];
  return !model.contains("type") || model["type"] == "WordPiece";
}

// A checkpoint's copy of an hf tokenizer: its files' texts in one JSON object, so that an
// export writes them back byte for byte.
constexpr const char* kHfFilesKey = "hf_tokenizer_files";
constexpr std::pair<const char*, std::string hf::HfTokenizerFiles::*> kHfFileNames[] = {
    {"tokenizer.json", &hf::HfTokenizerFiles::tokenizer_json},
    {"tokenizer_config.json", &hf::HfTokenizerFiles::tokenizer_config_json},
    {"special_tokens_map.json", &hf::HfTokenizerFiles::special_tokens_map_json},
};

std::string serialize_hf_files(const hf::HfTokenizerFiles& files) {
  nlohmann::json texts = nlohmann::json::object();
  for (const auto& [name, text] : kHfFileNames) texts[name] = files.*text;
  return nlohmann::json{{kHfFilesKey, texts}}.dump() + "\n";
}

std::optional<hf::HfTokenizerFiles> parse_hf_files(const std::string& bytes, const std::string& origin) {
  const auto json = nlohmann::json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains(kHfFilesKey)) return std::nullopt;
  hf::HfTokenizerFiles files;
  const auto& texts = json[kHfFilesKey];
  for (const auto& [name, text] : kHfFileNames) {
    if (!texts.is_object() || !texts.contains(name) || !texts[name].is_string()) {
      throw DataError("tokenizer '" + origin + "': " + kHfFilesKey + "." + name + " is missing or not a string");
    }
    files.*text = texts[name].get<std::string>();
  }
  return files;
}

}  // namespace

const char* to_string(TokenizerKind kind) {
  switch (kind) {
    case TokenizerKind::sentencepiece: return "sentencepiece";
    case TokenizerKind::wordpiece: return "wordpiece";
    case TokenizerKind::hf: return "hf";
  }
  return "unknown";
}

Tokenizer Tokenizer::load_hf(const std::string& path) {
  auto files = hf::HfTokenizerFiles::read(path);
  const auto origin = fs::is_directory(path) ? (fs::path(path) / "tokenizer.json").string() : path;
  Tokenizer t = from_hf(hf::HfTokenizer::from_files(std::move(files), origin), origin);
  t.path_ = path;
  return t;
}

Tokenizer Tokenizer::load(const std::string& path) {
  if (fs::is_directory(path)) {
    const auto json = fs::path(path) / "tokenizer.json";
    if (fs::exists(json) && !is_wordpiece_pipeline(read_bytes(json.string()))) return load_hf(path);
    Tokenizer t = from_wordpiece(WordPiece::load(path), path);
    t.path_ = path;
    return t;
  }
  const std::string bytes = read_bytes(path);
  if (looks_like_json(bytes) && !is_wordpiece_pipeline(bytes)) return load_hf(path);
  if (!looks_like_json(bytes) && looks_like_text(bytes)) {
    Tokenizer t = from_wordpiece(WordPiece::load(path), path);
    t.path_ = path;
    return t;
  }
  Tokenizer t = from_serialized(bytes, path);
  t.path_ = path;
  return t;
}

Tokenizer Tokenizer::from_serialized(const std::string& model_proto, const std::string& origin) {
  if (looks_like_json(model_proto)) {
    if (auto files = parse_hf_files(model_proto, origin)) {
      return from_hf(hf::HfTokenizer::from_files(std::move(*files), origin), origin);
    }
    return from_wordpiece(WordPiece::from_tokenizer_json(model_proto, origin), origin);
  }
  auto opened = open_sentencepiece(model_proto, origin);
  Tokenizer t;
  t.model_ = std::move(opened.model);
  t.vocab_ = std::move(opened.vocab);
  t.serialized_ = model_proto;
  return t;
}

Tokenizer Tokenizer::from_wordpiece(WordPiece wordpiece, const std::string& origin) {
  auto opened = open_wordpiece(std::move(wordpiece), origin);
  Tokenizer t;
  t.model_ = std::move(opened.model);
  t.vocab_ = std::move(opened.vocab);
  t.serialized_ = wordpiece_tokenizer_json(*t.model_->wordpiece()).dump(2) + "\n";
  return t;
}

Tokenizer Tokenizer::from_hf(hf::HfTokenizer tokenizer, const std::string& origin) {
  const std::string serialized = serialize_hf_files(tokenizer.files());
  auto opened = open_hf(std::move(tokenizer), origin);
  Tokenizer t;
  t.model_ = std::move(opened.model);
  t.vocab_ = std::move(opened.vocab);
  t.serialized_ = serialized;
  return t;
}

TokenizerKind Tokenizer::kind() const { return model_->kind(); }

const WordPiece* Tokenizer::wordpiece() const { return model_->wordpiece(); }

const hf::HfTokenizer* Tokenizer::hf() const { return model_->hf(); }

void Tokenizer::encode(std::string_view text, std::vector<int32_t>& out) const {
  out.clear();
  try {
    model_->encode(text, out);
  } catch (const RegexBudgetError& e) {
    throw e.from_file(path_.empty() ? std::string("the tokenizer") : path_);
  }
}

std::vector<int32_t> Tokenizer::encode(std::string_view text) const {
  std::vector<int32_t> ids;
  encode(text, ids);
  return ids;
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
  try {
    return model_->decode(ids);
  } catch (const RegexBudgetError& e) {  // a Replace decoder's pattern
    throw e.from_file(path_.empty() ? std::string("the tokenizer") : path_);
  }
}

std::string Tokenizer::id_to_piece(int32_t id) const { return model_->id_to_piece(id); }

}  // namespace mlm::text
