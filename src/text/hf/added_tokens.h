#pragma once
// tokenizers' AddedVocabulary: tokens cut out of the text before the model sees it, leftmost
// first and longest among those starting at one place (Aho-Corasick, leftmost-longest). The
// unnormalized ones ("normalized": false, usual for special tokens) are found in the raw
// text; the others in each normalized segment, spelled as the normalizer spells them.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline.h"

namespace mlm::text::hf {

struct AddedTokenSpec {
  std::string content;
  int32_t id = 0;
  bool special = false, single_word = false, lstrip = false, rstrip = false, normalized = true;
};

struct Segment {
  uint32_t begin, end;
  int32_t id;  // the added token's id; -1 for text between added tokens
};

class AddedTokenMatcher {
 public:
  AddedTokenMatcher() = default;
  /// `patterns[k]` is how token k is spelled in the text it is matched in.
  AddedTokenMatcher(std::vector<AddedTokenSpec> tokens, std::vector<std::string> patterns);

  bool empty() const { return tokens_.empty(); }
  /// Replaces `out` by the segments of `text` (text between tokens may be empty: skip it).
  void split(std::string_view text, std::vector<Segment>& out) const;

 private:
  /// The longest pattern at text[at], or -1.
  int longest_at(std::string_view text, size_t at) const;

  std::vector<AddedTokenSpec> tokens_;
  std::vector<std::string> patterns_;
  std::vector<int> by_first_byte_[256];  // pattern indices, longest first
};

}  // namespace mlm::text::hf
