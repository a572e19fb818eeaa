// A run with tokenizer.type wordpiece end to end: mlm-train loads a Hugging Face BERT
// tokenizer directory (vocab.txt + tokenizer_config.json, never trained), its checkpoint
// holds the tokenizer (tokenizer.model = the tokenizer.json text) so that --resume and
// mlm-eval work from the checkpoint alone, and a resume with another tokenizer is refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "cli/cli_run.h"
#include "config/config_test_util.h"
#include "mlm/text/tokenizer.h"
#include "text/wordpiece_fixture.h"

// A named namespace, not an anonymous one: the unity build compiles this file together with
// the other cli tests, whose anonymous-namespace helpers have the same names.
namespace mlm::cli::wordpiece_run {

namespace fs = std::filesystem;
using testing::CliRun;
using testing::run_tool;
using TempDir = config::testing::TempDir;

fs::path reference_case(const char* name) { return mlm::testing::wordpiece_reference_dir() / name; }

std::vector<std::string> train_args(const fs::path& run_dir, const fs::path& tokenizer,
                                    int64_t max_steps) {
  const std::string corpus = std::string(MLM_FIXTURES_DIR) + "/corpus/";
  return {"--config", std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml",
          "--set", "tokenizer.type=wordpiece",
          "--set", "tokenizer.model=" + tokenizer.string(),
          "--set", "train.output_dir=" + run_dir.string(),
          "--set", "data.train_files=[" + corpus + "train.txt]",
          "--set", "data.valid_files=[" + corpus + "valid.txt]",
          "--set", "train.max_steps=" + std::to_string(max_steps),
          "--set", "checkpoint.every_steps=2",
          "--set", "eval.max_batches=1",
          "--set", "train.threads=1",
          "--set", "logging.progress_bar=off"};
}

void expect_one_line_error(const CliRun& run, const std::vector<std::string>& pieces) {
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  for (const auto& piece : pieces) {
    EXPECT_NE(run.err.find(piece), std::string::npos) << "\"" << piece << "\" not in " << run.err;
  }
}

TEST(WordPieceRunCli, CheckpointHoldsTheTokenizerForResumeAndEval) {
  TempDir dir;
  const fs::path run_dir = dir.path() / "run";
  const fs::path hf_tokenizer = reference_case("uncased");
  const CliRun first = run_tool("mlm-train", dir, train_args(run_dir, hf_tokenizer, 2), false);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const fs::path step2 = run_dir / "checkpoints" / "step_00000002";
  ASSERT_TRUE(fs::exists(step2 / "DONE"));

  // The checkpoint's copy is the tokenizer itself: same bytes, same ids.
  const auto original = text::Tokenizer::load(hf_tokenizer.string());
  const auto saved = text::Tokenizer::load((step2 / "tokenizer.model").string());
  EXPECT_EQ(saved.kind(), text::TokenizerKind::wordpiece);
  EXPECT_EQ(saved.serialized_model(), original.serialized_model());
  const std::string text = "The engineer repaired the kitchen window. Café, naïve 東京!";
  EXPECT_EQ(saved.encode(text), original.encode(text));

  // --resume from the checkpoint continues to step 4.
  auto resume = train_args(run_dir, hf_tokenizer, 4);
  resume.insert(resume.end(), {"--resume", "latest"});
  const CliRun resumed = run_tool("mlm-train", dir, resume, false);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_TRUE(fs::exists(run_dir / "checkpoints" / "step_00000004" / "DONE"));

  // mlm-eval reads the tokenizer from the checkpoint (the config names no wordpiece model).
  const CliRun eval = run_tool(
      "mlm-eval", dir,
      {"--config", std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml", "--set",
       "data.valid_files=[" + std::string(MLM_FIXTURES_DIR) + "/corpus/valid.txt]", "--set",
       "eval.max_batches=1", "--set", "train.threads=1", "--checkpoint",
       (run_dir / "checkpoints" / "step_00000004").string(), "--json"},
      false);
  ASSERT_EQ(eval.exit_code, 0) << eval.err;
  EXPECT_GT(nlohmann::json::parse(eval.out)["num_masked"].get<int64_t>(), 0);

  // Another tokenizer (cased: other normalizer options, same vocabulary) is refused, exit 2;
  // the error is the last line (the resume logs the changed settings first).
  auto other = train_args(run_dir, reference_case("cased"), 6);
  other.insert(other.end(), {"--resume", "latest"});
  const CliRun refused = run_tool("mlm-train", dir, other, false);
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  const std::string last = refused.err.substr(refused.err.rfind('\n', refused.err.size() - 2) + 1);
  EXPECT_NE(last.find("config error: tokenizer.model"), std::string::npos) << refused.err;
  EXPECT_NE(last.find("is not the tokenizer"), std::string::npos) << refused.err;
  EXPECT_FALSE(fs::exists(run_dir / "checkpoints" / "step_00000006"));
}

TEST(WordPieceRunCli, MissingWordpieceModelWithoutTrainingIsOneLineNamingTheKey) {
  TempDir dir;
  const fs::path missing = dir.path() / "no_such_bert";
  auto args = train_args(dir.path() / "run", missing, 2);
  args.insert(args.end(), {"--set", "tokenizer.train_if_missing=false"});
  expect_one_line_error(run_tool("mlm-train", dir, args, false), {"tokenizer.model", missing.string(), "train_if_missing"});
}

// wordpiece and byte_level_bpe train a tokenizer.json directory; hf is only loaded.
TEST(WordPieceRunCli, MlmTokenizerTrainsWordpieceAndByteLevelBpeButNotHf) {
  TempDir dir;
  const std::string corpus = std::string(MLM_FIXTURES_DIR) + "/corpus/train.txt";
  const auto args = [&](const char* type, const fs::path& model) {
    return std::vector<std::string>{"--config", std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml",
                                    "--set", std::string("tokenizer.type=") + type,
                                    "--set", "tokenizer.model=" + model.string(),
                                    "--set", "tokenizer.vocab_size=400",
                                    "--set", "data.train_files=[" + corpus + "]"};
  };
  for (const char* type : {"wordpiece", "byte_level_bpe"}) {
    const fs::path model = dir.path() / type;
    const CliRun run = run_tool("mlm-tokenizer", dir, args(type, model), false);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.out.find("vocab_size 400"), std::string::npos) << run.out;
    EXPECT_TRUE(fs::exists(model / "tokenizer.json"));
    EXPECT_TRUE(fs::exists(model / "tokenizer_config.json"));
  }
  const CliRun hf = run_tool("mlm-tokenizer", dir, args("hf", dir.path() / "hf"), false);
  expect_one_line_error(hf, {"tokenizer.type", "hf", "not trained"});
  EXPECT_FALSE(fs::exists(dir.path() / "hf"));
}

}  // namespace mlm::cli::wordpiece_run
