// LaunchSchedule: which buckets may start as parameters become ready, with no communication.
#include "mlm/dist/launch_schedule.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace mlm::dist::launch_schedule_test {

using Starts = std::vector<size_t>;

// Buckets {0, 1}, {2}, {3, 4} over five parameters.
std::vector<Bucket> three_buckets() {
  std::vector<Bucket> plan(3);
  plan[0].params = {0, 1};
  plan[1].params = {2};
  plan[2].params = {3, 4};
  return plan;
}

TEST(LaunchSchedule, StartsAFullBucketOnlyAfterEveryEarlierOne) {
  LaunchSchedule schedule(three_buckets(), 5);
  EXPECT_EQ(schedule.mark_ready(2), Starts{});  // bucket 1 full, bucket 0 not yet
  EXPECT_EQ(schedule.mark_ready(4), Starts{});
  EXPECT_EQ(schedule.mark_ready(0), Starts{});
  EXPECT_EQ(schedule.started(), 0u);
  EXPECT_EQ(schedule.mark_ready(1), (Starts{0, 1}));  // bucket 0 full: 0 and the waiting 1
  EXPECT_EQ(schedule.started(), 2u);
  EXPECT_EQ(schedule.mark_ready(3), Starts{2});
  EXPECT_EQ(schedule.start_rest(), Starts{});
}

TEST(LaunchSchedule, InPlanOrderEachBucketStartsWithItsLastParameter) {
  LaunchSchedule schedule(three_buckets(), 5);
  EXPECT_EQ(schedule.mark_ready(1), Starts{});
  EXPECT_EQ(schedule.mark_ready(0), Starts{0});
  EXPECT_EQ(schedule.mark_ready(2), Starts{1});
  EXPECT_EQ(schedule.mark_ready(3), Starts{});
  EXPECT_EQ(schedule.mark_ready(4), Starts{2});
}

TEST(LaunchSchedule, StartRestStartsWhatIsLeftInOrderThenLaterReadinessStartsNothing) {
  LaunchSchedule schedule(three_buckets(), 5);
  EXPECT_EQ(schedule.mark_ready(0), Starts{});
  EXPECT_EQ(schedule.mark_ready(1), Starts{0});
  EXPECT_EQ(schedule.start_rest(), (Starts{1, 2}));  // parameters 2..4 never became ready
  EXPECT_EQ(schedule.started(), 3u);
  EXPECT_EQ(schedule.mark_ready(2), Starts{});
  EXPECT_EQ(schedule.start_rest(), Starts{});
}

TEST(LaunchSchedule, ResetForgetsReadinessAndStarts) {
  LaunchSchedule schedule(three_buckets(), 5);
  for (size_t p : {0, 1, 2}) schedule.mark_ready(p);
  ASSERT_EQ(schedule.started(), 2u);
  schedule.reset();
  EXPECT_EQ(schedule.started(), 0u);
  EXPECT_FALSE(schedule.is_ready(0));
  EXPECT_EQ(schedule.mark_ready(2), Starts{});
  EXPECT_EQ(schedule.mark_ready(0), Starts{});
  EXPECT_EQ(schedule.mark_ready(1), (Starts{0, 1}));
}

TEST(LaunchSchedule, AParameterReadyTwiceInOneBackwardIsAnError) {
  LaunchSchedule schedule(three_buckets(), 5);
  schedule.mark_ready(3);
  EXPECT_THROW(schedule.mark_ready(3), std::logic_error);
}

TEST(LaunchSchedule, RejectsAPlanThatMissesOrRepeatsAParameter) {
  auto missing = three_buckets();
  missing[2].params = {3};
  EXPECT_THROW(LaunchSchedule(missing, 5), std::invalid_argument);
  auto repeated = three_buckets();
  repeated[1].params = {2, 0};
  EXPECT_THROW(LaunchSchedule(repeated, 5), std::invalid_argument);
  EXPECT_THROW(LaunchSchedule(three_buckets(), 4), std::invalid_argument);  // index 4 too big
}

TEST(LaunchSchedule, WithNoBucketsThereIsNothingToStart) {
  LaunchSchedule schedule(std::vector<Bucket>{}, 0);
  EXPECT_EQ(schedule.start_rest(), Starts{});
}

}  // namespace mlm::dist::launch_schedule_test
