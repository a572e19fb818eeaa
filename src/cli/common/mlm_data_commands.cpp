// mlm-data prepare and verify (mlm_data_commands.h).
#include "cli/common/mlm_data_commands.h"

#include <iostream>
#include <nlohmann/json.hpp>

#include <vector>

#include "mlm/config/data_plan.h"
#include "mlm/data/store/prepared_split.h"
#include "mlm/data/store/prepared_store.h"
#include "mlm/data/store/store_verify.h"
#include "mlm/text/tokenizer.h"
#include "mlm/util/errors.h"
#include "mlm/util/logging.h"

namespace mlm::cli {
namespace {

/// The stores this configuration names with their text: data.store from data.train_files,
/// or each data.sources entry that has both files and a store.
std::vector<config::RunConfig> stores_to_prepare(const config::RunConfig& config) {
  if (config.data.sources.empty()) {
    if (config.data.store.empty()) {
      throw UsageError("data.store is not set: give the directory to prepare, e.g. --set data.store=DIR");
    }
    return {config};
  }
  std::vector<config::RunConfig> stores;
  for (size_t i = 0; i < config.data.sources.size(); ++i) {
    const auto& source = config.data.sources[i];
    if (source.store.empty()) continue;  // read as text
    if (source.files.empty()) {
      log::info("data", "data.sources[{}]: store {} has no files to prepare from; used as it is", i,
                source.store);
      continue;
    }
    config::RunConfig single = config;
    single.data.sources.clear();
    single.data.train_files = source.files;
    single.data.store = source.store;
    stores.push_back(std::move(single));
  }
  if (stores.empty()) {
    throw UsageError("data.sources: no entry has both files and a store, so there is nothing to prepare");
  }
  return stores;
}

void prepare_one(const config::RunConfig& config, const text::Tokenizer& tokenizer,
                 const data::PrepareOptions& options) {
  const auto s = data::prepare_store(config.data, tokenizer, options);
  if (s.complete) {
    // The sequence table of this configuration's packing, saved beside the shards, so that
    // each rank of a run reads it rather than the whole index; its checksum goes into the
    // manifest, so that a damaged table is told from a sound one.
    std::vector<std::string> tables;
    const auto plan = config::resolve_data_plan(config);
    for (const auto split : {data::Split::train, data::Split::valid}) {
      if (!data::store_has_split(config.data.store, split)) continue;
      const data::PreparedSplit prepared(plan, tokenizer, split);
      if (prepared.table_on_disk()) tables.push_back(prepared.table_path());
    }
    data::record_table_checksums(config.data.store, tables);
  }
  const double mb = static_cast<double>(s.text_bytes) / 1e6;
  std::cout << nlohmann::json{{"store", config.data.store},
                              {"already_prepared", s.already_prepared},
                              {"documents", s.documents},
                              {"sentences", s.sentences},
                              {"tokens", s.tokens},
                              {"shards", s.shards},
                              {"input_mb", mb},
                              {"seconds", s.seconds},
                              {"mb_per_s", s.seconds > 0 ? mb / s.seconds : 0.0},
                              {"tokens_per_s", s.seconds > 0 ? s.tokens_written / s.seconds : 0.0},
                              {"threads", s.threads},
                              {"bad_records", s.bad_records},
                              {"invalid_utf8_fixes", s.invalid_utf8_fixes}}
                   .dump()
            << std::endl;
}

}  // namespace

int prepare_command(const config::RunConfig& config, const data::PrepareOptions& options) {
  if (options.threads < 0) throw UsageError("--threads must be at least 0 (0 = one per core)");
  const auto stores = stores_to_prepare(config);
  const auto tokenizer = text::load_or_train_tokenizer(config.tokenizer, config.data);
  for (const auto& store : stores) prepare_one(store, tokenizer, options);
  return kExitOk;
}

int verify_command(const config::RunConfig& config) {
  std::vector<std::string> stores;
  if (!config.data.store.empty()) stores.push_back(config.data.store);
  for (const auto& source : config.data.sources) {
    if (!source.store.empty()) stores.push_back(source.store);
  }
  if (stores.empty()) throw UsageError("data.store is not set (nor any data.sources store): nothing to verify");
  std::vector<std::string> damaged;
  for (const auto& dir : stores) {
    const auto check = data::verify_store(dir);
    for (const auto& note : check.notes) log::info("data", "{}", note);
    damaged.insert(damaged.end(), check.damaged.begin(), check.damaged.end());
    std::cout << nlohmann::json{{"store", dir},
                                {"sound", check.damaged.empty()},
                                {"damaged", check.damaged.size()},
                                {"files", check.files},
                                {"bytes", check.bytes},
                                {"checksums", check.checksums}}
                     .dump()
              << std::endl;
  }
  // The first damaged file is the error line; any others are warnings before it.
  for (size_t i = 1; i < damaged.size(); ++i) log::warn("data", "{}", damaged[i]);
  if (!damaged.empty()) {
    const auto more = damaged.size() - 1;
    throw DataError(damaged.front() +
                    (more > 0 ? " (and " + std::to_string(more) + " more damaged file(s), listed above)" : ""));
  }
  return kExitOk;
}

}  // namespace mlm::cli
