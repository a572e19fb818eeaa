#pragma once
// One small tokenizer trained on the fixture corpus, once per test binary, in a temp dir.
#include <unistd.h>

#include <filesystem>
#include <string>

#include "mlm/test_paths.h"
#include "mlm/text/tokenizer.h"

namespace mlm::testing {

inline std::string corpus_path(const std::string& name) {
  return std::string(MLM_FIXTURES_DIR) + "/corpus/" + name;
}

/// train.txt as another format wrote it (tests/fixtures/produce_corpora.py, at build time).
inline std::string produced_corpus_path(const std::string& name) {
  return std::string(MLM_PRODUCED_CORPORA_DIR) + "/" + name;
}

/// A fresh directory under the system temp dir, removed at exit by the caller's choice.
inline std::filesystem::path make_temp_dir(const std::string& tag) {
  auto dir = std::filesystem::temp_directory_path() /
             ("mlm_" + tag + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

inline config::TokenizerConfig small_tokenizer_config(const std::string& model_path) {
  config::TokenizerConfig c;
  c.model = model_path;
  c.vocab_size = 200;
  c.character_coverage = 1.0;
  return c;
}

inline const text::Tokenizer& fixture_tokenizer() {
  static const text::Tokenizer tokenizer = [] {
    const auto dir = make_temp_dir("tok");
    const auto path = (dir / "spm.model").string();
    text::Tokenizer::train(small_tokenizer_config(path), {corpus_path("train.txt")});
    auto t = text::Tokenizer::load(path);
    std::filesystem::remove_all(dir);
    return t;
  }();
  return tokenizer;
}

}  // namespace mlm::testing
