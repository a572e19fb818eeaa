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
#include <string>
#include <vector>

#include "mlm/config/sections/data.h"
#include "mlm/data/store/prepare_options.h"
#include "mlm/text/tokenizer.h"

namespace mlm::data {

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
