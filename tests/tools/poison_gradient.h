#pragma once
// A test's non-finite step: a gradient hook (TrainerOptions::gradient_hook) that fills the
// first parameter's gradient with NaN at the steps first..last, as an overflow would.
#include <cstdint>
#include <limits>

#include "mlm/train/loop/training_step.h"

namespace mlm::train::testing {

inline GradientHook poison_gradient_at(int64_t first, int64_t last) {
  return [first, last](int64_t step, const std::vector<torch::Tensor>& params) {
    if (step < first || step > last || params.empty() || !params.front().grad().defined()) return;
    params.front().grad().fill_(std::numeric_limits<float>::quiet_NaN());
  };
}

inline GradientHook poison_gradient_at(int64_t step) { return poison_gradient_at(step, step); }

}  // namespace mlm::train::testing
