// mlm-data prepare over the test corpus as its producers wrote it in each format
// (tests/fixtures/produce_corpora.py): the store is the one train.txt gives, byte for byte, and
// a damaged file is one error line with exit code 2 and no store.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/cli_run.h"
#include "config/config_test_util.h"
#include "mlm/test_paths.h"

// A named namespace: the unity build compiles the cli tests together.
namespace mlm::cli::prepare_formats_cli {

namespace fs = std::filesystem;
using config::testing::TempDir;
using testing::CliRun;
using testing::run_tool;

std::string produced(const std::string& name) {
  return std::string(MLM_PRODUCED_CORPORA_DIR) + "/" + name;
}

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

/// Prepares `train_file` into dir/<store> with the tokenizer dir/spm.model (trained by the
/// first call).
CliRun prepare(const TempDir& dir, const std::string& store, const std::string& train_file) {
  const auto config = dir.write(
      "prepare.yaml", "tokenizer:\n  model: " + (dir.path() / "spm.model").string() +
                          "\n  train_if_missing: true\n  vocab_size: 200\ndata:\n  valid_files: [" +
                          std::string(MLM_FIXTURES_DIR) + "/corpus/valid.txt]\n");
  return run_tool("mlm-data", dir,
                  {"prepare", "--config", config, "--set", "data.store=" + (dir.path() / store).string(),
                   "--set", "data.train_files=[" + train_file + "]"},
                  /*in_dir=*/true);
}

TEST(PrepareFormatsCli, EveryFormatGivesTheStoreOfTheTextFile) {
  TempDir dir;
  const CliRun text = prepare(dir, "text", std::string(MLM_FIXTURES_DIR) + "/corpus/train.txt");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  ASSERT_GT(fs::file_size(dir.path() / "text" / "train" / "000000.tokens"), 10000u);
  for (const char* name : {"train.parquet", "train_dict.parquet", "train_saved", "train.jsonl.zst",
                           "train.txt.zst", "train.csv", "train.tsv"}) {
    std::string store = name;
    std::replace(store.begin(), store.end(), '.', '_');
    const CliRun run = prepare(dir, store, produced(name));
    ASSERT_EQ(run.exit_code, 0) << name << ": " << run.err;
    for (const char* file : {"train/000000.tokens", "train/000000.index"}) {
      ASSERT_TRUE(fs::exists(dir.path() / store / file)) << name << ": " << file;
      EXPECT_EQ(read_bytes(dir.path() / store / file), read_bytes(dir.path() / "text" / file))
          << name << ": " << file;
    }
  }
}

TEST(PrepareFormatsCli, ADamagedFileIsOneDataErrorLineAndNoStore) {
  TempDir dir;
  for (const char* name : {"bad/no_text_column.parquet", "bad/int_text.parquet", "bad/truncated.parquet",
                           "bad/cut.jsonl.zst", "bad/unclosed.csv", "bad/parquet_named.jsonl"}) {
    const CliRun run = prepare(dir, "store", produced(name));
    EXPECT_EQ(run.exit_code, 2) << name << ": " << run.err;
    const auto errors = testing::log_free_lines(run.err);
    ASSERT_EQ(errors.size(), 1u) << name << ": " << run.err;
    EXPECT_EQ(errors[0].rfind("mlm-data: data error: ", 0), 0u) << errors[0];
    EXPECT_NE(errors[0].find(produced(name)), std::string::npos) << errors[0];
    EXPECT_FALSE(fs::exists(dir.path() / "store" / "manifest.json")) << name;
  }
}

// mlm-train checks every file of its corpus (signature, a table's text column) before it
// writes into its run directory: a damaged file leaves the directory without config.yaml or
// metrics.jsonl.
TEST(PrepareFormatsCli, TrainingOnADamagedFileWritesNothingIntoTheRunDirectory) {
  TempDir dir;
  // The tokenizer first, trained by mlm-data prepare on the good corpus.
  ASSERT_EQ(prepare(dir, "store", std::string(MLM_FIXTURES_DIR) + "/corpus/train.txt").exit_code, 0);
  for (const char* name : {"bad/no_text_column.parquet", "bad/int_text.parquet", "bad/truncated.parquet",
                           "bad/cut.jsonl.zst", "bad/jsonl_named.parquet"}) {
    const auto run_dir = dir.path() / ("run_" + std::to_string(std::hash<std::string>{}(name)));
    const CliRun run = run_tool(
        "mlm-train", dir,
        {"--config", std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml",
         "--set", "tokenizer.model=" + (dir.path() / "spm.model").string(),
         "--set", "tokenizer.vocab_size=200",
         "--set", "data.train_files=[" + produced(name) + "]",
         "--set", "data.valid_files=[" + std::string(MLM_FIXTURES_DIR) + "/corpus/valid.txt]",
         "--set", "train.output_dir=" + run_dir.string(), "--set", "train.max_steps=4",
         "--set", "train.threads=1", "--set", "logging.progress_bar=off"},
        /*in_dir=*/true);
    EXPECT_EQ(run.exit_code, 2) << name << ": " << run.err;
    const auto errors = testing::log_free_lines(run.err);
    ASSERT_EQ(errors.size(), 1u) << name << ": " << run.err;
    EXPECT_EQ(errors[0].rfind("mlm-train: data error: data.train_files: ", 0), 0u) << errors[0];
    EXPECT_NE(errors[0].find(produced(name)), std::string::npos) << errors[0];
    EXPECT_FALSE(fs::exists(run_dir / "config.yaml")) << name;
    EXPECT_FALSE(fs::exists(run_dir / "metrics.jsonl")) << name;
  }
}

}  // namespace mlm::cli::prepare_formats_cli
