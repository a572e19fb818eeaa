#include "mlm/train/loop/optimizer.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "mlm/model/bert/bert.h"
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

TEST(Optimizer, FusedStepsEqualTorchAdamW) {
  // Twenty steps of make_adamw (the fused kernel) and of torch::optim::AdamW from the same
  // start, both groups, with gradients that change every step: equal to float rounding.
  torch::manual_seed(0);
  torch::nn::Sequential fused_net(torch::nn::Linear(7, 5), torch::nn::LayerNorm(torch::nn::LayerNormOptions({5})));
  torch::nn::Sequential plain_net(torch::nn::Linear(7, 5), torch::nn::LayerNorm(torch::nn::LayerNormOptions({5})));
  {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < fused_net->parameters().size(); ++i) {
      plain_net->parameters()[i].copy_(fused_net->parameters()[i]);
    }
  }
  config::OptimConfig optim;
  optim.learning_rate = 0.05;
  optim.weight_decay = 0.1;
  auto fused = make_adamw(*fused_net, optim);
  auto groups = split_parameters(*plain_net);
  std::vector<torch::optim::OptimizerParamGroup> plain_groups;
  auto options = [&](double wd) {
    return std::make_unique<torch::optim::AdamWOptions>(
        torch::optim::AdamWOptions(optim.learning_rate).betas({optim.betas[0], optim.betas[1]}).eps(optim.eps).weight_decay(wd));
  };
  plain_groups.emplace_back(groups.decay, options(optim.weight_decay));
  plain_groups.emplace_back(groups.no_decay, options(0.0));
  torch::optim::AdamW plain(std::move(plain_groups));
  auto max_difference = [&] {
    double worst = 0;
    for (size_t i = 0; i < fused_net->parameters().size(); ++i) {
      worst = std::max(worst, (fused_net->parameters()[i] - plain_net->parameters()[i]).abs().max().item<double>());
    }
    return worst;
  };
  for (int step = 1; step <= 20; ++step) {
    const auto input = torch::randn({3, 7});
    for (auto* net : {&fused_net, &plain_net}) {
      (*net)->zero_grad();
      (*net)->forward(input).pow(2).sum().backward();
    }
    fused->step();
    plain.step();
    // One step differs by float rounding (parameters are O(1)); Adam's normalised steps let
    // such differences grow a little over the next ones.
    if (step == 1) EXPECT_LT(max_difference(), 1e-7);
  }
  EXPECT_LT(max_difference(), 5e-6);
  // The state a checkpoint saves is torch::optim::AdamW's.
  const auto& state = static_cast<torch::optim::AdamWParamState&>(
      *fused->state().at(fused_net->parameters()[0].unsafeGetTensorImpl()));
  EXPECT_EQ(state.step(), 20);
}

TEST(Optimizer, ScaledStepEqualsAStepOnDividedGradients) {
  // Clipping folded into the kernel: step_scaled(d) moves the parameters as a step on grad / d.
  torch::manual_seed(1);
  auto a = torch::randn({6, 3}, torch::requires_grad());
  auto b = a.detach().clone().requires_grad_();
  const auto start = a.detach().clone();
  const auto grad = torch::randn({6, 3});
  a.mutable_grad() = grad.clone();
  b.mutable_grad() = grad / 4.0;
  FusedAdamW scaled({a}, torch::optim::AdamWOptions(0.1).weight_decay(0.01));
  FusedAdamW plain({b}, torch::optim::AdamWOptions(0.1).weight_decay(0.01));
  scaled.step_scaled(4.0);
  plain.step();
  EXPECT_TRUE(torch::allclose(a, b, 1e-6, 1e-7));
  EXPECT_FALSE(torch::equal(a, start));  // it moved
}

TEST(GradClip, DivisorIsTheInverseOfTheClipCoefficient) {
  EXPECT_DOUBLE_EQ(clip_divisor(0.5, 1.0), 1.0);
  EXPECT_NEAR(clip_divisor(5.0, 1.0), 5.000001, 1e-9);
  EXPECT_DOUBLE_EQ(clip_divisor(5.0, 0.0), 1.0);  // 0 = off
  EXPECT_DOUBLE_EQ(clip_divisor(std::numeric_limits<double>::infinity(), 1.0), 1.0);
  EXPECT_DOUBLE_EQ(clip_divisor(std::nan(""), 1.0), 1.0);
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
