// RoBERTa's and XLM-R's own behaviour beside the parity every body has (body_reference_test.cpp):
// config.json is what transformers reads for each class, positions count the tokens from the pad
// id + 1, and model.init_from refuses weights trained with another pad id and reads a hub
// pytorch_model.bin past its pooler and position_ids buffer.
#include <gtest/gtest.h>

#include <fstream>

#include "config/config_test_util.h"
#include "mlm/model/bert/bert.h"
#include "mlm/model/hf/tensor_file.h"
#include "mlm/model/pretrained/export_hf.h"
#include "mlm/model/pretrained/hf_config.h"
#include "mlm/model/pretrained/init_from.h"
#include "mlm/util/errors.h"

// A named namespace: the unity build compiles this file with the other model tests.
namespace mlm::model::roberta_behaviour {

constexpr int64_t kVocab = 97, kPad = 1;

// A tiny RoBERTa for 16-token sequences: one token type, LayerNorm eps 1e-5, padded rows.
config::ModelConfig tiny_roberta(config::Architecture architecture) {
  config::ModelConfig m;
  m.architecture = architecture;
  m.hidden_size = 32;
  m.num_hidden_layers = 2;
  m.num_attention_heads = 4;
  m.intermediate_size = 64;
  m.max_position_embeddings = 16 + kPad + 1;  // RoBERTa's 514 for 512 tokens
  m.type_vocab_size = 1;
  m.layer_norm_eps = 1e-5;
  m.pad_vocab_multiple = 8;
  m.sparse_head = true;
  return m;
}

// Weights far from their initial values; the padded vocabulary rows and the padding position's
// row as the model keeps them (zero).
void scramble(BertForPreTraining& model) {
  torch::NoGradGuard no_grad;
  for (auto& p : model->parameters()) p.copy_(torch::randn_like(p) * 0.5);
  model->word_embeddings().narrow(0, kVocab, model->padded_vocab_size() - kVocab).zero_();
  model->bert->embeddings->zero_padding_position();
}

TEST(RobertaExport, ConfigJsonIsWhatTransformersReadsForEachClass) {
  for (const auto architecture : {config::Architecture::roberta, config::Architecture::xlm_roberta}) {
    auto c = tiny_roberta(architecture);
    BertForPreTraining model(c, kVocab, kPad);
    const auto json = hf_config_json(model);
    const bool xlm = architecture == config::Architecture::xlm_roberta;
    EXPECT_EQ(json["model_type"], xlm ? "xlm-roberta" : "roberta");
    EXPECT_EQ(json["architectures"][0], xlm ? "XLMRobertaForMaskedLM" : "RobertaForMaskedLM");
    EXPECT_EQ(json["pad_token_id"], kPad);
    EXPECT_EQ(json["max_position_embeddings"], 16 + kPad + 1);
    EXPECT_EQ(json["type_vocab_size"], 1);
    EXPECT_EQ(json["layer_norm_eps"], 1e-5);
    EXPECT_EQ(model->max_sequence_length(), 16);
    const auto keys = model->hf_state_dict();
    EXPECT_EQ(keys.front().first, "roberta.embeddings.word_embeddings.weight");
    for (const auto& [key, _] : keys)
      EXPECT_TRUE(key.rfind("roberta.", 0) == 0 || key.rfind("lm_head.", 0) == 0) << key;
  }
}

TEST(RobertaPositions, CountTheTokensFromThePadIdPlusOne) {
  auto c = tiny_roberta(config::Architecture::roberta);
  BertForPreTraining model(c, kVocab, kPad);
  const auto ids = torch::tensor({{0, 7, 8, 2, 1, 1}, {0, 9, 2, 0, 5, 2}}, torch::kLong);
  const auto want = torch::tensor({{2, 3, 4, 5, 1, 1}, {2, 3, 4, 5, 6, 7}}, torch::kLong);
  EXPECT_TRUE(torch::equal(model->bert->embeddings->position_ids(ids), want));
  c.architecture = config::Architecture::bert;
  BertForPreTraining bert(c, kVocab, kPad);
  EXPECT_FALSE(bert->bert->embeddings->position_ids(ids).defined());  // 0..S-1
}

TEST(RobertaInitFrom, RefusesWeightsTrainedWithAnotherPadId) {
  config::testing::TempDir dir;
  auto c = tiny_roberta(config::Architecture::roberta);
  BertForPreTraining model(c, kVocab, kPad);
  write_hf_model(model, dir.path().string(), WeightFormat::safetensors);
  BertForPreTraining other_pad(c, kVocab, /*pad_id=*/0);
  try {
    init_from_pretrained(other_pad, dir.path().string());
    FAIL() << "a pad id mismatch was accepted";
  } catch (const CheckpointError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("config.json"), std::string::npos) << message;
    EXPECT_NE(message.find("pad_token_id is 1"), std::string::npos) << message;
    EXPECT_NE(message.find("[PAD] id is 0"), std::string::npos) << message;
  }
}

// What a hub RoBERTa's pytorch_model.bin holds beside the MaskedLM's weights: the pooler of
// RobertaModel and, from older transformers, the position_ids buffer. Both are read past.
TEST(RobertaInitFrom, ReadsAHubPytorchModelBinWithItsPoolerAndBuffer) {
  config::testing::TempDir dir;
  auto c = tiny_roberta(config::Architecture::roberta);
  torch::manual_seed(5);
  BertForPreTraining model(c, kVocab, kPad);
  scramble(model);
  std::ofstream(dir.path() / "config.json") << hf_config_json(model).dump();
  TensorDict hub;
  for (const auto& [key, t] : model->hf_state_dict())
    if (key.rfind("lm_head.decoder.", 0) != 0) hub.emplace_back(key, t.clone());
  hub.emplace_back("roberta.embeddings.position_ids", torch::arange(c.max_position_embeddings).unsqueeze(0));
  hub.emplace_back("roberta.pooler.dense.weight", torch::randn({c.hidden_size, c.hidden_size}));
  hub.emplace_back("roberta.pooler.dense.bias", torch::randn({c.hidden_size}));
  write_tensor_file((dir.path() / "pytorch_model.bin").string(), hub);

  torch::manual_seed(6);
  BertForPreTraining reloaded(c, kVocab, kPad);
  init_from_pretrained(reloaded, dir.path().string());
  const auto a = to_hf_state_dict(model), b = to_hf_state_dict(reloaded);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i].second, b[i].second)) << a[i].first;
}

}  // namespace mlm::model::roberta_behaviour
