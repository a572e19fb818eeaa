// RoBERTa through the Hugging Face round trip with the real client: a tiny roberta run's
// mlm-export loads in `transformers` as RobertaForMaskedLM with no key problems and scores
// mlm-data's batches as mlm-eval does (fp32, relative 1e-4), and mlm-fill answers as the
// fill-mask pipeline; a RoBERTa and an XLM-R that transformers itself initialised and saved in
// the hub's layout (with the pooler hub checkpoints keep) are read by mlm-eval and
// model.init_from and scored the same; weights whose pad id is not the tokenizer's, or of
// another architecture, are one line and exit 2.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "cli/hf_client.h"
#include "mlm/text/tokenizer.h"

// Named, not anonymous: the unity build compiles the cli tests together.
namespace mlm::cli::roberta_round_trip {

namespace fs = std::filesystem;
using config::testing::TempDir;
using namespace testing;

// RoBERTa's shape choices on the tiny run: one token type, LayerNorm eps 1e-5, 30% masking.
std::vector<std::string> roberta_args(const TempDir& dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--set", "model.architecture=roberta", "--set", "model.type_vocab_size=1",
                                   "--set", "model.layer_norm_eps=1e-5",   "--set", "masking.mlm_probability=0.3"};
  args.insert(args.end(), extra.begin(), extra.end());
  return tiny_args(dir, args);
}

std::string valid_batches(const TempDir& dir) {
  const CliRun run =
      run_tool("mlm-data", dir, roberta_args(dir, {"--split", "valid", "--batches", "3", "--json"}), false);
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

TEST(RobertaRoundTrip, TransformersLoadsTheExportAndScoresAsMlmEval) {
  TempDir dir;
  const auto run_dir = dir.path() / "run";
  const CliRun run = run_tool(
      "mlm-train", dir,
      roberta_args(dir, {"--set", "train.output_dir=" + run_dir.string(), "--set", "checkpoint.every_steps=0"}),
      false);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto checkpoint = run_dir / "checkpoints" / "step_00000020";
  const auto hf = export_to(dir, checkpoint, "hf");
  const auto loaded = transformers_side(dir, {"load", "AutoModelForMaskedLM", hf.string()})[hf.string()];
  EXPECT_EQ(loaded["class"], "RobertaForMaskedLM");
  EXPECT_EQ(loaded["missing"], nlohmann::json::array());
  EXPECT_EQ(loaded["unexpected"], nlohmann::json::array());
  EXPECT_EQ(loaded["mismatched"], nlohmann::json::array());

  const auto batches = valid_batches(dir);
  const auto theirs = transformers_side(dir, {"score", batches, hf.string()})[hf.string()];
  const auto ours = mlm_eval(dir, hf, roberta_args(dir));
  expect_same_scores(ours, theirs);
  expect_same_scores(mlm_eval(dir, checkpoint, roberta_args(dir)), theirs);
  std::cout << "mlm-eval loss " << ours["mlm_loss"] << ", transformers loss " << theirs["mlm_loss"] << " over "
            << theirs["num_masked"] << " masked tokens\n";

  const std::string text = "The [MASK] of the house was open.";
  const CliRun fill = run_tool("mlm-fill", dir, {"--checkpoint", hf.string(), "--top-k", "3", "--json", text}, false);
  ASSERT_EQ(fill.exit_code, 0) << fill.err;
  const auto filled = nlohmann::json::parse(fill.out)["masks"][0];
  const auto pipeline = transformers_side(dir, {"fill", hf.string(), "3", text})["texts"][0][0];
  ASSERT_EQ(filled.size(), 3u);
  for (size_t k = 0; k < 3; ++k) EXPECT_EQ(filled[k]["token"], pipeline[k]["token"]) << "rank " << k;
}

TEST(RobertaRoundTrip, HubRobertaAndXlmRobertaScoreTheSameAndInitialiseARun) {
  TempDir dir;
  // A tokenizer from a short bert run; transformers' models get its size and pad id.
  const auto checkpoint = train_tiny(dir);
  const auto tokenizer = text::Tokenizer::load((checkpoint / "tokenizer.model").string());
  const auto vocab = std::to_string(tokenizer.size());
  const int64_t pad = tokenizer.vocab().ids.pad;
  const auto positions = std::to_string(64 + pad + 1);  // data.seq_len 64 after the offset
  const auto batches = valid_batches(dir);
  nlohmann::json roberta_scores;
  for (const std::string variant : {"roberta", "xlm"}) {
    SCOPED_TRACE(variant);
    const auto saved = dir.path() / ("hub_" + variant);
    transformers_side(dir, {"save_roberta", saved.string(), vocab, std::to_string(pad), positions, variant});
    fs::copy_file(checkpoint / "tokenizer.model", saved / "tokenizer.model");
    const auto theirs = transformers_side(dir, {"score", batches, saved.string()})[saved.string()];
    // The architecture comes from config.json (the arguments' model keys are overridden by it).
    expect_same_scores(mlm_eval(dir, saved, tiny_args(dir, {"--set", "masking.mlm_probability=0.3"})), theirs);
    if (variant == "roberta") roberta_scores = theirs;
  }
  const auto hub = dir.path() / "hub_roberta";

  // model.init_from: the run's step-1 evaluation is transformers' model (lr 1e-12).
  const std::vector<std::string> shape = {"--set", "model.hidden_size=64",      "--set", "model.num_attention_heads=4",
                                          "--set", "model.intermediate_size=128", "--set",
                                          "model.max_position_embeddings=" + positions};
  auto with_shape = [&](std::vector<std::string> extra) {
    extra.insert(extra.end(), shape.begin(), shape.end());
    return roberta_args(dir, extra);
  };
  const auto run_dir = dir.path() / "from_hub";
  const CliRun run = run_tool("mlm-train", dir,
                              with_shape({"--set", "model.init_from=" + hub.string(), "--set",
                                          "train.output_dir=" + run_dir.string(), "--set", "train.max_steps=1",
                                          "--set", "optim.learning_rate=1e-12", "--set", "checkpoint.every_steps=0"}),
                              false);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("ignoring 2 pooler"), std::string::npos) << run.err;
  const auto after = mlm_eval(dir, run_dir / "checkpoints" / "step_00000001", roberta_args(dir));
  EXPECT_EQ(after["num_masked"], roberta_scores["num_masked"]);
  EXPECT_NEAR(after["mlm_loss"].get<double>(), roberta_scores["mlm_loss"].get<double>(), 1e-3);

  // A bert run cannot start from it: one line naming the file and both architectures.
  const CliRun bert = run_tool("mlm-train", dir,
                               tiny_args(dir, {"--set", "model.init_from=" + hub.string(), "--set",
                                               "train.output_dir=" + (dir.path() / "bert").string()}),
                               false);
  expect_bad_input_line(bert, {"config.json", "roberta", "bert"});

  // Weights trained with another pad id would read every position shifted.
  const auto other_pad = dir.path() / "hub_other_pad";
  transformers_side(dir, {"save_roberta", other_pad.string(), vocab, std::to_string(pad + 1), positions});
  const CliRun shifted = run_tool("mlm-train", dir,
                                  with_shape({"--set", "model.init_from=" + other_pad.string(), "--set",
                                              "train.output_dir=" + (dir.path() / "shifted").string()}),
                                  false);
  expect_bad_input_line(shifted, {"config.json", "pad_token_id is " + std::to_string(pad + 1)});
}

TEST(RobertaRoundTrip, APositionTableWithoutRoomForTheOffsetIsOneLine) {
  TempDir dir;
  const CliRun run = run_tool("mlm-train", dir,
                              roberta_args(dir, {"--set", "model.max_position_embeddings=64", "--set",
                                                 "train.output_dir=" + (dir.path() / "run").string()}),
                              false);
  expect_bad_input_line(run, {"model.max_position_embeddings", "data.seq_len 64", "65"});
}

}  // namespace mlm::cli::roberta_round_trip
