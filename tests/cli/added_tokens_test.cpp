// tokenizer.add_tokens on continued pretraining, end to end: a hub-layout encoder continued with
// domain terms added (RoBERTa: its rows grow; ModernBERT: the new ids land in its padded rows),
// one step at a negligible learning rate so that the checkpoint shows the rows as initialised,
// the export loaded by `transformers` without missing or unexpected keys, its tokenizer giving
// each term our id, the term's row the mean of the hub's rows of the pieces it replaced.
#include <gtest/gtest.h>

#include "cli/hf_client.h"
#include "mlm/text/tokenizer.h"

// Named, not anonymous: the unity build compiles the cli tests together.
namespace mlm::cli::added_tokens {

namespace fs = std::filesystem;
using config::testing::TempDir;
using namespace testing;

const std::vector<std::string> kTerms = {"neurotransmitter", "CRISPR-Cas9"};

class AddedTokens : public ::testing::TestWithParam<std::string> {};

TEST_P(AddedTokens, NewRowsStartAtTheirPiecesMeanAndTheExportKnowsTheTerms) {
  TempDir dir;
  const auto hub = dir.path() / "hub";
  const auto shape = transformers_side(dir, {"hub_encoder", GetParam(), hub.string(), fixture_corpus("train.txt")});
  std::vector<std::string> run = {"--config", std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml",
                                  "--set", "tokenizer.type=hf",
                                  "--set", "tokenizer.model=" + hub.string(),
                                  "--set", "tokenizer.add_tokens=[" + kTerms[0] + "," + kTerms[1] + "]",
                                  "--set", "data.train_files=[" + fixture_corpus("train.txt") + "]",
                                  "--set", "data.valid_files=[" + fixture_corpus("valid.txt") + "]",
                                  "--set", "train.threads=1", "--set", "logging.progress_bar=off",
                                  "--set", "model.init_from=" + hub.string(),
                                  "--set", "train.output_dir=" + (dir.path() / "run").string(),
                                  "--set", "checkpoint.every_steps=0", "--set", "train.max_steps=1",
                                  "--set", "schedule.warmup_steps=0", "--set", "optim.learning_rate=1.0e-9",
                                  "--set", "eval.every_steps=0"};
  for (const auto& [key, value] : shape.items())
    run.insert(run.end(), {"--set", "model." + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump())});
  const CliRun trained = run_tool("mlm-train", dir, run, false);
  ASSERT_EQ(trained.exit_code, 0) << trained.err;

  const auto exported = export_to(dir, dir.path() / "run" / "checkpoints" / "step_00000001", "export");
  const auto loaded = transformers_side(dir, {"load", "AutoModelForMaskedLM", exported.string()})[exported.string()];
  EXPECT_EQ(loaded["missing"], nlohmann::json::array());
  EXPECT_EQ(loaded["unexpected"], nlohmann::json::array());
  EXPECT_EQ(loaded["mismatched"], nlohmann::json::array());

  std::vector<std::string> args = {"added_rows", hub.string(), exported.string()};
  args.insert(args.end(), kTerms.begin(), kTerms.end());
  const auto rows = transformers_side(dir, args);
  const int64_t pieces = rows["len_before"];
  EXPECT_EQ(rows["len_after"].get<int64_t>(), pieces + 2);
  if (GetParam() == "modernbert") {
    EXPECT_EQ(rows["rows_after"], rows["rows_before"]) << "the new ids fit in the padded rows";
  } else {
    EXPECT_EQ(rows["rows_after"].get<int64_t>(), pieces + 2);
  }
  EXPECT_LT(rows["old_rows_max_change"].get<double>(), 1e-6) << "the hub's rows, one step at lr 1e-9";

  const auto ours = text::Tokenizer::load_hf(hub.string()).with_added_tokens(kTerms);
  for (size_t k = 0; k < kTerms.size(); ++k) {
    const auto& term = rows["terms"][kTerms[k]];
    EXPECT_EQ(term["id"].get<int64_t>(), pieces + static_cast<int64_t>(k)) << kTerms[k];
    EXPECT_GT(term["pieces"].size(), 1u) << kTerms[k];
    EXPECT_EQ(ours.encode("the " + kTerms[k] + " and " + kTerms[k] + "."), term["in_a_line"].get<std::vector<int32_t>>())
        << kTerms[k];
    EXPECT_LT(term["distance_from_mean"].get<double>(), 1e-6) << kTerms[k] << " " << term;
  }
}

// A resume reads the grown rows from the checkpoint (never re-initialising them): a run stopped
// after step 1 and resumed ends at step 2 with the very weights of the straight run.
TEST(AddedTokensResume, ResumedRunEqualsTheStraightOneBitForBit) {
  TempDir dir;
  const auto hub = dir.path() / "hub";
  const auto shape = transformers_side(dir, {"hub_encoder", "roberta", hub.string(), fixture_corpus("train.txt")});
  const auto args = [&](const fs::path& out) {
    std::vector<std::string> run = {"--config", std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml",
                                    "--set", "tokenizer.type=hf", "--set", "tokenizer.model=" + hub.string(),
                                    "--set", "tokenizer.add_tokens=[" + kTerms[0] + "," + kTerms[1] + "]",
                                    "--set", "data.train_files=[" + fixture_corpus("train.txt") + "]",
                                    "--set", "data.valid_files=[" + fixture_corpus("valid.txt") + "]",
                                    "--set", "train.threads=1", "--set", "logging.progress_bar=off",
                                    "--set", "model.init_from=" + hub.string(), "--set", "train.output_dir=" + out.string(),
                                    "--set", "checkpoint.every_steps=1", "--set", "checkpoint.keep_last=3",
                                    "--set", "train.max_steps=2", "--set", "eval.every_steps=0"};
    for (const auto& [key, value] : shape.items())
      run.insert(run.end(), {"--set", "model." + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump())});
    return run;
  };
  const auto straight = dir.path() / "straight", resumed = dir.path() / "resumed";
  const CliRun first = run_tool("mlm-train", dir, args(straight), false);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  fs::copy(straight, resumed, fs::copy_options::recursive);
  fs::remove_all(resumed / "checkpoints" / "step_00000002");
  auto resume = args(resumed);
  resume.insert(resume.end(), {"--resume", "latest"});
  const CliRun second = run_tool("mlm-train", dir, resume, false);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.err.find("from step 1"), std::string::npos) << "not resumed: " << second.err;
  const auto weights = [](const fs::path& run) { return slurp((run / "checkpoints" / "step_00000002" / "model.pt").string()); };
  ASSERT_FALSE(weights(straight).empty());
  EXPECT_TRUE(weights(straight) == weights(resumed)) << "the resumed run's step-2 weights differ";
}

INSTANTIATE_TEST_SUITE_P(Families, AddedTokens, ::testing::Values("roberta", "modernbert"),
                         [](const auto& info) { return info.param; });

}  // namespace mlm::cli::added_tokens
