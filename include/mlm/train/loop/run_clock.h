#pragma once
// A run's clock: seconds since this process started training, and the training time of the
// whole run (earlier runs of a resumed one included), which trainer_state.json carries on.
#include "mlm/util/elapsed.h"

namespace mlm::train {

class RunClock {
 public:
  /// Starts now; `earlier_train_time_s` is the time the run had trained before this process.
  explicit RunClock(double earlier_train_time_s = 0) : earlier_s_(earlier_train_time_s) {}

  double run_seconds() const { return seconds_since(start_); }
  double train_time_s() const { return earlier_s_ + run_seconds(); }

 private:
  SteadyClock::time_point start_ = SteadyClock::now();
  double earlier_s_;
};

}  // namespace mlm::train
