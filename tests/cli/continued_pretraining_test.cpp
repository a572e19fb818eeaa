// Continued pretraining, end to end, as the README's recipe does it: a BERT and its WordPiece
// tokenizer saved by `transformers` (standing in for a hub download), more pretraining with
// mlm-train on the fixture corpus (model.init_from + tokenizer.type wordpiece), the export
// loaded back by `transformers` with its tokenizer, and BertForSequenceClassification
// fine-tuned from it for a few steps with a falling loss.
#include <gtest/gtest.h>

#include <fstream>

#include "cli/hf_client.h"
#include "mlm/text/tokenizer.h"

// Named, not anonymous: the unity build compiles the cli tests together.
namespace mlm::cli::continued_pretraining {

namespace fs = std::filesystem;
using config::testing::TempDir;
using namespace testing;

TEST(ContinuedPretraining, FromATransformersBertToAFineTunedClassifier) {
  TempDir dir;
  const auto hub = dir.path() / "hub";
  const auto shape = transformers_side(dir, {"hub_bert", hub.string(), fixture_corpus("train.txt")});
  std::vector<std::string> run = {"--config", std::string(MLM_SOURCE_DIR) + "/configs/tiny.yaml",
                                  "--set", "tokenizer.type=wordpiece",
                                  "--set", "tokenizer.model=" + hub.string(),
                                  "--set", "data.train_files=[" + fixture_corpus("train.txt") + "]",
                                  "--set", "data.valid_files=[" + fixture_corpus("valid.txt") + "]",
                                  "--set", "eval.max_batches=4", "--set", "train.threads=1",
                                  "--set", "logging.progress_bar=off"};
  for (const char* key : {"hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
                          "max_position_embeddings"})
    run.insert(run.end(), {"--set", std::string("model.") + key + "=" + shape[key].dump()});
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
  EXPECT_TRUE(fs::exists(exported / "vocab.txt"));
  const auto loaded = transformers_side(dir, {"load", "AutoModelForMaskedLM", exported.string()})[exported.string()];
  EXPECT_EQ(loaded["missing"], nlohmann::json::array());
  EXPECT_EQ(loaded["unexpected"], nlohmann::json::array());
  const auto lines = (dir.path() / "lines.txt").string();
  std::ofstream(lines) << "Continued pretraining keeps the tokenizer.\nCafé NAÏVE 東京 [MASK] ##x\n"
                       << slurp(fixture_corpus("valid.txt")).substr(0, 2000);
  const auto ours = transformers_side(dir, {"tokenize", exported.string(), lines});
  EXPECT_EQ(ours["ids"], transformers_side(dir, {"tokenize", hub.string(), lines})["ids"]);
  EXPECT_EQ(ours["mask_token_id"], text::Tokenizer::load(hub.string()).vocab().ids.mask);

  // Fine-tuning from the export: the toy classification loss falls.
  const auto losses = transformers_side(dir, {"classify", exported.string()})["losses"];
  ASSERT_EQ(losses.size(), 30u);
  EXPECT_LT(losses.back().get<double>(), 0.25 * losses.front().get<double>()) << losses;
}

}  // namespace mlm::cli::continued_pretraining
