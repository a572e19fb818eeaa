#pragma once
// The decompressed bytes of one corpus file (plain, gzip or zstd), from any uncompressed
// offset: what the line formats (text, JSON Lines) and CSV read, whatever wraps them.
#include <cstdint>
#include <memory>

#include "mlm/text/corpus/corpus_files.h"

namespace mlm::text {

class ByteStream {
 public:
  virtual ~ByteStream() = default;
  /// Up to `size` bytes; 0 only at the end. Throws DataError naming the file and the offset
  /// for a damaged or truncated stream.
  virtual size_t read(char* out, size_t size) = 0;
  /// Bytes of the file itself consumed so far (compressed bytes): for progress.
  virtual int64_t input_offset() const = 0;
};

/// Opens `file` positioned at uncompressed byte `offset` (a compressed file is decompressed
/// from its start up to there). Throws DataError when it cannot be opened or the offset lies
/// past its end.
std::unique_ptr<ByteStream> open_byte_stream(const CorpusFile& file, int64_t offset = 0);

}  // namespace mlm::text
