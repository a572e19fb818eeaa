// Bucket launch order during backward (see launch_schedule.h).
#include "mlm/dist/launch_schedule.h"

#include <fmt/format.h>

#include <limits>
#include <stdexcept>

namespace mlm::dist {

LaunchSchedule::LaunchSchedule(const std::vector<Bucket>& plan, size_t num_params)
    : bucket_of_(num_params, std::numeric_limits<size_t>::max()), ready_(num_params, false) {
  for (size_t b = 0; b < plan.size(); ++b) {
    for (size_t p : plan[b].params) {
      if (p >= num_params || bucket_of_[p] != std::numeric_limits<size_t>::max()) {
        throw std::invalid_argument(
            fmt::format("bucket plan: parameter {} is out of range or in two buckets", p));
      }
      bucket_of_[p] = b;
    }
    bucket_size_.push_back(plan[b].params.size());
  }
  for (size_t p = 0; p < num_params; ++p) {
    if (bucket_of_[p] == std::numeric_limits<size_t>::max()) {
      throw std::invalid_argument(fmt::format("bucket plan: parameter {} is in no bucket", p));
    }
  }
  reset();
}

void LaunchSchedule::reset() {
  waiting_ = bucket_size_;
  ready_.assign(ready_.size(), false);
  next_to_start_ = 0;
}

std::vector<size_t> LaunchSchedule::mark_ready(size_t param) {
  if (ready_.at(param)) {
    throw std::logic_error(fmt::format(
        "parameter {} was made ready twice in one backward pass: its gradient accumulated "
        "again after it was taken as final",
        param));
  }
  ready_[param] = true;
  --waiting_[bucket_of_[param]];
  std::vector<size_t> startable;
  while (next_to_start_ < waiting_.size() && waiting_[next_to_start_] == 0) {
    startable.push_back(next_to_start_++);
  }
  return startable;
}

std::vector<size_t> LaunchSchedule::start_rest() {
  std::vector<size_t> rest;
  while (next_to_start_ < waiting_.size()) rest.push_back(next_to_start_++);
  return rest;
}

}  // namespace mlm::dist
