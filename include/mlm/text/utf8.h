#pragma once
// UTF-8 helpers for untrusted corpus text: repairing invalid sequences and finding a cut
// point that does not split a character.
#include <cstddef>
#include <string>
#include <string_view>

namespace mlm::text {

/// Replaces every invalid UTF-8 sequence (bad lead byte, truncated or overlong sequence,
/// surrogate, code point > U+10FFFF) by U+FFFD. Returns how many were replaced; the string
/// is untouched (and no copy is made) when it is valid.
size_t repair_utf8(std::string& text);

/// Appends the UTF-8 bytes of code point `c`.
void append_utf8(std::string& out, char32_t c);

/// The largest position <= pos that does not fall inside a multi-byte character.
size_t utf8_boundary_at_or_before(std::string_view text, size_t pos);

/// Where to cut `text` so the first part is at most `max_bytes` long: just before the last
/// whitespace in the final `lookback` bytes (so tokenization of the two parts equals that of
/// the whole: sentencepiece pieces never span whitespace), else at a character boundary.
/// Depends only on text[0, max_bytes], so cutting is the same whatever follows.
size_t cut_point(std::string_view text, size_t max_bytes, size_t lookback = 4096);

}  // namespace mlm::text
