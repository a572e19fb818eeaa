// prepare_store: decides what is left to do (a fresh store, a resumed one, a complete one to
// keep or refuse), then writes each split's shards in order. See mlm/data/store/store_writer.h.
#include "mlm/data/store/store_writer.h"

#include <algorithm>
#include <filesystem>
#include <thread>

#include "mlm/data/store/prepared_store.h"
#include "mlm/data/store/store_checksum.h"
#include "mlm/util/elapsed.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"
#include "store_progress.h"
#include "store_split_writer.h"

namespace mlm::data::store_detail {
namespace fs = std::filesystem;

namespace {

/// Each split's documents, exactly as StreamingDataset selects them for that split.
std::map<std::string, StreamOptions> split_inputs(const config::DataConfig& data) {
  std::map<std::string, StreamOptions> out;
  StreamOptions train;
  train.read = text::ReadOptions::from(data);
  train.held_out_fraction = data.valid_fraction;
  train.files = text::resolve_corpus(data.train_files, train.read, "data.train_files");
  const bool holds_out = data.valid_files.empty() && data.valid_fraction > 0;
  train.holdout = holds_out ? Holdout::without_held_out : Holdout::all;
  if (!data.valid_files.empty()) {
    StreamOptions valid = train;
    valid.files = text::resolve_corpus(data.valid_files, valid.read, "data.valid_files");
    valid.holdout = Holdout::all;
    out["valid"] = std::move(valid);
  } else if (holds_out) {
    StreamOptions valid = train;
    valid.holdout = Holdout::held_out_only;
    out["valid"] = std::move(valid);
  }
  out["train"] = std::move(train);
  return out;
}

/// The store's own files only: a data.store that also holds other files keeps them.
void remove_store_files(const fs::path& dir) {
  std::error_code ec;
  for (const char* name : {kManifestFile, kProgressFile}) {
    fs::remove(dir / name, ec);
    fs::remove(dir / (std::string(name) + ".tmp"), ec);
  }
  for (const char* split : {"train", "valid"}) {
    fs::remove_all(dir / split, ec);
    if (ec) throw DataError((dir / split).string() + ": cannot remove: " + ec.message());
  }
}

void add_totals(const StoreProgress& progress, PrepareSummary& summary) {
  for (const auto& [name, split] : progress.splits) {
    for (const auto& s : split.shards) {
      summary.documents += s.documents;
      summary.sentences += s.sentences;
      summary.tokens += s.tokens;
      summary.shards += 1;
    }
  }
}

/// A complete store: kept when it is what this config would prepare, refused otherwise.
PrepareSummary keep_complete_store(const fs::path& dir, const StoreIdentity& id) {
  const auto manifest = read_json_file(dir / kManifestFile);
  const auto recorded = recorded_identity(manifest);
  const std::string refuse = "data.store " + dir.string() + " already holds a complete prepared store ";
  const std::string choose = "; choose another data.store or pass --overwrite to prepare it again";
  if (recorded.fingerprint() != id.fingerprint()) {
    throw ConfigError(refuse + "made with another tokenizer (fingerprint " + recorded.fingerprint() +
                          ", tokenizer.model's is " + id.fingerprint() + ")" + choose,
                      "data.store");
  }
  std::string why = changed_source(recorded.sources, id.sources);
  if (why.empty()) why = changed_reading(recorded.reading, id.reading);
  if (!why.empty()) throw ConfigError(refuse + "of other input (" + why + ")" + choose, "data.store");
  PrepareSummary summary;
  summary.already_prepared = summary.complete = true;
  for (const auto& [name, split] : manifest.at("splits").items()) {
    summary.documents += split.value("documents", int64_t{0});
    summary.sentences += split.value("sentences", int64_t{0});
    summary.tokens += split.value("tokens", int64_t{0});
    summary.shards += static_cast<int64_t>(split.value("shards", nlohmann::json::array()).size());
  }
  log::info("data", "{}: already prepared ({} documents, {} tokens); nothing to do", dir.string(),
            summary.documents, summary.tokens);
  return summary;
}

/// The progress of an interrupted prepare, when it can be resumed with this config.
StoreProgress resumable_progress(const fs::path& dir, const StoreIdentity& id) {
  const fs::path path = dir / kProgressFile;
  StoreProgress progress = parse_progress(read_json_file(path), path.string());
  if (progress.identity.fingerprint() != id.fingerprint()) {
    throw ConfigError("tokenizer.model: " + path.string() + " is an interrupted prepare with another "
                          "tokenizer (fingerprint " + progress.identity.fingerprint() + ", this one is " +
                          id.fingerprint() + "); resume it with that tokenizer or pass --overwrite to start over",
                      "tokenizer.model");
  }
  std::string why = changed_source(progress.identity.sources, id.sources);
  if (why.empty()) why = changed_reading(progress.identity.reading, id.reading);
  if (!why.empty()) {
    throw DataError(path.string() + ": cannot resume an interrupted prepare: " + why +
                    "; restore it or pass --overwrite to start over");
  }
  // A shard listed must exist with the listed sizes; from the first that does not (a disk
  // error, a copy cut short), the split is prepared again.
  for (auto& [name, split] : progress.splits) {
    for (size_t i = 0; i < split.shards.size(); ++i) {
      const auto& s = split.shards[i];
      const fs::path tokens = dir / (s.name + ".tokens"), index = dir / (s.name + ".index");
      std::error_code e1, e2;
      const auto tokens_size = fs::file_size(tokens, e1), index_size = fs::file_size(index, e2);
      if (!e1 && !e2 && static_cast<int64_t>(tokens_size) == s.tokens_bytes &&
          static_cast<int64_t>(index_size) == s.index_bytes) {
        continue;
      }
      log::warn("data", "{}: missing or truncated (the progress file lists {} + {} bytes); preparing "
                "it and the {} shard(s) after it again", (dir / s.name).string(), s.tokens_bytes,
                s.index_bytes, split.shards.size() - i - 1);
      split.next = split.shard_starts[i];
      split.shards.resize(i);
      split.shard_starts.resize(i);
      split.complete = false;
      break;
    }
  }
  return progress;
}

int64_t total_tokens(const SplitProgress& split) {
  int64_t n = 0;
  for (const auto& s : split.shards) n += s.tokens;
  return n;
}

/// What the store records of its tokenizer, sources and reading, from each split's files.
StoreIdentity identity_of_inputs(const text::Tokenizer& tokenizer, const config::DataConfig& data,
                                 const std::map<std::string, StreamOptions>& inputs) {
  std::map<std::string, std::vector<text::CorpusFile>> files;
  for (const auto& [name, input] : inputs) files[name] = input.files;
  return StoreIdentity::of(tokenizer, data, files);
}

/// The progress to continue from: an interrupted prepare's, or a fresh one. The store's
/// directory is created and the progress file written before any shard.
StoreProgress open_progress(const fs::path& dir, const StoreIdentity& id,
                            const std::map<std::string, StreamOptions>& inputs) {
  StoreProgress progress;
  if (fs::exists(dir / kProgressFile)) {
    progress = resumable_progress(dir, id);
    int64_t done = 0;
    for (const auto& [name, split] : progress.splits) done += static_cast<int64_t>(split.shards.size());
    log::info("data", "{}: resuming an interrupted prepare after {} shard(s)", dir.string(), done);
  } else {
    progress.identity = id;
    for (const auto& [name, input] : inputs) progress.splits[name] = SplitProgress{};
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw DataError("data.store " + dir.string() + ": cannot create directory: " + ec.message());
  write_json_file(dir / kProgressFile, progress_json(progress));
  return progress;
}

/// DataError naming the config key of split `name`, which prepared to no tokens at all.
[[noreturn]] void refuse_empty_split(const fs::path& dir, const config::DataConfig& data,
                                     const StoreProgress& progress, const std::string& name,
                                     const StreamOptions& input) {
  // Nothing prepared yet: no progress to keep (a fixed corpus then starts afresh).
  bool any_shard = false;
  for (const auto& [other, entry] : progress.splits) any_shard |= !entry.shards.empty();
  std::error_code ec;
  if (!any_shard) fs::remove(dir / kProgressFile, ec);
  const std::string key = name == "train" || !data.valid_files.empty()
                              ? "data." + name + "_files"
                              : "data.valid_fraction";
  std::string listed;
  for (size_t i = 0; i < input.files.size() && i < 3; ++i) listed += (i ? ", " : "") + input.files[i].path;
  if (input.files.size() > 3) listed += " and " + std::to_string(input.files.size() - 3) + " more";
  throw DataError(key + ": the " + name + " split of " + listed + " has no tokens (" +
                  (key == "data.valid_fraction"
                       ? "no document of data.train_files is held out; raise data.valid_fraction "
                         "or give data.valid_files"
                       : "its files hold no text the tokenizer encodes") +
                  ")");
}

/// Writes the manifest, which makes the store complete, and drops the progress file.
void finish_store(const fs::path& dir, const StoreProgress& progress, PrepareSummary& summary,
                  SteadyClock::time_point start) {
  write_json_file(dir / kManifestFile, manifest_json(progress));
  std::error_code ec;
  fs::remove(dir / kProgressFile, ec);
  sync_directory(dir);
  summary.complete = true;
  add_totals(progress, summary);
  summary.seconds = seconds_since(start);
  log::info("data", "{}: prepared {} documents, {} sentences, {} tokens in {} shard(s), {:.1f} s",
            dir.string(), summary.documents, summary.sentences, summary.tokens, summary.shards,
            summary.seconds);
}

}  // namespace

PrepareSummary prepare(const config::DataConfig& data, const text::Tokenizer& tokenizer,
                       const PrepareOptions& options) {
  const auto start = SteadyClock::now();
  if (data.store.empty()) {
    throw UsageError("data.store is not set: give the directory to prepare, e.g. --set data.store=DIR");
  }
  const fs::path dir(data.store);
  const auto inputs = split_inputs(data);
  const StoreIdentity id = identity_of_inputs(tokenizer, data, inputs);
  const int threads = options.threads > 0 ? options.threads
                                           : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  if (options.overwrite) {
    remove_store_files(dir);
  } else if (is_prepared_store(dir.string())) {
    auto summary = keep_complete_store(dir, id);
    summary.threads = threads;
    summary.seconds = seconds_since(start);
    return summary;
  }
  StoreProgress progress = open_progress(dir, id, inputs);

  PrepareSummary summary;
  summary.threads = threads;
  SplitWriterContext context{dir, tokenizer, options, summary.threads, progress, start};
  for (const auto& [name, input] : inputs) {
    auto& split = progress.splits.at(name);
    if (!split.complete && !write_split(context, name, input, summary)) {
      add_totals(progress, summary);
      summary.seconds = seconds_since(start);
      return summary;  // stopped by stop_after_shards: the progress file says where
    }
    if (total_tokens(split) == 0) refuse_empty_split(dir, data, progress, name, input);
  }
  finish_store(dir, progress, summary, start);
  return summary;
}

}  // namespace mlm::data::store_detail

namespace mlm::data {

PrepareSummary prepare_store(const config::DataConfig& data, const text::Tokenizer& tokenizer,
                             const PrepareOptions& options) {
  return store_detail::prepare(data, tokenizer, options);
}

void record_table_checksums(const std::string& store_dir, const std::vector<std::string>& table_paths) {
  namespace fs = std::filesystem;
  const fs::path manifest_path = fs::path(store_dir) / store_detail::kManifestFile;
  auto manifest = store_detail::read_json_file(manifest_path);
  const auto before = manifest;
  if (!manifest.contains("tables") || !manifest["tables"].is_object()) manifest["tables"] = nlohmann::json::object();
  for (const auto& path : table_paths) {
    std::error_code ec;
    const auto bytes = fs::file_size(path, ec);
    if (ec) throw DataError(path + ": cannot read: " + ec.message());
    const std::string name = fs::path(path).lexically_relative(store_dir).generic_string();
    manifest["tables"][name] = {{"bytes", static_cast<int64_t>(bytes)}, {"crc32", crc32_hex(file_crc32(path))}};
  }
  if (manifest != before) store_detail::write_json_file(manifest_path, manifest);
}

}  // namespace mlm::data
