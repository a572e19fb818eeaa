#pragma once
// The schedule.* section: the learning-rate schedule.
// Defaults and meanings beside each field; visit() lists its keys (see run_config.h).
#include <cmath>
#include <cstdint>

#include "mlm/config/enums.h"

namespace mlm::config {

struct ScheduleConfig {
  int64_t warmup_steps = 10000;            // linear warmup steps (wins over warmup_ratio)
  double warmup_ratio = 0.0;               // warmup as a share of train.max_steps
  DecayKind decay = DecayKind::linear;     // linear | cosine | constant | wsd
  int64_t decay_steps = 0;                 // wsd: steps of the final decay (wins over decay_ratio)
  double decay_ratio = 0.1;                // wsd: the final decay as a share of the total steps
  DecayShape decay_shape = DecayShape::one_minus_sqrt;  // wsd: linear | one_minus_sqrt
  double min_lr_ratio = 0.0;               // final lr = learning_rate * min_lr_ratio

  /// The warmup steps of a run of `total` steps (0 = unknown): warmup_steps, else
  /// warmup_ratio of the total. Not clamped to the total.
  int64_t warmup_steps_for(int64_t total) const {
    if (warmup_steps > 0 || total <= 0) return warmup_steps;
    return steps_for_share(warmup_ratio, total);
  }

  /// The steps of wsd's final decay in a run of `total` steps (0 = unknown: no decay):
  /// decay_steps, else decay_ratio of the total. Not clamped to the steps after warmup.
  int64_t decay_steps_for(int64_t total) const {
    if (total <= 0) return 0;
    return decay_steps > 0 ? decay_steps : steps_for_share(decay_ratio, total);
  }

  template <class V>
  void visit(V& v) {
    v("warmup_steps", warmup_steps);
    v("warmup_ratio", warmup_ratio);
    v("decay", decay);
    v("decay_steps", decay_steps);
    v("decay_ratio", decay_ratio);
    v("decay_shape", decay_shape);
    v("min_lr_ratio", min_lr_ratio);
  }

 private:
  // ceil(share * total), rounded up only past the product's rounding error, so 0.07 of 100
  // steps is 7 (not 8, as ceil(7.000000000000001) would make it).
  static int64_t steps_for_share(double share, int64_t total) {
    if (!(share > 0)) return 0;
    const double steps = share * static_cast<double>(total);
    return static_cast<int64_t>(std::ceil(steps * (1.0 - 1e-12)));
  }
};

}  // namespace mlm::config
