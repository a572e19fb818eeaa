#include "store_shard_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include "mlm/data/store/store_checksum.h"
#include "mlm/util/errors.h"

namespace mlm::data::store_detail {
namespace fs = std::filesystem;

namespace {

// Tokens are written in blocks of this size: few system calls, little memory.
constexpr size_t kTokenBufferBytes = size_t{1} << 20;

int open_for_writing(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw DataError(path.string() + ": cannot create: " + std::strerror(errno));
  return fd;
}

// write() until every byte is out; the error (ENOSPC on a full disk) is returned as errno.
bool write_all(int fd, const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

void put_u64(std::vector<unsigned char>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<unsigned char>(v >> (8 * i)));
}

void put_u32s(std::vector<unsigned char>& out, const std::vector<uint32_t>& values) {
  const size_t at = out.size();
  out.resize(at + 4 * values.size());
  // Little-endian on every machine LibTorch supports; memcpy keeps it alias-safe.
  std::memcpy(out.data() + at, values.data(), 4 * values.size());
}

}  // namespace

nlohmann::json ShardStats::to_json() const {
  nlohmann::json j = {{"name", name},         {"documents", documents},       {"sentences", sentences},
                      {"tokens", tokens},     {"tokens_bytes", tokens_bytes}, {"index_bytes", index_bytes}};
  if (!tokens_crc32.empty()) j["tokens_crc32"] = tokens_crc32;
  if (!index_crc32.empty()) j["index_crc32"] = index_crc32;
  return j;
}

ShardStats ShardStats::from_json(const nlohmann::json& j, const std::string& where) {
  ShardStats s;
  try {
    s.name = j.at("name").get<std::string>();
    s.documents = j.at("documents").get<int64_t>();
    s.sentences = j.at("sentences").get<int64_t>();
    s.tokens = j.at("tokens").get<int64_t>();
    s.tokens_bytes = j.at("tokens_bytes").get<int64_t>();
    s.index_bytes = j.at("index_bytes").get<int64_t>();
    s.tokens_crc32 = j.value("tokens_crc32", std::string());
    s.index_crc32 = j.value("index_crc32", std::string());
  } catch (const nlohmann::json::exception& e) {
    throw DataError(where + ": bad shard entry " + j.dump() + ": " + e.what());
  }
  return s;
}

std::string shard_name(const std::string& split, int64_t index) {
  char digits[32];
  std::snprintf(digits, sizeof digits, "%06lld", static_cast<long long>(index));
  return split + "/" + digits;
}

int64_t index_file_bytes(int64_t documents, int64_t sentences) {
  return kShardIndexHeaderBytes + 4 * (documents + 1) + 4 * sentences;
}

void sync_directory(const fs::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  ::fsync(fd);
  ::close(fd);
}

ShardFileWriter::ShardFileWriter(const fs::path& dir, std::string name, int token_bytes)
    : dir_(dir), token_bytes_(token_bytes) {
  stats_.name = std::move(name);
  const fs::path base = dir / stats_.name;
  tokens_path_ = base.string() + ".tokens";
  index_path_ = base.string() + ".index";
  tokens_tmp_ = tokens_path_.string() + ".tmp";
  index_tmp_ = index_path_.string() + ".tmp";
  std::error_code ec;
  fs::create_directories(base.parent_path(), ec);
  if (ec) throw DataError(base.parent_path().string() + ": cannot create directory: " + ec.message());
  fd_ = open_for_writing(tokens_tmp_);
  buffer_.reserve(kTokenBufferBytes);
}

ShardFileWriter::~ShardFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!finished_) {
    std::error_code ignored;
    fs::remove(tokens_tmp_, ignored);
    fs::remove(index_tmp_, ignored);
  }
}

void ShardFileWriter::fail(const std::string& path, const std::string& what) {
  const std::string reason = std::strerror(errno);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  std::error_code ignored;
  fs::remove(tokens_tmp_, ignored);
  fs::remove(index_tmp_, ignored);
  throw DataError(path + ": cannot " + what + ": " + reason +
                  " (the shards written before it are kept; free space and run prepare again "
                  "to resume)");
}

void ShardFileWriter::flush_tokens() {
  if (!buffer_.empty() && !write_all(fd_, buffer_.data(), buffer_.size())) {
    fail(tokens_tmp_.string(), "write");
  }
  tokens_crc_ = crc32_update(tokens_crc_, buffer_.data(), buffer_.size());
  buffer_.clear();
}

void ShardFileWriter::add_document(const std::vector<int32_t>& ids,
                                   const std::vector<int64_t>& sentence_ends) {
  const int64_t base = stats_.tokens;
  // Offsets are uint32: the caller keeps a shard far below 4G tokens (kDefaultShardTokens
  // plus at most one oversized document), so this only guards against misuse.
  if (base + static_cast<int64_t>(ids.size()) > std::numeric_limits<uint32_t>::max()) {
    throw DataError(tokens_path_.string() + ": a shard would exceed 2^32 tokens");
  }
  const int64_t max_id = token_bytes_ == 2 ? 0xFFFF : std::numeric_limits<int32_t>::max();
  for (const int32_t id : ids) {
    if (id < 0 || id > max_id) {
      throw DataError(tokens_path_.string() + ": token id " + std::to_string(id) +
                      " does not fit in " + std::to_string(token_bytes_) + " bytes");
    }
    const auto v = static_cast<uint32_t>(id);
    for (int b = 0; b < token_bytes_; ++b) buffer_.push_back(static_cast<unsigned char>(v >> (8 * b)));
    if (buffer_.size() >= kTokenBufferBytes) flush_tokens();
  }
  for (const int64_t end : sentence_ends) sentence_end_.push_back(static_cast<uint32_t>(base + end));
  stats_.tokens += static_cast<int64_t>(ids.size());
  stats_.sentences += static_cast<int64_t>(sentence_ends.size());
  stats_.documents += 1;
  doc_first_sentence_.push_back(static_cast<uint32_t>(stats_.sentences));
}

ShardStats ShardFileWriter::finish() {
  flush_tokens();
  if (::fsync(fd_) != 0) fail(tokens_tmp_.string(), "sync");
  if (::close(fd_) != 0) {
    fd_ = -1;
    fail(tokens_tmp_.string(), "close");
  }
  fd_ = -1;

  std::vector<unsigned char> index;
  index.reserve(static_cast<size_t>(index_file_bytes(stats_.documents, stats_.sentences)));
  index.insert(index.end(), kShardIndexMagic, kShardIndexMagic + 8);
  put_u64(index, static_cast<uint64_t>(stats_.documents));
  put_u64(index, static_cast<uint64_t>(stats_.sentences));
  put_u64(index, static_cast<uint64_t>(stats_.tokens));
  put_u32s(index, doc_first_sentence_);
  put_u32s(index, sentence_end_);
  fd_ = open_for_writing(index_tmp_);
  if (!write_all(fd_, index.data(), index.size())) fail(index_tmp_.string(), "write");
  if (::fsync(fd_) != 0) fail(index_tmp_.string(), "sync");
  if (::close(fd_) != 0) {
    fd_ = -1;
    fail(index_tmp_.string(), "close");
  }
  fd_ = -1;

  std::error_code ec;
  fs::rename(index_tmp_, index_path_, ec);
  if (!ec) fs::rename(tokens_tmp_, tokens_path_, ec);
  if (ec) {
    errno = ec.value();
    fail(tokens_path_.string(), "rename into place");
  }
  finished_ = true;
  sync_directory(tokens_path_.parent_path());
  stats_.tokens_bytes = stats_.tokens * token_bytes_;
  stats_.index_bytes = static_cast<int64_t>(index.size());
  stats_.tokens_crc32 = crc32_hex(tokens_crc_);
  stats_.index_crc32 = crc32_hex(crc32_update(0, index.data(), index.size()));
  return stats_;
}

}  // namespace mlm::data::store_detail
