#include "mlm/text/training/train_tokenizer_json.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "../hf/byte_level.h"
#include "mlm/text/training/word_splitters.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::text::training {

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

}  // namespace mlm::text::training
