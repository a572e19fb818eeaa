// A prepared store's damage is found and named: the manifest records checksums of every
// shard, index and sequence table; `verify_store` (mlm-data verify) names a damaged file; a
// run rebuilds a damaged table from a sound index and refuses a damaged index, and refuses a
// token id outside the vocabulary, each with the file (and byte offset) named. A store
// prepared before checksums were recorded still loads.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "mlm/config/run_config.h"
#include "mlm/data/store/prepared_split.h"
#include "mlm/data/store/prepared_store.h"
#include "mlm/data/store/sequence_table.h"
#include "mlm/data/store/store_checksum.h"
#include "mlm/data/store/store_verify.h"
#include "mlm/data/store/store_writer.h"
#include "mlm/util/errors.h"
#include "text/tokenizer_fixture.h"

// A named namespace: the unity build compiles this file with the other data tests.
namespace mlm::data::store_integrity_test {

namespace fs = std::filesystem;
using mlm::testing::corpus_path;
using mlm::testing::fixture_tokenizer;
using config::resolve_data_plan;

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

/// Overwrites `path` from byte `from` on with seeded random bytes, keeping its size.
void randomize(const fs::path& path, size_t from = 0) {
  std::string bytes = read_bytes(path);
  std::mt19937 rng(7);
  for (size_t i = from; i < bytes.size(); ++i) bytes[i] = static_cast<char>(rng() & 0xFF);
  write_bytes(path, bytes);
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

/// Every sequence of the split, read through the table.
std::vector<std::vector<int32_t>> read_all(const PreparedSplit& split) {
  std::vector<std::vector<int32_t>> out;
  PackedSequence s;
  for (int64_t i = 0; i < split.size(); ++i) {
    split.read(i, static_cast<uint64_t>(i), s);
    out.push_back(s.ids);
  }
  return out;
}

class StoreIntegrity : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = mlm::testing::make_temp_dir("store_integrity");
    config_.data.train_files = {corpus_path("train.txt"), corpus_path("docs.jsonl")};
    config_.data.valid_files = {corpus_path("valid.txt")};
    config_.data.store = (dir_ / "store").string();
    config_.data.seq_len = 32;
    // What mlm-data prepare does: the shards, then each split's table, recorded.
    PrepareOptions options;
    options.threads = 2;
    options.shard_tokens = 2500;  // several shards
    prepare_store(config_.data, fixture_tokenizer(), options);
    std::vector<std::string> tables;
    for (const auto split : {Split::train, Split::valid}) {
      const PreparedSplit prepared(resolve_data_plan(config_), fixture_tokenizer(), split);
      tables.push_back(prepared.table_path());
    }
    record_table_checksums(config_.data.store, tables);
    table_ = tables.front();
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path store() const { return config_.data.store; }

  void expect_damaged(const std::string& file, const std::string& what) const {
    const auto check = verify_store(store().string());
    ASSERT_EQ(check.damaged.size(), 1u) << ::testing::PrintToString(check.damaged);
    EXPECT_EQ(check.damaged[0].rfind(file + ": ", 0), 0u) << check.damaged[0];
    EXPECT_NE(check.damaged[0].find(what), std::string::npos) << check.damaged[0];
  }

  fs::path dir_;
  config::RunConfig config_;
  std::string table_;  // the train split's sequence table
};

TEST_F(StoreIntegrity, ManifestRecordsTheChecksumOfEveryShardIndexAndTable) {
  const auto manifest = read_json(store() / "manifest.json");
  int shards = 0;
  for (const auto& [name, split] : manifest["splits"].items()) {
    for (const auto& shard : split["shards"]) {
      const std::string base = (store() / shard["name"].get<std::string>()).string();
      EXPECT_EQ(shard["tokens_crc32"], crc32_hex(file_crc32(base + ".tokens"))) << base;
      EXPECT_EQ(shard["index_crc32"], crc32_hex(file_crc32(base + ".index"))) << base;
      ++shards;
    }
  }
  EXPECT_GT(shards, 3);
  ASSERT_EQ(manifest["tables"].size(), 2u);
  for (const auto& [name, table] : manifest["tables"].items()) {
    EXPECT_EQ(table["crc32"], crc32_hex(file_crc32((store() / name).string()))) << name;
    EXPECT_EQ(table["bytes"], fs::file_size(store() / name)) << name;
  }
}

TEST_F(StoreIntegrity, ASoundStoreVerifies) {
  const auto check = verify_store(store().string());
  EXPECT_TRUE(check.damaged.empty()) << ::testing::PrintToString(check.damaged);
  EXPECT_TRUE(check.notes.empty()) << ::testing::PrintToString(check.notes);
  EXPECT_TRUE(check.checksums);
  const auto manifest = read_json(store() / "manifest.json");
  const auto shards = manifest["splits"]["train"]["shards"].size() + manifest["splits"]["valid"]["shards"].size();
  EXPECT_EQ(check.files, static_cast<int64_t>(2 * shards + 2));
  EXPECT_THROW(verify_store((dir_ / "nowhere").string()), DataError);
}

TEST_F(StoreIntegrity, ARandomBytesTableIsNamedAndRebuiltFromTheSoundIndex) {
  const std::string sound = read_bytes(table_);
  const auto want =
      read_all(PreparedSplit(resolve_data_plan(config_), fixture_tokenizer(), Split::train));
  // Random bytes over the whole file, or after its header only (the header still matching).
  for (const size_t from : {size_t{0}, size_t{128}}) {
    randomize(table_, from);
    ASSERT_EQ(fs::file_size(table_), sound.size());
    expect_damaged(table_, "damaged sequence table");
    const PreparedSplit reopened(resolve_data_plan(config_), fixture_tokenizer(), Split::train);
    EXPECT_EQ(read_all(reopened), want);
    EXPECT_EQ(read_bytes(table_), sound) << "rebuilt and saved again";
    EXPECT_TRUE(verify_store(store().string()).damaged.empty());
  }
}

TEST_F(StoreIntegrity, ADamagedTableOverADamagedIndexIsRefused) {
  randomize(table_, 128);
  // A byte of a sentence end changed: sizes and first and last entries still hold.
  const fs::path index = store() / "train" / "000000.index";
  std::string bytes = read_bytes(index);
  bytes[bytes.size() - 40] ^= 0x01;
  write_bytes(index, bytes);
  try {
    PreparedSplit(resolve_data_plan(config_), fixture_tokenizer(), Split::train);
    FAIL() << "a damaged index was read";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find(index.string() + ": checksum"), std::string::npos) << e.what();
  }
  const auto check = verify_store(store().string());
  ASSERT_EQ(check.damaged.size(), 2u) << ::testing::PrintToString(check.damaged);
  EXPECT_EQ(check.damaged[0].rfind(index.string() + ": ", 0), 0u) << check.damaged[0];
  EXPECT_EQ(check.damaged[1].rfind(table_ + ": ", 0), 0u) << check.damaged[1];
  EXPECT_NE(check.damaged[1].find("the index is damaged too"), std::string::npos) << check.damaged[1];
}

TEST_F(StoreIntegrity, AFlippedByteInAShardIsNamed) {
  const fs::path tokens = store() / "train" / "000001.tokens";
  std::string bytes = read_bytes(tokens);
  // The low bit of an id: still a valid id, so only the checksum tells.
  bytes[100] ^= 0x01;
  write_bytes(tokens, bytes);
  expect_damaged(tokens.string(), "checksum");
  // The high byte of an id: outside the vocabulary, refused by a run when it reads it.
  bytes[201] ^= 0x80;
  write_bytes(tokens, bytes);
  expect_damaged(tokens.string(), "checksum");
  const PreparedSplit split(resolve_data_plan(config_), fixture_tokenizer(), Split::train);
  try {
    read_all(split);
    FAIL() << "an id outside the vocabulary was read";
  } catch (const DataError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(tokens.string() + ": byte offset 200: token id ", 0), 0u) << e.what();
  }
}

TEST_F(StoreIntegrity, ATruncatedIndexIsNamed) {
  const fs::path index = store() / "valid" / "000000.index";
  fs::resize_file(index, fs::file_size(index) - 4);
  expect_damaged(index.string(), "truncated or damaged");
  EXPECT_THROW(PreparedStore(store().string(), Split::valid), DataError);
  EXPECT_NO_THROW(PreparedStore(store().string(), Split::train));
}

TEST_F(StoreIntegrity, AStoreWithoutChecksumsLoadsAndItsStructureIsChecked) {
  // The manifest as a version before checksums wrote it.
  auto manifest = read_json(store() / "manifest.json");
  const auto fingerprint = split_fingerprint(manifest, Split::train);
  manifest.erase("tables");
  for (auto& [name, split] : manifest["splits"].items()) {
    for (auto& shard : split["shards"]) {
      shard.erase("tokens_crc32");
      shard.erase("index_crc32");
    }
  }
  std::ofstream(store() / "manifest.json") << manifest.dump(1);
  EXPECT_EQ(split_fingerprint(manifest, Split::train), fingerprint) << "checksums are not the store's identity";
  const auto want =
      read_all(PreparedSplit(resolve_data_plan(config_), fixture_tokenizer(), Split::train));
  auto check = verify_store(store().string());
  EXPECT_TRUE(check.damaged.empty()) << ::testing::PrintToString(check.damaged);
  EXPECT_FALSE(check.checksums);

  // Without a checksum, a table's header and entries are checked against the store: random
  // bytes are named (entries with their byte offset) and the table rebuilt.
  const std::string sound = read_bytes(table_);
  const auto settings = SequenceTable::file_settings(table_);
  ASSERT_TRUE(settings.has_value());
  const PreparedStore train(store().string(), Split::train);
  for (const size_t from : {size_t{0}, size_t{128}}) {
    randomize(table_, from);
    expect_damaged(table_, from == 0 ? "not a sequence table" : "byte offset ");
    // What a run opening the split meets: damage named (then logged, and the table rebuilt).
    EXPECT_THROW(SequenceTable::load(table_, fingerprint, *settings, train), DataError);
    EXPECT_EQ(
        read_all(PreparedSplit(resolve_data_plan(config_), fixture_tokenizer(), Split::train)),
        want);
    EXPECT_EQ(read_bytes(table_), sound);
  }

  // An index whose sentence ends go backwards: named with the offset of the bad entry.
  const fs::path index = store() / "train" / "000000.index";
  std::string bytes = read_bytes(index);
  const size_t at = bytes.size() - 40;
  bytes.replace(at, 4, std::string(4, '\0'));
  write_bytes(index, bytes);
  fs::remove(table_);
  expect_damaged(index.string(), "byte offset " + std::to_string(at) + ": sentence ");
  EXPECT_THROW(PreparedSplit(resolve_data_plan(config_), fixture_tokenizer(), Split::train),
               DataError);
}

}  // namespace mlm::data::store_integrity_test
