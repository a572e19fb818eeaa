#include "mlm/masking/masking_rng.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace mlm::masking {
namespace {

TEST(MaskingRng, SameKeySameStreamOtherSampleIdOtherStream) {
  MaskingRng a = sequence_rng(42, 7), b = sequence_rng(42, 7);
  MaskingRng c = sequence_rng(42, 8), d = sequence_rng(43, 7);
  int same_c = 0, same_d = 0;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t x = a.next();
    ASSERT_EQ(x, b.next());
    same_c += x == c.next();
    same_d += x == d.next();
  }
  EXPECT_EQ(same_c, 0);
  EXPECT_EQ(same_d, 0);
}

TEST(MaskingRng, PinnedOutputSoMasksSurviveAPortToAnotherCompiler) {
  // The stream is part of the reproducibility contract (resume, eval seed): it must not
  // change silently.
  // xoshiro256** seeded by splitmix64(0), checked against an independent Python rendering
  // of the reference algorithms.
  MaskingRng rng(0);
  EXPECT_EQ(rng.next(), 0x99ec5f36cb75f2b4ULL);
  EXPECT_EQ(rng.next(), 0xbf6e1f784956452aULL);
  EXPECT_EQ(sequence_rng(42, 7).next(), 0x086286d6cefc1543ULL);
  EXPECT_EQ(splitmix64(0), 0xe220a8397b1dcdafULL);
}

TEST(MaskingRng, UniformAndBelowAreUniform) {
  MaskingRng rng(123);
  constexpr int kDraws = 200000;
  double sum = 0;
  for (int i = 0; i < kDraws; ++i) {
    const double u = rng.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  // Var(U) = 1/12.
  EXPECT_NEAR(sum / kDraws, 0.5, 4.5 * std::sqrt(1.0 / 12 / kDraws));

  constexpr uint64_t kBins = 7;  // not a power of two: modulo bias would show
  std::vector<int> hist(kBins, 0);
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t v = rng.below(kBins);
    ASSERT_LT(v, kBins);
    ++hist[v];
  }
  const double p = 1.0 / kBins;
  for (uint64_t b = 0; b < kBins; ++b) {
    EXPECT_NEAR(hist[b] / double(kDraws), p, 4.5 * std::sqrt(p * (1 - p) / kDraws)) << b;
  }
  EXPECT_EQ(rng.below(1), 0u);
}

}  // namespace
}  // namespace mlm::masking
