#include "file_signature.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string_view>

#include "mlm/util/errors.h"

namespace mlm::text {
namespace {

constexpr std::string_view kGzip("\x1f\x8b", 2);
constexpr std::string_view kZstd("\x28\xb5\x2f\xfd", 4);
constexpr std::string_view kParquet("PAR1", 4);
constexpr std::string_view kArrowFile("ARROW1", 6);
constexpr std::string_view kArrowStream("\xff\xff\xff\xff", 4);  // an IPC stream's first message

// What the first bytes of a file say it is, for messages; empty when they say nothing.
std::string_view recognised(std::string_view head) {
  if (head.starts_with(kGzip)) return "gzip";
  if (head.starts_with(kZstd)) return "zstd";
  if (head.starts_with(kParquet)) return "Parquet";
  if (head.starts_with(kArrowFile) || head.starts_with(kArrowStream)) return "Arrow IPC";
  return {};
}

std::string read_bytes(std::ifstream& in, std::streamoff from, std::ios::seekdir dir, size_t n) {
  std::string bytes(n, '\0');
  in.clear();
  in.seekg(from, dir);
  in.read(bytes.data(), static_cast<std::streamsize>(n));
  bytes.resize(static_cast<size_t>(std::max<std::streamsize>(0, in.gcount())));
  return bytes;
}

}  // namespace

void check_signature(const CorpusFile& file, const std::string& key) {
  std::ifstream in(file.path, std::ios::binary);
  if (!in) throw DataError(key + ": cannot read '" + file.path + "': " + std::strerror(errno));
  const std::string head = read_bytes(in, 0, std::ios::beg, 8);
  const std::string_view is = recognised(head);
  const auto refuse = [&](const std::string& expected) {
    throw DataError(key + ": '" + file.path + "' is not " + expected + " (its first bytes are " +
                    (is.empty() ? std::string("no known signature") : std::string(is) + "'s") +
                    "); name the file by its format or set data.format");
  };
  if (file.format == FileFormat::parquet || file.format == FileFormat::arrow) {
    if (file.compression != Compression::none) {
      throw DataError(key + ": '" + file.path + "': " + format_name(file.format) +
                      " files compress inside; a .gz or .zst around one is not read");
    }
    if (file.format == FileFormat::parquet) {
      if (is != "Parquet") refuse("a Parquet file");
      if (read_bytes(in, -4, std::ios::end, 4) != kParquet) {
        throw DataError(key + ": '" + file.path + "': the Parquet footer is missing (no PAR1 " +
                        "at the end: the file is truncated or still being written)");
      }
    } else if (is != "Arrow IPC") {
      refuse("an Arrow IPC file or stream");
    }
    return;
  }
  if (head.empty()) return;  // an empty text file holds no documents
  switch (file.compression) {
    case Compression::gzip:
      if (is != "gzip") refuse("gzip");
      return;
    case Compression::zstd:
      if (is != "zstd") refuse("zstd");
      return;
    case Compression::none:
      // zlib reads gzip whatever the name; any other container would be read as text.
      if (!is.empty() && is != "gzip") refuse(std::string(format_name(file.format)));
      return;
  }
}

}  // namespace mlm::text
