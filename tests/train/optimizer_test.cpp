#include "mlm/train/optim/optimizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <sstream>

#include "mlm/model/bert/bert.h"
#include "mlm/train/optim/grad_clip.h"

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
  // The state a checkpoint saves is torch::optim::AdamW's (its step count written from the
  // device's, as save() does).
  fused->publish_state();
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
  scaled.step_scaled(torch::tensor(4.0));
  plain.step();
  EXPECT_TRUE(torch::allclose(a, b, 1e-6, 1e-7));
  EXPECT_FALSE(torch::equal(a, start));  // it moved
}

/// Two parameters and their moments, compared and copied as one.
struct Snapshot {
  std::vector<torch::Tensor> tensors;
  Snapshot(const std::vector<torch::Tensor>& params, torch::optim::Optimizer& optimizer) {
    for (const auto& p : params) {
      tensors.push_back(p.detach().clone());
      const auto& slot = optimizer.state().find(p.unsafeGetTensorImpl());
      if (slot == optimizer.state().end()) continue;
      const auto& state = static_cast<const torch::optim::AdamWParamState&>(*slot->second);
      tensors.push_back(state.exp_avg().clone());
      tensors.push_back(state.exp_avg_sq().clone());
    }
  }
  bool operator==(const Snapshot& other) const {
    if (tensors.size() != other.tensors.size()) return false;
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (!torch::equal(tensors[i], other.tensors[i])) return false;
    }
    return true;
  }
};

int64_t step_count(FusedAdamW& optimizer, const torch::Tensor& param) {
  optimizer.publish_state();
  return static_cast<const torch::optim::AdamWParamState&>(
             *optimizer.state().at(param.unsafeGetTensorImpl()))
      .step();
}

/// Two parameters (one decayed, one not) with the same start in every pair made.
struct TwoParams {
  std::vector<torch::Tensor> params;
  std::unique_ptr<FusedAdamW> adamw;
  TwoParams() {
    torch::manual_seed(3);
    params = {torch::randn({5, 3}).requires_grad_(), torch::randn({7}).requires_grad_()};
    std::vector<torch::optim::OptimizerParamGroup> groups;
    groups.emplace_back(std::vector<torch::Tensor>{params[0]},
                        std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(0.1).weight_decay(0.1)));
    groups.emplace_back(std::vector<torch::Tensor>{params[1]},
                        std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(0.1).weight_decay(0.0)));
    adamw = std::make_unique<FusedAdamW>(std::move(groups), torch::optim::AdamWOptions(0.1));
  }
  /// A step on gradients from `seed`, clipped by `divisor`, skipped where `found_inf` is 1.
  void step(int seed, double divisor, double found_inf) {
    torch::manual_seed(seed);
    for (auto& p : params) {
      p.mutable_grad() = found_inf != 0 ? torch::full_like(p, std::nan("")) : torch::randn_like(p);
    }
    adamw->step_scaled(torch::tensor(divisor), torch::tensor(found_inf, torch::kFloat32));
  }
};

TEST(Optimizer, SkippedStepChangesNothingAndTheNextIsTheStepNeverSkipped) {
  // found_inf = 1 (decided on the device): no parameter, moment or step count moves, and the
  // next step is bit for bit the one an optimizer that never saw the skipped step takes.
  TwoParams skipping, plain;
  skipping.step(10, 2.0, 0);
  plain.step(10, 2.0, 0);
  const Snapshot before(skipping.params, *skipping.adamw);
  skipping.step(11, 1.0, 1);
  EXPECT_TRUE(Snapshot(skipping.params, *skipping.adamw) == before);
  EXPECT_EQ(step_count(*skipping.adamw, skipping.params[0]), 1);
  EXPECT_EQ(step_count(*skipping.adamw, skipping.params[1]), 1);

  skipping.step(12, 3.0, 0);
  plain.step(12, 3.0, 0);
  EXPECT_TRUE(Snapshot(skipping.params, *skipping.adamw) == Snapshot(plain.params, *plain.adamw));
  EXPECT_FALSE(Snapshot(skipping.params, *skipping.adamw) == before);  // it moved
  EXPECT_EQ(step_count(*skipping.adamw, skipping.params[0]), 2);
}

TEST(Optimizer, SavedAndLoadedStepCountsAreTheDevicesAfterSkippedSteps) {
  // The step counts live on the device; optimizer.pt (torch::optim's format) gets them on
  // save, a load rebuilds them, and the loaded optimizer steps exactly as the saved one.
  TwoParams saved;
  saved.step(20, 1.0, 0);
  saved.step(21, 1.0, 1);
  saved.step(22, 1.5, 0);
  saved.step(23, 1.0, 1);
  const auto path = std::filesystem::temp_directory_path() / "mlm_optimizer_skipped_steps.pt";
  torch::save(*saved.adamw, path.string());

  TwoParams loaded;
  {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < loaded.params.size(); ++i) loaded.params[i].copy_(saved.params[i]);
  }
  torch::load(*loaded.adamw, path.string());
  std::filesystem::remove(path);
  for (size_t i = 0; i < loaded.params.size(); ++i) {
    const auto& state = static_cast<const torch::optim::AdamWParamState&>(
        *loaded.adamw->state().at(loaded.params[i].unsafeGetTensorImpl()));
    EXPECT_EQ(state.step(), 2) << "parameter " << i;  // as loaded, before any step
  }
  EXPECT_TRUE(Snapshot(loaded.params, *loaded.adamw) == Snapshot(saved.params, *saved.adamw));

  for (auto* run : {&saved, &loaded}) {
    run->step(24, 2.0, 0);
    run->step(25, 1.0, 1);
    run->step(26, 1.0, 0);
  }
  EXPECT_TRUE(Snapshot(loaded.params, *loaded.adamw) == Snapshot(saved.params, *saved.adamw));
  EXPECT_EQ(step_count(*loaded.adamw, loaded.params[1]), 4);
  EXPECT_EQ(step_count(*saved.adamw, saved.params[1]), 4);
}

TEST(Optimizer, AdamWArchiveIsTorchAdamWsByteForByte) {
  // optim.type adamw writes what torch::optim::AdamW writes for the same state, so its
  // checkpoints are the ones written before the optimizer types existed.
  TwoParams run;
  run.step(30, 1.0, 0);
  run.step(31, 2.0, 1);
  run.step(32, 1.0, 0);
  std::ostringstream fused_bytes;
  torch::save(*run.adamw, fused_bytes);

  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<torch::Tensor>{run.params[0]},
                      std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(0.1).weight_decay(0.1)));
  groups.emplace_back(std::vector<torch::Tensor>{run.params[1]},
                      std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(0.1).weight_decay(0.0)));
  torch::optim::AdamW plain(std::move(groups), torch::optim::AdamWOptions(0.1));
  std::istringstream in(fused_bytes.str());
  torch::load(plain, in);
  std::ostringstream plain_bytes;
  torch::save(plain, plain_bytes);
  EXPECT_EQ(fused_bytes.str(), plain_bytes.str());
  EXPECT_EQ(step_count(*run.adamw, run.params[0]), 2);
}

TEST(GradClip, DeviceDivisorIsTheHostDivisorBitForBit) {
  const double inf = std::numeric_limits<double>::infinity();
  for (const double max_norm : {1.0, 0.5, 3.0, 0.0}) {
    for (const double n : {0.0, 0.3, 0.4999999, 0.5, 0.5000001, 0.999999, 1.0, 1.0000001, 2.9999,
                           3.0, 5.0, 123.456, 1e30, inf, std::nan("")}) {
      // The norm is a float32, widened to float64 by both.
      const auto norm = torch::tensor(static_cast<float>(n));
      const double host = clip_divisor(static_cast<double>(static_cast<float>(n)), max_norm);
      const auto device = clip_divisor(norm, max_norm);
      EXPECT_EQ(device.scalar_type(), torch::kFloat64);
      EXPECT_EQ(device.item<double>(), host) << "norm " << n << ", max_norm " << max_norm;
    }
  }
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
