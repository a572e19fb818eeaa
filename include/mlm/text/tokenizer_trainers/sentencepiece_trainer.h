#pragma once
// Training a sentencepiece model (tokenizer.type unigram or bpe) from the corpus: a seeded,
// bounded sample of its lines goes to sentencepiece's trainer through the library API; the
// special pieces get ids 0-4 ([PAD] [UNK] [CLS] [SEP] [MASK]).
#include <vector>

#include "mlm/config/sections/tokenizer.h"
#include "mlm/text/corpus/corpus_files.h"
#include "mlm/text/tokenizer.h"

namespace mlm::text::tokenizer_trainers {

/// Trains on at most 4 x config.input_sentence_size lines of `corpus` (each file an equal
/// share, files in a seeded order) and writes the model atomically to config.model, as
/// `existing` says. ConfigError for settings sentencepiece rejects, DataError for a corpus
/// without text; a reading error of the corpus is rethrown.
void train_sentencepiece(const config::TokenizerConfig& config, std::vector<CorpusFile> corpus,
                         const ReadOptions& read, Tokenizer::Existing existing);

}  // namespace mlm::text::tokenizer_trainers
