#pragma once
// A prepared token store: a corpus tokenized once (`mlm-data prepare`, store_writer.h) into
// memory-mapped token files with an index of document and sentence boundaries, so that a
// training rank reads only its own sequences by index and never tokenizes.
//
// Layout of a store directory (all integers little-endian):
//   manifest.json          written last (atomically): the store is complete iff it exists.
//     {"format": "mlm-train prepared store", "version": 1,
//      "tokenizer": {"fingerprint": "<16 hex>", "type": "unigram|bpe|wordpiece",
//                    "vocab_size": N},
//      "token_bytes": 2 | 4,          // uint16 when vocab_size <= 65536, else uint32
//      "sentences": "line",           // how sentences were cut (text/sentence_split.h)
//      "sources": {"train": [{"path", "bytes", "mtime_ns"}...], "valid": [...]},
//      "reading": {"format", "doc_separator", "text_field", "on_bad_record",
//                  "valid_fraction"},   // the data.* keys that decide the documents
//                                       // (valid_fraction 0 unless it held documents out)
//      "splits": {"train": {"documents", "sentences", "tokens", "shards": [
//                    {"name": "train/000000", "documents", "sentences", "tokens",
//                     "tokens_bytes", "index_bytes", "tokens_crc32", "index_crc32"}...]},
//                 "valid": {...}},    // valid only when the config has validation data
//      "tables": {"train/sequences-....table": {"bytes", "crc32"}, ...}}
//                                     // the sequence tables prepare wrote (sequence_table.h)
//     Checksums are CRC-32 as 8 hex digits (store_checksum.h). A manifest written before they
//     were recorded has none: its store loads, with sizes and structure checked only.
//   <split>/NNNNNN.tokens  the shard's token ids, documents back to back, no specials.
//   <split>/NNNNNN.index   header: magic "MLMSIDX1" (8 bytes), uint64 documents,
//                          uint64 sentences, uint64 tokens; then uint32
//                          doc_first_sentence[documents + 1] (the sentences of document d are
//                          [doc_first_sentence[d], doc_first_sentence[d+1]), the last entry
//                          == sentences); then uint32 sentence_end[sentences] (token offset in
//                          the shard just past each sentence, ascending, the last == tokens).
//                          A document has at least one sentence; empty sentences are left out.
//   prepare.progress.json  while preparing: the shards already written, so a killed
//                          `prepare` resumes; removed when the manifest is written.
// A shard holds whole documents (at most ~64M tokens, so uint32 offsets suffice). Shards are
// written to a temporary name and renamed into place, so a shard file that exists is whole.
// The tokenizer fingerprint is tokenizer_fingerprint() of the tokenizer that wrote it; a
// store is refused by a run (or a resumed prepare) with another tokenizer.
//
// What a run checks, without reading every token (`mlm-data verify`, store_verify.h, reads
// them all): sizes and counts against the manifest on opening; every index entry read is
// in range; an index read whole to build a table has its checksum and order checked; every
// token read is below the vocabulary size. Damage is a DataError naming the file (and the
// byte offset where there is one).
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "mlm/data/sequence_source.h"
#include "mlm/text/tokenizer.h"

namespace mlm::data {

/// Stable 64-bit fingerprint of a tokenizer: its kind and serialized model, as 16 hex digits.
std::string tokenizer_fingerprint(const text::Tokenizer& tokenizer);

/// One shard of one split, memory-mapped (read only).
class StoreShard {
 public:
  int64_t documents() const { return documents_; }
  int64_t sentences() const { return sentences_; }
  int64_t tokens() const { return tokens_; }
  /// Sentences of document d: [doc_first_sentence(d), doc_first_sentence(d + 1)).
  int64_t doc_first_sentence(int64_t d) const;
  /// Token offset in the shard just past sentence s.
  int64_t sentence_end(int64_t s) const;
  /// Token offset where document d starts / ends.
  int64_t doc_begin(int64_t d) const;
  int64_t doc_end(int64_t d) const { return doc_begin(d + 1); }
  /// Appends tokens [begin, end) of the shard to `out`, and counts the bytes read. DataError
  /// naming the file and byte offset for an id not below the manifest's vocabulary size.
  void read_tokens(int64_t begin, int64_t end, std::vector<int32_t>& out) const;
  const std::string& path() const { return tokens_path_; }
  const std::string& index_path() const { return index_path_; }

  /// The whole index: its checksum when the manifest records one, then its order (document
  /// starts non-decreasing, sentence ends ascending). DataError naming the index file and
  /// the byte offset of the first bad entry.
  void check_index() const;
  /// Every token: the checksum when the manifest records one, then each id below the
  /// vocabulary size. DataError naming the token file (and the byte offset of a bad id).
  void check_tokens() const;

 private:
  friend class PreparedStore;
  struct Mapping;
  /// Maps the shard's files and checks their sizes, the index header and the tables' ends
  /// against the counts (set before); DataError naming the file otherwise.
  void map_files(const std::string& tokens_path, const std::string& index_path);
  [[noreturn]] void bad_token(int64_t position, int64_t id) const;
  std::shared_ptr<Mapping> tokens_map_, index_map_;
  std::string tokens_path_, index_path_;
  std::string tokens_crc32_, index_crc32_;  // from the manifest; empty when not recorded
  int64_t documents_ = 0, sentences_ = 0, tokens_ = 0;
  int64_t vocab_size_ = 0;  // 0: not recorded, ids unchecked
  int token_bytes_ = 2;
  const uint32_t* doc_first_sentence_ = nullptr;
  const uint32_t* sentence_end_ = nullptr;
  std::atomic<int64_t>* bytes_read_ = nullptr;
};

class PreparedStore {
 public:
  /// Opens a complete store's split and maps its shards. DataError naming the file for a
  /// missing manifest (with "run mlm-data prepare"), a manifest of another format or version,
  /// a missing split, a missing, truncated or inconsistent shard (sizes and counts are
  /// checked against the manifest and the index header, never by reading every token).
  PreparedStore(const std::string& dir, Split split);
  PreparedStore(const PreparedStore&) = delete;
  PreparedStore& operator=(const PreparedStore&) = delete;

  /// ConfigError ("tokenizer.model") when the store was written by another tokenizer.
  void require_tokenizer(const text::Tokenizer& tokenizer) const;

  const nlohmann::json& manifest() const { return manifest_; }
  const std::string& dir() const { return dir_; }
  size_t shard_count() const { return shards_.size(); }
  const StoreShard& shard(size_t i) const { return shards_[i]; }
  int64_t documents() const { return documents_; }
  int64_t sentences() const { return sentences_; }
  int64_t tokens() const { return tokens_; }
  /// Bytes of tokens and index entries copied out of the mappings so far (read_tokens and the
  /// index accessors), for the bytes-per-rank measurement.
  int64_t bytes_read() const { return bytes_read_->load(); }
  /// Adds bytes read from the store's other files (its sequence tables).
  void count_bytes_read(int64_t bytes) const { bytes_read_->fetch_add(bytes); }
  /// The checksum the manifest records for `path`, a file of the store's (its "tables");
  /// "" when none is recorded.
  std::string recorded_crc32(const std::string& path) const;

 private:
  std::string dir_;
  nlohmann::json manifest_;
  std::vector<StoreShard> shards_;
  int64_t documents_ = 0, sentences_ = 0, tokens_ = 0;
  std::unique_ptr<std::atomic<int64_t>> bytes_read_;
};

/// Which store and split a position or a sequence table belongs to, as 16 hex digits: a
/// hash of the manifest's split entry (shard names and counts, checksums left out) and
/// tokenizer, without reading any token.
std::string split_fingerprint(const nlohmann::json& manifest, Split split);

/// True when `dir` holds a manifest.json (a complete store).
bool is_prepared_store(const std::string& dir);
/// True when `dir` is a complete store with `split` (a store may have no valid split).
bool store_has_split(const std::string& dir, Split split);

}  // namespace mlm::data
