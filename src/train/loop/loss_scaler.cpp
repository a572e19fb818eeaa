#include "mlm/train/loop/loss_scaler.h"

#include <ATen/ops/_amp_update_scale.h>

namespace mlm::train {

LossScaler::LossScaler(double init_scale, int64_t growth_interval, const torch::Device& device)
    : growth_interval_(growth_interval),
      scale_(torch::full({}, init_scale, torch::TensorOptions().dtype(torch::kFloat32).device(device))),
      growth_tracker_(torch::zeros({}, torch::TensorOptions().dtype(torch::kInt32).device(device))) {}

void LossScaler::update(const torch::Tensor& found_inf) {
  // The kernel wants found_inf as a float32 tensor on the scale's device; it updates both
  // tensors in place (halve and reset on overflow, else count and double at the interval).
  at::_amp_update_scale_(scale_, growth_tracker_, found_inf.to(scale_.options()), kGrowthFactor,
                         kBackoffFactor, growth_interval_);
}

LossScaleState LossScaler::state() const {
  return {scale_.item<double>(), growth_tracker_.item<int64_t>()};
}

void LossScaler::restore(const LossScaleState& state) {
  scale_.fill_(state.scale);
  growth_tracker_.fill_(state.growth_tracker);
}

}  // namespace mlm::train
