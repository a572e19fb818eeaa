#pragma once
// The packed sequences of a prepared split, as a list: where each one starts. Built from the
// shards' document and sentence boundaries only (never a token), with the streaming packer's
// rules (stream/packer.h), so that a rank can read any sequence by its index.
//
// mlm: an entry is where a sequence's tokens start (shard, token offset); it ends where the
//   next entry starts (or at the shard's end). The sequence is [CLS] tokens [SEP], with a
//   [SEP] at each document start inside it (cross_documents: the entry also names the
//   document holding its first token and whether another one starts inside, so that a
//   sequence within one document is read without touching the index). Sentence packing takes whole sentences while they fit and cuts only a
//   single sentence longer than a sequence, token packing fills sequences to seq_len, both
//   exactly as the streaming packer does over the same documents.
// nsp / sop: an entry is a span of whole sentences of one document (its first sentence cut
//   when it alone is longer than seq_len - 3), with an explicit end, its document and its
//   first sentence; prepared_split.h cuts it into A and B when it is read. Token packing: chunks of seq_len - 3 tokens of a document.
//   A span that can never form a pair (SOP: a lone token with no sentence before it to pair
//   with) has no entry, as the streaming packer drops it.
//
// Sequences never cross shards: a shard's end ends the sequence (where the streaming path,
// reading files back to back, would continue it with the next file's documents). A shard
// holds tens of millions of tokens, so this changes a negligible share of sequences.
//
// Every rank holds the table: 4 bytes per sequence, plus 4 for the document (cross_documents
// or pairs), and for pairs 4 for the end and 4 for the first sentence (sentence packing).
// For a 250M-token store at seq_len 128, about 16 MB.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mlm/config/enums.h"
#include "mlm/data/store/prepared_store.h"

namespace mlm::data {

struct TableSettings {
  int64_t seq_len = 128;
  config::Packing packing = config::Packing::sentences;
  bool cross_documents = true;
  config::Objective objective = config::Objective::mlm;

  bool pairs() const { return config::trains_sentence_pairs(objective); }
};

struct TableEntry {
  size_t shard = 0;
  int64_t begin = 0, end = 0;  // token offsets in the shard
  int64_t document = -1;       // the shard's document holding token `begin` (-1: not kept)
  bool joins_documents = false;  // mlm: another document starts inside (after a [SEP])
  int64_t first_sentence = -1;   // pairs, sentence packing: the sentence holding `begin`
};

class SequenceTable {
 public:
  /// Reads every shard's index once (counted in the store's bytes_read).
  SequenceTable(const PreparedStore& store, const TableSettings& settings);

  int64_t size() const { return static_cast<int64_t>(begin_.size()); }
  TableEntry entry(int64_t index) const;
  const TableSettings& settings() const { return settings_; }
  /// Bytes the table holds (what each rank pays for it).
  int64_t memory_bytes() const;

  // The table as a file beside the shards (sequence_table_file.cpp), which `mlm-data prepare`
  // writes for the configured settings, so that a rank reads the table (~4 bytes a sequence)
  // instead of the whole index (~4 bytes a sentence and a document).
  /// `<store>/<split>/sequences-<packing>-<objective>-<seq_len>[-within-documents].table`
  static std::string file_path(const std::string& store_dir, const std::string& split,
                               const TableSettings& settings);
  /// The table saved at `path` for the store `fingerprint` with these settings; null when
  /// the file is missing or written for another store or settings (then rebuild). DataError
  /// naming the file (and the byte offset of the first bad entry) when it is damaged: no
  /// table magic, a checksum other than the one the manifest records, a header of other
  /// settings though the manifest records it, or entries that do not fit the store (out of
  /// the shards' bounds or out of order). Counts the bytes read in the store's bytes_read.
  static std::unique_ptr<SequenceTable> load(const std::string& path, const std::string& fingerprint,
                                             const TableSettings& settings, const PreparedStore& store);
  /// The settings a table file's header names; nullopt when it is not a sequence table.
  static std::optional<TableSettings> file_settings(const std::string& path);
  /// Writes the table to `path` atomically (a temporary, then a rename); DataError naming the
  /// file when it cannot.
  void save(const std::string& path, const std::string& fingerprint) const;

 private:
  // In document_ (mlm): another document starts inside the sequence.
  static constexpr uint32_t kJoins = 0x80000000u;

  SequenceTable() = default;
  /// The entries of a loaded table against the store (sequence_table_check.cpp): DataError
  /// naming `path` and the byte offset of the first entry out of bounds or out of order.
  void check_entries(const std::string& path, const PreparedStore& store, int64_t header_bytes) const;
  void add(int64_t begin, int64_t document, int64_t end, int64_t first_sentence = -1);
  void mark_joins_documents();
  void pack_sentences(const StoreShard& shard);
  void pack_tokens(const StoreShard& shard);
  void span_sentences(const StoreShard& shard);
  void span_tokens(const StoreShard& shard);

  TableSettings settings_;
  bool keep_documents_ = false;
  std::vector<int64_t> shard_first_;   // [shards + 1]: the first entry of each shard
  std::vector<int64_t> shard_tokens_;  // [shards]
  std::vector<uint32_t> begin_;        // token offset in the shard
  std::vector<uint32_t> document_;     // cross_documents or pairs: the document of begin_;
                                       // mlm: kJoins set when another document starts inside
  std::vector<uint32_t> end_;          // pairs only (mlm: the next entry's begin)
  std::vector<uint32_t> first_sentence_;  // pairs with sentence packing
};

}  // namespace mlm::data
