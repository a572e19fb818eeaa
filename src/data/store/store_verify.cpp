#include "mlm/data/store/store_verify.h"

#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>

#include "mlm/data/store/prepared_store.h"
#include "mlm/data/store/sequence_table.h"
#include "mlm/util/errors.h"

namespace mlm::data {
namespace fs = std::filesystem;

namespace {

bool records_checksums(const nlohmann::json& manifest) {
  const auto splits = manifest.value("splits", nlohmann::json::object());
  for (const auto& [name, split] : splits.items()) {
    for (const auto& shard : split.value("shards", nlohmann::json::array())) {
      if (shard.is_object() && shard.contains("index_crc32")) return true;
    }
  }
  return false;
}

/// Every *.table in the split's folder, and those the manifest records for it.
std::vector<std::string> table_files(const PreparedStore& store, const std::string& split) {
  std::set<std::string> paths;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(store.dir()) / split, ec)) {
    if (entry.path().extension() == ".table") paths.insert(entry.path().string());
  }
  const auto tables = store.manifest().value("tables", nlohmann::json::object());
  for (const auto& [name, table] : tables.items()) {
    if (name.rfind(split + "/", 0) == 0) paths.insert((fs::path(store.dir()) / name).string());
  }
  return {paths.begin(), paths.end()};
}

void verify_table(const PreparedStore& store, Split split, const std::string& path, bool index_sound,
                  StoreVerification& out) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    out.notes.push_back(path + ": recorded in the manifest but missing; a run rebuilds it from the index");
    return;
  }
  const std::string rebuild = index_sound ? "; the index is sound: delete the table and a run rebuilds it"
                                          : "; the index is damaged too: prepare the store again";
  ++out.files;
  out.bytes += static_cast<int64_t>(fs::file_size(path, ec));
  const auto settings = SequenceTable::file_settings(path);
  if (!settings || SequenceTable::file_path(store.dir(), split == Split::train ? "train" : "valid", *settings) != path) {
    out.damaged.push_back(path + ": not a sequence table of the settings its name says (a damaged sequence table)" +
                          rebuild);
    return;
  }
  try {
    if (!SequenceTable::load(path, split_fingerprint(store.manifest(), split), *settings, store)) {
      out.notes.push_back(path + ": a table of another store (not recorded in the manifest); a run rebuilds it");
    }
  } catch (const DataError& e) {
    out.damaged.push_back(e.what() + rebuild);
  }
}

void verify_split(const std::string& dir, Split split, StoreVerification& out) {
  std::unique_ptr<PreparedStore> store;
  try {
    store = std::make_unique<PreparedStore>(dir, split);  // sizes, headers, first and last entries
  } catch (const DataError& e) {
    out.damaged.push_back(e.what());
    return;
  }
  out.checksums = out.checksums || records_checksums(store->manifest());
  bool index_sound = true;
  for (size_t i = 0; i < store->shard_count(); ++i) {
    const StoreShard& shard = store->shard(i);
    for (const bool index : {true, false}) {
      const std::string& path = index ? shard.index_path() : shard.path();
      ++out.files;
      std::error_code ec;
      out.bytes += static_cast<int64_t>(fs::file_size(path, ec));
      try {
        index ? shard.check_index() : shard.check_tokens();
      } catch (const DataError& e) {
        out.damaged.push_back(e.what());
        if (index) index_sound = false;
      }
    }
  }
  for (const auto& path : table_files(*store, split == Split::train ? "train" : "valid")) {
    verify_table(*store, split, path, index_sound, out);
  }
}

}  // namespace

StoreVerification verify_store(const std::string& dir) {
  if (!is_prepared_store(dir)) {
    throw DataError("data.store " + dir + ": no manifest.json (not a complete prepared store)");
  }
  StoreVerification out;
  out.store = dir;
  for (const auto split : {Split::train, Split::valid}) {
    if (split == Split::valid && !store_has_split(dir, split)) continue;  // a store may have none
    verify_split(dir, split, out);
  }
  return out;
}

}  // namespace mlm::data
