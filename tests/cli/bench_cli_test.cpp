// mlm-bench end to end on the tiny config: --json prints one object whose figures are
// present and sane. Speed itself is never asserted here (docs/PERFORMANCE.md, benchmarks).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli_run.h"
#include "config/config_test_util.h"
#include "mlm/test_paths.h"

namespace mlm::cli {
namespace {

using config::testing::TempDir;
using testing::CliRun;
using testing::run_tool;

CliRun mlm_bench(const TempDir& dir, const std::vector<std::string>& args) {
  return run_tool("mlm-bench", dir, args, /*in_dir=*/true);
}

std::string tiny_config() { return std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml"; }

// The tiny config at a pinned shape, so the expectations below do not follow its edits.
const std::vector<std::string> kShape = {
    "--set", "model.num_hidden_layers=2", "--set", "model.hidden_size=128",
    "--set", "model.num_attention_heads=2", "--set", "model.intermediate_size=512",
    "--set", "train.micro_batch_size=8", "--set", "data.seq_len=64", "--set", "train.precision=fp32"};

std::vector<std::string> with_shape(std::vector<std::string> args) {
  args.insert(args.end(), kShape.begin(), kShape.end());
  return args;
}

void expect_positive_finite(const nlohmann::json& j, const char* key) {
  ASSERT_TRUE(j.contains(key)) << key << " missing in " << j.dump();
  ASSERT_TRUE(j[key].is_number()) << key << " is not a number in " << j.dump();
  const double v = j[key].get<double>();
  EXPECT_TRUE(std::isfinite(v) && v > 0) << key << " = " << v;
}

void expect_sane_report(const CliRun& run, const std::string& data) {
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // Exactly one JSON object on stdout (logs go to stderr).
  ASSERT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1) << run.out;
  const auto j = nlohmann::json::parse(run.out);
  for (const char* key : {"tokens_per_s", "step_s", "forward_s", "backward_s", "optimizer_s", "mfu",
                          "peak_gflops", "peak_rss_mb", "params", "batch", "seq_len", "layers",
                          "hidden", "vocab", "threads"}) {
    expect_positive_finite(j, key);
  }
  EXPECT_LE(j["mfu"].get<double>(), 1.0);
  EXPECT_EQ(j["precision"], "fp32");
  EXPECT_EQ(j["data"], data);
  // The shape the test sets (independent of edits to tiny.yaml's shape).
  EXPECT_EQ(j["layers"], 2);
  EXPECT_EQ(j["hidden"], 128);
  EXPECT_EQ(j["batch"], 8);
  EXPECT_EQ(j["seq_len"], 64);
  EXPECT_EQ(j["steps"], 2);
  // The phases add up to the step; the step's tokens over its time is tokens_per_s.
  const double parts = j["data_s"].get<double>() + j["forward_s"].get<double>() +
                       j["backward_s"].get<double>() + j["optimizer_s"].get<double>();
  EXPECT_NEAR(parts, j["step_s"].get<double>(), 1e-9 + 1e-6 * parts);
  EXPECT_NEAR(j["tokens_per_s"].get<double>() * j["step_s"].get<double>(),
              j["tokens_per_step"].get<double>(), 1e-6 * j["tokens_per_step"].get<double>());
  // A freshly initialised model (weights ~ N(0, 0.02)) predicts about uniformly: the loss is
  // near ln(vocab); two AdamW steps at lr 1e-3 cannot move it by more than a little.
  const double uniform = std::log(j["vocab"].get<double>());
  EXPECT_GT(j["loss"].get<double>(), uniform - 1.5);
  EXPECT_LT(j["loss"].get<double>(), uniform + 1.5);
}

TEST(BenchCli, SyntheticJsonReportsSaneFields) {
  TempDir dir;
  const auto run = mlm_bench(dir, with_shape({"--config", tiny_config(), "--steps", "2", "--warmup",
                                              "1", "--json", "--set", "model.vocab_size=1000"}));
  expect_sane_report(run, "synthetic");
  // Synthetic batches have no padding: every position is a token.
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["vocab"], 1000);
  EXPECT_EQ(j["tokens_per_step"].get<double>(), 8.0 * 64.0);
}

TEST(BenchCli, RealPipelineJsonReportsSaneFields) {
  TempDir dir;
  const std::string corpus = std::string(MLM_FIXTURES_DIR) + "/corpus/train.txt";
  const auto run = mlm_bench(
      dir, with_shape({"--config", tiny_config(), "--steps", "2", "--warmup", "1", "--json", "--data",
                       "--set", "tokenizer.model=" + (dir.path() / "spm.model").string(), "--set",
                       "data.train_files=[" + corpus + "]"}));
  expect_sane_report(run, "pipeline");
}

TEST(BenchCli, BadStepsIsOneLineUsageError) {
  TempDir dir;
  const auto run = mlm_bench(dir, {"--config", tiny_config(), "--steps", "0"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_NE(run.err.find("--steps"), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty()) << run.out;
}

TEST(BenchCli, NonMlmObjectiveIsConfigError) {
  TempDir dir;
  const auto run = mlm_bench(dir, {"--config", tiny_config(), "--set", "model.objective=nsp"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("model.objective"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace mlm::cli
