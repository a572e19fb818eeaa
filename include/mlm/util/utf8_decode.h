#pragma once
// The one UTF-8 decoder. Every reader of UTF-8 uses it and keeps its own policy for an invalid
// sequence: the config loader and the weight-file readers refuse it, the corpus reader replaces
// it by U+FFFD, the tokenizers (whose input is valid by contract) read U+FFFD and step one byte.
// Inline: the tokenizers call it once per character.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace mlm {

/// One decoded character: its code point and its length in bytes. Length 0 when no valid
/// character starts there (bad lead byte, truncated or overlong sequence, surrogate, code
/// point above U+10FFFF); the code point is then 0.
struct Utf8Char {
  char32_t code_point = 0;
  size_t length = 0;
};

/// Decodes the character at text[i] (i < text.size()).
inline Utf8Char decode_utf8(std::string_view text, size_t i) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data()) + i;
  const unsigned char lead = s[0];
  if (lead < 0x80) return {lead, 1};
  size_t length;
  char32_t c;
  if (lead >= 0xC2 && lead <= 0xDF) {  // C0 and C1 only begin overlong forms
    length = 2;
    c = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    c = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {  // F5 and above only begin code points > U+10FFFF
    length = 4;
    c = lead & 0x07;
  } else {
    return {};
  }
  if (length > text.size() - i) return {};
  for (size_t k = 1; k < length; ++k) {
    if ((s[k] & 0xC0) != 0x80) return {};
    c = (c << 6) | (s[k] & 0x3F);
  }
  if (length == 3 && (c < 0x800 || (c >= 0xD800 && c <= 0xDFFF))) return {};
  if (length == 4 && (c < 0x10000 || c > 0x10FFFF)) return {};
  return {c, length};
}

/// The code point at text[i] (i < text.size()), advancing i past it. For text valid by contract
/// (the tokenizers' input): an invalid sequence reads as U+FFFD and advances one byte.
inline char32_t next_code_point(std::string_view text, size_t& i) {
  const Utf8Char c = decode_utf8(text, i);
  if (c.length == 0) {
    ++i;
    return 0xFFFD;
  }
  i += c.length;
  return c.code_point;
}

/// Bytes of the character whose lead byte is `lead`, read from its high bits alone (1 for a
/// stray continuation byte). For stepping through text already known to be valid.
inline size_t utf8_lead_length(uint8_t lead) {
  return lead < 0x80 ? 1 : lead < 0xE0 ? (lead < 0xC0 ? 1 : 2) : lead < 0xF0 ? 3 : 4;
}

/// True for a continuation byte (10xxxxxx), which never begins a character.
inline bool is_utf8_continuation(char byte) { return (static_cast<unsigned char>(byte) & 0xC0) == 0x80; }

/// Length of the valid UTF-8 sequence starting at text[i], or 0 when it is invalid.
inline size_t utf8_sequence_length(std::string_view text, size_t i) { return decode_utf8(text, i).length; }

/// The offset of the first invalid sequence, or text.size() when the whole text is valid.
size_t utf8_valid_prefix(std::string_view text);

}  // namespace mlm
