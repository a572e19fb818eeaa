#pragma once
// Writes one split of a prepared store: tokenized documents in order into shards of whole
// documents, the progress file rewritten after every shard, a progress line every few seconds.
#include <filesystem>
#include <string>

#include "mlm/data/store/prepare_options.h"
#include "mlm/data/stream/document_stream.h"
#include "mlm/text/tokenizer.h"
#include "mlm/util/elapsed.h"
#include "store_progress.h"

namespace mlm::data::store_detail {

struct SplitWriterContext {
  const std::filesystem::path& dir;
  const text::Tokenizer& tokenizer;
  const PrepareOptions& options;
  int threads = 1;
  StoreProgress& progress;  // updated and written after every shard
  SteadyClock::time_point start;
  int64_t shards_written = 0;  // by this call, for options.stop_after_shards
};

/// Continues split `name` from its progress entry to its end; adds to `summary`'s counts of
/// this call's work. False when options.stop_after_shards stopped it first.
bool write_split(SplitWriterContext& context, const std::string& name, const StreamOptions& input,
                 PrepareSummary& summary);

}  // namespace mlm::data::store_detail
