#include "mlm/train/loop/masking_rate.h"

#include <algorithm>
#include <cmath>

namespace mlm::train {

MaskingRate::MaskingRate(const config::MaskingConfig& masking, int64_t steps_before, int64_t steps)
    : shape_(masking.rate_schedule),
      start_(masking.mlm_probability),
      end_(masking.final_mlm_probability),
      steps_before_(steps_before),
      steps_(steps) {}

std::optional<double> MaskingRate::at(int64_t step) const {
  if (shape_ == config::MaskingRateSchedule::constant) return std::nullopt;
  // 0 at the span's first step, 1 at its last (and after); an unknown length stays at start.
  const double progress =
      steps_ > 1 ? std::clamp(static_cast<double>(step - steps_before_ - 1) / static_cast<double>(steps_ - 1), 0.0, 1.0)
                 : (steps_ == 1 ? 1.0 : 0.0);
  const double factor =
      shape_ == config::MaskingRateSchedule::linear ? progress : 0.5 * (1.0 - std::cos(M_PI * progress));
  return start_ + (end_ - start_) * factor;
}

}  // namespace mlm::train
