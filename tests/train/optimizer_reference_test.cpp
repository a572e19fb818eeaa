// Each optim.type against its published update rule, written out in Python with the venv's
// torch (tests/reference/optimizer_reference.py), step by step: twenty steps on two groups
// with weight decay, a changing learning rate, clip divisors, skipped (non-finite) steps, a
// gradient spike and a tensor that starts at zero; the parameters after every step within
// 1e-6. Then a save/load round trip that continues bit for bit.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "mlm/model/hf/safetensors.h"
#include "mlm/test_paths.h"
#include "mlm/train/optim/optimizer.h"

// Named, not anonymous: the unity build compiles the trainer tests together.
namespace mlm::train::optimizer_reference {

namespace fs = std::filesystem;

constexpr int kSteps = 20;
constexpr double kPeakLr = 0.05;

/// Four parameters in make_optimizer's two groups: a weight matrix and one that starts at zero
/// (LAMB's ||w|| = 0 rule on its first step) decay; a bias and a norm weight do not.
struct Net : torch::nn::Module {
  torch::Tensor weight, zero, bias, norm;
  Net() {
    torch::manual_seed(5);
    weight = register_parameter("weight", torch::randn({6, 5}));
    zero = register_parameter("zero", torch::zeros({4, 3}));
    bias = register_parameter("bias", torch::randn({5}) * 0.1);
    norm = register_parameter("norm", torch::ones({7}) + torch::randn({7}) * 0.05);
  }
};

/// What step `s` (from 1) does: its learning rate (warmup, then decay), its clip divisor and
/// whether it is skipped (its gradients non-finite): the first step, and two later ones.
struct StepPlan {
  double lr, divisor, found_inf;
};

StepPlan plan(int s) {
  const double lr = s <= 4 ? kPeakLr * s / 4 : kPeakLr * (1.0 - 0.6 * (s - 4) / (kSteps - 4));
  const double divisor = s % 3 == 0 ? 2.5 : (s % 5 == 0 ? 1.7 : 1.0);
  const double found_inf = (s == 1 || s == 7 || s == 13) ? 1.0 : 0.0;
  return {lr, divisor, found_inf};
}

/// Step `s`'s gradient of a parameter: NaN/inf on a skipped step, ten times larger at step 10
/// (a spike StableAdamW clips).
torch::Tensor gradient(int s, size_t index, const torch::Tensor& param) {
  if (plan(s).found_inf != 0) {
    auto g = torch::full_like(param, std::numeric_limits<float>::quiet_NaN());
    g.view({-1})[0] = std::numeric_limits<float>::infinity();
    return g;
  }
  torch::manual_seed(1000 * s + static_cast<int>(index));
  return torch::randn_like(param) * (s == 10 ? 10.0 : 1.0);
}

struct Case {
  std::string name;
  config::OptimConfig optim;
  std::string reference_args;  // the same settings for optimizer_reference.py
};

config::OptimConfig optim_of(config::OptimizerType type, double weight_decay) {
  config::OptimConfig optim;
  optim.type = type;
  optim.learning_rate = kPeakLr;
  optim.betas = {0.9, 0.99};
  optim.eps = 1e-6;
  optim.weight_decay = weight_decay;
  return optim;
}

std::vector<Case> cases() {
  std::vector<Case> all;
  all.push_back({"adamw", optim_of(config::OptimizerType::adamw, 0.1), "adamw weight_decay=0.1"});
  all.push_back({"lamb", optim_of(config::OptimizerType::lamb, 0.1), "lamb weight_decay=0.1"});
  auto nvlamb = optim_of(config::OptimizerType::lamb, 0.1);
  nvlamb.lamb_bias_correction = false;
  nvlamb.lamb_adapt_no_decay = true;
  all.push_back({"lamb_nvlamb_no_bias_correction", nvlamb,
                 "lamb weight_decay=0.1 bias_correction=0 use_nvlamb=1"});
  // Decoupled: the decay per step at the peak, so a visible one here (ModernBERT's is 1e-5).
  all.push_back({"stable_adamw", optim_of(config::OptimizerType::stable_adamw, 0.02),
                 "stable_adamw weight_decay=0.02 decouple_lr=1 max_lr=" + std::to_string(kPeakLr)});
  auto coupled = optim_of(config::OptimizerType::stable_adamw, 0.1);
  coupled.stable_adamw_decouple_lr = false;
  all.push_back({"stable_adamw_coupled", coupled, "stable_adamw weight_decay=0.1 decouple_lr=0"});
  for (auto& c : all) c.reference_args += " beta1=0.9 beta2=0.99 eps=1e-6";
  return all;
}

std::vector<torch::Tensor> params_of(Net& net) { return {net.weight, net.zero, net.bias, net.norm}; }
const std::vector<std::string> kNames = {"weight", "zero", "bias", "norm"};

/// One step of `optimizer` on step `s`'s gradients, as the training step calls it.
void take_step(TrainingOptimizer& optimizer, Net& net, int s) {
  const auto p = plan(s);
  const auto params = params_of(net);
  for (size_t i = 0; i < params.size(); ++i) params[i].mutable_grad() = gradient(s, i, params[i]);
  set_learning_rate(optimizer, p.lr);
  optimizer.step_scaled(torch::tensor(p.divisor, torch::kFloat64), torch::tensor(p.found_inf, torch::kFloat32));
}

int64_t step_count(TrainingOptimizer& optimizer, const torch::Tensor& param) {
  optimizer.publish_state();
  return static_cast<const torch::optim::AdamWParamState&>(*optimizer.state().at(param.unsafeGetTensorImpl()))
      .step();
}

std::string quote(const std::string& s) { return "'" + s + "'"; }

class OptimizerReference : public ::testing::TestWithParam<Case> {};

TEST_P(OptimizerReference, TwentyStepsMatchThePublishedRule) {
  const Case& c = GetParam();
  const fs::path dir = fs::path(MLM_BINARY_DIR) / "test-train" / ("optimizer_reference_" + c.name);
  fs::remove_all(dir);
  fs::create_directories(dir);

  Net net;
  auto optimizer = make_optimizer(net, c.optim);
  ASSERT_EQ(optimizer->param_groups().size(), 2u);
  ASSERT_EQ(optimizer->param_groups()[0].params().size(), 2u);  // weight, zero

  // The recorded inputs: the start, every step's gradients and plan.
  model::TensorDict inputs;
  std::string joined;
  std::vector<int64_t> decayed;
  for (size_t i = 0; i < kNames.size(); ++i) {
    inputs.emplace_back("init." + kNames[i], params_of(net)[i].detach().clone());
    joined += (i ? "\n" : "") + kNames[i];
    decayed.push_back(i < 2 ? 1 : 0);
  }
  inputs.emplace_back("names", torch::tensor(std::vector<int64_t>(joined.begin(), joined.end())).to(torch::kUInt8));
  inputs.emplace_back("decay", torch::tensor(decayed));
  auto schedule = torch::zeros({kSteps, 3}, torch::kFloat64);
  for (int s = 1; s <= kSteps; ++s) {
    const auto p = plan(s);
    schedule[s - 1] = torch::tensor({p.lr, p.divisor, p.found_inf}, torch::kFloat64);
    for (size_t i = 0; i < kNames.size(); ++i) {
      inputs.emplace_back("grad." + std::to_string(s) + "." + kNames[i], gradient(s, i, params_of(net)[i]));
    }
  }
  inputs.emplace_back("schedule", schedule);
  model::write_safetensors((dir / "inputs.safetensors").string(), inputs);

  const std::string command = quote(MLM_PYTHON) + " " +
                              quote(std::string(MLM_SOURCE_DIR) + "/tests/reference/optimizer_reference.py") +
                              " " + quote((dir / "inputs.safetensors").string()) + " " +
                              quote((dir / "reference.safetensors").string()) + " " + c.reference_args +
                              " > " + quote((dir / "py.out").string()) + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << std::ifstream(dir / "py.out").rdbuf();
  std::map<std::string, torch::Tensor> reference;
  for (auto& [key, value] : model::read_safetensors((dir / "reference.safetensors").string())) reference[key] = value;

  double worst = 0;
  for (int s = 1; s <= kSteps; ++s) {
    std::vector<torch::Tensor> before;
    for (const auto& p : params_of(net)) before.push_back(p.detach().clone());
    take_step(*optimizer, net, s);
    for (size_t i = 0; i < kNames.size(); ++i) {
      const auto got = params_of(net)[i];
      const auto& want = reference.at("param." + std::to_string(s) + "." + kNames[i]);
      const double diff = (got.to(torch::kFloat64) - want).abs().max().item<double>();
      worst = std::max(worst, diff);
      EXPECT_LE(diff, 1e-6) << kNames[i] << " after step " << s;
      // A skipped step moves nothing, bit for bit.
      if (plan(s).found_inf != 0) EXPECT_TRUE(torch::equal(got, before[i])) << kNames[i] << " at step " << s;
    }
  }
  // Three of the twenty steps were skipped: the counts say 17.
  for (const auto& p : params_of(net)) EXPECT_EQ(step_count(*optimizer, p), kSteps - 3);
  if (c.optim.type == config::OptimizerType::stable_adamw) {
    // The spike at step 10 is clipped (rms > 1), so the clipping rule was exercised.
    EXPECT_GT(reference.at("rms.10.weight").item<double>(), 1.0);
  }
  std::cout << "[ reference ] " << c.name << ": largest difference from the reference over " << kSteps
            << " steps: " << worst << "\n";
  RecordProperty("max_abs_diff", std::to_string(worst));
}

TEST_P(OptimizerReference, SaveAndLoadContinueBitForBit) {
  const Case& c = GetParam();
  Net saved_net;
  auto saved = make_optimizer(saved_net, c.optim);
  for (int s = 1; s <= 8; ++s) take_step(*saved, saved_net, s);  // two of them skipped
  std::ostringstream bytes;
  torch::save(*saved, bytes);

  Net loaded_net;
  {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < kNames.size(); ++i) params_of(loaded_net)[i].copy_(params_of(saved_net)[i]);
  }
  auto loaded = make_optimizer(loaded_net, c.optim);
  std::istringstream in(bytes.str());
  torch::load(*loaded, in);
  for (int s = 9; s <= kSteps; ++s) {
    take_step(*saved, saved_net, s);
    take_step(*loaded, loaded_net, s);
  }
  for (size_t i = 0; i < kNames.size(); ++i) {
    const auto a = params_of(saved_net)[i];
    const auto b = params_of(loaded_net)[i];
    EXPECT_TRUE(torch::equal(a, b)) << kNames[i];
    const auto& sa = static_cast<const torch::optim::AdamWParamState&>(*saved->state().at(a.unsafeGetTensorImpl()));
    const auto& sb = static_cast<const torch::optim::AdamWParamState&>(*loaded->state().at(b.unsafeGetTensorImpl()));
    EXPECT_TRUE(torch::equal(sa.exp_avg(), sb.exp_avg())) << kNames[i];
    EXPECT_TRUE(torch::equal(sa.exp_avg_sq(), sb.exp_avg_sq())) << kNames[i];
    EXPECT_EQ(step_count(*saved, a), step_count(*loaded, b));
  }
}

TEST_P(OptimizerReference, StateMovedToAFreshOptimizerContinuesBitForBit) {
  // What a new training phase does: a new optimizer object of the same type takes the state.
  const Case& c = GetParam();
  Net net, twin;
  auto straight = make_optimizer(twin, c.optim);
  auto first = make_optimizer(net, c.optim);
  for (int s = 1; s <= 8; ++s) {
    take_step(*first, net, s);
    take_step(*straight, twin, s);
  }
  auto second = make_optimizer(net, c.optim);
  second->take_state_from(*first);
  for (int s = 9; s <= kSteps; ++s) {
    take_step(*second, net, s);
    take_step(*straight, twin, s);
  }
  for (size_t i = 0; i < kNames.size(); ++i) EXPECT_TRUE(torch::equal(params_of(net)[i], params_of(twin)[i])) << kNames[i];
  EXPECT_EQ(step_count(*second, net.weight), kSteps - 3);
}

INSTANTIATE_TEST_SUITE_P(Types, OptimizerReference, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace mlm::train::optimizer_reference
