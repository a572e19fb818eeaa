// The figures RtdCounts derives from its sums: what a discriminator that learnt nothing scores.
#include <gtest/gtest.h>

#include <cmath>

#include "mlm/train/loop/rtd_counts.h"

namespace mlm::train::rtd_counts_test {

TEST(RtdCounts, PriorLossIsTheEntropyOfTheReplacedShare) {
  RtdCounts c;
  c.replaced = 15;
  c.correct = 85;  // every token called original: accuracy 1 - share, loss at best the prior's
  EXPECT_DOUBLE_EQ(c.replaced_share(100), 0.15);
  EXPECT_NEAR(c.prior_loss(100), -(0.15 * std::log(0.15) + 0.85 * std::log(0.85)), 1e-12);
  EXPECT_NEAR(c.prior_loss(100), 0.422709, 1e-6);
  EXPECT_DOUBLE_EQ(c.f1(), 0.0);
  const auto row = c.to_json(100, 20, "eval_");
  EXPECT_DOUBLE_EQ(row["eval_rtd_replaced_share"].get<double>(), 0.15);
  EXPECT_DOUBLE_EQ(row["eval_rtd_prior_loss"].get<double>(), c.prior_loss(100));
}

TEST(RtdCounts, NothingOrEverythingReplacedHasNoUncertainty) {
  RtdCounts none;
  EXPECT_EQ(none.prior_loss(100), 0.0);
  EXPECT_EQ(none.prior_loss(0), 0.0);  // no tokens: no share, no division by zero
  RtdCounts all;
  all.replaced = 100;
  EXPECT_EQ(all.prior_loss(100), 0.0);
}

}  // namespace mlm::train::rtd_counts_test
