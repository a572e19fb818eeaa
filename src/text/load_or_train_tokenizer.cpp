// load_or_train_tokenizer: the run's tokenizer, loaded from tokenizer.model when it exists
// (and is of tokenizer.type's kind), else trained first (tokenizer_trainers/).
#include <filesystem>
#include <string>

#include "mlm/text/tokenizer.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"
#include "tokenizer_trainers/trained_types.h"

namespace mlm::text {
namespace {

// tokenizer.type says which kind tokenizer.model must be.
TokenizerKind kind_of(config::TokenizerType type) {
  switch (type) {
    case config::TokenizerType::wordpiece: return TokenizerKind::wordpiece;
    case config::TokenizerType::hf:
    case config::TokenizerType::byte_level_bpe: return TokenizerKind::hf;
    default: return TokenizerKind::sentencepiece;
  }
}

const char* kind_described(TokenizerKind kind) {
  switch (kind) {
    case TokenizerKind::sentencepiece: return "sentencepiece model";
    case TokenizerKind::wordpiece: return "WordPiece vocabulary";
    case TokenizerKind::hf: return "tokenizer.json pipeline";
  }
  return "tokenizer";
}

Tokenizer checked_kind(Tokenizer tokenizer, const config::TokenizerConfig& config) {
  const TokenizerKind want = kind_of(config.type);
  if (tokenizer.kind() != want) {
    const bool suggest = tokenizer.kind() == TokenizerKind::wordpiece;
    throw ConfigError("tokenizer.model: '" + config.model + "' is a " + kind_described(tokenizer.kind()) +
                          " but tokenizer.type is " + std::string(config::to_string(config.type)) +
                          (suggest ? " (set tokenizer.type: wordpiece or hf)" : ""),
                      "tokenizer.model");
  }
  return tokenizer;
}

}  // namespace

Tokenizer load_or_train_tokenizer(const config::TokenizerConfig& tokenizer,
                                  const config::DataConfig& data) {
  const auto& path = tokenizer.model;
  if (std::filesystem::exists(path)) {
    auto loaded = checked_kind(kind_of(tokenizer.type) == TokenizerKind::hf ? Tokenizer::load_hf(path) : Tokenizer::load(path),
                               tokenizer);
    return tokenizer.add_tokens.empty() ? loaded : loaded.with_added_tokens(tokenizer.add_tokens);
  }
  if (tokenizer_trainers::is_loaded_only(tokenizer.type)) {
    throw ConfigError("tokenizer.model: '" + path + "' does not exist (tokenizer.type " +
                          std::string(config::to_string(tokenizer.type)) + " loads " +
                          tokenizer_trainers::loaded_only_source(tokenizer.type) + "; it is never trained)",
                      "tokenizer.model");
  }
  if (!tokenizer.train_if_missing) {
    throw ConfigError("tokenizer.model: '" + path +
                          "' does not exist (train one with mlm-tokenizer, or set "
                          "tokenizer.train_if_missing: true)",
                      "tokenizer.model");
  }
  log::info("text", "tokenizer model '{}' is missing: training it first", path);
  Tokenizer::train(tokenizer, tokenizer_training_files(tokenizer, data), ReadOptions::from(data),
                   Tokenizer::Existing::keep);
  return checked_kind(kind_of(tokenizer.type) == TokenizerKind::hf ? Tokenizer::load_hf(path) : Tokenizer::load(path),
                      tokenizer);
}

std::vector<std::string> tokenizer_training_files(const config::TokenizerConfig& tokenizer,
                                                  const config::DataConfig& data) {
  if (!tokenizer.training_files.empty()) return tokenizer.training_files;
  if (!data.train_files.empty()) return data.train_files;
  std::vector<std::string> files;  // a mixture: every source's text files
  for (const auto& source : data.sources) {
    files.insert(files.end(), source.files.begin(), source.files.end());
  }
  return files;
}

}  // namespace mlm::text
