// Hugging Face export: directory layout, config.json fields, and export -> import bit-exact.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "mlm/model/export_hf.h"
#include "mlm/util/errors.h"
#include "model_test_util.h"

namespace mlm::model {
namespace {
namespace fs = std::filesystem;

TEST(ExportHf, WritesLoadableDirectoryAndRoundTripsBitExact) {
  const fs::path dir = fs::temp_directory_path() / ("mlm_export_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "spm.model") << "sentencepiece bytes";  // copied verbatim, never parsed here
  auto cfg = testing::tiny_config(config::NormPosition::post);
  torch::manual_seed(21);
  BertForPreTraining model(cfg, testing::kTinyVocab, testing::kTinyPad);
  ExportTokenizer tok{(dir / "spm.model").string(), {}, testing::kTinyVocab};
  export_hf(model, tok, (dir / "hf").string());

  for (const char* name : {"config.json", "pytorch_model.bin", "tokenizer.model", "spiece.model",
                           "tokenizer_config.json", "special_tokens_map.json"})
    EXPECT_TRUE(fs::exists(dir / "hf" / name)) << name;
  std::ifstream in(dir / "hf" / "config.json");
  const auto json = nlohmann::json::parse(in);
  EXPECT_EQ(json["model_type"], "bert");
  EXPECT_EQ(json["architectures"][0], "BertForPreTraining");  // the tiny post-LN model has NSP
  EXPECT_EQ(json["vocab_size"], testing::kTinyVocab);
  EXPECT_EQ(json["hidden_size"], 32);
  EXPECT_EQ(json["num_attention_heads"], 4);
  EXPECT_EQ(json["hidden_act"], "gelu");
  EXPECT_EQ(json["layer_norm_eps"], 1e-12);
  EXPECT_EQ(json["pad_token_id"], testing::kTinyPad);
  std::ifstream tin(dir / "hf" / "tokenizer_config.json");
  EXPECT_EQ(nlohmann::json::parse(tin)["mask_token"], "[MASK]");

  torch::manual_seed(22);
  cfg.pad_vocab_multiple = 1;
  BertForPreTraining reloaded(cfg, testing::kTinyVocab, testing::kTinyPad);
  init_from_pretrained(reloaded, (dir / "hf").string());
  auto a = to_hf_state_dict(model), b = to_hf_state_dict(reloaded);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i].second, b[i].second)) << a[i].first;

  cfg.objective = config::Objective::mlm;
  BertForPreTraining mlm_only(cfg, testing::kTinyVocab, testing::kTinyPad);
  EXPECT_EQ(hf_config_json(mlm_only)["architectures"][0], "BertForMaskedLM");
  // A tokenizer that does not fit the model is refused.
  ExportTokenizer wrong{tok.model_file, {}, testing::kTinyVocab + 1};
  EXPECT_THROW(export_hf(model, wrong, (dir / "bad").string()), CheckpointError);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mlm::model
