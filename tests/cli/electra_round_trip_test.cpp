// ELECTRA through the Hugging Face round trip with the real client: a tiny rtd run's mlm-export
// (two directories transformers loads, as rtd_export_test.cpp checks for every pair) scores
// mlm-data's batches as mlm-eval does (fp32, relative 1e-4; the generator's samples taken at
// temperature -> 0, its argmax, on both sides); mlm-fill answers from the generator as
// transformers' pipeline does; a pair transformers saved as the hub lays out Google's ELECTRA
// initialises a run; and the inputs that are not such a pair are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "cli/hf_client.h"
#include "mlm/text/tokenizer.h"

// Named, not anonymous: the unity build compiles the cli tests together.
namespace mlm::cli::electra_round_trip {

namespace fs = std::filesystem;
using config::testing::TempDir;
using namespace testing;

// A 2 x 128 discriminator with 64-wide embeddings and a 32-wide generator; ELECTRA's masking.
std::vector<std::string> electra_args(const TempDir& dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--set", "model.architecture=electra",   "--set", "model.objective=rtd",
                                   "--set", "model.embedding_size=64",      "--set", "model.generator_hidden_ratio=0.25",
                                   "--set", "masking.mask_replace_prob=0.85", "--set", "masking.random_replace_prob=0"};
  args.insert(args.end(), extra.begin(), extra.end());
  return tiny_args(dir, args);
}

std::string valid_batches(const TempDir& dir) {
  const CliRun run = run_tool("mlm-data", dir, electra_args(dir, {"--split", "valid", "--batches", "3", "--json"}), false);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const auto path = (dir.path() / "batches.jsonl").string();
  std::ofstream(path) << run.out;
  return path;
}

void expect_close(const nlohmann::json& ours, const nlohmann::json& theirs, const char* key) {
  const double a = ours[key], b = theirs[key];
  EXPECT_LE(std::abs(a - b), 1e-4 * std::abs(b)) << key << ": mlm-eval " << a << " transformers " << b;
}

TEST(ElectraRoundTrip, TransformersScoresTheExportAsMlmEval) {
  TempDir dir;
  const auto run_dir = dir.path() / "run";
  const CliRun run = run_tool(
      "mlm-train", dir,
      electra_args(dir, {"--set", "train.output_dir=" + run_dir.string(), "--set", "checkpoint.every_steps=0"}), false);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto checkpoint = run_dir / "checkpoints" / "step_00000020";
  const auto hf = export_to(dir, checkpoint, "hf");
  const auto batches = valid_batches(dir);
  const auto theirs = transformers_side(dir, {"score_electra", batches, hf.string()})[hf.string()];
  const std::vector<std::string> argmax = {"--set", "model.rtd_temperature=1e-6"};
  for (const auto& model_dir : {hf, checkpoint}) {
    SCOPED_TRACE(model_dir.string());
    auto args = electra_args(dir, argmax);
    const auto ours = mlm_eval(dir, model_dir, args);
    EXPECT_EQ(ours["num_masked"], theirs["num_masked"]);
    expect_close(ours, theirs, "mlm_loss");
    expect_close(ours, theirs, "rtd_loss");
    EXPECT_EQ(ours["masked_accuracy"], theirs["masked_accuracy"]);
    EXPECT_EQ(ours["rtd_accuracy"], theirs["rtd_accuracy"]);
    EXPECT_EQ(ours["generator_sample_accuracy"], theirs["generator_sample_accuracy"]);
    if (model_dir == hf)
      std::cout << "mlm-eval rtd loss " << ours["rtd_loss"] << ", transformers " << theirs["rtd_loss"] << " over "
                << theirs["tokens"] << " tokens\n";
  }

  // mlm-fill answers from the generator, as transformers' fill-mask pipeline on it does.
  const std::string text = "The [MASK] of the house was open.";
  const CliRun fill = run_tool("mlm-fill", dir, {"--checkpoint", hf.string(), "--top-k", "3", "--json", text}, false);
  ASSERT_EQ(fill.exit_code, 0) << fill.err;
  const auto ours = nlohmann::json::parse(fill.out)["masks"][0];
  const auto pipeline = transformers_side(dir, {"fill", (hf / "generator").string(), "3", text})["texts"][0][0];
  ASSERT_EQ(ours.size(), 3u);
  for (size_t k = 0; k < 3; ++k) EXPECT_EQ(ours[k]["token"], pipeline[k]["token"]) << "rank " << k;
}

TEST(ElectraRoundTrip, AHubPairInitialisesARunAndBadPairsAreRefused) {
  TempDir dir;
  const auto checkpoint = train_tiny(dir);  // a tokenizer
  const auto vocab = text::Tokenizer::load((checkpoint / "tokenizer.model").string()).size();
  const auto pair = dir.path() / "google_style";
  transformers_side(dir, {"save_electra", pair.string(), std::to_string(vocab)});
  for (const char* network : {"generator", "discriminator"})
    fs::copy_file(checkpoint / "tokenizer.model", pair / network / "tokenizer.model");
  // save_electra's shape: embeddings 32, discriminator 64 x 2 (2 heads, I 256), generator 1/4.
  const std::vector<std::string> shape = {"--set", "model.hidden_size=64",        "--set", "model.num_attention_heads=2",
                                          "--set", "model.intermediate_size=256", "--set", "model.embedding_size=32",
                                          "--set", "model.max_position_embeddings=64"};
  auto with_shape = [&](std::vector<std::string> extra) {
    extra.insert(extra.end(), shape.begin(), shape.end());
    return electra_args(dir, extra);
  };

  // mlm-eval reads the pair as it is; a run started from it evaluates the same at step 0.
  const auto batches = valid_batches(dir);
  const auto theirs = transformers_side(dir, {"score_electra", batches, pair.string()})[pair.string()];
  const auto direct = mlm_eval(dir, pair, with_shape({"--set", "model.rtd_temperature=1e-6"}));
  expect_close(direct, theirs, "mlm_loss");
  expect_close(direct, theirs, "rtd_loss");
  const auto run_dir = dir.path() / "from_hub";
  const CliRun run = run_tool("mlm-train", dir,
                              with_shape({"--set", "model.init_from=" + pair.string(), "--set",
                                          "train.output_dir=" + run_dir.string(), "--set", "train.max_steps=1", "--set",
                                          "optim.learning_rate=1e-12", "--set", "checkpoint.every_steps=0"}),
                              false);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto after = mlm_eval(dir, run_dir / "checkpoints" / "step_00000001",
                              with_shape({"--set", "model.rtd_temperature=1e-6"}));
  EXPECT_NEAR(after["mlm_loss"].get<double>(), theirs["mlm_loss"].get<double>(), 1e-3);
  EXPECT_NEAR(after["rtd_loss"].get<double>(), theirs["rtd_loss"].get<double>(), 1e-3);

  // The same pair continued as MLM: refused, naming the directory.
  const CliRun as_mlm = run_tool("mlm-train", dir,
                                 tiny_args(dir, {"--set", "model.init_from=" + pair.string(), "--set",
                                                 "train.output_dir=" + (dir.path() / "as_mlm").string()}),
                                 false);
  expect_bad_input_line(as_mlm, {pair.string(), "model.objective rtd"});
  // A discriminator alone evaluated as a masked LM: refused, naming its config.json.
  const CliRun alone = run_tool("mlm-eval", dir, with_shape({"--checkpoint", (pair / "discriminator").string()}), false);
  expect_bad_input_line(alone, {(pair / "discriminator" / "config.json").string(), "masked-LM head"});
  // A generator that is wider than the run's ratio gives: the key to change.
  const CliRun ratio = run_tool("mlm-train", dir,
                                with_shape({"--set", "model.init_from=" + pair.string(), "--set",
                                            "model.generator_hidden_ratio=0.5", "--set",
                                            "train.output_dir=" + (dir.path() / "ratio").string()}),
                                false);
  expect_bad_input_line(ratio, {pair.string(), "model.generator_hidden_ratio"});
  // Two vocabularies: the discriminator's tokenizer is not the generator's.
  std::ofstream(pair / "discriminator" / "tokenizer.model", std::ios::app) << "x";
  const CliRun vocabularies = run_tool("mlm-train", dir,
                                       with_shape({"--set", "model.init_from=" + pair.string(), "--set",
                                                   "train.output_dir=" + (dir.path() / "vocab").string()}),
                                       false);
  expect_bad_input_line(vocabularies, {(pair / "discriminator" / "tokenizer.model").string(), "one vocabulary"});
  EXPECT_FALSE(fs::exists(dir.path() / "vocab" / "checkpoints"));
}

}  // namespace mlm::cli::electra_round_trip
