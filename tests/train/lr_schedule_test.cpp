#include "mlm/train/loop/lr_schedule.h"

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

}  // namespace
}  // namespace mlm::train
