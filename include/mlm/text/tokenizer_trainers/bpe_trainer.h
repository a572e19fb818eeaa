#pragma once
// BPE merges learned from word counts as `tokenizers`' BpeTrainer learns them
// (tokenizers/src/models/bpe/trainer.rs): special tokens first, then the alphabet sorted by
// code point, then one merge at a time of the most frequent pair, ties to the smallest pair of
// ids, with the library's lazily updated queue of (pair, count, words) entries.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mlm/text/tokenizer_trainers/word_counts.h"

namespace mlm::text::tokenizer_trainers {

struct BpeTrainerOptions {
  int64_t vocab_size = 30000;                 // stop when the vocabulary has this many entries
  uint64_t min_frequency = 0;                 // stop at the first pair used fewer times
  std::vector<std::string> special_tokens;    // ids 0.. in this order
  std::vector<std::string> initial_alphabet;  // characters kept whatever their count
  std::optional<size_t> limit_alphabet;       // keep only this many characters (least frequent go)
  std::string continuing_subword_prefix;      // "" for none (WordPiece: "##")
};

struct BpeModel {
  std::vector<std::string> vocab;                            // vocab[id]
  std::vector<std::pair<std::string, std::string>> merges;  // in rank order
};

/// The vocabulary and merges learned from `words`. The characters that are not in the
/// alphabet (limit_alphabet) are left out of the words, as the library does.
BpeModel train_bpe(const WordCounts& words, const BpeTrainerOptions& options);

}  // namespace mlm::text::tokenizer_trainers
