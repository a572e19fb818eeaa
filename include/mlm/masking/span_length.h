#pragma once
// SpanBERT's span-length distribution: Geometric(p) on 1, 2, ... truncated at max_span and
// renormalised, P(k) = p (1-p)^(k-1) / (1 - (1-p)^max_span). For p = 0.2 and max 10 the
// mean is 3.80 words, the figure the SpanBERT paper reports.
#include <cstdint>
#include <vector>

#include "mlm/masking/masking_rng.h"

namespace mlm::masking {

class SpanLengthDistribution {
 public:
  /// p in (0, 1], max_span >= 1; throws std::invalid_argument otherwise (the collator
  /// validates the config keys first and names them).
  SpanLengthDistribution(double p, int64_t max_span);

  int64_t max_span() const { return static_cast<int64_t>(pmf_.size()); }
  /// P(length == k) for k in [1, max_span], 0 elsewhere.
  double pmf(int64_t k) const;
  double mean() const;
  double variance() const;
  /// A length in [1, max_span] by inverse CDF (one uniform draw).
  int64_t sample(MaskingRng& rng) const;

 private:
  std::vector<double> pmf_;  // pmf_[k-1] = P(k)
  std::vector<double> cdf_;  // cdf_[k-1] = P(length <= k); the last entry is exactly 1
};

}  // namespace mlm::masking
