#include "mlm/text/tokenizer_trainers/train_tokenizer_json.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "../hf/byte_level.h"
#include "mlm/text/tokenizer_trainers/word_splitters.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::text::tokenizer_trainers {
namespace {

/// Writes `files` as the directory `dir`: into a directory of this writer's own, then renamed
/// into place, so a crash never leaves half a tokenizer. Existing::keep keeps a directory
/// another run wrote meanwhile.
void install_tokenizer_directory(const std::string& dir, const TokenizerFiles& files,
                                 Tokenizer::Existing existing) {
  namespace fs = std::filesystem;
  const fs::path path(dir);
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  const fs::path tmp = dir + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(std::random_device{}());
  write_tokenizer_files(tmp, files);
  std::error_code error;
  if (fs::exists(path) && existing == Tokenizer::Existing::replace) {
    for (const char* name : {"tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"}) {
      fs::rename(tmp / name, path / name);
    }
  } else {
    fs::rename(tmp, path, error);  // fails when another run's directory landed first
    if (error) log::info("text", "{} was written by another run meanwhile; keeping that one", dir);
  }
  fs::remove_all(tmp, error);
}

}  // namespace

TrainingPlan training_plan(const config::TokenizerConfig& config) {
  using config::SpecialTokenStyle;
  TrainingPlan plan;
  const bool wordpiece = config.type == config::TokenizerType::wordpiece;
  SpecialTokenStyle style = config.special_tokens;
  if (style == SpecialTokenStyle::automatic) style = wordpiece ? SpecialTokenStyle::bert : SpecialTokenStyle::roberta;
  plan.specials = special_tokens_of(style);
  plan.pipeline.kind = wordpiece ? TrainedKind::wordpiece : TrainedKind::byte_level_bpe;
  plan.pipeline.nfc = style == SpecialTokenStyle::modernbert;
  plan.pipeline.lowercase = wordpiece && config.lowercase;
  plan.trainer.vocab_size = config.vocab_size - static_cast<int64_t>(plan.specials.trailing.size());
  plan.trainer.min_frequency = static_cast<uint64_t>(std::max<int64_t>(0, config.min_frequency));
  plan.trainer.special_tokens = plan.specials.leading;
  if (wordpiece) {
    plan.trainer.continuing_subword_prefix = "##";
    if (config.limit_alphabet > 0) plan.trainer.limit_alphabet = static_cast<size_t>(config.limit_alphabet);
  } else {
    for (const auto& c : hf::byte_level_chars()) plan.trainer.initial_alphabet.push_back(c);
  }
  return plan;
}

TokenizerFiles train_tokenizer_files(const WordCounts& words, const TrainingPlan& plan) {
  return tokenizer_files(train_bpe(words, plan.trainer), plan.pipeline, plan.specials);
}

TokenizerFiles train_tokenizer_files(const config::TokenizerConfig& config, const std::vector<CorpusFile>& files,
                                     const ReadOptions& read) {
  const TrainingPlan plan = training_plan(config);
  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const auto start = std::chrono::steady_clock::now();
  CountingStats stats;
  const WordCounts words = count_words(files, read, word_splitter(plan.pipeline), threads, &stats);
  if (words.empty()) throw DataError("tokenizer training: the corpus has no text");
  const auto counted = std::chrono::steady_clock::now();
  log::info("text", "counted {} distinct words in {} lines ({:.1f} MB) in {:.1f}s on {} threads", words.size(),
            stats.lines, static_cast<double>(stats.bytes) / 1e6,
            std::chrono::duration<double>(counted - start).count(), threads);
  TokenizerFiles out = train_tokenizer_files(words, plan);
  log::info("text", "learned the vocabulary in {:.1f}s",
            std::chrono::duration<double>(std::chrono::steady_clock::now() - counted).count());
  return out;
}

void train_tokenizer_json_directory(const config::TokenizerConfig& config, const std::vector<CorpusFile>& files,
                                    const ReadOptions& read, Tokenizer::Existing existing) {
  install_tokenizer_directory(config.model, train_tokenizer_files(config, files, read), existing);
  log::info("text", "tokenizer trained: {}", config.model);
}

}  // namespace mlm::text::tokenizer_trainers
