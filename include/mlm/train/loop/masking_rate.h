#pragma once
// The masking rate as a function of the step (masking.rate_schedule, as MosaicBERT and mmBERT
// change it during a run): from masking.mlm_probability at the first step of the span to
// masking.final_mlm_probability at its last, linearly or along a half cosine, and held there
// after. A pure function of the step, so a resumed run masks exactly as the uninterrupted one.
// Evaluation keeps masking.mlm_probability, so its scores stay comparable.
#include <cstdint>
#include <optional>

#include "mlm/config/sections/masking.h"

namespace mlm::train {

class MaskingRate {
 public:
  /// Over the `steps` steps after the run's step `steps_before` (a phase, or the whole run).
  MaskingRate(const config::MaskingConfig& masking, int64_t steps_before, int64_t steps);

  /// The rate of the run's step `step` (1-based); nullopt for a constant rate (the config's).
  std::optional<double> at(int64_t step) const;

 private:
  config::MaskingRateSchedule shape_;
  double start_, end_;
  int64_t steps_before_, steps_;
};

}  // namespace mlm::train
