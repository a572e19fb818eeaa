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
  /// train.max_tokens); 0 = unknown: the rate stays at its peak after warmup. `steps_before`:
  /// the run's steps before this schedule began (a phase that restarts its schedule), so
  /// at() takes the run's step.
  LrSchedule(const config::ScheduleConfig& schedule, double peak_lr, int64_t total_steps,
             int64_t steps_before = 0);

  /// The rate of the run's optimizer step `step` (1-based: the schedule's first update is
  /// step steps_before + 1, so warmup never wastes a step at rate 0; its last step,
  /// steps_before + total_steps, runs at the minimum).
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
  int64_t steps_before_;
  int64_t warmup_steps_;
  int64_t decay_steps_;
};

}  // namespace mlm::train
