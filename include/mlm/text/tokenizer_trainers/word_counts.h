#pragma once
// Counting the pre-tokenized words of a corpus, as the `tokenizers` trainers' feed() does, on
// several threads: one thread reads the documents through text::DocumentReader (so every
// corpus format the reader knows), the others split them into words and count them.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "mlm/text/corpus/corpus_files.h"

namespace mlm::text::tokenizer_trainers {

/// Hashes std::string and std::string_view alike, so counting looks a word up without a copy.
struct WordHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using WordCounts = std::unordered_map<std::string, uint64_t, WordHash, std::equal_to<>>;

/// Calls `word` for each word of one line (normalized and pre-tokenized as the trained
/// tokenizer will do it). One per thread: it may keep buffers.
using WordSplitter = std::function<void(std::string_view line, const std::function<void(std::string_view)>& word)>;
using WordSplitterFactory = std::function<WordSplitter()>;

struct CountingStats {
  int64_t documents = 0;
  int64_t lines = 0;
  int64_t bytes = 0;
};

/// The words of every line of every document of `files` (a document is cut at '\n'; a line
/// of only whitespace is skipped), counted on `threads` threads (at least one besides the
/// reader). A reading error (DataError) is rethrown after the threads end.
WordCounts count_words(const std::vector<CorpusFile>& files, const ReadOptions& read,
                       const WordSplitterFactory& make_splitter, int threads, CountingStats* stats = nullptr);

/// The same over lines in memory, on the calling thread.
WordCounts count_words(const std::vector<std::string>& lines, const WordSplitter& splitter);

}  // namespace mlm::text::tokenizer_trainers
