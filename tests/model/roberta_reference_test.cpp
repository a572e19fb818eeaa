// Parity with `transformers`' own RobertaForMaskedLM and XLMRobertaForMaskedLM (the venv's, run
// live through tests/reference/hf_client.py roberta_reference): the C++ model writes its export
// and a padded batch whose padding is the pad id 1, as RoBERTa's vocabulary has it;
// transformers loads the export (no missing, unexpected or mismatched keys), numbers the
// positions from the ids itself, and computes the logits, the loss and every gradient. fp32
// must agree: logits 1e-5, loss 1e-4, each gradient 1e-4 of its tensor's largest magnitude (the
// key biases', zero but for rounding, below 1e-6 on both sides).
// The export read back by model.init_from is the model bit for bit.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iostream>

#include "config/config_test_util.h"
#include "mlm/model/bert/bert.h"
#include "mlm/model/hf/hf_directory.h"
#include "mlm/model/pretrained/export_hf.h"
#include "mlm/model/pretrained/hf_config.h"
#include "mlm/model/pretrained/init_from.h"
#include "mlm/model/hf/safetensors.h"
#include "mlm/util/errors.h"
#include "model_test_util.h"

// A named namespace: the unity build compiles this file with the other model tests.
namespace mlm::model::roberta_reference {
using testing::expect_tensor_near;

constexpr int64_t kVocab = 97, kPad = 1;

struct Case {
  const char* name;
  config::Architecture architecture;
  int64_t batch, seq;
  bool padded;
  bool sparse_head;
  config::Activation act;  // the encoder's; RobertaLMHead's stays the exact GELU
};

config::ModelConfig tiny_roberta(const Case& c) {
  config::ModelConfig m;
  m.architecture = c.architecture;
  m.hidden_size = 32;
  m.num_hidden_layers = 2;
  m.num_attention_heads = 4;
  m.intermediate_size = 64;
  m.max_position_embeddings = c.seq + kPad + 1;  // RoBERTa's 514 for 512 tokens
  m.type_vocab_size = 1;
  m.layer_norm_eps = 1e-5;
  m.hidden_act = c.act;
  m.hidden_dropout_prob = 0.0;
  m.attention_probs_dropout_prob = 0.0;
  m.pad_vocab_multiple = 8;  // padded rows must stay out of everything
  m.sparse_head = c.sparse_head;
  return m;
}

std::string quote(const std::string& s) { return "'" + s + "'"; }

// Weights far from their initial values, so that a wrong wiring shows; the padded vocabulary
// rows and the padding position's row as the model keeps them (zero).
void scramble(BertForPreTraining& model) {
  torch::NoGradGuard no_grad;
  for (auto& p : model->parameters()) p.copy_(torch::randn_like(p) * 0.5);
  model->word_embeddings().narrow(0, kVocab, model->padded_vocab_size() - kVocab).zero_();
  model->bert->embeddings->zero_padding_position();
}

MlmInputs padded_batch(const Case& c) {
  MlmInputs in;
  in.input_ids = torch::randint(5, kVocab, {c.batch, c.seq}, torch::kLong);
  in.attention_mask = torch::ones({c.batch, c.seq}, torch::kLong);
  if (c.padded) {
    // Rows of every length down to a few tokens: over half of the batch is padding, so that the
    // larger case runs its layers unpadded (TokenLayout). The last row is padded on the left,
    // where RoBERTa's positions (counted over the tokens) and 0..S-1 part.
    for (int64_t b = 1; b < c.batch; ++b) {
      const int64_t length = std::max<int64_t>(4, c.seq / (2 * b));
      in.attention_mask[b].narrow(0, b + 1 == c.batch ? 0 : length, c.seq - length).zero_();
    }
    in.input_ids.masked_fill_(in.attention_mask.eq(0), kPad);
  }
  in.has_padding = c.padded;
  const auto selected = (torch::rand({c.batch, c.seq}) < 0.3).logical_and(in.attention_mask.eq(1));
  in.masked_positions = selected.reshape(-1).nonzero().reshape(-1);
  in.masked_labels = torch::randint(5, kVocab, {in.masked_positions.numel()}, torch::kLong);
  return in;
}

class RobertaReference : public ::testing::TestWithParam<Case> {};

TEST_P(RobertaReference, MatchesTransformers) {
  const Case c = GetParam();
  config::testing::TempDir dir;
  torch::manual_seed(17);
  BertForPreTraining model(tiny_roberta(c), kVocab, kPad);
  scramble(model);
  model->train();  // dropouts are 0: training mode must be exact
  const MlmInputs in = padded_batch(c);
  ASSERT_GE(in.masked_positions.numel(), 4);
  if (c.batch * c.seq >= 256) {
    ASSERT_TRUE(TokenLayout::of(in.attention_mask, in.has_padding).unpadded()) << "meant to run unpadded";
  }

  write_hf_model(model, dir.path().string(), WeightFormat::safetensors);
  write_safetensors((dir.path() / "batch.safetensors").string(), {{"input_ids", in.input_ids},
                                                                  {"attention_mask", in.attention_mask},
                                                                  {"masked_positions", in.masked_positions},
                                                                  {"masked_labels", in.masked_labels}});
  const std::string command = quote(MLM_PYTHON) + " " +
                              quote(std::string(MLM_SOURCE_DIR) + "/tests/reference/hf_client.py") +
                              " roberta_reference " + quote(dir.path().string()) + " > " +
                              quote((dir.path() / "py.out").string()) + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << std::ifstream(dir.path() / "py.out").rdbuf();
  std::map<std::string, torch::Tensor> ref;
  for (auto& [k, v] : read_safetensors((dir.path() / "reference.safetensors").string())) ref[k] = v;

  auto out = model->forward(in, /*return_logits=*/true);
  expect_tensor_near(out.mlm_logits, ref["logits"], 1e-5, "logits");
  expect_tensor_near(out.mlm_loss_sum, ref["loss_sum"], 1e-4, "loss_sum");
  EXPECT_EQ(out.mlm_correct.item<int64_t>(), ref["correct"].item<int64_t>());
  (out.mlm_loss_sum / static_cast<double>(in.masked_labels.numel())).backward();

  std::map<std::string, torch::Tensor> grads;
  for (auto& [key, grad] : model->hf_gradients()) grads[key] = grad;
  int checked = 0;
  double worst = 0;  // the largest difference over the tensor's largest magnitude
  for (const auto& [name, want] : ref) {
    if (name.rfind("grad.", 0) != 0) continue;
    const auto key = name.substr(5);
    ASSERT_TRUE(grads.count(key) && grads[key].defined()) << key;
    ++checked;
    const std::string key_bias = "attention.self.key.bias";
    if (key.size() > key_bias.size() && key.compare(key.size() - key_bias.size(), key_bias.size(), key_bias) == 0) {
      // A key bias adds one constant to all of a query's scores, which the softmax ignores:
      // its gradient is zero, on both sides rounding noise (~1e-9) of no relative meaning.
      EXPECT_LT(grads[key].abs().max().item<double>(), 1e-6) << key;
      EXPECT_LT(want.abs().max().item<double>(), 1e-6) << key;
      continue;
    }
    const double scale = want.abs().max().item<double>();
    ASSERT_GT(scale, 0) << key;
    expect_tensor_near(grads[key], want, 1e-4 * scale, "grad " + key);
    worst = std::max(worst, (grads[key].to(torch::kFloat64) - want.to(torch::kFloat64)).abs().max().item<double>() / scale);
  }
  // Every gradient but the tied decoder's two copies (the embeddings' and lm_head.bias's own).
  EXPECT_EQ(checked, static_cast<int>(grads.size()) - 2);
  const auto positions = model->bert->embeddings->position_embeddings->weight.grad();
  EXPECT_EQ(positions[kPad].abs().sum().item<double>(), 0.0) << "the padding position learns nothing";
  const int64_t padded = model->padded_vocab_size();
  EXPECT_EQ(model->word_embeddings().grad().narrow(0, kVocab, padded - kVocab).abs().sum().item<double>(), 0.0);
  std::cout << c.name << ": logits max diff "
            << (out.mlm_logits - ref["logits"]).abs().max().item<double>() << ", loss_sum diff "
            << (out.mlm_loss_sum - ref["loss_sum"]).abs().item<double>() << ", worst gradient diff / max "
            << worst << " over " << checked << " tensors\n";

  // model.init_from reads the export back bit for bit.
  torch::manual_seed(18);
  auto reload_config = tiny_roberta(c);
  reload_config.pad_vocab_multiple = 1;
  BertForPreTraining reloaded(reload_config, kVocab, kPad);
  init_from_pretrained(reloaded, dir.path().string());
  const auto a = to_hf_state_dict(model), b = to_hf_state_dict(reloaded);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].first, b[i].first);
    EXPECT_TRUE(torch::equal(a[i].second, b[i].second)) << a[i].first;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, RobertaReference,
    ::testing::Values(Case{"roberta_pad_sparse", config::Architecture::roberta, 3, 20, true, true, config::Activation::gelu},
                      Case{"roberta_nopad_dense_tanh", config::Architecture::roberta, 3, 20, false, false,
                           config::Activation::gelu_tanh},
                      Case{"roberta_unpadded_layers", config::Architecture::roberta, 4, 64, true, true,
                           config::Activation::gelu},
                      Case{"xlm_roberta_pad_dense", config::Architecture::xlm_roberta, 3, 20, true, false,
                           config::Activation::gelu}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(RobertaExport, ConfigJsonIsWhatTransformersReadsForEachClass) {
  for (const auto architecture : {config::Architecture::roberta, config::Architecture::xlm_roberta}) {
    auto c = tiny_roberta({"", architecture, 2, 16, true, true, config::Activation::gelu});
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
  auto c = tiny_roberta({"", config::Architecture::roberta, 2, 8, true, true, config::Activation::gelu});
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
  auto c = tiny_roberta({"", config::Architecture::roberta, 2, 16, true, true, config::Activation::gelu});
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
  auto c = tiny_roberta({"", config::Architecture::roberta, 2, 16, true, true, config::Activation::gelu});
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

}  // namespace mlm::model::roberta_reference
