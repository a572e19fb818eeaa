// model.activation_checkpointing: every architecture's forward and backward with each layer
// checkpointed equal the plain ones bit for bit (dropout on: the recomputation draws the
// same masks), under bf16 autocast too, and leave the default generator where the plain pass
// leaves it; and the saved activations shrink.
#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>

#include "mlm/model/checkpointed_layer.h"
#include "mlm/model/make_masked_lm.h"
#include "model_test_util.h"

namespace mlm::model::checkpointing {
using testing::expect_tensor_near;

constexpr int64_t kVocab = 89, kPad = 0;

config::ModelConfig small(config::Architecture architecture) {
  config::ModelConfig c;
  c.architecture = architecture;
  c.hidden_size = 32;
  c.num_attention_heads = 4;
  c.intermediate_size = 48;
  c.num_hidden_layers = 3;
  c.max_position_embeddings = 64;
  c.hidden_dropout_prob = 0.1;
  c.attention_probs_dropout_prob = 0.1;
  if (architecture == config::Architecture::modernbert) {
    c.local_attention = 8;
    c.global_attn_every_n_layers = 2;
    c.mlp_dropout = 0.1;
    c.embedding_dropout = 0.1;
  }
  if (architecture == config::Architecture::electra) {
    c.objective = config::Objective::rtd;
    c.embedding_size = 16;
    c.generator_hidden_ratio = 0.5;
  }
  if (architecture == config::Architecture::roberta) c.max_position_embeddings = 66;
  return c;
}

// Two rows of 30 and 17 tokens padded to 30, some positions selected.
MlmInputs inputs() {
  torch::manual_seed(11);
  MlmInputs in;
  in.input_ids = torch::randint(5, kVocab, {2, 30}, torch::kLong);
  in.attention_mask = torch::ones({2, 30}, torch::kLong);
  in.attention_mask[1].narrow(0, 17, 13).fill_(0);
  in.input_ids.masked_fill_(in.attention_mask.eq(0), kPad);
  in.token_type_ids = torch::zeros({2, 30}, torch::kLong);
  in.has_padding = true;
  in.masked_positions = torch::tensor({2, 9, 28, 31, 40}, torch::kLong);
  in.masked_labels = torch::tensor({7, 8, 9, 10, 11}, torch::kLong);
  in.rtd_samples = torch::tensor({12, 13, 14, 15, 16}, torch::kLong);
  return in;
}

struct Pass {
  torch::Tensor loss;
  TensorDict gradients;
  torch::Tensor next_draw;  // the default generator's next number after the pass
};

Pass train_pass(MaskedLm& model, bool checkpoint, bool bf16) {
  auto settings = model->config();
  settings.activation_checkpointing = checkpoint;
  model->apply_phase_settings(settings);
  model->zero_grad();
  torch::manual_seed(3);
  const auto in = inputs();
  torch::manual_seed(5);
  Pass pass;
  {
    at::autocast::set_autocast_enabled(torch::kCPU, bf16);
    at::autocast::set_autocast_dtype(torch::kCPU, at::kBFloat16);
    auto out = model->forward(in);
    pass.loss = out.mlm_loss_sum;
    if (out.rtd_loss_sum.defined()) pass.loss = pass.loss + out.rtd_loss_sum;
    at::autocast::set_autocast_enabled(torch::kCPU, false);
    at::autocast::clear_cache();
  }
  pass.loss.backward();  // outside autocast, as the training step runs it
  for (const auto& [key, grad] : model->hf_gradients()) {
    if (grad.defined()) pass.gradients.emplace_back(key, grad.clone());
  }
  pass.next_draw = torch::rand({1});
  return pass;
}

struct Case {
  std::string name;
  config::Architecture architecture;
  bool bf16;
};

class ActivationCheckpointing : public ::testing::TestWithParam<Case> {};

TEST_P(ActivationCheckpointing, EqualsThePlainPassBitForBit) {
  torch::manual_seed(1);
  auto model = make_masked_lm(small(GetParam().architecture), kVocab, kPad);
  model->train();
  const auto plain = train_pass(model, false, GetParam().bf16);
  const auto checkpointed = train_pass(model, true, GetParam().bf16);
  EXPECT_TRUE(model->config().activation_checkpointing);
  EXPECT_EQ(checkpointed.loss.item<double>(), plain.loss.item<double>());
  ASSERT_EQ(checkpointed.gradients.size(), plain.gradients.size());
  ASSERT_GT(plain.gradients.size(), 10u);
  for (size_t i = 0; i < plain.gradients.size(); ++i) {
    EXPECT_EQ(checkpointed.gradients[i].first, plain.gradients[i].first);
    expect_tensor_near(checkpointed.gradients[i].second, plain.gradients[i].second, 0, plain.gradients[i].first);
  }
  EXPECT_EQ(checkpointed.next_draw.item<double>(), plain.next_draw.item<double>());
  // Dropout is on: a pass under another seed differs (the equality above is not vacuous).
  torch::manual_seed(6);
  auto other = model->forward(inputs()).mlm_loss_sum.item<double>();
  EXPECT_NE(other, plain.loss.item<double>());
}

INSTANTIATE_TEST_SUITE_P(Architectures, ActivationCheckpointing,
                         ::testing::Values(Case{"bert", config::Architecture::bert, false},
                                           Case{"roberta", config::Architecture::roberta, false},
                                           Case{"modernbert", config::Architecture::modernbert, false},
                                           Case{"modernbert_bf16", config::Architecture::modernbert, true},
                                           Case{"bert_bf16", config::Architecture::bert, true},
                                           Case{"electra", config::Architecture::electra, false}),
                         [](const auto& info) { return info.param.name; });

TEST(CheckpointedLayer, KeepsOnlyTheInputAndGivesItsGradient) {
  const auto weight = torch::randn({8, 8}).requires_grad_(true);
  const auto x = torch::randn({4, 8}).requires_grad_(true);
  auto layer = [&](const torch::Tensor& h) { return torch::tanh(h.matmul(weight)).matmul(weight); };
  const auto want = layer(x);
  want.sum().backward();
  const auto want_x = x.grad().clone(), want_w = weight.grad().clone();
  x.mutable_grad().zero_();
  weight.mutable_grad().zero_();
  const auto got = checkpointed_layer(layer, x);
  // The autograd graph of the checkpointed call is one node over x, not the layer's three.
  ASSERT_TRUE(got.grad_fn());
  EXPECT_EQ(got.grad_fn()->next_edges().size(), 1u);  // to x alone
  got.sum().backward();
  expect_tensor_near(got, want, 0, "output");
  expect_tensor_near(x.grad(), want_x, 0, "input gradient");
  expect_tensor_near(weight.grad(), want_w, 0, "weight gradient");
  // Without autograd (evaluation) it is the layer itself.
  torch::NoGradGuard no_grad;
  EXPECT_FALSE(checkpointed_layer(layer, x).grad_fn());
}

}  // namespace mlm::model::checkpointing
