#pragma once
// What a `mlm-data prepare` call is asked (PrepareOptions) and what it reports
// (PrepareSummary): shared by the store writer's facade (store_writer.h) and its split
// writer, which the facade drives.
#include <cstdint>

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

}  // namespace mlm::data
