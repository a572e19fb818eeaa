#pragma once
// Training a tokenizer.json directory from the corpus: tokenizer.type byte_level_bpe
// (RoBERTa's or ModernBERT's byte-level BPE) and wordpiece (BERT's), as `tokenizers`'
// ByteLevelBPETokenizer and BertWordPieceTokenizer train them.
#include <string>
#include <vector>

#include "mlm/config/sections/tokenizer.h"
#include "mlm/text/corpus/corpus_files.h"
#include "mlm/text/tokenizer.h"
#include "mlm/text/tokenizer_trainers/bpe_trainer.h"
#include "mlm/text/tokenizer_trainers/tokenizer_json_writer.h"

namespace mlm::text::tokenizer_trainers {

/// The trainer and pipeline settings of `config` (type byte_level_bpe or wordpiece).
struct TrainingPlan {
  PipelineOptions pipeline;
  SpecialTokens specials;
  BpeTrainerOptions trainer;
};
TrainingPlan training_plan(const config::TokenizerConfig& config);

/// Trains on word counts already made with word_splitter(plan.pipeline).
TokenizerFiles train_tokenizer_files(const WordCounts& words, const TrainingPlan& plan);

/// Counts the words of `files` on every core, trains, and returns the files. DataError for a
/// corpus without text.
TokenizerFiles train_tokenizer_files(const config::TokenizerConfig& config, const std::vector<CorpusFile>& files,
                                     const ReadOptions& read);

/// Trains as above and writes the files as the directory config.model: into a directory of
/// this writer's own, then renamed into place (`existing` says whether a directory another
/// run wrote meanwhile stays).
void train_tokenizer_json_directory(const config::TokenizerConfig& config, const std::vector<CorpusFile>& files,
                                    const ReadOptions& read, Tokenizer::Existing existing);

}  // namespace mlm::text::tokenizer_trainers
