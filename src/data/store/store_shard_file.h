#pragma once
// Writing one shard of a prepared store (format: mlm/data/store/prepared_store.h): the token file is
// streamed to a temporary name as documents come, the index kept in memory; finish() writes
// the index, fsyncs both and renames them into place, so a shard file that exists is whole.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace mlm::data::store_detail {

inline constexpr char kShardIndexMagic[8] = {'M', 'L', 'M', 'S', 'I', 'D', 'X', '1'};
inline constexpr int64_t kShardIndexHeaderBytes = 32;

struct ShardStats {
  std::string name;  // "<split>/NNNNNN", relative to the store directory
  int64_t documents = 0, sentences = 0, tokens = 0, tokens_bytes = 0, index_bytes = 0;
  // CRC-32 of the two files (store_checksum.h); empty in a progress file written before
  // checksums were recorded.
  std::string tokens_crc32, index_crc32;

  /// The manifest's shard entry.
  nlohmann::json to_json() const;
  static ShardStats from_json(const nlohmann::json& j, const std::string& where);
};

/// "<split>/NNNNNN" for shard `index` of `split`.
std::string shard_name(const std::string& split, int64_t index);

/// Expected sizes of a shard's two files.
int64_t index_file_bytes(int64_t documents, int64_t sentences);

class ShardFileWriter {
 public:
  /// Starts dir/name.tokens.tmp (creating dir/<split>/). DataError naming the file when it
  /// cannot be created.
  ShardFileWriter(const std::filesystem::path& dir, std::string name, int token_bytes);
  /// Removes the temporary files of a shard that was not finished.
  ~ShardFileWriter();
  ShardFileWriter(const ShardFileWriter&) = delete;
  ShardFileWriter& operator=(const ShardFileWriter&) = delete;

  /// Appends one document: its ids and the token offset (within the document) just past each
  /// sentence, ascending, the last == ids.size(). A write error: DataError naming the file.
  void add_document(const std::vector<int32_t>& ids, const std::vector<int64_t>& sentence_ends);
  int64_t tokens() const { return stats_.tokens; }
  int64_t documents() const { return stats_.documents; }

  /// Writes the index, fsyncs and renames both files into place, then fsyncs the directory.
  ShardStats finish();

 private:
  void flush_tokens();
  void fail(const std::string& path, const std::string& what);

  std::filesystem::path dir_;
  std::filesystem::path tokens_tmp_, index_tmp_, tokens_path_, index_path_;
  int token_bytes_;
  int fd_ = -1;
  bool finished_ = false;
  ShardStats stats_;
  std::vector<unsigned char> buffer_;
  uint32_t tokens_crc_ = 0;  // over the token bytes flushed so far
  std::vector<uint32_t> doc_first_sentence_{0};
  std::vector<uint32_t> sentence_end_;
};

/// fsyncs a directory, so the renames in it survive a crash; a failure is ignored (some
/// file systems cannot sync directories), the files themselves were synced.
void sync_directory(const std::filesystem::path& dir);

}  // namespace mlm::data::store_detail
