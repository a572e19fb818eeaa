#include "mlm/train/loop/lr_schedule.h"

#include <algorithm>
#include <cmath>

namespace mlm::train {

LrSchedule::LrSchedule(const config::ScheduleConfig& schedule, double peak_lr,
                       int64_t total_steps)
    : decay_(schedule.decay),
      peak_lr_(peak_lr),
      min_lr_(peak_lr * schedule.min_lr_ratio),
      total_steps_(std::max<int64_t>(total_steps, 0)) {
  // warmup_steps wins; warmup_ratio applies only when warmup_steps is 0.
  int64_t warmup = schedule.warmup_steps;
  if (warmup == 0 && schedule.warmup_ratio > 0 && total_steps_ > 0) {
    warmup = static_cast<int64_t>(std::ceil(schedule.warmup_ratio * total_steps_));
  }
  if (total_steps_ > 0) warmup = std::min(warmup, total_steps_);
  warmup_steps_ = std::max<int64_t>(warmup, 0);
}

double LrSchedule::at(int64_t step) const {
  step = std::max<int64_t>(step, 1);
  if (step <= warmup_steps_) {
    return peak_lr_ * static_cast<double>(step) / static_cast<double>(warmup_steps_);
  }
  if (decay_ == config::DecayKind::constant || total_steps_ == 0) return peak_lr_;
  const int64_t decay_steps = total_steps_ - warmup_steps_;
  if (decay_steps <= 0) return peak_lr_;
  // progress 0 right after warmup, 1 at the last step (and beyond: a run continued past
  // its horizon stays at the minimum).
  const double progress = std::min(
      1.0, static_cast<double>(step - warmup_steps_) / static_cast<double>(decay_steps));
  double factor = 1.0 - progress;  // linear
  if (decay_ == config::DecayKind::cosine) factor = 0.5 * (1.0 + std::cos(M_PI * progress));
  return min_lr_ + (peak_lr_ - min_lr_) * factor;
}

}  // namespace mlm::train
