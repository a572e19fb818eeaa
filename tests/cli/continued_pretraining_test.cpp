// Continued pretraining, end to end, as docs/RECIPES.md's recipe does it, for each family of
// published encoders: a small model and its tokenizer saved by `transformers` / `tokenizers`
// as the hub lays them out (BERT with WordPiece, ModernBERT with its byte-level BPE and padded
// rows, RoBERTa with byte-level BPE, XLM-R with Metaspace Unigram), more pretraining with
// mlm-train on the fixture corpus (model.init_from + tokenizer.type hf), the export loaded back
// by `transformers` with its tokenizer (the very ids of the start), and the family's
// ...ForSequenceClassification fine-tuned from it for a few steps with a falling loss.
#include <gtest/gtest.h>

#include <fstream>

#include "cli/hf_client.h"
#include "mlm/text/tokenizer.h"

// Named, not anonymous: the unity build compiles the cli tests together.
namespace mlm::cli::continued_pretraining {

namespace fs = std::filesystem;
using config::testing::TempDir;
using namespace testing;

class ContinuedPretraining : public ::testing::TestWithParam<std::string> {};

TEST_P(ContinuedPretraining, FromAHubEncoderToAFineTunedClassifier) {
  TempDir dir;
  const auto hub = dir.path() / "hub";
  const auto shape = transformers_side(dir, {"hub_encoder", GetParam(), hub.string(), fixture_corpus("train.txt")});
  std::vector<std::string> run = {"--config", std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml",
                                  "--set", "tokenizer.type=hf",
                                  "--set", "tokenizer.model=" + hub.string(),
                                  "--set", "data.train_files=[" + fixture_corpus("train.txt") + "]",
                                  "--set", "data.valid_files=[" + fixture_corpus("valid.txt") + "]",
                                  "--set", "eval.max_batches=4", "--set", "train.threads=1",
                                  "--set", "logging.progress_bar=off"};
  for (const auto& [key, value] : shape.items())
    run.insert(run.end(), {"--set", "model." + key + "=" + (value.is_string() ? value.get<std::string>() : value.dump())});
  const auto eval_config = run;

  auto train = run;
  train.insert(train.end(), {"--set", "model.init_from=" + hub.string(), "--set",
                             "train.output_dir=" + (dir.path() / "run").string(), "--set", "checkpoint.every_steps=0"});
  const CliRun trained = run_tool("mlm-train", dir, train, false);
  ASSERT_EQ(trained.exit_code, 0) << trained.err;
  const auto checkpoint = dir.path() / "run" / "checkpoints" / "step_00000020";

  // The domain corpus was learned: the validation loss falls from the starting model's.
  const auto before = mlm_eval(dir, hub, eval_config), after = mlm_eval(dir, checkpoint, eval_config);
  EXPECT_EQ(before["num_masked"], after["num_masked"]);
  EXPECT_LT(after["mlm_loss"].get<double>(), before["mlm_loss"].get<double>() - 0.3)
      << "before " << before << " after " << after;

  // The export loads back in transformers, with a tokenizer giving the very ids of the start.
  const auto exported = export_to(dir, checkpoint, "export");
  const auto loaded = transformers_side(dir, {"load", "AutoModelForMaskedLM", exported.string()})[exported.string()];
  EXPECT_EQ(loaded["missing"], nlohmann::json::array());
  EXPECT_EQ(loaded["unexpected"], nlohmann::json::array());
  const auto lines = (dir.path() / "lines.txt").string();
  std::ofstream(lines) << "Continued pretraining keeps the tokenizer.\nCafé NAÏVE 東京 [MASK] <mask> ##x 😀\n"
                       << slurp(fixture_corpus("valid.txt")).substr(0, 2000);
  const auto ours = transformers_side(dir, {"tokenize", exported.string(), lines});
  EXPECT_EQ(ours["ids"], transformers_side(dir, {"tokenize", hub.string(), lines})["ids"]);
  EXPECT_EQ(ours["mask_token_id"], text::Tokenizer::load_hf(hub.string()).vocab().ids.mask);

  // Fine-tuning from the export: the toy classification loss falls.
  const auto losses = transformers_side(dir, {"classify", exported.string()})["losses"];
  ASSERT_EQ(losses.size(), 30u);
  EXPECT_LT(losses.back().get<double>(), 0.25 * losses.front().get<double>()) << losses;
}

INSTANTIATE_TEST_SUITE_P(Families, ContinuedPretraining, ::testing::Values("bert", "modernbert", "roberta", "xlmr"),
                         [](const auto& info) { return info.param; });

}  // namespace mlm::cli::continued_pretraining
