#include "mlm/data/store/store_checksum.h"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "mlm/util/errors.h"

namespace mlm::data {

uint32_t crc32_update(uint32_t crc, const void* data, size_t size) {
  if (size == 0) return crc;  // zlib answers a null buffer (an empty vector's) with 0
  return static_cast<uint32_t>(::crc32_z(crc, static_cast<const Bytef*>(data), size));
}

std::string crc32_hex(uint32_t crc) {
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", crc);
  return hex;
}

uint32_t file_crc32(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(path + ": cannot read: " + std::strerror(errno));
  std::vector<char> block(size_t{1} << 20);
  uint32_t crc = 0;
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    crc = crc32_update(crc, block.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) throw DataError(path + ": read error while checksumming");
  return crc;
}

}  // namespace mlm::data
