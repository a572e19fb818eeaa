#include "mlm/train/optim/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace mlm::train {

LrSchedule::LrSchedule(const config::ScheduleConfig& schedule, double peak_lr,
                       int64_t total_steps, int64_t steps_before)
    : decay_(schedule.decay),
      wsd_shape_(schedule.decay_shape),
      peak_lr_(peak_lr),
      min_lr_(peak_lr * schedule.min_lr_ratio),
      total_steps_(std::max<int64_t>(total_steps, 0)),
      steps_before_(steps_before) {
  int64_t warmup = schedule.warmup_steps_for(total_steps_);
  if (total_steps_ > 0) warmup = std::min(warmup, total_steps_);
  warmup_steps_ = std::max<int64_t>(warmup, 0);

  const int64_t after_warmup = total_steps_ > 0 ? total_steps_ - warmup_steps_ : 0;
  switch (decay_) {
    case config::DecayKind::linear:
    case config::DecayKind::cosine: decay_steps_ = after_warmup; break;
    case config::DecayKind::constant: decay_steps_ = 0; break;
    case config::DecayKind::wsd:
      // Validation refuses a decay longer than the steps after warmup when train.max_steps
      // is set; a horizon estimated from train.max_tokens starts the decay at warmup's end.
      decay_steps_ = std::clamp<int64_t>(schedule.decay_steps_for(total_steps_), 0, after_warmup);
      break;
  }
}

double LrSchedule::at(int64_t step) const {
  step = std::max<int64_t>(step - steps_before_, 1);
  if (step <= warmup_steps_) {
    return peak_lr_ * static_cast<double>(step) / static_cast<double>(warmup_steps_);
  }
  const int64_t decay_start = total_steps_ - decay_steps_;
  if (decay_steps_ <= 0 || step <= decay_start) return peak_lr_;
  // progress 1/decay_steps at the first decaying step, 1 at the last step (and beyond: a run
  // continued past its horizon stays at the minimum).
  const double progress = std::min(
      1.0, static_cast<double>(step - decay_start) / static_cast<double>(decay_steps_));
  double factor = 1.0 - progress;  // linear, and wsd's linear shape
  if (decay_ == config::DecayKind::cosine) {
    factor = 0.5 * (1.0 + std::cos(M_PI * progress));
  } else if (decay_ == config::DecayKind::wsd &&
             wsd_shape_ == config::DecayShape::one_minus_sqrt) {
    factor = 1.0 - std::sqrt(progress);  // Hägele et al. 2024
  }
  return min_lr_ + (peak_lr_ - min_lr_) * factor;
}

}  // namespace mlm::train
