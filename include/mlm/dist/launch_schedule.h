#pragma once
// When each bucket's all-reduce may start during a backward pass (GradientReducer). A bucket
// is full once all its parameters are ready (their gradients final); it may START only after
// every bucket before it in the plan has started, because each rank must issue the same
// collectives in the same order and ranks fill buckets in different orders (a parameter
// unused on one rank is ready at once there, late on another). Pure bookkeeping: no tensors.
#include <cstddef>
#include <vector>

#include "mlm/dist/bucket_plan.h"

namespace mlm::dist {

class LaunchSchedule {
 public:
  /// `plan` over `num_params` parameters; every parameter must be in exactly one bucket.
  LaunchSchedule(const std::vector<Bucket>& plan, size_t num_params);
  LaunchSchedule() = default;  // no parameters, no buckets

  /// A new backward pass: no parameter ready, no bucket started.
  void reset();

  /// Parameter `param` is ready; returns the buckets that may start now, in plan order (none
  /// when an earlier bucket is still waiting). Throws std::logic_error for a parameter made
  /// ready twice since reset(): its gradient changed after it was declared final.
  std::vector<size_t> mark_ready(size_t param);

  /// Every bucket not started yet, in plan order (the end of the backward pass: what is still
  /// missing counts as final); afterwards all have started.
  std::vector<size_t> start_rest();

  bool is_ready(size_t param) const { return ready_.at(param); }
  /// How many buckets have started since reset() (always a prefix of the plan).
  size_t started() const { return next_to_start_; }

 private:
  std::vector<size_t> bucket_of_;   // per parameter
  std::vector<size_t> bucket_size_;  // per bucket: its parameter count
  std::vector<size_t> waiting_;     // per bucket: parameters not ready yet
  std::vector<bool> ready_;         // per parameter
  size_t next_to_start_ = 0;        // buckets before it have started
};

}  // namespace mlm::dist
