#include "mlm/masking/span_length.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

namespace mlm::masking {
namespace {

// Closed form of the truncated geometric mean, independent of the implementation:
// sum_{k<=m} k p q^(k-1) = (1 - (m+1) q^m + m q^(m+1)) / p, divided by 1 - q^m.
double truncated_geometric_mean(double p, int m) {
  const double q = 1 - p;
  return (1 - (m + 1) * std::pow(q, m) + m * std::pow(q, m + 1)) / p / (1 - std::pow(q, m));
}

TEST(SpanLength, SpanBertFigures) {
  SpanLengthDistribution d(0.2, 10);
  double total = 0;
  for (int k = 1; k <= 10; ++k) total += d.pmf(k);
  EXPECT_NEAR(total, 1.0, 1e-12);
  EXPECT_EQ(d.pmf(0), 0.0);
  EXPECT_EQ(d.pmf(11), 0.0);
  EXPECT_NEAR(d.pmf(2) / d.pmf(1), 0.8, 1e-12);
  EXPECT_NEAR(d.mean(), truncated_geometric_mean(0.2, 10), 1e-12);
  EXPECT_NEAR(d.mean(), 3.80, 0.005);  // SpanBERT reports a mean span length of 3.8
  EXPECT_NEAR(SpanLengthDistribution(0.5, 1).mean(), 1.0, 1e-12);
  EXPECT_NEAR(SpanLengthDistribution(1.0, 10).mean(), 1.0, 1e-12);
}

TEST(SpanLength, SamplesFollowThePmf) {
  SpanLengthDistribution d(0.2, 10);
  MaskingRng rng(99);
  constexpr int kDraws = 200000;
  std::vector<int> hist(12, 0);
  double sum = 0;
  for (int i = 0; i < kDraws; ++i) {
    const int64_t k = d.sample(rng);
    ASSERT_GE(k, 1);
    ASSERT_LE(k, 10);
    ++hist[k];
    sum += k;
  }
  EXPECT_NEAR(sum / kDraws, d.mean(), 4.5 * std::sqrt(d.variance() / kDraws));
  for (int k = 1; k <= 10; ++k) {
    const double p = d.pmf(k);
    EXPECT_NEAR(hist[k] / double(kDraws), p, 4.5 * std::sqrt(p * (1 - p) / kDraws)) << k;
  }
}

TEST(SpanLength, RejectsBadParameters) {
  EXPECT_THROW(SpanLengthDistribution(0.0, 10), std::invalid_argument);
  EXPECT_THROW(SpanLengthDistribution(1.5, 10), std::invalid_argument);
  EXPECT_THROW(SpanLengthDistribution(0.2, 0), std::invalid_argument);
}

}  // namespace
}  // namespace mlm::masking
