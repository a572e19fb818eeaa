#pragma once
// fp16's dynamic loss scaling, torch.amp.GradScaler's rule: fp16 gradients flush to zero below
// ~6e-8, so the loss is multiplied by a scale before the backward pass and the gradients are
// divided by it before clipping and the update. A step whose scaled gradients overflow is
// skipped and the scale halved; after `growth_interval` steps in a row without overflow it
// doubles. The scale lives on the device and is updated there (at::_amp_update_scale_), so the
// step never waits for the host; its state goes into trainer_state.json, so a resumed run
// continues with the same scale and count, bit-exactly.
#include <torch/torch.h>

#include <cstdint>

#include "mlm/train/checkpoint/trainer_state.h"  // LossScaleState

namespace mlm::train {

class LossScaler {
 public:
  static constexpr double kGrowthFactor = 2.0;
  static constexpr double kBackoffFactor = 0.5;

  /// Starts at `init_scale` (train.loss_scale_init), doubling after `growth_interval`
  /// (train.loss_scale_growth_interval) good steps; the scale is kept on `device`.
  LossScaler(double init_scale, int64_t growth_interval, const torch::Device& device);

  /// The current scale: a 0-d fp32 tensor on the device (no host read).
  const torch::Tensor& scale() const { return scale_; }

  /// `loss` times the scale, the tensor to call backward() on.
  torch::Tensor scaled(const torch::Tensor& loss) const { return loss * scale_; }

  /// After a step: `found_inf` (0-d float, 1 when the scaled gradients were not finite) halves
  /// the scale and resets the count; a finite step counts, and the interval's last one doubles
  /// the scale. On the device, without a host read.
  void update(const torch::Tensor& found_inf);

  /// Reads the state from the device (a checkpoint's) / sets it (a resume's).
  LossScaleState state() const;
  void restore(const LossScaleState& state);

 private:
  int64_t growth_interval_;
  torch::Tensor scale_;           // 0-d float32
  torch::Tensor growth_tracker_;  // 0-d int32
};

}  // namespace mlm::train
