#include "mlm/util/crc32c.h"

#include <array>

namespace mlm {
namespace {

// Byte-at-a-time table of the reflected polynomial 0x82F63B78.
constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (crc & 1 ? 0x82F63B78u : 0u);
    table[i] = crc;
  }
  return table;
}

constexpr auto kTable = make_table();

}  // namespace

uint32_t crc32c(std::string_view bytes) {
  uint32_t crc = 0xFFFFFFFFu;
  for (const unsigned char byte : bytes) crc = kTable[(crc ^ byte) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

}  // namespace mlm
