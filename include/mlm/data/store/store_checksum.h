#pragma once
// Checksums of a prepared store's files (shards, indexes, sequence tables), recorded in its
// manifest as 8 hex digits: CRC-32 as zlib computes it (the checksum of gzip and zip), fast
// enough to cover every byte a prepare writes.
#include <cstddef>
#include <cstdint>
#include <string>

namespace mlm::data {

/// Extends `crc` (0 to start) over `size` bytes.
uint32_t crc32_update(uint32_t crc, const void* data, size_t size);
/// "%08x" of a checksum: what the manifest holds.
std::string crc32_hex(uint32_t crc);
/// The CRC-32 of a whole file, read in blocks. DataError naming it when it cannot be read.
uint32_t file_crc32(const std::string& path);

}  // namespace mlm::data
