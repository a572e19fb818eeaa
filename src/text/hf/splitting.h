#pragma once
// How tokenizers splits a string on a pattern (NormalizedString::split): the pattern yields
// the matches and the gaps between them, in order; a SplitBehavior decides what becomes a
// piece. Patterns: a literal string, an Oniguruma regex (run by ICU, see OnigRegex), or a
// character predicate (every matching character a match of its own).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline.h"
#include "unicode_chars.h"


namespace mlm::text::hf {

enum class SplitBehavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };

struct Span {
  uint32_t begin, end;
  bool is_match;
};

/// Appends to `out` the pieces of `text` that `spans` (matches and gaps covering `text`)
/// make under `behavior`; `invert` swaps matches and gaps first. Empty pieces are dropped.
void split_spans(std::string_view text, bool at_text_start, std::vector<Span>& spans,
                 SplitBehavior behavior, bool invert, Pieces& out);

/// Matches and gaps of a literal (an empty pattern matches nothing).
void literal_spans(std::string_view text, std::string_view literal, std::vector<Span>& out);

/// Matches and gaps of a character predicate.
template <class Predicate>
void char_spans(std::string_view text, Predicate&& is_match, std::vector<Span>& out) {
  out.clear();
  uint32_t last = 0;
  for (size_t i = 0; i < text.size();) {
    const auto begin = static_cast<uint32_t>(i);
    const char32_t c = next_code_point(text, i);
    if (!is_match(c)) continue;
    if (last < begin) out.push_back({last, begin, false});
    out.push_back({begin, static_cast<uint32_t>(i), true});
    last = static_cast<uint32_t>(i);
  }
  if (last < text.size()) out.push_back({last, static_cast<uint32_t>(text.size()), false});
}

/// Whose syntax a pattern is written in: tokenizer.json's patterns are Oniguruma's (the onig
/// crate); the Whitespace pre-tokenizer's is the Rust regex crate's.
enum class RegexDialect { oniguruma, rust_regex };

/// An Oniguruma pattern as tokenizer.json stores it, compiled for ICU's regex engine after
/// rewriting the classes whose meaning differs (\s, \S, \w, \W, \d: Oniguruma's Unicode
/// definitions). Thread-safe: each call uses its own matcher.
class OnigRegex {
 public:
  /// std::invalid_argument with ICU's message when the pattern does not compile.
  explicit OnigRegex(const std::string& pattern, RegexDialect dialect = RegexDialect::oniguruma);
  ~OnigRegex();
  OnigRegex(const OnigRegex&) = delete;
  OnigRegex& operator=(const OnigRegex&) = delete;

  /// Matches and gaps of `text` (valid UTF-8), as Oniguruma's find_iter gives them.
  void spans(std::string_view text, std::vector<Span>& out) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The pattern rewritten for ICU (exposed for tests).
std::string onig_to_icu_pattern(const std::string& pattern, RegexDialect dialect);

SplitBehavior split_behavior_from(const std::string& name, bool* ok);

}  // namespace mlm::text::hf
