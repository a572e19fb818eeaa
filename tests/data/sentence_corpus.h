#pragma once
// A generated corpus for the sentence-packing tests: documents of 2..6 lines separated by
// blank lines, every line unique and ending in ".", with no "." inside a line, so a
// sentence end is visible in the token ids. Kept in memory too, as each line's ids.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "mlm/data/seeded_random.h"
#include "mlm/text/tokenizer.h"

namespace mlm::testing {

struct SentenceCorpus {
  std::string path;
  std::vector<std::vector<std::vector<int32_t>>> docs;  // docs[d][line] = the line's ids
  int32_t dot = -1;                                     // the id every line ends with
  std::map<std::vector<int32_t>, std::pair<size_t, size_t>> where;  // line ids -> (doc, line)
};

/// Writes `num_docs` documents to dir/name; `long_line_doc` (if < num_docs) gets one line
/// of `long_words` words in its middle.
inline SentenceCorpus write_sentence_corpus(const std::filesystem::path& dir, const std::string& name,
                                            const text::Tokenizer& tok, size_t num_docs,
                                            uint64_t seed, size_t long_line_doc = SIZE_MAX,
                                            size_t long_words = 60) {
  static const char* const kWords[] = {
      "the",    "baker",   "repaired", "a",       "box",     "of",      "books",   "near",
      "old",    "station", "river",    "found",   "kitchen", "window",  "after",   "long",
      "day",    "my",      "mother",   "carried", "broken",  "clock",   "lake",    "young",
      "museum", "guide",   "winter",   "market",  "heavy",   "green",   "apples",  "garden",
      "bright", "student", "brother",  "studied", "storm",   "arrived", "everyone", "laughed"};
  constexpr size_t kNumWords = sizeof(kWords) / sizeof(kWords[0]);
  data::SeededRandom rng(seed);
  SentenceCorpus c;
  c.path = (dir / name).string();
  std::ofstream out(c.path);
  std::set<std::string> seen;
  for (size_t d = 0; d < num_docs; ++d) {
    if (d > 0) out << "\n";
    const size_t lines = 2 + rng.below(5);
    c.docs.emplace_back();
    for (size_t l = 0; l < lines; ++l) {
      std::string line;
      const bool long_one = d == long_line_doc && l == 1;
      do {
        line.clear();
        const size_t words = long_one ? long_words : 3 + rng.below(8);
        for (size_t w = 0; w < words; ++w) line += (w ? " " : "") + std::string(kWords[rng.below(kNumWords)]);
        line += ".";
      } while (!seen.insert(line).second);
      out << line << "\n";
      c.docs.back().push_back(tok.encode(line));
      c.where[c.docs.back().back()] = {d, l};
    }
  }
  c.dot = c.docs.front().front().back();
  return c;
}

}  // namespace mlm::testing
