#include "mlm/train/optim/ema_weights.h"

#include <cmath>

#include "mlm/util/errors.h"

namespace mlm::train {

EmaWeights::EmaWeights(model::MaskedLm model, const config::TrainConfig& train) : model_(std::move(model)) {
  torch::NoGradGuard no_grad;
  for (const auto& param : model_->named_parameters()) {
    if (!param.value().requires_grad()) continue;
    TORCH_CHECK(param.value().scalar_type() == torch::kFloat32, "the EMA averages fp32 weights; ",
                param.key(), " is ", param.value().scalar_type());
    params_.push_back(param.value());
    shadow_.push_back(param.value().detach().clone());
  }
  configure(train);
}

void EmaWeights::configure(const config::TrainConfig& train) {
  TORCH_CHECK(train.ema_decay > 0 && train.ema_decay < 1 && train.ema_every_steps >= 1,
              "EmaWeights needs train.ema_decay in (0, 1) and train.ema_every_steps >= 1");
  every_steps_ = train.ema_every_steps;
  start_step_ = train.ema_start_step;
  weight_ = 1.0 - std::pow(train.ema_decay, static_cast<double>(every_steps_));
}

void EmaWeights::update(int64_t step) {
  if (step < start_step_) return;
  if (step == start_step_) {
    restart();
    return;
  }
  if ((step - start_step_) % every_steps_ != 0) return;
  torch::NoGradGuard no_grad;
  torch::_foreach_lerp_(shadow_, params_, weight_);
}

void EmaWeights::restart() {
  torch::NoGradGuard no_grad;
  torch::_foreach_copy_(shadow_, params_);
}

void EmaWeights::swap() {
  for (size_t i = 0; i < params_.size(); ++i) {
    auto live = params_[i].data();  // the parameter's storage, sizes and strides
    params_[i].set_data(shadow_[i]);
    shadow_[i] = live;
  }
}

void EmaWeights::save(const std::filesystem::path& path) {
  with_shadow([&] { model::save_model_pt(model_, path.string()); });
}

void EmaWeights::load(const std::filesystem::path& path) {
  try {
    with_shadow([&] { model::load_model_pt(model_, path.string()); });
  } catch (const CheckpointError&) {
    throw;
  } catch (const std::exception& e) {
    throw CheckpointError(path.string() + ": cannot load the EMA weights: " + e.what());
  }
}

}  // namespace mlm::train
