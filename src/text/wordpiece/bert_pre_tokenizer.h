#pragma once
// BertNormalizer then BertPreTokenizer in one pass over UTF-8 text: the normalized words,
// back to back in one buffer (no allocation per word or character once the buffers have
// grown). Internal to WordPiece.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mlm/text/wordpiece/wordpiece.h"

namespace mlm::text {

struct BertWords {
  struct Word {
    uint32_t end;    // in bytes; the word begins where the previous one ends
    uint32_t chars;  // code points
  };
  std::string bytes;
  std::vector<Word> words;

  void clear() {
    bytes.clear();
    words.clear();
  }
};

class BertPreTokenizer {
 public:
  explicit BertPreTokenizer(const BertNormalizerOptions& options);

  /// Appends the words of `text` (UTF-8; an invalid byte counts as U+FFFD) to `out`.
  void split(std::string_view text, BertWords& out) const;

 private:
  enum class Ascii : uint8_t { append, skip, boundary, punctuation };
  BertNormalizerOptions options_;
  bool strip_accents_;
  Ascii ascii_[128];
};

}  // namespace mlm::text
