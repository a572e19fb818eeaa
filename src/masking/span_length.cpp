#include "mlm/masking/span_length.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace mlm::masking {

SpanLengthDistribution::SpanLengthDistribution(double p, int64_t max_span) {
  if (!(p > 0.0 && p <= 1.0)) {
    throw std::invalid_argument("span length: geometric p must be in (0, 1], got " +
                                std::to_string(p));
  }
  if (max_span < 1) {
    throw std::invalid_argument("span length: max_span must be >= 1, got " +
                                std::to_string(max_span));
  }
  pmf_.resize(static_cast<size_t>(max_span));
  double total = 0.0;
  for (int64_t k = 1; k <= max_span; ++k) {
    pmf_[k - 1] = p * std::pow(1.0 - p, static_cast<double>(k - 1));
    total += pmf_[k - 1];
  }
  cdf_.resize(pmf_.size());
  double running = 0.0;
  for (size_t i = 0; i < pmf_.size(); ++i) {
    pmf_[i] /= total;
    running += pmf_[i];
    cdf_[i] = running;
  }
  cdf_.back() = 1.0;  // no rounding gap above the last length
}

double SpanLengthDistribution::pmf(int64_t k) const {
  if (k < 1 || k > max_span()) return 0.0;
  return pmf_[static_cast<size_t>(k - 1)];
}

double SpanLengthDistribution::mean() const {
  double m = 0.0;
  for (size_t i = 0; i < pmf_.size(); ++i) m += static_cast<double>(i + 1) * pmf_[i];
  return m;
}

double SpanLengthDistribution::variance() const {
  const double m = mean();
  double v = 0.0;
  for (size_t i = 0; i < pmf_.size(); ++i) {
    const double d = static_cast<double>(i + 1) - m;
    v += d * d * pmf_[i];
  }
  return v;
}

int64_t SpanLengthDistribution::sample(MaskingRng& rng) const {
  const double u = rng.uniform();
  // At most max_span (default 10) entries: a linear scan beats a binary search here.
  for (size_t i = 0; i < cdf_.size(); ++i) {
    if (u < cdf_[i]) return static_cast<int64_t>(i + 1);
  }
  return max_span();
}

}  // namespace mlm::masking
