// The hub round trip of deberta_v2: a DebertaV2ForMaskedLM that transformers itself builds and
// saves (DeBERTa-v3's options) is read by model.init_from, exported by mlm-export's writer, and
// the export loads in transformers as DebertaV2ForMaskedLM, AutoModel and
// DebertaV2ForSequenceClassification with no missing, unexpected or mis-shaped encoder key,
// every tensor equal to the hub directory's.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "config/config_test_util.h"
#include "mlm/model/hf/safetensors.h"
#include "mlm/model/make_masked_lm.h"
#include "mlm/model/pretrained/export_hf.h"
#include "mlm/model/pretrained/hf_config.h"
#include "mlm/model/pretrained/init_from.h"
#include "model_test_util.h"

namespace mlm::model::deberta_hub {

constexpr int64_t kVocab = 97, kPad = 0;

std::string quote(const std::string& s) { return "'" + s + "'"; }

// hf_client.py's JSON answer to `args`; fails the test on a non-zero exit.
nlohmann::json hf_client(const std::string& args, const std::filesystem::path& out) {
  const std::string command = quote(MLM_PYTHON) + " " + quote(std::string(MLM_SOURCE_DIR) + "/tests/reference/hf_client.py") +
                              " " + args + " > " + quote(out.string()) + " 2>/dev/null";
  const int status = std::system(command.c_str());
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(status, 0) << text.str();
  std::string last, line;
  while (std::getline(text, line))
    if (!line.empty()) last = line;
  return status == 0 ? nlohmann::json::parse(last) : nlohmann::json();
}

bool encoder_key(const std::string& key) { return key.rfind("deberta.", 0) == 0; }

TEST(DebertaHub, InitFromExportLoadsInTransformersWithEqualWeights) {
  config::testing::TempDir dir;
  const auto hub = dir.path() / "hub", exported = dir.path() / "export";
  hf_client("save_deberta " + quote(hub.string()) + " " + std::to_string(kVocab), dir.path() / "save.out");
  ASSERT_TRUE(std::filesystem::exists(hub / "model.safetensors"));

  config::ModelConfig base;
  base.pad_vocab_multiple = 8;
  const auto config = model_config_from_hf((hub / "config.json").string(), base);
  EXPECT_EQ(config.architecture, config::Architecture::deberta_v2);
  EXPECT_EQ(config.pos_att_type, (std::vector<std::string>{"p2c", "c2p"}));
  EXPECT_EQ(config.type_vocab_size, 0);
  EXPECT_EQ(config.position_buckets, 16);
  EXPECT_FALSE(config.position_biased_input);
  torch::manual_seed(3);
  auto model = make_masked_lm(config, kVocab, kPad);
  init_from_pretrained(model, hub.string());
  std::filesystem::create_directories(exported);
  write_hf_model(model, exported.string(), WeightFormat::safetensors);

  // Every tensor of the hub's file comes back equal.
  std::map<std::string, torch::Tensor> ours;
  for (auto& [k, v] : read_safetensors((exported / "model.safetensors").string())) ours[k] = v;
  int compared = 0;
  for (auto& [key, want] : read_safetensors((hub / "model.safetensors").string())) {
    ASSERT_TRUE(ours.count(key)) << key << " is not in the export";
    EXPECT_TRUE(torch::equal(ours[key], want)) << key;
    ++compared;
  }
  EXPECT_GT(compared, 40);

  const auto loads = hf_client("load DebertaV2ForMaskedLM " + quote(exported.string()), dir.path() / "mlm.out");
  const auto& mlm = loads[exported.string()];
  EXPECT_TRUE(mlm["missing"].empty()) << mlm.dump();
  EXPECT_TRUE(mlm["unexpected"].empty()) << mlm.dump();
  EXPECT_TRUE(mlm["mismatched"].empty()) << mlm.dump();
  for (const char* cls : {"AutoModel", "AutoModelForSequenceClassification", "DebertaV2ForSequenceClassification"}) {
    const auto answer = hf_client(std::string("load ") + cls + " " + quote(exported.string()), dir.path() / "cls.out");
    const auto& info = answer[exported.string()];
    for (const char* kind : {"missing", "unexpected", "mismatched"})
      for (const auto& key : info[kind]) EXPECT_FALSE(encoder_key(key.get<std::string>())) << cls << " " << kind << " " << key;
  }
}

}  // namespace mlm::model::deberta_hub
