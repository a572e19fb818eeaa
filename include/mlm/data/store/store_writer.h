#pragma once
// `mlm-data prepare`: tokenizes data.train_files (and the valid split: data.valid_files, or
// the documents data.valid_fraction holds out of train_files, by the streaming path's rule)
// once into the prepared store data.store (format: prepared_store.h).
//
// The documents, sentences and tokens are exactly what the streaming path would pack with
// data.packing: sentences (same readers, same held-out rule, same sentence cut, sentences
// and documents without tokens left out). A reader thread cuts the input into numbered
// batches, `threads` workers tokenize them, and the caller's thread appends them in batch
// order to the current shard: the store does not depend on the thread count or on timing.
//
// Resumable: after every shard prepare.progress.json records the shards written and the
// input cursor where the next one starts, so a killed prepare redoes only the unfinished
// shard. A progress file of another tokenizer or of changed source files is refused; a
// complete store of the same tokenizer and sources is left as it is ("already prepared").
#include <cstdint>
#include <string>
#include <vector>

#include "mlm/config/sections/data.h"
#include "mlm/text/tokenizer.h"

namespace mlm::data {

/// A shard is closed before a document that would take it past this many tokens (a single
/// larger document gets a shard of its own), so uint32 offsets always suffice.
inline constexpr int64_t kDefaultShardTokens = int64_t{64} << 20;

struct PrepareOptions {
  int threads = 0;          // tokenizing threads; 0 = one per core
  bool overwrite = false;   // delete the store's own files first (a complete store too)
  int64_t shard_tokens = kDefaultShardTokens;
  double log_every_s = 5;   // seconds between progress log lines
  // Stops (as a kill would, the progress file kept) once this many shards were written by
  // this call; -1 = never. For resume tests.
  int64_t stop_after_shards = -1;
};

struct PrepareSummary {
  // The store's totals (both splits).
  int64_t documents = 0, sentences = 0, tokens = 0, shards = 0;
  // This call's work: input read (document text, UTF-8 bytes) and tokens written.
  int64_t text_bytes = 0, tokens_written = 0;
  int64_t bad_records = 0, invalid_utf8_fixes = 0;
  double seconds = 0;
  int threads = 0;
  bool already_prepared = false;  // a complete store of the same tokenizer and sources
  bool complete = false;          // false only when stopped by stop_after_shards
};

/// Prepares data.store (which must be set: UsageError naming data.store). Errors:
/// DataError for unreadable or binary input, a corpus without tokens, a source file changed
/// since a resumed prepare started, or a write that fails (the file named, the temporary
/// shard removed, the shards already written and the progress file kept); ConfigError for a
/// store or progress file of another tokenizer (naming tokenizer.model) and for a complete
/// store of other sources without `overwrite` (naming data.store).
PrepareSummary prepare_store(const config::DataConfig& data, const text::Tokenizer& tokenizer,
                             const PrepareOptions& options);

/// Records in the manifest of the complete store `store_dir` the size and checksum of each
/// of `table_paths` (sequence tables saved in it, sequence_table.h), so that a run and
/// `mlm-data verify` tell a damaged table from a sound one. The manifest is rewritten
/// atomically, and only when something changed; DataError naming a file that cannot be read
/// or written.
void record_table_checksums(const std::string& store_dir, const std::vector<std::string>& table_paths);

}  // namespace mlm::data
