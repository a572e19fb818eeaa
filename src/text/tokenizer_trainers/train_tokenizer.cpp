// Tokenizer::train: which trainer a tokenizer.type goes to (sentencepiece for unigram and
// bpe, the tokenizer.json trainers for wordpiece and byte_level_bpe, none for hf), and the
// checks every kind shares: the path's kind and the corpus.
#include <filesystem>
#include <string>

#include "mlm/text/tokenizer.h"
#include "mlm/text/tokenizer_trainers/sentencepiece_trainer.h"
#include "mlm/text/tokenizer_trainers/train_tokenizer_json.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"
#include "trained_types.h"

namespace mlm::text {

using tokenizer_trainers::is_loaded_only;
using tokenizer_trainers::loaded_only_source;
using tokenizer_trainers::train_sentencepiece;
using tokenizer_trainers::train_tokenizer_json_directory;
using tokenizer_trainers::trains_tokenizer_json;

void Tokenizer::train(const config::TokenizerConfig& config, const std::vector<std::string>& files,
                      const ReadOptions& read, Existing existing) {
  if (is_loaded_only(config.type)) {
    throw ConfigError("tokenizer.type: " + std::string(config::to_string(config.type)) +
                          " tokenizers are loaded from " + loaded_only_source(config.type) +
                          ", not trained; mlm-tokenizer trains unigram, bpe, wordpiece and byte_level_bpe",
                      "tokenizer.type");
  }
  // Training replaces tokenizer.model: a directory for the tokenizer.json kinds, a file for
  // sentencepiece. The other kind of thing at that path is not ours to replace.
  const bool writes_directory = trains_tokenizer_json(config.type);
  std::error_code error;
  const auto status = std::filesystem::status(config.model, error);
  if (std::filesystem::exists(status) && std::filesystem::is_directory(status) != writes_directory) {
    throw ConfigError("tokenizer.model: '" + config.model + "' is a " +
                          (writes_directory ? "file" : "directory") + "; tokenizer.type " +
                          std::string(config::to_string(config.type)) + " trains " +
                          (writes_directory ? "a directory of tokenizer.json files"
                                            : "a sentencepiece model file") +
                          " there: name another path",
                      "tokenizer.model");
  }
  auto corpus = resolve_corpus(files, read, config.training_files.empty() ? "data.train_files"
                                                                          : "tokenizer.training_files");
  log::info("text", "training a {} tokenizer of {} pieces from {}", config::to_string(config.type),
            config.vocab_size, files.front() + (files.size() > 1 ? ", ..." : ""));
  if (writes_directory) {
    train_tokenizer_json_directory(config, corpus, read, existing);
  } else {
    train_sentencepiece(config, std::move(corpus), read, existing);
  }
}

}  // namespace mlm::text
