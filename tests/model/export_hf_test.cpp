// Hugging Face export: config.json fields, both weight formats, and export -> import bit-exact.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "mlm/model/hf/hf_directory.h"
#include "mlm/model/pretrained/export_hf.h"
#include "mlm/model/pretrained/hf_config.h"
#include "mlm/model/pretrained/init_from.h"
#include "mlm/util/errors.h"
#include "model_test_util.h"

namespace mlm::model {
namespace {
namespace fs = std::filesystem;

TEST(ExportHf, WritesConfigAndWeightsThatRoundTripBitExactInBothFormats) {
  const fs::path dir = fs::temp_directory_path() / ("mlm_export_test_" + std::to_string(::getpid()));
  auto cfg = testing::tiny_config(config::NormPosition::post);
  torch::manual_seed(21);
  BertForPreTraining model(cfg, testing::kTinyVocab, testing::kTinyPad);
  for (const auto& [format, file] : {std::pair{WeightFormat::safetensors, "model.safetensors"},
                                     std::pair{WeightFormat::bin, "pytorch_model.bin"}}) {
    SCOPED_TRACE(file);
    fs::remove_all(dir);
    fs::create_directories(dir);
    write_hf_model(model, dir.string(), format);
    EXPECT_TRUE(fs::exists(dir / "config.json"));
    EXPECT_TRUE(fs::exists(dir / file));
    EXPECT_EQ(find_hf_weights(dir.string()), (dir / file).string());

    std::ifstream in(dir / "config.json");
    const auto json = nlohmann::json::parse(in);
    EXPECT_EQ(json["model_type"], "bert");
    EXPECT_EQ(json["architectures"][0], "BertForPreTraining");  // the tiny post-LN model has NSP
    EXPECT_EQ(json["vocab_size"], testing::kTinyVocab);
    EXPECT_EQ(json["hidden_size"], 32);
    EXPECT_EQ(json["num_attention_heads"], 4);
    EXPECT_EQ(json["hidden_act"], "gelu");
    EXPECT_EQ(json["layer_norm_eps"], 1e-12);
    EXPECT_EQ(json["pad_token_id"], testing::kTinyPad);
    const auto described = model_config_from_hf((dir / "config.json").string(), config::ModelConfig{});
    EXPECT_EQ(described.hidden_size, cfg.hidden_size);
    EXPECT_EQ(described.num_hidden_layers, cfg.num_hidden_layers);
    EXPECT_EQ(described.intermediate_size, cfg.intermediate_size);

    auto reload_cfg = cfg;
    reload_cfg.pad_vocab_multiple = 1;
    torch::manual_seed(22);
    BertForPreTraining reloaded(reload_cfg, testing::kTinyVocab, testing::kTinyPad);
    init_from_pretrained(reloaded, dir.string());
    auto a = to_hf_state_dict(model), b = to_hf_state_dict(reloaded);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i].second, b[i].second)) << a[i].first;
  }
  cfg.objective = config::Objective::mlm;
  BertForPreTraining mlm_only(cfg, testing::kTinyVocab, testing::kTinyPad);
  EXPECT_EQ(hf_config_json(mlm_only)["architectures"][0], "BertForMaskedLM");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mlm::model
