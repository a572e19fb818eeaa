#include "added_tokens.h"

#include <algorithm>

#include "unicode_chars.h"

namespace mlm::text::hf {
namespace added_tokens_detail {

char32_t last_char(std::string_view text) {
  size_t start = text.size() - 1;
  while (start > 0 && is_utf8_continuation(text[start])) --start;
  return next_code_point(text, start);
}

}  // namespace added_tokens_detail

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedTokenSpec> tokens, std::vector<std::string> patterns)
    : tokens_(std::move(tokens)), patterns_(std::move(patterns)) {
  for (size_t k = 0; k < patterns_.size(); ++k) {
    if (patterns_[k].empty()) continue;  // matches nothing
    by_first_byte_[static_cast<uint8_t>(patterns_[k][0])].push_back(static_cast<int>(k));
  }
  for (auto& list : by_first_byte_) {
    // Longest first; among equal patterns the first listed wins, as in the automaton.
    std::stable_sort(list.begin(), list.end(),
                     [&](int a, int b) { return patterns_[a].size() > patterns_[b].size(); });
  }
}

int AddedTokenMatcher::longest_at(std::string_view text, size_t at) const {
  for (int k : by_first_byte_[static_cast<uint8_t>(text[at])]) {
    if (text.compare(at, patterns_[k].size(), patterns_[k]) == 0) return k;
  }
  return -1;
}

void AddedTokenMatcher::split(std::string_view text, std::vector<Segment>& out) const {
  using added_tokens_detail::last_char;
  out.clear();
  uint32_t done = 0;  // text before this is in `out`
  size_t search = 0;  // where the automaton resumes: after the previous match
  while (search < text.size()) {
    int k = -1;
    size_t at = search;
    for (; at < text.size(); ++at) {
      if (!by_first_byte_[static_cast<uint8_t>(text[at])].empty() && (k = longest_at(text, at)) >= 0) break;
    }
    if (k < 0) break;
    const AddedTokenSpec& token = tokens_[k];
    size_t start = at, stop = at + patterns_[k].size();
    search = stop;
    if (token.single_word) {
      const bool word_before = start > 0 && is_regex_word_char(last_char(text.substr(0, start)));
      size_t i = stop;
      const bool word_after = stop < text.size() && is_regex_word_char(next_code_point(text, i));
      if (word_before || word_after) continue;
    }
    if (token.lstrip) {
      while (start > done) {
        size_t begin = start - 1;
        while (begin > 0 && is_utf8_continuation(text[begin])) --begin;
        size_t i = begin;
        if (!is_rust_whitespace(next_code_point(text, i))) break;
        start = begin;
      }
    }
    if (token.rstrip) {
      for (size_t i = stop; i < text.size();) {
        if (!is_rust_whitespace(next_code_point(text, i))) break;
        stop = i;
      }
    }
    if (done < start) out.push_back({done, static_cast<uint32_t>(start), -1});
    out.push_back({static_cast<uint32_t>(start), static_cast<uint32_t>(stop), token.id});
    done = static_cast<uint32_t>(stop);
  }
  if (done < text.size()) out.push_back({done, static_cast<uint32_t>(text.size()), -1});
}

}  // namespace mlm::text::hf
