// Every architecture's replaced-token-detection pair through mlm-export with the real client: a
// tiny rtd run (GDES) exports generator/ as the architecture's masked LM, which transformers
// loads with no key problem, and discriminator/ as that architecture's discriminator (ELECTRA:
// ElectraForPreTraining whole; DeBERTa-v3: the hub's deberta-v3 layout, which AutoModel and
// DebertaV2ForSequenceClassification load with every encoder key present and only the RTD
// head's mask_predictions.* left unused), each with the tokenizer files and the discriminator's
// config.json recording the embedding sharing; mlm-eval of the export gives the checkpoint's
// figures, the export opening as the gdes pair it is whatever the run's config says; and
// model.init_from continues the pair.
#include <gtest/gtest.h>

#include <cmath>

#include "cli/hf_client.h"
#include "mlm/model/hf/config_fields.h"

// Named, not anonymous: the unity build compiles the cli tests together.
namespace mlm::cli::rtd_export {

namespace fs = std::filesystem;
using config::testing::TempDir;
using namespace testing;

// How transformers loads the discriminator: with this class it is `loaded_class`; the keys it
// lacks are all under `own_head` (a classifier's new head), those it leaves unused under `unused`.
struct DiscriminatorLoad {
  std::string cls, loaded_class;
  std::vector<std::string> own_head, unused;
};

struct Pair {
  const char* name;
  std::vector<std::string> args;  // the pair's keys on top of configs/tiny.yaml (gdes)
  std::string generator_class;
  std::vector<DiscriminatorLoad> discriminator_loads;
  std::string display_name;
};

bool all_under(const nlohmann::json& keys, const std::vector<std::string>& prefixes) {
  for (const auto& key : keys) {
    bool under = false;
    for (const auto& prefix : prefixes) under = under || key.get<std::string>().rfind(prefix, 0) == 0;
    if (!under) return false;
  }
  return true;
}

class RtdExport : public ::testing::TestWithParam<Pair> {
 protected:
  std::vector<std::string> pair_args(const TempDir& dir, std::vector<std::string> extra = {}) const {
    auto args = GetParam().args;
    args.insert(args.end(), extra.begin(), extra.end());
    return tiny_args(dir, args);
  }
};

TEST_P(RtdExport, TransformersLoadsBothNetworksAndTheExportReadsBackAsTheCheckpoint) {
  const Pair& pair = GetParam();
  TempDir dir;
  const auto run_dir = dir.path() / "run";
  const CliRun run = run_tool(
      "mlm-train", dir,
      pair_args(dir, {"--set", "train.output_dir=" + run_dir.string(), "--set", "checkpoint.every_steps=0"}), false);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto checkpoint = run_dir / "checkpoints" / "step_00000020";
  const auto hf = export_to(dir, checkpoint, "hf");

  const auto generator = (hf / "generator").string();
  const auto loaded = transformers_side(dir, {"load", pair.generator_class, generator})[generator];
  EXPECT_EQ(loaded["class"], pair.generator_class);
  EXPECT_EQ(loaded["missing"], nlohmann::json::array());
  EXPECT_EQ(loaded["unexpected"], nlohmann::json::array());
  EXPECT_EQ(loaded["mismatched"], nlohmann::json::array());

  const auto discriminator = (hf / "discriminator").string();
  for (const auto& load : pair.discriminator_loads) {
    SCOPED_TRACE(load.cls);
    const auto info = transformers_side(dir, {"load", load.cls, discriminator})[discriminator];
    EXPECT_EQ(info["class"], load.loaded_class);
    EXPECT_TRUE(all_under(info["missing"], load.own_head)) << info["missing"];
    EXPECT_EQ(info["unexpected"].empty(), load.unused.empty()) << info["unexpected"];
    EXPECT_TRUE(all_under(info["unexpected"], load.unused)) << info["unexpected"];
    EXPECT_EQ(info["mismatched"], nlohmann::json::array());
  }
  for (const char* network : {"generator", "discriminator"})
    EXPECT_TRUE(fs::exists(hf / network / "tokenizer.json")) << network;
  EXPECT_EQ(model::read_json_file(discriminator + "/config.json").value("embedding_sharing", std::string()), "gdes");

  // The export read back is the checkpoint: mlm-eval gives the same figures from either, the
  // export opening as the gdes pair it is whatever the run's config says.
  const auto from_checkpoint = mlm_eval(dir, checkpoint, pair_args(dir));
  const auto from_export = mlm_eval(dir, hf, pair_args(dir, {"--set", "model.embedding_sharing=shared"}));
  for (const char* key : {"mlm_loss", "rtd_loss", "rtd_accuracy", "masked_accuracy"})
    EXPECT_NEAR(from_export[key].get<double>(), from_checkpoint[key].get<double>(),
                1e-5 * std::abs(from_checkpoint[key].get<double>()))
        << key;

  // model.init_from continues the pair.
  const CliRun continued =
      run_tool("mlm-train", dir,
               pair_args(dir, {"--set", "model.init_from=" + hf.string(), "--set", "train.max_steps=2", "--set",
                               "train.output_dir=" + (dir.path() / "continued").string()}),
               false);
  EXPECT_EQ(continued.exit_code, 0) << continued.err;
  EXPECT_NE(continued.err.find("initialised the " + pair.display_name + " generator and discriminator"),
            std::string::npos)
      << continued.err;
}

INSTANTIATE_TEST_SUITE_P(
    Pairs, RtdExport,
    ::testing::Values(
        // A 2 x 128 discriminator with 64-wide embeddings and a 32-wide generator; ELECTRA's masking.
        Pair{"electra",
             {"--set", "model.architecture=electra", "--set", "model.objective=rtd", "--set",
              "model.embedding_sharing=gdes", "--set", "model.embedding_size=64", "--set",
              "model.generator_hidden_ratio=0.25", "--set", "masking.mask_replace_prob=0.85", "--set",
              "masking.random_replace_prob=0"},
             "ElectraForMaskedLM",
             {{"ElectraForPreTraining", "ElectraForPreTraining", {}, {}}},
             "ELECTRA"},
        // A tiny DeBERTa-v3 pair.
        Pair{"deberta_v3",
             {"--set", "model.architecture=deberta_v2", "--set", "model.objective=rtd", "--set",
              "model.embedding_sharing=gdes", "--set", "model.type_vocab_size=0", "--set", "model.position_buckets=32"},
             "DebertaV2ForMaskedLM",
             {{"AutoModel", "DebertaV2Model", {}, {"mask_predictions."}},
              {"DebertaV2ForSequenceClassification", "DebertaV2ForSequenceClassification",
               {"pooler.dense.", "classifier."}, {"mask_predictions."}}},
             "DeBERTa-v2"}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace mlm::cli::rtd_export
