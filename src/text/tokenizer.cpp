#include "mlm/text/tokenizer.h"

#include <filesystem>

#include "mlm/text/wordpiece/wordpiece_files.h"
#include "mlm/util/errors.h"
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

}  // namespace

Tokenizer Tokenizer::load(const std::string& path) {
  if (fs::is_directory(path)) {
    Tokenizer t = from_wordpiece(WordPiece::load(path), path);
    t.path_ = path;
    return t;
  }
  const std::string bytes = read_bytes(path);
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

TokenizerKind Tokenizer::kind() const { return model_->kind(); }

const WordPiece* Tokenizer::wordpiece() const { return model_->wordpiece(); }

void Tokenizer::encode(std::string_view text, std::vector<int32_t>& out) const {
  out.clear();
  model_->encode(text, out);
}

std::vector<int32_t> Tokenizer::encode(std::string_view text) const {
  std::vector<int32_t> ids;
  encode(text, ids);
  return ids;
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const { return model_->decode(ids); }

std::string Tokenizer::id_to_piece(int32_t id) const { return model_->id_to_piece(id); }

}  // namespace mlm::text
