#include "precompiled.h"

#include "unicode_chars.h"

#include <unicode/brkiter.h>
#include <unicode/utext.h>

#include <cstring>
#include <memory>
#include <stdexcept>

namespace mlm::text::hf {
namespace precompiled_detail {

// Darts-clone's unit layout.
inline bool has_leaf(uint32_t unit) { return (unit >> 8) & 1; }
inline uint32_t value(uint32_t unit) { return unit & ((1u << 31) - 1); }
inline uint32_t label(uint32_t unit) { return unit & ((1u << 31) | 0xFF); }
inline uint32_t offset(uint32_t unit) { return (unit >> 10) << ((unit & (1u << 9)) >> 6); }

// A grapheme-cluster iterator per thread: creating one costs far more than using it.
icu::BreakIterator& grapheme_iterator() {
  thread_local std::unique_ptr<icu::BreakIterator> iterator = [] {
    UErrorCode status = U_ZERO_ERROR;
    std::unique_ptr<icu::BreakIterator> it(
        icu::BreakIterator::createCharacterInstance(icu::Locale::getRoot(), status));
    if (U_FAILURE(status)) throw std::runtime_error("ICU has no grapheme-cluster rules");
    return it;
  }();
  return *iterator;
}

}  // namespace precompiled_detail

PrecompiledNormalizer::PrecompiledNormalizer(std::string charsmap) {
  if (charsmap.size() < 4) throw std::invalid_argument("the charsmap is shorter than its header");
  uint32_t trie_bytes;
  std::memcpy(&trie_bytes, charsmap.data(), 4);  // little-endian, as every target here
  if (trie_bytes % 4 != 0 || trie_bytes == 0 || 4 + size_t(trie_bytes) > charsmap.size()) {
    throw std::invalid_argument("the charsmap's trie size does not fit the blob");
  }
  trie_.resize(trie_bytes / 4);
  std::memcpy(trie_.data(), charsmap.data() + 4, trie_bytes);
  normalized_ = charsmap.substr(4 + trie_bytes);
}

std::optional<std::string_view> PrecompiledNormalizer::transform(std::string_view chunk) const {
  using namespace precompiled_detail;
  size_t node = 0;
  uint32_t unit = trie_[0];
  node ^= offset(unit);
  for (char ch : chunk) {
    const auto c = static_cast<uint8_t>(ch);
    if (c == 0) break;
    node ^= c;
    if (node >= trie_.size()) return std::nullopt;
    unit = trie_[node];
    if (label(unit) != c) return std::nullopt;
    node ^= offset(unit);
    if (node >= trie_.size()) return std::nullopt;
    if (has_leaf(unit)) {  // the first (shortest) match decides
      const size_t index = value(trie_[node]);
      if (index >= normalized_.size()) return std::nullopt;
      const size_t end = normalized_.find('\0', index);
      return std::string_view(normalized_).substr(index, (end == std::string::npos ? normalized_.size() : end) - index);
    }
  }
  return std::nullopt;
}

void PrecompiledNormalizer::normalize(std::string& text) const {
  if (text.empty()) return;
  auto& graphemes = precompiled_detail::grapheme_iterator();
  UErrorCode status = U_ZERO_ERROR;
  UText* utext = utext_openUTF8(nullptr, text.data(), static_cast<int64_t>(text.size()), &status);
  graphemes.setText(utext, status);
  std::string out;
  out.reserve(text.size());
  const std::string_view all(text);
  int32_t begin = graphemes.first();
  for (int32_t end = graphemes.next(); end != icu::BreakIterator::DONE; begin = end, end = graphemes.next()) {
    const std::string_view grapheme = all.substr(begin, end - begin);
    if (grapheme.size() < 6) {
      if (auto norm = transform(grapheme)) {
        out += *norm;
        continue;
      }
    }
    for (size_t i = 0; i < grapheme.size();) {
      const size_t n = std::min(utf8_lead_length(static_cast<uint8_t>(grapheme[i])), grapheme.size() - i);
      const std::string_view part = grapheme.substr(i, n);
      if (auto norm = transform(part)) {
        out += *norm;
      } else {
        out += part;
      }
      i += n;
    }
  }
  utext_close(utext);
  text.swap(out);
}

}  // namespace mlm::text::hf
