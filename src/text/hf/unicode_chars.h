#pragma once
// UTF-8 stepping and the character classes the Rust crates behind tokenizers ask about,
// answered from ICU. Internal to the hf room.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "mlm/text/utf8.h"

namespace mlm::text::hf {

/// Bytes of the UTF-8 character that begins with `lead` (1 for a stray continuation byte).
inline size_t utf8_length(uint8_t lead) {
  return lead < 0x80 ? 1 : lead < 0xE0 ? (lead < 0xC0 ? 1 : 2) : lead < 0xF0 ? 3 : 4;
}

/// The code point at text[i] (valid UTF-8); advances i past it.
inline char32_t next_char(std::string_view text, size_t& i) {
  const auto b = static_cast<uint8_t>(text[i]);
  const size_t n = std::min(utf8_length(b), text.size() - i);
  char32_t c = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
  for (size_t k = 1; k < n; ++k) c = (c << 6) | (static_cast<uint8_t>(text[i + k]) & 0x3F);
  i += n;
  return c;
}


/// Rust's char::is_whitespace (Unicode White_Space).
bool is_rust_whitespace(char32_t c);
/// Rust's char::is_numeric: general category Nd, Nl or No.
bool is_rust_numeric(char32_t c);
/// Rust's char::is_alphanumeric: Alphabetic or numeric.
bool is_rust_alphanumeric(char32_t c);
/// General category M (Mn, Mc, Me): what StripAccents drops.
bool is_mark(char32_t c);
/// The regex crate's \w: Alphabetic, M, Nd, Pc, Join_Control (added tokens' single_word).
bool is_regex_word_char(char32_t c);

}  // namespace mlm::text::hf
