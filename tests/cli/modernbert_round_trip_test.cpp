// ModernBERT through the Hugging Face round trip with the real client: a tiny modernbert run's
// mlm-export loads in `transformers` as ModernBertForMaskedLM with no key problems and scores
// mlm-data's batches as mlm-eval does (fp32, relative 1e-4); a ModernBERT that transformers
// itself initialised and saved is read by mlm-train (mlm-eval, model.init_from) and scored the
// same.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "cli/hf_client.h"
#include "mlm/text/tokenizer.h"

// Named, not anonymous: the unity build compiles the cli tests together.
namespace mlm::cli::modernbert_round_trip {

namespace fs = std::filesystem;
using config::testing::TempDir;
using namespace testing;

// 4 layers (global 0 and 3), a 16-token window under 64-token sequences, 30% masking.
std::vector<std::string> modernbert_args(const TempDir& dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--set", "model.architecture=modernbert", "--set", "model.num_hidden_layers=4",
                                   "--set", "model.intermediate_size=192",   "--set", "model.local_attention=16",
                                   "--set", "model.layer_norm_eps=1e-5",     "--set", "masking.mlm_probability=0.3"};
  args.insert(args.end(), extra.begin(), extra.end());
  return tiny_args(dir, args);
}

std::string valid_batches(const TempDir& dir) {
  const CliRun run =
      run_tool("mlm-data", dir, modernbert_args(dir, {"--split", "valid", "--batches", "3", "--json"}), false);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const auto path = (dir.path() / "batches.jsonl").string();
  std::ofstream(path) << run.out;
  return path;
}

void expect_same_scores(const nlohmann::json& ours, const nlohmann::json& theirs) {
  EXPECT_EQ(ours["num_masked"], theirs["num_masked"]);
  const double a = ours["mlm_loss"], b = theirs["mlm_loss"];
  EXPECT_LE(std::abs(a - b), 1e-4 * std::abs(b)) << "mlm-eval " << a << " transformers " << b;
  EXPECT_EQ(ours["masked_accuracy"], theirs["masked_accuracy"]);
}

TEST(ModernBertRoundTrip, TransformersLoadsTheExportAndScoresAsMlmEval) {
  TempDir dir;
  const auto run_dir = dir.path() / "run";
  const CliRun run = run_tool(
      "mlm-train", dir,
      modernbert_args(dir, {"--set", "train.output_dir=" + run_dir.string(), "--set", "checkpoint.every_steps=0"}),
      false);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto checkpoint = run_dir / "checkpoints" / "step_00000020";
  const auto hf = export_to(dir, checkpoint, "hf");
  const auto loaded = transformers_side(dir, {"load", "AutoModelForMaskedLM", hf.string()})[hf.string()];
  EXPECT_EQ(loaded["class"], "ModernBertForMaskedLM");
  EXPECT_EQ(loaded["missing"], nlohmann::json::array());
  EXPECT_EQ(loaded["unexpected"], nlohmann::json::array());
  EXPECT_EQ(loaded["mismatched"], nlohmann::json::array());

  const auto batches = valid_batches(dir);
  const auto theirs = transformers_side(dir, {"score", batches, hf.string()})[hf.string()];
  const auto ours = mlm_eval(dir, hf, modernbert_args(dir));
  expect_same_scores(ours, theirs);
  expect_same_scores(mlm_eval(dir, checkpoint, modernbert_args(dir)), theirs);
  std::cout << "mlm-eval loss " << ours["mlm_loss"] << ", transformers loss " << theirs["mlm_loss"] << " over "
            << theirs["num_masked"] << " masked tokens\n";
}

TEST(ModernBertRoundTrip, AModelSavedByTransformersScoresTheSameAndInitialisesARun) {
  TempDir dir;
  // A tokenizer from a short bert run; transformers' model gets its vocabulary size.
  const auto checkpoint = train_tiny(dir);
  const auto vocab = text::Tokenizer::load((checkpoint / "tokenizer.model").string()).size();
  const auto saved = dir.path() / "transformers_modernbert";
  transformers_side(dir, {"save_modernbert", saved.string(), std::to_string(vocab)});
  fs::copy_file(checkpoint / "tokenizer.model", saved / "tokenizer.model");

  const auto batches = valid_batches(dir);
  const auto theirs = transformers_side(dir, {"score", batches, saved.string()})[saved.string()];
  // The architecture comes from config.json (the arguments' model keys are overridden by it).
  expect_same_scores(mlm_eval(dir, saved, tiny_args(dir, {"--set", "masking.mlm_probability=0.3"})), theirs);

  // model.init_from: the run's step-0 evaluation is transformers' model, exactly.
  const auto run_dir = dir.path() / "from_hf";
  const CliRun run = run_tool(
      "mlm-train", dir,
      modernbert_args(dir, {"--set", "model.hidden_size=64", "--set", "model.num_attention_heads=4", "--set",
                            "model.intermediate_size=96", "--set", "model.init_from=" + saved.string(), "--set",
                            "train.output_dir=" + run_dir.string(), "--set", "train.max_steps=1", "--set",
                            "optim.learning_rate=1e-12", "--set", "checkpoint.every_steps=0"}),
      false);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto after = mlm_eval(dir, run_dir / "checkpoints" / "step_00000001", modernbert_args(dir));
  EXPECT_EQ(after["num_masked"], theirs["num_masked"]);
  EXPECT_NEAR(after["mlm_loss"].get<double>(), theirs["mlm_loss"].get<double>(), 1e-3);

  // A bert run cannot start from it: one line naming the file and both architectures.
  const CliRun bert = run_tool("mlm-train", dir,
                               tiny_args(dir, {"--set", "model.init_from=" + saved.string(), "--set",
                                               "train.output_dir=" + (dir.path() / "bert").string()}),
                               false);
  expect_bad_input_line(bert, {"config.json", "modernbert", "bert"});
}

}  // namespace mlm::cli::modernbert_round_trip
