#include "mlm/text/utf8.h"

#include <cstdint>

namespace mlm::text {
namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 when it is invalid.
size_t valid_sequence_length(const unsigned char* s, size_t n, size_t i) {
  const unsigned char c = s[i];
  if (c < 0x80) return 1;
  size_t len;
  uint32_t cp;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + len > n) return 0;
  for (size_t k = 1; k < len; ++k) {
    if ((s[i + k] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i + k] & 0x3F);
  }
  if (len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) return 0;
  if (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) return 0;
  return len;
}

bool is_ascii_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

size_t repair_utf8(std::string& text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  // Fast path: find the first invalid sequence without copying.
  while (i < n) {
    if (s[i] < 0x80) {
      ++i;
      continue;
    }
    const size_t len = valid_sequence_length(s, n, i);
    if (len == 0) break;
    i += len;
  }
  if (i == n) return 0;

  std::string out;
  out.reserve(n + 16);
  out.append(text, 0, i);
  size_t replaced = 0;
  while (i < n) {
    const size_t len = valid_sequence_length(s, n, i);
    if (len == 0) {
      out += "\xEF\xBF\xBD";
      ++replaced;
      ++i;
      // A broken multi-byte sequence counts once: skip its stray continuation bytes.
      while (i < n && (s[i] & 0xC0) == 0x80) ++i;
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
  for (int k = 0; k < 3 && p > 0 && (static_cast<unsigned char>(text[p]) & 0xC0) == 0x80; ++k) --p;
  return (static_cast<unsigned char>(text[p]) & 0xC0) == 0x80 ? pos : p;
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
