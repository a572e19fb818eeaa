#include "mlm/text/wordpiece/wordpiece_files.h"

#include <algorithm>
#include <stdexcept>

namespace mlm::text {
namespace {

using Json = nlohmann::ordered_json;

Json special_token(const std::string& token, int type_id) {
  return {{"SpecialToken", {{"id", token}, {"type_id", type_id}}}};
}

Json sequence(const char* which, int type_id) {
  return {{"Sequence", {{"id", which}, {"type_id", type_id}}}};
}

std::string token_or_throw(const WordPiece& wordpiece, const char* token) {
  if (!wordpiece.token_to_id(token)) {
    throw std::invalid_argument(std::string("WordPiece vocabulary has no ") + token);
  }
  return token;
}

}  // namespace

Json wordpiece_tokenizer_json(const WordPiece& wordpiece) {
  const auto& options = wordpiece.options();
  const auto& normalizer = options.normalizer;
  auto added = wordpiece.added_tokens();
  std::sort(added.begin(), added.end(),
            [](const AddedToken& a, const AddedToken& b) { return a.id < b.id; });
  Json added_tokens = Json::array();
  for (const auto& token : added) {
    added_tokens.push_back({{"id", token.id},
                            {"content", token.content},
                            {"single_word", false},
                            {"lstrip", false},
                            {"rstrip", false},
                            {"normalized", false},
                            {"special", token.special}});
  }
  const std::string cls = token_or_throw(wordpiece, "[CLS]");
  const std::string sep = token_or_throw(wordpiece, "[SEP]");
  const auto ids_of = [&](const std::string& token) {
    return Json{{"id", token}, {"ids", {*wordpiece.token_to_id(token)}}, {"tokens", {token}}};
  };
  Json vocab = Json::object();
  const auto& tokens = wordpiece.tokens();
  for (size_t id = 0; id < tokens.size(); ++id) vocab[tokens[id]] = id;

  Json json;
  json["version"] = "1.0";
  json["truncation"] = nullptr;
  json["padding"] = nullptr;
  json["added_tokens"] = std::move(added_tokens);
  json["normalizer"] = {{"type", "BertNormalizer"},
                        {"clean_text", normalizer.clean_text},
                        {"handle_chinese_chars", normalizer.handle_chinese_chars},
                        {"strip_accents", normalizer.strip_accents ? Json(*normalizer.strip_accents)
                                                                   : Json(nullptr)},
                        {"lowercase", normalizer.lowercase}};
  json["pre_tokenizer"] = {{"type", "BertPreTokenizer"}};
  json["post_processor"] = {
      {"type", "TemplateProcessing"},
      {"single", {special_token(cls, 0), sequence("A", 0), special_token(sep, 0)}},
      {"pair",
       {special_token(cls, 0), sequence("A", 0), special_token(sep, 0), sequence("B", 1),
        special_token(sep, 1)}},
      {"special_tokens", {{cls, ids_of(cls)}, {sep, ids_of(sep)}}}};
  json["decoder"] = {
      {"type", "WordPiece"}, {"prefix", options.continuing_subword_prefix}, {"cleanup", true}};
  json["model"] = {{"type", "WordPiece"},
                   {"unk_token", options.unk_token},
                   {"continuing_subword_prefix", options.continuing_subword_prefix},
                   {"max_input_chars_per_word", options.max_input_chars_per_word},
                   {"vocab", std::move(vocab)}};
  return json;
}

Json wordpiece_tokenizer_json(const Tokenizer& tokenizer) {
  if (!tokenizer.wordpiece()) {
    throw std::invalid_argument("wordpiece_tokenizer_json: the tokenizer is sentencepiece");
  }
  return wordpiece_tokenizer_json(*tokenizer.wordpiece());
}

std::string wordpiece_vocab_txt(const WordPiece& wordpiece) {
  std::string text;
  for (const auto& token : wordpiece.tokens()) {
    text += token;
    text += '\n';
  }
  return text;
}

}  // namespace mlm::text
