#include "byte_level.h"

#include "unicode_chars.h"

namespace mlm::text::hf {
namespace byte_level_detail {

// bytes_to_unicode() of GPT-2's encoder.py: printable Latin-1 bytes stand for themselves,
// the rest take the code points from U+0100 on, in byte order.
std::array<char32_t, 256> byte_code_points() {
  std::array<char32_t, 256> map{};
  char32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174);
    map[b] = printable ? char32_t(b) : next++;
  }
  return map;
}

}  // namespace byte_level_detail

const std::array<std::string, 256>& byte_level_chars() {
  static const std::array<std::string, 256> chars = [] {
    std::array<std::string, 256> out;
    const auto points = byte_level_detail::byte_code_points();
    for (int b = 0; b < 256; ++b) append_utf8(out[b], points[b]);
    return out;
  }();
  return chars;
}

void append_byte_level(std::string_view text, std::string& out) {
  const auto& chars = byte_level_chars();
  for (char c : text) out += chars[static_cast<uint8_t>(c)];
}

std::optional<uint8_t> byte_of_char(char32_t c) {
  static const std::array<int, 512> inverse = [] {
    std::array<int, 512> out;
    out.fill(-1);
    const auto points = byte_level_detail::byte_code_points();
    for (int b = 0; b < 256; ++b) out[points[b]] = b;
    return out;
  }();
  if (c >= inverse.size() || inverse[c] < 0) return std::nullopt;
  return static_cast<uint8_t>(inverse[c]);
}

}  // namespace mlm::text::hf
