#include "mlm/train/optim/lr_schedule.h"

#include <gtest/gtest.h>

#include <cmath>

namespace mlm::train {
namespace {

config::ScheduleConfig schedule(int64_t warmup_steps, config::DecayKind decay,
                                double min_lr_ratio = 0.0, double warmup_ratio = 0.0) {
  config::ScheduleConfig s;
  s.warmup_steps = warmup_steps;
  s.warmup_ratio = warmup_ratio;
  s.decay = decay;
  s.min_lr_ratio = min_lr_ratio;
  return s;
}

TEST(LrSchedule, LinearWarmupThenLinearDecay) {
  const LrSchedule lr(schedule(10, config::DecayKind::linear), 1e-3, 110);
  EXPECT_DOUBLE_EQ(lr.at(1), 1e-4);     // first update already moves
  EXPECT_DOUBLE_EQ(lr.at(5), 5e-4);
  EXPECT_DOUBLE_EQ(lr.at(10), 1e-3);    // peak at the end of warmup
  EXPECT_DOUBLE_EQ(lr.at(60), 5e-4);    // half-way through the 100 decay steps
  EXPECT_DOUBLE_EQ(lr.at(110), 0.0);    // the last step reaches the minimum
  EXPECT_DOUBLE_EQ(lr.at(500), 0.0);    // and stays there past the horizon
}

TEST(LrSchedule, CosineDecayToMinimum) {
  const LrSchedule lr(schedule(0, config::DecayKind::cosine, 0.1), 2.0, 100);
  EXPECT_DOUBLE_EQ(lr.at(1), 0.2 + 1.8 * 0.5 * (1 + std::cos(M_PI * 0.01)));
  EXPECT_NEAR(lr.at(50), 0.2 + 1.8 * 0.5, 1e-12);
  EXPECT_NEAR(lr.at(100), 0.2, 1e-12);
}

TEST(LrSchedule, ConstantAfterWarmup) {
  const LrSchedule lr(schedule(4, config::DecayKind::constant), 1.0, 100);
  EXPECT_DOUBLE_EQ(lr.at(2), 0.5);
  EXPECT_DOUBLE_EQ(lr.at(4), 1.0);
  EXPECT_DOUBLE_EQ(lr.at(99), 1.0);
}

TEST(LrSchedule, WarmupRatioAppliesOnlyWithoutWarmupSteps) {
  const LrSchedule by_ratio(schedule(0, config::DecayKind::linear, 0.0, 0.1), 1.0, 200);
  EXPECT_EQ(by_ratio.warmup_steps(), 20);
  EXPECT_DOUBLE_EQ(by_ratio.at(10), 0.5);
  const LrSchedule by_steps(schedule(5, config::DecayKind::linear, 0.0, 0.1), 1.0, 200);
  EXPECT_EQ(by_steps.warmup_steps(), 5);
  // 0.07 * 100 is 7.000000000000001 in binary: still 7 steps, not 8.
  const LrSchedule rounded(schedule(0, config::DecayKind::linear, 0.0, 0.07), 1.0, 100);
  EXPECT_EQ(rounded.warmup_steps(), 7);
}

TEST(LrSchedule, WarmupLongerThanRunIsClamped) {
  const LrSchedule lr(schedule(1000, config::DecayKind::linear), 1.0, 10);
  EXPECT_EQ(lr.warmup_steps(), 10);
  EXPECT_DOUBLE_EQ(lr.at(10), 1.0);
}

TEST(LrSchedule, UnknownHorizonKeepsPeakAfterWarmup) {
  const LrSchedule lr(schedule(10, config::DecayKind::linear), 1.0, 0);
  EXPECT_DOUBLE_EQ(lr.at(5), 0.5);
  EXPECT_DOUBLE_EQ(lr.at(1000000), 1.0);
}

config::ScheduleConfig wsd(int64_t warmup_steps, int64_t decay_steps, double decay_ratio,
                           config::DecayShape shape, double min_lr_ratio = 0.0) {
  config::ScheduleConfig s = schedule(warmup_steps, config::DecayKind::wsd, min_lr_ratio);
  s.decay_steps = decay_steps;
  s.decay_ratio = decay_ratio;
  s.decay_shape = shape;
  return s;
}

// warmup 10, stable 11..90, decay 91..110 (20 steps) from 1.0 to 0.1.
TEST(LrSchedule, WsdOneMinusSqrtPhaseBoundaries) {
  const LrSchedule lr(wsd(10, 20, 0.5, config::DecayShape::one_minus_sqrt, 0.1), 1.0, 110);
  EXPECT_EQ(lr.decay_steps(), 20);
  EXPECT_DOUBLE_EQ(lr.at(1), 0.1);      // warmup as for the other kinds
  EXPECT_DOUBLE_EQ(lr.at(10), 1.0);     // peak at the end of warmup
  EXPECT_DOUBLE_EQ(lr.at(11), 1.0);     // stable phase
  EXPECT_DOUBLE_EQ(lr.at(90), 1.0);     // last stable step
  EXPECT_DOUBLE_EQ(lr.at(91), 0.1 + 0.9 * (1.0 - std::sqrt(1.0 / 20)));  // first decay step
  EXPECT_DOUBLE_EQ(lr.at(95), 0.1 + 0.9 * 0.5);                         // t = 1/4
  EXPECT_DOUBLE_EQ(lr.at(100), 0.1 + 0.9 * (1.0 - std::sqrt(0.5)));     // t = 1/2
  EXPECT_DOUBLE_EQ(lr.at(110), 0.1);    // the last step reaches the minimum
  EXPECT_DOUBLE_EQ(lr.at(500), 0.1);    // and stays there past the horizon
}

TEST(LrSchedule, WsdLinearPhaseBoundaries) {
  const LrSchedule lr(wsd(10, 20, 0.5, config::DecayShape::linear, 0.1), 2.0, 110);
  EXPECT_DOUBLE_EQ(lr.at(5), 1.0);
  EXPECT_DOUBLE_EQ(lr.at(90), 2.0);
  EXPECT_DOUBLE_EQ(lr.at(91), 0.2 + 1.8 * (1.0 - 1.0 / 20));
  EXPECT_DOUBLE_EQ(lr.at(95), 0.2 + 1.8 * 0.75);
  EXPECT_DOUBLE_EQ(lr.at(100), 0.2 + 1.8 * 0.5);
  EXPECT_DOUBLE_EQ(lr.at(110), 0.2);
  EXPECT_DOUBLE_EQ(lr.at(111), 0.2);
}

// After warmup the rate never rises, falls strictly through the decay, and every decay step
// of one_minus_sqrt lies below the linear one (1 - sqrt(t) < 1 - t for t in (0, 1)).
TEST(LrSchedule, WsdDecayIsMonotoneAndEndsAtTheMinimum) {
  for (const int64_t total : {1, 2, 7, 100, 1001}) {
    for (const double ratio : {0.05, 0.2, 1.0}) {
      const auto root = wsd(0, 0, ratio, config::DecayShape::one_minus_sqrt, 0.01);
      const auto line = wsd(0, 0, ratio, config::DecayShape::linear, 0.01);
      const LrSchedule sqrt_lr(root, 3e-4, total), linear_lr(line, 3e-4, total);
      ASSERT_GE(sqrt_lr.decay_steps(), 1) << total << " " << ratio;
      const int64_t decay_start = total - sqrt_lr.decay_steps();
      for (int64_t step = 1; step < total + 3; ++step) {
        const double now = sqrt_lr.at(step), next = sqrt_lr.at(step + 1);
        EXPECT_LE(next, now) << "total " << total << " ratio " << ratio << " step " << step;
        if (step >= decay_start && step < total) {
          EXPECT_LT(next, now) << "total " << total << " ratio " << ratio << " step " << step;
        }
        if (step > decay_start && step < total) {
          EXPECT_LT(now, linear_lr.at(step)) << "total " << total << " step " << step;
        }
      }
      EXPECT_DOUBLE_EQ(sqrt_lr.at(total), 3e-6);
      EXPECT_DOUBLE_EQ(linear_lr.at(total), 3e-6);
    }
  }
}

TEST(LrSchedule, WsdDecayStepsWinOverDecayRatio) {
  const auto shape = config::DecayShape::one_minus_sqrt;
  EXPECT_EQ(LrSchedule(wsd(10, 7, 0.5, shape), 1.0, 100).decay_steps(), 7);
  EXPECT_EQ(LrSchedule(wsd(10, 0, 0.25, shape), 1.0, 100).decay_steps(), 25);
  EXPECT_EQ(LrSchedule(wsd(0, 0, 0.15, shape), 1.0, 30).decay_steps(), 5);  // 4.5 rounds up
  // 0.07 * 100 is 7.000000000000001 in binary: still 7 steps.
  EXPECT_EQ(LrSchedule(wsd(0, 0, 0.07, shape), 1.0, 100).decay_steps(), 7);
  const LrSchedule by_steps(wsd(10, 7, 0.5, shape), 1.0, 100);
  EXPECT_DOUBLE_EQ(by_steps.at(93), 1.0);
  EXPECT_LT(by_steps.at(94), 1.0);
}

// A horizon estimated from train.max_tokens is not validated: a decay longer than the steps
// after warmup starts right after warmup.
TEST(LrSchedule, WsdDecayLongerThanTheRunStartsAfterWarmup) {
  const LrSchedule lr(wsd(10, 500, 0.1, config::DecayShape::linear), 1.0, 50);
  EXPECT_EQ(lr.decay_steps(), 40);
  EXPECT_DOUBLE_EQ(lr.at(10), 1.0);
  EXPECT_DOUBLE_EQ(lr.at(11), 1.0 - 1.0 / 40);
  EXPECT_DOUBLE_EQ(lr.at(50), 0.0);
}

TEST(LrSchedule, WsdWithUnknownHorizonKeepsPeakAfterWarmup) {
  const LrSchedule lr(wsd(10, 100, 0.1, config::DecayShape::one_minus_sqrt), 1.0, 0);
  EXPECT_EQ(lr.decay_steps(), 0);
  EXPECT_DOUBLE_EQ(lr.at(5), 0.5);
  EXPECT_DOUBLE_EQ(lr.at(1000000), 1.0);
}

TEST(LrSchedule, DecayStepsOfTheOtherKinds) {
  EXPECT_EQ(LrSchedule(schedule(10, config::DecayKind::linear), 1.0, 110).decay_steps(), 100);
  EXPECT_EQ(LrSchedule(schedule(10, config::DecayKind::cosine), 1.0, 110).decay_steps(), 100);
  EXPECT_EQ(LrSchedule(schedule(10, config::DecayKind::constant), 1.0, 110).decay_steps(), 0);
  EXPECT_EQ(LrSchedule(schedule(10, config::DecayKind::linear), 1.0, 0).decay_steps(), 0);
}

}  // namespace
}  // namespace mlm::train
