// DeBERTa-v3's objective through mlm-export with the real client: a tiny deberta_v2 rtd run
// (GDES) exports generator/ as DebertaV2ForMaskedLM, which transformers loads with no key
// problem, and discriminator/ as the hub's deberta-v3 checkpoints lay it out, which AutoModel
// (DebertaV2Model) and DebertaV2ForSequenceClassification load with every encoder key present
// and only the RTD head's mask_predictions.* left unused; mlm-eval of the export gives the
// checkpoint's figures, and model.init_from continues the pair.
#include <gtest/gtest.h>

#include <cmath>

#include "cli/hf_client.h"

// Named, not anonymous: the unity build compiles the cli tests together.
namespace mlm::cli::deberta_rtd_export {

namespace fs = std::filesystem;
using config::testing::TempDir;
using namespace testing;

bool all_under(const nlohmann::json& keys, const std::vector<std::string>& prefixes) {
  for (const auto& key : keys) {
    bool under = false;
    for (const auto& prefix : prefixes) under = under || key.get<std::string>().rfind(prefix, 0) == 0;
    if (!under) return false;
  }
  return true;
}

// A tiny DeBERTa-v3 pair (GDES) on the tiny config's data.
std::vector<std::string> deberta_rtd_args(const TempDir& dir, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"--set", "model.architecture=deberta_v2", "--set", "model.objective=rtd",
                                   "--set", "model.embedding_sharing=gdes",  "--set", "model.type_vocab_size=0",
                                   "--set", "model.position_buckets=32"};
  args.insert(args.end(), extra.begin(), extra.end());
  return tiny_args(dir, args);
}

TEST(DebertaRtdExport, TransformersLoadsTheGeneratorAndTheDiscriminator) {
  TempDir dir;
  const auto run_dir = dir.path() / "run";
  const CliRun run = run_tool(
      "mlm-train", dir,
      deberta_rtd_args(dir, {"--set", "train.output_dir=" + run_dir.string(), "--set", "checkpoint.every_steps=0"}),
      false);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto checkpoint = run_dir / "checkpoints" / "step_00000020";
  const auto hf = export_to(dir, checkpoint, "hf");

  const auto generator = (hf / "generator").string();
  const auto loaded = transformers_side(dir, {"load", "DebertaV2ForMaskedLM", generator})[generator];
  EXPECT_EQ(loaded["class"], "DebertaV2ForMaskedLM");
  EXPECT_EQ(loaded["missing"], nlohmann::json::array());
  EXPECT_EQ(loaded["unexpected"], nlohmann::json::array());
  EXPECT_EQ(loaded["mismatched"], nlohmann::json::array());

  const auto discriminator = (hf / "discriminator").string();
  // The head's keys are the only ones unused; a classifier's own head is the only one missing.
  for (const auto& [cls, own_head] :
       {std::pair<std::string, std::vector<std::string>>{"AutoModel", {}},
        std::pair<std::string, std::vector<std::string>>{"DebertaV2ForSequenceClassification",
                                                         {"pooler.dense.", "classifier."}}}) {
    SCOPED_TRACE(cls);
    const auto info = transformers_side(dir, {"load", cls, discriminator})[discriminator];
    EXPECT_EQ(info["class"], cls == "AutoModel" ? "DebertaV2Model" : cls);
    EXPECT_TRUE(all_under(info["missing"], own_head)) << info["missing"];
    EXPECT_FALSE(info["unexpected"].empty());
    EXPECT_TRUE(all_under(info["unexpected"], {"mask_predictions."})) << info["unexpected"];
    EXPECT_EQ(info["mismatched"], nlohmann::json::array());
  }
  for (const char* network : {"generator", "discriminator"})
    EXPECT_TRUE(fs::exists(hf / network / "tokenizer.json")) << network;

  // The export read back is the checkpoint: mlm-eval gives the same figures from either, the
  // export opening as the gdes pair it is whatever the run's config says.
  const auto from_checkpoint = mlm_eval(dir, checkpoint, deberta_rtd_args(dir));
  const auto from_export = mlm_eval(dir, hf, deberta_rtd_args(dir, {"--set", "model.embedding_sharing=shared"}));
  for (const char* key : {"mlm_loss", "rtd_loss", "rtd_accuracy", "masked_accuracy"})
    EXPECT_NEAR(from_export[key].get<double>(), from_checkpoint[key].get<double>(),
                1e-5 * std::abs(from_checkpoint[key].get<double>()))
        << key;

  // model.init_from continues the pair; the generator directory continues as a masked LM.
  const CliRun continued =
      run_tool("mlm-train", dir,
               deberta_rtd_args(dir, {"--set", "model.init_from=" + hf.string(), "--set", "train.max_steps=2", "--set",
                                      "train.output_dir=" + (dir.path() / "continued").string()}),
               false);
  EXPECT_EQ(continued.exit_code, 0) << continued.err;
  EXPECT_NE(continued.err.find("initialised the DeBERTa generator and discriminator"), std::string::npos)
      << continued.err;
}

}  // namespace mlm::cli::deberta_rtd_export
