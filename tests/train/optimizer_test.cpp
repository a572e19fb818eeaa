#include "mlm/train/loop/optimizer.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "mlm/model/bert.h"
#include "mlm/train/loop/grad_clip.h"

namespace mlm::train {
namespace {

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(Optimizer, BiasesAndLayerNormAreNotDecayed) {
  config::ModelConfig model_config;
  model_config.hidden_size = 32;
  model_config.num_hidden_layers = 1;
  model_config.num_attention_heads = 2;
  model_config.intermediate_size = 64;
  model_config.max_position_embeddings = 16;
  model::BertForPreTraining model(model_config, 100, 0);
  const auto groups = split_parameters(*model);

  EXPECT_TRUE(contains(groups.decay_names, "bert.embeddings.word_embeddings.weight"));
  EXPECT_TRUE(contains(groups.decay_names, "bert.embeddings.position_embeddings.weight"));
  EXPECT_TRUE(contains(groups.decay_names, "cls.predictions.transform.dense.weight"));
  EXPECT_TRUE(contains(groups.no_decay_names, "bert.embeddings.LayerNorm.weight"));
  EXPECT_TRUE(contains(groups.no_decay_names, "bert.embeddings.LayerNorm.bias"));
  EXPECT_TRUE(contains(groups.no_decay_names, "cls.predictions.bias"));
  EXPECT_TRUE(contains(groups.no_decay_names, "cls.predictions.transform.LayerNorm.weight"));
  for (const auto& name : groups.decay_names) {
    EXPECT_EQ(name.find("LayerNorm"), std::string::npos) << name;
    EXPECT_EQ(name.find("bias"), std::string::npos) << name;
  }
  for (const auto& t : groups.no_decay) EXPECT_EQ(t.dim(), 1);
  // Every trainable tensor exactly once (the tied decoder weight is not a second entry).
  EXPECT_EQ(groups.decay.size() + groups.no_decay.size(), model->parameters().size());

  auto adamw = make_adamw(*model, config::OptimConfig{});
  ASSERT_EQ(adamw->param_groups().size(), 2u);
  const auto& decay_options =
      static_cast<const torch::optim::AdamWOptions&>(adamw->param_groups()[0].options());
  const auto& no_decay_options =
      static_cast<const torch::optim::AdamWOptions&>(adamw->param_groups()[1].options());
  EXPECT_DOUBLE_EQ(decay_options.weight_decay(), 0.01);
  EXPECT_DOUBLE_EQ(no_decay_options.weight_decay(), 0.0);
  EXPECT_DOUBLE_EQ(decay_options.eps(), 1e-6);

  set_learning_rate(*adamw, 0.123);
  for (auto& group : adamw->param_groups()) EXPECT_DOUBLE_EQ(group.options().get_lr(), 0.123);
}

TEST(Optimizer, NoDecayGroupIsNotShrunk) {
  // With zero gradients AdamW moves only the decayed tensors (by lr * wd * w).
  torch::nn::Sequential net(torch::nn::Linear(4, 4), torch::nn::LayerNorm(torch::nn::LayerNormOptions({4})));
  config::OptimConfig optim;
  optim.learning_rate = 0.1;
  optim.weight_decay = 0.5;
  auto adamw = make_adamw(*net, optim);
  std::vector<torch::Tensor> before;
  for (const auto& p : net->parameters()) {
    p.mutable_grad() = torch::zeros_like(p);
    before.push_back(p.detach().clone());
  }
  adamw->step();
  const auto params = net->parameters();
  EXPECT_TRUE(torch::allclose(params[0], before[0] * (1 - 0.1 * 0.5)));  // linear weight
  EXPECT_TRUE(torch::equal(params[1], before[1]));                     // linear bias
  EXPECT_TRUE(torch::equal(params[2], before[2]));                     // LayerNorm weight
  EXPECT_TRUE(torch::equal(params[3], before[3]));                     // LayerNorm bias
}

TEST(GradClip, ScalesToMaxNormAndReportsTheNormBefore) {
  auto a = torch::zeros({2}, torch::requires_grad());
  auto b = torch::zeros({1}, torch::requires_grad());
  a.mutable_grad() = torch::tensor({3.0f, 0.0f});
  b.mutable_grad() = torch::tensor({4.0f});
  const double norm = clip_grad_norm({a, b}, 1.0);
  EXPECT_NEAR(norm, 5.0, 1e-6);
  const double after = std::sqrt(a.grad().pow(2).sum().item<double>() + b.grad().pow(2).sum().item<double>());
  EXPECT_NEAR(after, 1.0, 1e-5);
  EXPECT_NEAR(a.grad()[0].item<double>(), 0.6, 1e-5);
  EXPECT_NEAR(b.grad()[0].item<double>(), 0.8, 1e-5);
}

TEST(GradClip, BelowThresholdOrDisabledLeavesGradientsAlone) {
  auto a = torch::zeros({2}, torch::requires_grad());
  a.mutable_grad() = torch::tensor({0.3f, 0.4f});
  EXPECT_NEAR(clip_grad_norm({a}, 1.0), 0.5, 1e-6);
  EXPECT_TRUE(torch::equal(a.grad(), torch::tensor({0.3f, 0.4f})));
  a.mutable_grad() = torch::tensor({30.0f, 40.0f});
  EXPECT_NEAR(clip_grad_norm({a}, 0.0), 50.0, 1e-4);  // 0 = off: measure only
  EXPECT_TRUE(torch::equal(a.grad(), torch::tensor({30.0f, 40.0f})));
}

TEST(GradClip, NonFiniteNormIsReportedAndNothingScaled) {
  auto a = torch::zeros({2}, torch::requires_grad());
  a.mutable_grad() = torch::tensor({std::numeric_limits<float>::quiet_NaN(), 1.0f});
  EXPECT_TRUE(std::isnan(clip_grad_norm({a}, 1.0)));
  EXPECT_EQ(a.grad()[1].item<float>(), 1.0f);
}

}  // namespace
}  // namespace mlm::train
