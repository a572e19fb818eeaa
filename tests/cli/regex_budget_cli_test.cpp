// A downloaded tokenizer.json whose Split pattern backtracks without bound, on an ordinary
// long line of the corpus: the real mlm-data prepare (the store's path) and mlm-train (the
// streaming path) stop with exit 2 and one stderr line naming the tokenizer file, the pattern
// and the corpus position, instead of hanging with no output until killed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "cli/cli_run.h"
#include "config/config_test_util.h"

// A named namespace: the unity build compiles the cli tests together.
namespace mlm::cli::regex_budget {

namespace fs = std::filesystem;
using config::testing::TempDir;
using testing::CliRun;
using testing::run_tool;

// A small BPE pipeline as the hub lays it out (tokenizer.json + tokenizer_config.json), whose
// one pre-tokenizer is a Split on a nested quantifier.
fs::path write_hostile_tokenizer(const TempDir& dir) {
  const fs::path out = dir.path() / "hub_tokenizer";
  fs::create_directories(out);
  nlohmann::json vocab = {{"<s>", 0}, {"</s>", 1}, {"<pad>", 2}, {"<unk>", 3}, {"<mask>", 4}};
  for (char c = 'a'; c <= 'z'; ++c) vocab[std::string(1, c)] = static_cast<int>(vocab.size());
  const nlohmann::json tokenizer = {
      {"version", "1.0"},
      {"pre_tokenizer",
       {{"type", "Split"}, {"pattern", {{"Regex", "(a+)+$"}}}, {"behavior", "Isolated"}, {"invert", false}}},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", nlohmann::json::array()}, {"unk_token", "<unk>"}}}};
  std::ofstream(out / "tokenizer.json") << tokenizer.dump();
  std::ofstream(out / "tokenizer_config.json")
      << R"({"bos_token": "<s>", "cls_token": "<s>", "eos_token": "</s>", "sep_token": "</s>",
            "pad_token": "<pad>", "unk_token": "<unk>", "mask_token": "<mask>"})";
  return out;
}

// Three ordinary documents, then one whose line ends in a run of 40 letters and a '!'.
std::string write_corpus(const TempDir& dir) {
  std::string text;
  for (int i = 0; i < 3; ++i) text += "the cat sat on the mat and looked at the door\n\n";
  text += "a line of the corpus that ends in " + std::string(40, 'a') + "!\n";
  return dir.write("corpus.txt", text);
}

std::vector<std::string> run_args(const TempDir& dir, const fs::path& tokenizer, const std::string& corpus) {
  return {"--config", std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml",
          "--set", "tokenizer.type=hf",
          "--set", "tokenizer.model=" + tokenizer.string(),
          "--set", "data.train_files=[" + corpus + "]",
          "--set", "data.valid_files=[" + corpus + "]",
          "--set", "train.output_dir=" + (dir.path() / "run").string(),
          "--set", "train.threads=1", "--set", "logging.progress_bar=off"};
}

void expect_one_error_line(const CliRun& run, const std::string& tool, const std::vector<std::string>& pieces) {
  EXPECT_EQ(run.exit_code, 2) << run.err;
  const auto errors = testing::log_free_lines(run.err);
  ASSERT_EQ(errors.size(), 1u) << run.err;
  EXPECT_EQ(errors[0].rfind(tool + ": data error: ", 0), 0u) << errors[0];
  for (const auto& piece : pieces) {
    EXPECT_NE(errors[0].find(piece), std::string::npos) << "missing \"" << piece << "\" in " << errors[0];
  }
}

TEST(RegexBudgetCli, PrepareStopsWithTheTokenizerThePatternAndTheCorpusPosition) {
  TempDir dir;
  const fs::path tokenizer = write_hostile_tokenizer(dir);
  const std::string corpus = write_corpus(dir);
  auto args = run_args(dir, tokenizer, corpus);
  args.insert(args.begin(), "prepare");
  args.insert(args.end(), {"--set", "data.store=" + (dir.path() / "store").string()});
  const CliRun run = run_tool("mlm-data", dir, args, /*in_dir=*/false);
  // The fourth document starts on line 7, after three of two lines each.
  expect_one_error_line(run, "mlm-data",
                        {tokenizer.string(), "'(a+)+$'", "step budget", corpus + ":7 (byte ",
                         "tokenizer.regex_step_limit"});
}

TEST(RegexBudgetCli, TrainStopsTheSameWay) {
  TempDir dir;
  const fs::path tokenizer = write_hostile_tokenizer(dir);
  const std::string corpus = write_corpus(dir);
  auto args = run_args(dir, tokenizer, corpus);
  args.insert(args.end(), {"--set", "train.max_steps=2", "--set", "eval.every_steps=0"});
  const CliRun run = run_tool("mlm-train", dir, args, /*in_dir=*/false);
  expect_one_error_line(run, "mlm-train", {tokenizer.string(), "'(a+)+$'", corpus + ":7 (byte "});
}

// The setting reaches the commands: under a budget of 0 (no limit) the same 40-letter line
// would run for hours, so this checks the other direction: a budget of 1 stops even a line
// that the default lets through (12 letters, ~1 unit of backtracking).
TEST(RegexBudgetCli, TheSettingReachesTheCommand) {
  TempDir dir;
  const fs::path tokenizer = write_hostile_tokenizer(dir);
  const std::string corpus = dir.write("corpus.txt", "short " + std::string(12, 'a') + "!\n");
  auto args = run_args(dir, tokenizer, corpus);
  args.insert(args.begin(), "prepare");
  args.insert(args.end(), {"--set", "data.store=" + (dir.path() / "store").string()});
  ASSERT_EQ(run_tool("mlm-data", dir, args, false).exit_code, 0);
  fs::remove_all(dir.path() / "store");
  args.insert(args.end(), {"--set", "tokenizer.regex_step_limit=1"});
  expect_one_error_line(run_tool("mlm-data", dir, args, false), "mlm-data",
                        {"step budget (1 units of 10,000 ICU steps", corpus + ":1 (byte 0)"});
}

}  // namespace mlm::cli::regex_budget
