// DeBERTa-v3's objective through mlm-export with the real client: a tiny deberta_v2 rtd run
// (GDES) exports generator/ as DebertaV2ForMaskedLM, which transformers loads with no key
// problem, and discriminator/ as the hub's deberta-v3 checkpoints lay it out, which AutoModel
// (DebertaV2Model) and DebertaV2ForSequenceClassification load with every encoder key present
// and only the RTD head's mask_predictions.* left unused.
#include <gtest/gtest.h>

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

TEST(DebertaRtdExport, TransformersLoadsTheGeneratorAndTheDiscriminator) {
  TempDir dir;
  const auto run_dir = dir.path() / "run";
  const CliRun run = run_tool("mlm-train", dir,
                              tiny_args(dir, {"--set", "model.architecture=deberta_v2", "--set", "model.objective=rtd",
                                              "--set", "model.embedding_sharing=gdes", "--set",
                                              "model.type_vocab_size=0", "--set", "model.position_buckets=32",
                                              "--set", "train.output_dir=" + run_dir.string(), "--set",
                                              "checkpoint.every_steps=0"}),
                              false);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto hf = export_to(dir, run_dir / "checkpoints" / "step_00000020", "hf");

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
}

}  // namespace mlm::cli::deberta_rtd_export
