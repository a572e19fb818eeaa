// mlm-data prepare end to end with the real binary: a store and a one-line JSON summary,
// "already prepared" on a rerun, and bad input as one error line with exit code 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "cli/cli_run.h"
#include "config/config_test_util.h"
#include "mlm/test_paths.h"

// A named namespace: the unity build compiles the cli tests together (others have a fixture()).
namespace mlm::cli::prepare_cli {

namespace fs = std::filesystem;
using config::testing::TempDir;
using testing::CliRun;
using testing::log_free_lines;
using testing::run_tool;

std::string fixture(const std::string& name) { return std::string(MLM_FIXTURES_DIR) + "/corpus/" + name; }

/// A config of its own: the tokenizer (trained on first use) and the corpus by absolute path.
std::string write_config(const TempDir& dir, const std::string& tokenizer = "spm.model",
                         int vocab_size = 200) {
  return dir.write("prepare.yaml",
                   "tokenizer:\n  model: " + (dir.path() / tokenizer).string() +
                       "\n  train_if_missing: true\n  vocab_size: " + std::to_string(vocab_size) +
                       "\ndata:\n  train_files: [" + fixture("train.txt") + ", " + fixture("docs.jsonl") +
                       "]\n  valid_files: [" + fixture("valid.txt") + "]\n");
}

CliRun prepare(const TempDir& dir, std::vector<std::string> args) {
  args.insert(args.begin(), "prepare");
  return run_tool("mlm-data", dir, args, /*in_dir=*/true);
}

void expect_one_error_line(const CliRun& run, const std::vector<std::string>& pieces) {
  EXPECT_EQ(run.exit_code, 2) << run.err;
  const auto lines = log_free_lines(run.err);
  ASSERT_EQ(lines.size(), 1u) << run.err;
  EXPECT_EQ(lines[0].rfind("mlm-data: ", 0), 0u) << lines[0];
  for (const auto& piece : pieces) {
    EXPECT_NE(lines[0].find(piece), std::string::npos) << "missing \"" << piece << "\" in " << lines[0];
  }
  EXPECT_TRUE(run.out.empty()) << run.out;
}

TEST(PrepareCli, WritesTheStoreAndPrintsAOneLineSummary) {
  TempDir dir;
  const std::string store = (dir.path() / "store").string();
  const auto config = write_config(dir);
  const CliRun run = prepare(dir, {"--config", config, "--set", "data.store=" + store, "--threads", "2"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1) << run.out;
  const auto summary = nlohmann::json::parse(run.out);
  for (const char* key : {"documents", "sentences", "tokens", "input_mb", "seconds", "mb_per_s",
                          "tokens_per_s", "threads"}) {
    ASSERT_TRUE(summary.contains(key)) << key << " missing in " << run.out;
  }
  EXPECT_GT(summary["tokens"].get<int64_t>(), summary["sentences"].get<int64_t>());
  EXPECT_GT(summary["sentences"].get<int64_t>(), summary["documents"].get<int64_t>());
  EXPECT_EQ(summary["threads"], 2);
  EXPECT_EQ(summary["already_prepared"], false);
  EXPECT_TRUE(fs::exists(fs::path(store) / "manifest.json"));
  EXPECT_TRUE(fs::exists(fs::path(store) / "train" / "000000.tokens"));
  EXPECT_TRUE(fs::exists(fs::path(store) / "valid" / "000000.index"));

  const CliRun again = prepare(dir, {"--config", config, "--set", "data.store=" + store});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("already prepared"), std::string::npos) << again.err;
  const auto same = nlohmann::json::parse(again.out);
  EXPECT_EQ(same["already_prepared"], true);
  EXPECT_EQ(same["tokens"], summary["tokens"]);
}

TEST(PrepareCli, MissingStoreIsAUsageErrorNamingDataStore) {
  TempDir dir;
  expect_one_error_line(prepare(dir, {"--config", write_config(dir)}), {"data.store"});
}

TEST(PrepareCli, UnreadableFileIsOneDataErrorLine) {
  TempDir dir;
  const std::string missing = (dir.path() / "nowhere.txt").string();
  const CliRun run = prepare(dir, {"--config", write_config(dir), "--set", "data.store=store", "--set",
                                   "data.train_files=[" + missing + "]"});
  expect_one_error_line(run, {"data error", missing});
  EXPECT_FALSE(fs::exists(dir.path() / "store" / "manifest.json"));
}

TEST(PrepareCli, CompleteStoreOfAnotherTokenizerIsRefusedUntilOverwrite) {
  TempDir dir;
  const std::string store = (dir.path() / "store").string();
  ASSERT_EQ(prepare(dir, {"--config", write_config(dir), "--set", "data.store=" + store}).exit_code, 0);
  const auto other = write_config(dir, "other.model", 150);
  const CliRun refused = prepare(dir, {"--config", other, "--set", "data.store=" + store});
  expect_one_error_line(refused, {"data.store", store, "another tokenizer", "--overwrite"});

  const CliRun overwritten = prepare(dir, {"--config", other, "--set", "data.store=" + store, "--overwrite"});
  ASSERT_EQ(overwritten.exit_code, 0) << overwritten.err;
  EXPECT_EQ(nlohmann::json::parse(overwritten.out)["already_prepared"], false);
}

TEST(PrepareCli, VerifyPassesASoundStoreAndNamesADamagedTableWithExitCode2) {
  TempDir dir;
  const std::string store = (dir.path() / "store").string();
  const auto config = write_config(dir);
  ASSERT_EQ(prepare(dir, {"--config", config, "--set", "data.store=" + store}).exit_code, 0);
  const auto verify = [&] {
    return run_tool("mlm-data", dir, {"verify", "--config", config, "--set", "data.store=" + store}, true);
  };
  const CliRun sound = verify();
  ASSERT_EQ(sound.exit_code, 0) << sound.err;
  const auto summary = nlohmann::json::parse(sound.out);
  EXPECT_EQ(summary["sound"], true) << sound.out;
  EXPECT_EQ(summary["checksums"], true) << sound.out;

  // The sequence table overwritten with random bytes of the same size.
  const auto manifest = nlohmann::json::parse(std::ifstream(fs::path(store) / "manifest.json"));
  ASSERT_FALSE(manifest["tables"].empty());
  const fs::path table = fs::path(store) / manifest["tables"].begin().key();
  std::string bytes(fs::file_size(table), '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 2654435761u) >> 13);
  std::ofstream(table, std::ios::binary | std::ios::trunc) << bytes;
  const CliRun damaged = verify();
  EXPECT_EQ(damaged.exit_code, 2) << damaged.err;
  const auto lines = log_free_lines(damaged.err);
  ASSERT_EQ(lines.size(), 1u) << damaged.err;
  EXPECT_NE(lines[0].find("mlm-data: data error: " + table.string() + ": "), std::string::npos) << lines[0];
  EXPECT_EQ(nlohmann::json::parse(damaged.out)["sound"], false) << damaged.out;
}

TEST(PrepareCli, HelpNamesTheOptions) {
  TempDir dir;
  const CliRun run = prepare(dir, {"--help"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  for (const char* option : {"--threads", "--overwrite"}) {
    EXPECT_NE(run.out.find(option), std::string::npos) << option << " missing from\n" << run.out;
  }
}

}  // namespace mlm::cli::prepare_cli
