#include "unicode_chars.h"

#include <unicode/uchar.h>

namespace mlm::text::hf {

bool is_rust_whitespace(char32_t c) {
  if (c < 0x80) return c == ' ' || (c >= 0x09 && c <= 0x0D);
  return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_WHITE_SPACE);
}

bool is_rust_numeric(char32_t c) {
  if (c < 0x80) return c >= '0' && c <= '9';
  const auto mask = U_GET_GC_MASK(static_cast<UChar32>(c));
  return (mask & (U_GC_ND_MASK | U_GC_NL_MASK | U_GC_NO_MASK)) != 0;
}

bool is_rust_alphanumeric(char32_t c) {
  return u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_ALPHABETIC) || is_rust_numeric(c);
}

bool is_mark(char32_t c) {
  return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_M_MASK) != 0;
}

bool is_regex_word_char(char32_t c) {
  const auto u = static_cast<UChar32>(c);
  return u_hasBinaryProperty(u, UCHAR_ALPHABETIC) ||
         (U_GET_GC_MASK(u) & (U_GC_M_MASK | U_GC_ND_MASK | U_GC_PC_MASK)) != 0 ||
         u_hasBinaryProperty(u, UCHAR_JOIN_CONTROL);
}

}  // namespace mlm::text::hf
