#pragma once
// CRC-32C (Castagnoli), the checksum of TFRecord framing (TensorBoard's event files).
#include <cstdint>
#include <string_view>

namespace mlm {

uint32_t crc32c(std::string_view bytes);

/// The "masked" CRC TFRecord stores, so that a CRC of data holding CRCs stays well mixed.
inline uint32_t masked_crc32c(std::string_view bytes) {
  const uint32_t crc = crc32c(bytes);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

}  // namespace mlm
