#pragma once
// The bookkeeping of a prepared store: what it is made of (tokenizer, token width, source
// files), prepare.progress.json while it is being written, and manifest.json once complete.
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mlm/data/stream/document_stream.h"
#include "mlm/text/corpus/corpus_files.h"
#include "mlm/text/tokenizer.h"
#include "store_shard_file.h"

namespace mlm::data::store_detail {

inline constexpr const char* kManifestFile = "manifest.json";
inline constexpr const char* kProgressFile = "prepare.progress.json";

/// What a store must match to be resumed or reused: the tokenizer and the source files.
struct StoreIdentity {
  nlohmann::json tokenizer;  // {"fingerprint", "type", "vocab_size"}
  int token_bytes = 2;
  nlohmann::json sources;    // {"train": [{"path", "bytes", "mtime_ns"}...], "valid": [...]}
  // The data.* keys that decide which documents and sentences the files yield (format,
  // doc_separator, text_field, on_bad_record, and valid_fraction when it holds documents out).
  nlohmann::json reading;

  static StoreIdentity of(const text::Tokenizer& tokenizer, const config::DataConfig& data,
                          const std::map<std::string, std::vector<text::CorpusFile>>& splits);
  std::string fingerprint() const { return tokenizer.value("fingerprint", ""); }
};

/// "" when `now` lists the same files (path, size, mtime) as `recorded`; else one phrase
/// naming the first file that changed, appeared or disappeared.
std::string changed_source(const nlohmann::json& recorded, const nlohmann::json& now);
/// "" when the reading keys are the same; else "data.<key> was A, is B".
std::string changed_reading(const nlohmann::json& recorded, const nlohmann::json& now);

struct SplitProgress {
  std::vector<ShardStats> shards;
  std::vector<StreamCursor> shard_starts;  // where reading shard i's first document starts
  StreamCursor next;                       // where the next shard starts
  bool complete = false;
};

struct StoreProgress {
  StoreIdentity identity;
  std::map<std::string, SplitProgress> splits;  // "train", and "valid" when there is one
};

/// Atomically replaces `path` (util/atomic_file.h). DataError naming it when it cannot.
void write_json_file(const std::filesystem::path& path, const nlohmann::json& json);
nlohmann::json read_json_file(const std::filesystem::path& path);

nlohmann::json progress_json(const StoreProgress& progress);
/// DataError naming `path` for a file that is not a progress file of this version.
StoreProgress parse_progress(const nlohmann::json& j, const std::string& path);
/// The manifest of a complete store (prepared_store.h).
nlohmann::json manifest_json(const StoreProgress& progress);
/// The identity recorded in a manifest or a progress file.
StoreIdentity recorded_identity(const nlohmann::json& j);

}  // namespace mlm::data::store_detail
