#include "mlm/data/mixture/mixture_weights.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "mlm/config/source_weights.h"
#include "mlm/data/store/prepared_store.h"
#include "mlm/data/stream/document_stream.h"
#include "mlm/util/atomic_file.h"
#include "mlm/util/errors.h"
#include "mlm/util/fnv1a.h"
#include "mlm/util/logging.h"

namespace mlm::data {
namespace fs = std::filesystem;
namespace {

constexpr const char* kSizesFile = "mixture_sizes.json";

// The documents of a text source's train split, as the streaming path selects them.
StreamOptions train_documents(const config::DataConfig& data, const config::SourceConfig& source,
                              const std::string& key) {
  StreamOptions options;
  options.read = text::ReadOptions::from(data);
  options.files = text::resolve_corpus(source.files, options.read, key + ".files");
  options.held_out_fraction = data.valid_fraction;
  const bool holds_out = data.valid_files.empty() && data.valid_fraction > 0;
  options.holdout = holds_out ? Holdout::without_held_out : Holdout::all;
  return options;
}

// What the count depends on: the tokenizer, the files as they are now, how documents are cut.
std::string count_key(const StreamOptions& options, const text::Tokenizer& tokenizer) {
  Fnv1a hash;
  hash.mix(tokenizer_fingerprint(tokenizer));
  for (const auto& file : options.files) {
    std::error_code ec;
    const auto bytes = fs::file_size(file.path, ec);
    const auto mtime = fs::last_write_time(file.path, ec).time_since_epoch().count();
    hash.mix(file.path).mix(std::to_string(ec ? 0 : bytes)).mix(std::to_string(mtime));
  }
  const nlohmann::json reading = {{"format", static_cast<int>(options.read.format)},
                                  {"doc_separator", static_cast<int>(options.read.doc_separator)},
                                  {"text_field", options.read.text_field},
                                  {"holdout", static_cast<int>(options.holdout)},
                                  {"held_out_fraction", options.held_out_fraction}};
  hash.mix(reading.dump());
  return hash.hex();
}

int64_t count_tokens(const StreamOptions& options, const text::Tokenizer& tokenizer) {
  DocumentStream stream(options, 0, StreamCursor{});
  StreamDocument doc;
  std::vector<int32_t> ids;
  int64_t tokens = 0;
  while (stream.next(doc) == StreamEvent::document) {
    tokenizer.encode(doc.text, ids);
    tokens += static_cast<int64_t>(ids.size());
  }
  return tokens;
}

nlohmann::json read_cache(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return nlohmann::json::object();
  std::stringstream text;
  text << in.rdbuf();
  const auto json = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  return json.is_object() ? json : nlohmann::json::object();  // a damaged cache is counted again
}

}  // namespace

std::vector<int64_t> source_token_counts(const config::DataPlan& plan, const text::Tokenizer& tokenizer) {
  const fs::path cache_path = plan.run_dir.empty() ? fs::path() : fs::path(plan.run_dir) / kSizesFile;
  nlohmann::json cache = cache_path.empty() ? nlohmann::json::object() : read_cache(cache_path);
  bool counted = false;
  std::vector<int64_t> counts;
  for (size_t i = 0; i < plan.data.sources.size(); ++i) {
    const auto& source = plan.data.sources[i];
    const std::string key = "data.sources[" + std::to_string(i) + "]";
    int64_t tokens = 0;
    std::string where;
    if (!source.store.empty()) {
      const PreparedStore store(source.store, Split::train);
      store.require_tokenizer(tokenizer);
      tokens = store.tokens();
      where = "store " + source.store;
    } else {
      const auto options = train_documents(plan.data, source, key);
      const std::string hash = count_key(options, tokenizer);
      if (cache.contains(hash) && cache[hash].is_number_integer()) {
        tokens = cache[hash].get<int64_t>();
      } else {
        tokens = count_tokens(options, tokenizer);
        cache[hash] = tokens;
        counted = true;
      }
      where = "files " + nlohmann::json(source.files).dump();
    }
    if (tokens <= 0) {
      throw DataError(key + " ('" + config::source_name(plan.data, i) + "'): its train split has no token (" +
                      where + ")");
    }
    log::info("data", "mixture source '{}': {} tokens in its train split", config::source_name(plan.data, i),
              tokens);
    counts.push_back(tokens);
  }
  if (counted && !cache_path.empty() && plan.rank == 0) {
    fs::create_directories(cache_path.parent_path());
    write_file_atomically(cache_path, cache.dump(2) + "\n");
  }
  return counts;
}

std::vector<double> tempered_weights(const std::vector<double>& base, const std::vector<int64_t>& tokens,
                                     double temperature) {
  if (temperature == 0) return base;
  std::vector<double> weights(base.size());
  for (size_t s = 0; s < base.size(); ++s) {
    weights[s] = base[s] > 0 ? base[s] * std::pow(static_cast<double>(tokens.at(s)), temperature) : 0.0;
  }
  return weights;
}

std::vector<double> mixture_weights(const config::DataPlan& plan, const text::Tokenizer& tokenizer) {
  const std::vector<double> base = config::source_base_weights(plan.data);
  if (plan.data.temperature == 0) return base;
  return tempered_weights(base, source_token_counts(plan, tokenizer), plan.data.temperature);
}

}  // namespace mlm::data
