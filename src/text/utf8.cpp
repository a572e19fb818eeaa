#include "mlm/text/utf8.h"

#include <cstdint>

#include "mlm/util/utf8_decode.h"

namespace mlm::text {
namespace {

bool is_ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

size_t repair_utf8(std::string& text) {
  const size_t n = text.size();
  size_t i = utf8_valid_prefix(text);  // valid text is left as it is, without a copy
  if (i == n) return 0;

  std::string out;
  out.reserve(n + 16);
  out.append(text, 0, i);
  size_t replaced = 0;
  while (i < n) {
    const size_t len = utf8_sequence_length(text, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++replaced;
      ++i;
      // A broken multi-byte sequence counts once: skip its stray continuation bytes.
      while (i < n && is_utf8_continuation(text[i])) ++i;
    } else {
      out.append(text, i, len);
      i += len;
    }
  }
  text.swap(out);
  return replaced;
}

size_t utf8_boundary_at_or_before(std::string_view text, size_t pos) {
  if (pos >= text.size()) return text.size();
  // At most 3 continuation bytes precede a lead byte in valid text; stop there for invalid.
  size_t p = pos;
  for (int k = 0; k < 3 && p > 0 && is_utf8_continuation(text[p]); ++k) --p;
  return is_utf8_continuation(text[p]) ? pos : p;
}

size_t cut_point(std::string_view text, size_t max_bytes, size_t lookback) {
  if (text.size() <= max_bytes) return text.size();
  const size_t low = max_bytes > lookback ? max_bytes - lookback : 1;
  for (size_t p = max_bytes; p > low; --p) {
    if (is_ascii_space(text[p - 1])) return p - 1 > 0 ? p - 1 : p;
  }
  const size_t b = utf8_boundary_at_or_before(text, max_bytes);
  return b > 0 ? b : max_bytes;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

}  // namespace mlm::text
