#include "byte_stream.h"

#include <zlib.h>
#include <zstd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "mlm/util/errors.h"

namespace mlm::text {
namespace {

constexpr size_t kStreamChunk = 256 * 1024;

[[noreturn]] void cannot_open(const std::string& path) {
  throw DataError("cannot open '" + path + "': " + std::strerror(errno));
}

// Plain and gzip files alike: zlib reads a file without a gzip header as it is.
class GzipStream final : public ByteStream {
 public:
  explicit GzipStream(const std::string& path) : path_(path) {
    gz_ = gzopen(path.c_str(), "rb");
    if (gz_ == nullptr) cannot_open(path);
    gzbuffer(gz_, kStreamChunk);
  }
  ~GzipStream() override { gzclose(gz_); }

  void seek(int64_t offset) {
    if (gzseek(gz_, offset, SEEK_SET) != offset) {
      throw DataError("'" + path_ + "': cannot seek to byte " + std::to_string(offset) +
                      " (did the file change since the position was saved?)");
    }
  }

  size_t read(char* out, size_t size) override {
    const int n = gzread(gz_, out, static_cast<unsigned>(std::min(size, size_t{1} << 30)));
    if (n < 0) {
      int code = 0;
      throw DataError("'" + path_ + "': read error near byte " + std::to_string(gztell(gz_)) +
                      ": " + gzerror(gz_, &code));
    }
    return static_cast<size_t>(n);
  }

  int64_t input_offset() const override { return static_cast<int64_t>(gzoffset(gz_)); }

 private:
  std::string path_;
  gzFile gz_ = nullptr;
};

// A zstd stream of one or more frames (zstd -T0 and pzstd write several); a line may run
// across a frame boundary.
class ZstdStream final : public ByteStream {
 public:
  explicit ZstdStream(const std::string& path) : path_(path), in_(ZSTD_DStreamInSize()) {
    file_ = std::fopen(path.c_str(), "rb");
    if (file_ == nullptr) cannot_open(path);
    stream_ = ZSTD_createDStream();
    ZSTD_initDStream(stream_);
  }
  ~ZstdStream() override {
    ZSTD_freeDStream(stream_);
    std::fclose(file_);
  }

  void seek(int64_t offset) {
    std::vector<char> discard(kStreamChunk);
    while (out_offset_ < offset) {
      const size_t want = static_cast<size_t>(std::min<int64_t>(offset - out_offset_, kStreamChunk));
      if (read(discard.data(), want) == 0) {
        throw DataError("'" + path_ + "': cannot seek to byte " + std::to_string(offset) +
                        ", the stream ends at " + std::to_string(out_offset_) +
                        " (did the file change since the position was saved?)");
      }
    }
  }

  size_t read(char* out, size_t size) override {
    ZSTD_outBuffer output{out, size, 0};
    while (output.pos == 0 && size > 0) {
      if (input_.pos == input_.size && !eof_) {
        const size_t n = std::fread(in_.data(), 1, in_.size(), file_);
        if (n == 0 && std::ferror(file_)) {
          throw DataError("'" + path_ + "': read error at byte " + std::to_string(consumed_) +
                          ": " + std::strerror(errno));
        }
        eof_ = n == 0;
        input_ = {in_.data(), n, 0};
      }
      // Called with no new input too: the decoder may still hold output of the last frame.
      const size_t before = input_.pos;
      const size_t rc = ZSTD_decompressStream(stream_, &output, &input_);
      consumed_ += static_cast<int64_t>(input_.pos - before);
      if (ZSTD_isError(rc)) {
        throw DataError("'" + path_ + "': damaged zstd data near compressed byte " +
                        std::to_string(consumed_) + ": " + ZSTD_getErrorName(rc));
      }
      const bool progressed = input_.pos > before || output.pos > 0;
      if (progressed) frame_open_ = rc != 0;  // 0: a frame just ended and is fully flushed
      if (!progressed && eof_) {
        if (frame_open_) {
          throw DataError("'" + path_ + "': the zstd stream is cut off inside a frame (at " +
                          "compressed byte " + std::to_string(consumed_) + ")");
        }
        break;
      }
    }
    out_offset_ += static_cast<int64_t>(output.pos);
    return output.pos;
  }

  int64_t input_offset() const override { return consumed_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  ZSTD_DStream* stream_ = nullptr;
  std::vector<char> in_;
  ZSTD_inBuffer input_{nullptr, 0, 0};
  int64_t consumed_ = 0;    // compressed bytes fed to the decoder
  int64_t out_offset_ = 0;  // uncompressed bytes returned
  bool frame_open_ = false;
  bool eof_ = false;
};

}  // namespace

std::unique_ptr<ByteStream> open_byte_stream(const CorpusFile& file, int64_t offset) {
  if (file.compression == Compression::zstd) {
    auto stream = std::make_unique<ZstdStream>(file.path);
    if (offset > 0) stream->seek(offset);
    return stream;
  }
  auto stream = std::make_unique<GzipStream>(file.path);
  if (offset > 0) stream->seek(offset);
  return stream;
}

}  // namespace mlm::text
