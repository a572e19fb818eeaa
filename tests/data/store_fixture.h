#pragma once
// Writes a prepared token store (layout: include/mlm/data/store/prepared_store.h) from token arrays,
// for the tests of what reads one; the production writer is `mlm-data prepare`. A document is
// a list of sentences, a sentence a list of ids (non-empty). With `sparse_tokens` the .tokens
// files are only sized (holes read as zeros), for benchmarks of what reads the index alone.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mlm/data/store/prepared_store.h"

namespace mlm::testing {

using StoreDocument = std::vector<std::vector<int32_t>>;  // sentences of ids
using StoreShardDocs = std::vector<StoreDocument>;

struct StoreSplit {
  std::vector<StoreShardDocs> shards;
};

/// A shard's boundaries alone: per document the token count of each sentence.
using ShardLengths = std::vector<std::vector<uint32_t>>;

struct StoreFixture {
  std::string fingerprint = "0000000000000000";
  int64_t vocab_size = 200;
  int token_bytes = 2;
};

namespace store_fixture_detail {

inline void put_u64(std::ofstream& out, uint64_t v) { out.write(reinterpret_cast<const char*>(&v), 8); }
inline void put_u32(std::ofstream& out, uint32_t v) { out.write(reinterpret_cast<const char*>(&v), 4); }

/// Writes base.index from sentence lengths; returns the manifest's shard entry (no name).
inline nlohmann::json write_index(const std::filesystem::path& base, const ShardLengths& docs,
                                  int token_bytes) {
  uint64_t sentences = 0, tokens = 0;
  for (const auto& d : docs) {
    sentences += d.size();
    for (uint32_t n : d) tokens += n;
  }
  std::ofstream out(base.string() + ".index", std::ios::binary);
  out.write("MLMSIDX1", 8);
  put_u64(out, docs.size());
  put_u64(out, sentences);
  put_u64(out, tokens);
  uint32_t first = 0;
  for (const auto& d : docs) {
    put_u32(out, first);
    first += static_cast<uint32_t>(d.size());
  }
  put_u32(out, first);
  uint64_t end = 0;
  std::vector<uint32_t> ends;
  ends.reserve(sentences);
  for (const auto& d : docs) {
    for (uint32_t n : d) ends.push_back(static_cast<uint32_t>(end += n));
  }
  out.write(reinterpret_cast<const char*>(ends.data()), static_cast<std::streamsize>(4 * ends.size()));
  return {{"documents", docs.size()},
          {"sentences", sentences},
          {"tokens", tokens},
          {"tokens_bytes", tokens * token_bytes},
          {"index_bytes", 32 + 4 * (docs.size() + 1) + 4 * sentences}};
}

inline nlohmann::json manifest_head(const StoreFixture& f) {
  return {{"format", "mlm-train prepared store"},
          {"version", 1},
          {"tokenizer", {{"fingerprint", f.fingerprint}, {"type", "unigram"}, {"vocab_size", f.vocab_size}}},
          {"token_bytes", f.token_bytes},
          {"sentences", "line"},
          {"sources", nlohmann::json::object()},
          {"splits", nlohmann::json::object()}};
}

inline void add_split(nlohmann::json& manifest, const std::string& name, const std::vector<nlohmann::json>& shards) {
  nlohmann::json split = {{"documents", 0}, {"sentences", 0}, {"tokens", 0}, {"shards", shards}};
  for (const auto& s : shards) {
    for (const char* k : {"documents", "sentences", "tokens"}) split[k] = split[k].get<int64_t>() + s[k].get<int64_t>();
  }
  manifest["splits"][name] = split;
}

inline void write_manifest(const std::filesystem::path& dir, const nlohmann::json& manifest) {
  std::ofstream(dir / "manifest.json") << manifest.dump(1);
}

}  // namespace store_fixture_detail

/// Writes a complete store (shards and manifest) under `dir`; `valid` may have no shards
/// (then the store has no valid split).
inline void write_store(const std::filesystem::path& dir, const StoreFixture& f, const StoreSplit& train,
                        const StoreSplit& valid = {}) {
  namespace d = store_fixture_detail;
  auto manifest = d::manifest_head(f);
  for (const auto& [name, split] : {std::pair<std::string, const StoreSplit*>{"train", &train}, {"valid", &valid}}) {
    if (split->shards.empty()) continue;
    std::filesystem::create_directories(dir / name);
    std::vector<nlohmann::json> entries;
    for (size_t i = 0; i < split->shards.size(); ++i) {
      char shard_name[16];
      std::snprintf(shard_name, sizeof shard_name, "%06zu", i);
      const auto base = dir / name / shard_name;
      ShardLengths lengths;
      std::ofstream tokens(base.string() + ".tokens", std::ios::binary);
      for (const auto& doc : split->shards[i]) {
        lengths.emplace_back();
        for (const auto& sentence : doc) {
          lengths.back().push_back(static_cast<uint32_t>(sentence.size()));
          for (int32_t id : sentence) {
            if (f.token_bytes == 2) {
              const auto v = static_cast<uint16_t>(id);
              tokens.write(reinterpret_cast<const char*>(&v), 2);
            } else {
              const auto v = static_cast<uint32_t>(id);
              tokens.write(reinterpret_cast<const char*>(&v), 4);
            }
          }
        }
      }
      auto entry = d::write_index(base, lengths, f.token_bytes);
      entry["name"] = name + "/" + shard_name;
      entries.push_back(entry);
    }
    d::add_split(manifest, name, entries);
  }
  d::write_manifest(dir, manifest);
}

/// A train-only store from sentence lengths alone, its .tokens files sparse (all zeros).
inline void write_sparse_store(const std::filesystem::path& dir, const StoreFixture& f,
                               const std::vector<ShardLengths>& shards) {
  namespace d = store_fixture_detail;
  auto manifest = d::manifest_head(f);
  std::filesystem::create_directories(dir / "train");
  std::vector<nlohmann::json> entries;
  for (size_t i = 0; i < shards.size(); ++i) {
    char shard_name[16];
    std::snprintf(shard_name, sizeof shard_name, "%06zu", i);
    const auto base = dir / "train" / shard_name;
    auto entry = d::write_index(base, shards[i], f.token_bytes);
    std::ofstream(base.string() + ".tokens", std::ios::binary).close();
    std::filesystem::resize_file(base.string() + ".tokens", entry["tokens_bytes"].get<uint64_t>());
    entry["name"] = "train/" + std::string(shard_name);
    entries.push_back(entry);
  }
  d::add_split(manifest, "train", entries);
  d::write_manifest(dir, manifest);
}

}  // namespace mlm::testing
