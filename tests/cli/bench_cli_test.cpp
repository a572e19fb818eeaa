// mlm-bench end to end on the tiny config: --json prints one object whose figures are
// present and sane; --peak-gflops is the MFU's denominator; --peak-only reports the square
// and the model-shape peaks. Speed itself is never asserted here (docs/PERFORMANCE.md,
// benchmarks).
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
  EXPECT_EQ(j["peak_source"], "in-process");
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

// The pinned shape's training FLOPs per token, written out from docs/ARCHITECTURE.md's formula
// (BERT, sparse head at masking.mlm_probability 0.15, vocabulary 1000):
// 3 x (2·L·(4H² + 2HI) + 4·L·S·H + 2·p·(H² + H·V)).
double pinned_train_flops_per_token() {
  const double L = 2, H = 128, I = 512, S = 64, V = 1000, p = 0.15;
  return 3 * (2 * L * (4 * H * H + 2 * H * I) + 4 * L * S * H + 2 * p * (H * H + H * V));
}

TEST(BenchCli, GivenPeakIsTheMfuDenominator) {
  TempDir dir;
  const auto run = mlm_bench(dir, with_shape({"--config", tiny_config(), "--steps", "2", "--warmup", "1",
                                              "--json", "--set", "model.vocab_size=1000", "--peak-gflops",
                                              "123.5"}));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["peak_gflops"].get<double>(), 123.5);
  EXPECT_EQ(j["peak_source"], "shared");
  const double want = j["tokens_per_s"].get<double>() * pinned_train_flops_per_token() / 123.5e9;
  EXPECT_NEAR(j["mfu"].get<double>(), want, 1e-9 * want) << run.out;
}

// The products of the pinned shape: 8 x 64 = 512 tokens, 77 masked (round(512 x 0.15)), the
// vocabulary of 1000 padded to 1024 rows; two layers each.
TEST(BenchCli, PeakOnlyJsonReportsSquareAndModelShapes) {
  TempDir dir;
  // One thread: two spinning OpenMP threads on busy shared cores made small products crawl.
  const auto run = mlm_bench(dir, with_shape({"--config", tiny_config(), "--peak-only", "--json",
                                              "--peak-repeats", "1", "--set", "model.vocab_size=1000",
                                              "--set", "train.threads=1"}));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1) << run.out;
  const auto j = nlohmann::json::parse(run.out);
  for (const char* key : {"square_gflops", "model_gflops", "products_share", "threads", "train_flops_per_token"}) {
    expect_positive_finite(j, key);
  }
  EXPECT_EQ(j["square_n"], 2048);
  EXPECT_EQ(j["precision"], "fp32");
  EXPECT_EQ(j["device"], "cpu");
  EXPECT_EQ(j["repeats"], 1);
  EXPECT_EQ(j["threads"], 1);
  EXPECT_EQ(j["vocab"], 1000);
  EXPECT_EQ(j["vocab_rows"], 1024);
  EXPECT_NEAR(j["train_flops_per_token"].get<double>(), pinned_train_flops_per_token(),
              1e-12 * pinned_train_flops_per_token());

  struct Want {
    const char* name;
    int64_t m, k, n, per_step;
  };
  const std::vector<Want> want = {{"qkv", 512, 128, 384, 2},          {"attention_out", 512, 128, 128, 2},
                                  {"ffn_in", 512, 128, 512, 2},       {"ffn_out", 512, 512, 128, 2},
                                  {"head_transform", 77, 128, 128, 1}, {"decoder", 77, 128, 1024, 1}};
  const auto& shapes = j["shapes"];
  ASSERT_EQ(shapes.size(), want.size()) << shapes.dump();
  double product_flops = 0, seconds = 0, slowest = 1e300, fastest = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    const auto& s = shapes[i];
    EXPECT_EQ(s["name"], want[i].name);
    EXPECT_EQ(s["m"], want[i].m) << want[i].name;
    EXPECT_EQ(s["k"], want[i].k) << want[i].name;
    EXPECT_EQ(s["n"], want[i].n) << want[i].name;
    EXPECT_EQ(s["per_step"], want[i].per_step) << want[i].name;
    for (const char* key : {"forward_gflops", "input_grad_gflops", "weight_grad_gflops", "gflops"}) {
      expect_positive_finite(s, key);
    }
    const double flops = 6.0 * static_cast<double>(want[i].m * want[i].k * want[i].n * want[i].per_step);
    EXPECT_NEAR(s["step_gflop"].get<double>(), flops / 1e9, 1e-12 * flops);
    product_flops += flops;
    seconds += flops / (s["gflops"].get<double>() * 1e9);
    slowest = std::min(slowest, s["gflops"].get<double>());
    fastest = std::max(fastest, s["gflops"].get<double>());
  }
  // The model-shape rate is the FLOP-weighted one: the products' FLOPs over their time.
  EXPECT_NEAR(j["model_gflops"].get<double>(), product_flops / seconds / 1e9, 1e-9 * j["model_gflops"].get<double>());
  EXPECT_GE(j["model_gflops"].get<double>(), slowest);
  EXPECT_LE(j["model_gflops"].get<double>(), fastest);
  // The share of the step's counted FLOPs: all but attention's S x S products and the head's
  // padding columns.
  const double step_flops = pinned_train_flops_per_token() * 512;
  EXPECT_NEAR(j["products_share"].get<double>(), product_flops / step_flops, 1e-9);
}

TEST(BenchCli, PeakOnlyTextIsATable) {
  TempDir dir;
  const auto run = mlm_bench(dir, with_shape({"--config", tiny_config(), "--peak-only", "--peak-repeats", "1",
                                              "--set", "model.vocab_size=1000", "--set", "train.threads=1"}));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  for (const char* text : {"square 2048^3:", "GFLOP/s", "qkv", "ffn_in", "decoder", "FLOP-weighted"}) {
    EXPECT_NE(run.out.find(text), std::string::npos) << text << " missing in\n" << run.out;
  }
}

TEST(BenchCli, BadPeakGflopsIsOneLineUsageError) {
  for (const std::string bad : {"-1", "0", "abc", "inf", "nan", "12x"}) {
    TempDir dir;
    const auto run = mlm_bench(dir, {"--config", tiny_config(), "--peak-gflops", bad});
    EXPECT_EQ(run.exit_code, 2) << bad << ": " << run.err;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << bad << ": " << run.err;
    EXPECT_NE(run.err.find("--peak-gflops"), std::string::npos) << bad << ": " << run.err;
    EXPECT_TRUE(run.out.empty()) << run.out;
  }
}

TEST(BenchCli, PeakOnlyWithAGivenPeakIsUsageError) {
  TempDir dir;
  const auto run = mlm_bench(dir, {"--config", tiny_config(), "--peak-only", "--peak-gflops", "100"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_NE(run.err.find("--peak"), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty()) << run.out;
}

TEST(BenchCli, NonMlmObjectiveIsConfigError) {
  TempDir dir;
  const auto run = mlm_bench(dir, {"--config", tiny_config(), "--set", "model.objective=nsp"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("model.objective"), std::string::npos) << run.err;
}

TEST(BenchCli, AttentionJsonTimesTheFusedScoresAndTheComposition) {
  TempDir dir;
  const auto run = mlm_bench(dir, with_shape({"--config", tiny_config(), "--attention", "--json", "--steps", "2",
                                              "--warmup", "1", "--set", "model.architecture=deberta_v2", "--set",
                                              "model.relative_attention=true", "--set", "model.position_buckets=0"}));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 1) << run.out;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["mode"], "attention");
  for (const char* key : {"fused_ms", "fused_forward_ms", "composition_ms", "composition_forward_ms"})
    expect_positive_finite(j, key);
  EXPECT_LE(j["fused_forward_ms"].get<double>(), j["fused_ms"].get<double>()) << "the forward is part of the step";
  EXPECT_EQ(j["steps"], 2);
  EXPECT_EQ(j["batch"], 8);
  EXPECT_EQ(j["seq_len"], 64);
  EXPECT_EQ(j["hidden"], 128);
  EXPECT_EQ(j["heads"], 2);
  EXPECT_EQ(j["relative_rows"], 127) << "unbucketed: every distance between 64 positions, -63..63";
  EXPECT_EQ(j["precision"], "fp32");
}

TEST(BenchCli, AttentionOfAModelWithoutDisentangledAttentionIsConfigError) {
  TempDir dir;
  const auto run = mlm_bench(dir, with_shape({"--config", tiny_config(), "--attention"}));
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("model.architecture"), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty()) << run.out;
}

}  // namespace
}  // namespace mlm::cli
