#pragma once
// The learning rate as a pure function of the optimizer step, so a resumed run needs no
// scheduler state: linear warmup, then linear / cosine / constant decay to min_lr_ratio, or
// warmup-stable-decay (wsd): the peak held until a final decay to min_lr_ratio.
#include <cstdint>

#include "mlm/config/run_config.h"

namespace mlm::train {

class LrSchedule {
 public:
  /// `total_steps` is the horizon of the decay (train.max_steps, or an estimate from
  /// train.max_tokens); 0 = unknown: the rate stays at its peak after warmup.
  LrSchedule(const config::ScheduleConfig& schedule, double peak_lr, int64_t total_steps);

  /// The rate of optimizer step `step` (1-based: the first update is step 1, so warmup never
  /// wastes a step at rate 0; the last step, step == total_steps, runs at the minimum).
  double at(int64_t step) const;

  int64_t warmup_steps() const { return warmup_steps_; }
  int64_t total_steps() const { return total_steps_; }
  /// The steps the rate decays over, ending at total_steps: every step after warmup for
  /// linear and cosine, wsd's final decay_steps / decay_ratio (at most the steps after
  /// warmup), 0 for constant or an unknown total.
  int64_t decay_steps() const { return decay_steps_; }

 private:
  config::DecayKind decay_;
  config::DecayShape wsd_shape_;
  double peak_lr_;
  double min_lr_;
  int64_t total_steps_;
  int64_t warmup_steps_;
  int64_t decay_steps_;
};

}  // namespace mlm::train
