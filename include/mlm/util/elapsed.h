#pragma once
// Elapsed wall time on the monotonic clock: phase timings, throughput and log lines.
#include <chrono>

namespace mlm {

using SteadyClock = std::chrono::steady_clock;

/// Seconds from `start` to now.
inline double seconds_since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

}  // namespace mlm
