#pragma once
// One split of a prepared store, opened for a run: the mapped shards, the sequence table for
// the run's packing settings (sequence_table.h), and reading any sequence by its table index
// into a PackedSequence, with [CLS]/[SEP] and token types as the streaming packer emits them.
// What PreparedDataset (one rank's stream) and the indexed access for mixtures share.
//
// NSP / SOP: the A/B cut of a span and the NSP negative are drawn when the sequence is read,
// from a seed of (train.seed, the sequence's global index g), so each visit of a span gets a
// new cut. The cut follows stream/packer.h: A is the first j of the span's k >= 2 sentences (j
// uniform in 1..k-1), a lone sentence is B to the sentence before it (read again), else it is
// cut at a uniform token. SOP swaps A and B half the time. NSP replaces B half the time by
// whole sentences, from a uniform sentence on, of a document drawn uniformly from the WHOLE
// split (any other document of any shard), not from a window of the stream. The real B that
// a negative displaces is not put back into a later sequence (the streaming packer does put
// it back): its span is fixed in the table, so it is only seen as B in the visits that draw
// no negative.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <vector>

#include "mlm/config/data_plan.h"
#include "mlm/data/packed_sequence.h"
#include "mlm/data/store/prepared_store.h"
#include "mlm/data/store/sequence_table.h"
#include "mlm/text/tokenizer.h"

namespace mlm::data {

class SeededRandom;

class PreparedSplit {
 public:
  /// Opens the plan's data.store split (DataError from the store, ConfigError for an empty
  /// data.store, a too short data.seq_len, or another tokenizer), loads or builds the table
  /// (a damaged table is logged and rebuilt from the index; a damaged index is a DataError
  /// naming it), and refuses a split that packs into no sequence (DataError).
  PreparedSplit(const config::DataPlan& plan, const text::Tokenizer& tokenizer, Split split);

  int64_t size() const { return table_->size(); }
  /// Table entry `sequence` as a PackedSequence with sample_id = `sample_id`.
  void read(int64_t sequence, uint64_t sample_id, PackedSequence& out) const;

  const PreparedStore& store() const { return *store_; }
  const SequenceTable& table() const { return *table_; }
  Split split() const { return split_; }
  int token_bytes() const { return token_bytes_; }
  /// Where the table's file is, and whether it holds this table (loaded, or saved after it
  /// was built; false when the store is read-only).
  const std::string& table_path() const { return table_path_; }
  bool table_on_disk() const { return table_on_disk_; }
  /// Index bytes read to build the table (part of store().bytes_read()), and how long it took.
  int64_t table_bytes_read() const { return table_bytes_read_; }
  double table_seconds() const { return table_seconds_; }

  /// What a saved position must match: the store ("store": a fingerprint of the manifest's
  /// split and tokenizer, "tokens", "sequences") and the table settings.
  nlohmann::json identity() const;
  /// DataError when `state` is for another store or split, ConfigError naming the key when
  /// for other packing settings.
  void check_identity(const nlohmann::json& state) const;

 private:
  struct Document {
    size_t shard = 0;
    int64_t index = 0;  // in the shard
  };
  void read_single(const TableEntry& e, PackedSequence& out) const;
  void read_sentence_pair(const TableEntry& e, uint64_t sample_id, PackedSequence& out) const;
  void read_token_pair(const TableEntry& e, uint64_t sample_id, PackedSequence& out) const;
  int64_t previous_sentence_start(const TableEntry& e) const;
  /// A uniform document of the split other than `current` (itself when it is the only one).
  Document random_document(const TableEntry& current, SeededRandom& rng) const;
  void emit_pair(PackedSequence& out, const int32_t* a, int64_t a_len, const int32_t* b,
                 int64_t b_len, int8_t label) const;

  Split split_;
  std::unique_ptr<PreparedStore> store_;
  std::unique_ptr<SequenceTable> table_;
  TableSettings settings_;
  text::SpecialIds ids_;
  uint64_t seed_;
  int token_bytes_ = 2;
  std::string fingerprint_;
  std::string table_path_;
  bool table_on_disk_ = false;
  std::vector<int64_t> document_prefix_;  // [shards + 1]: documents before each shard
  int64_t table_bytes_read_ = 0;
  double table_seconds_ = 0;
};

}  // namespace mlm::data
