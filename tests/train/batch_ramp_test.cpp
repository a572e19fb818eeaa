// Batch-size warmup and the masking-rate schedule as functions: what a step gets, where the
// ramps start and end, and the world-size rule.
#include "mlm/train/loop/batch_ramp.h"
#include "mlm/train/loop/masking_rate.h"

#include <gtest/gtest.h>

#include <cmath>

#include "mlm/util/errors.h"

namespace mlm::train {
namespace {

config::TrainConfig ramp_config(int64_t micro, int64_t accum, int64_t tokens, int64_t start) {
  config::TrainConfig train;
  train.micro_batch_size = micro;
  train.grad_accum_steps = accum;
  train.batch_warmup_tokens = tokens;
  train.batch_warmup_start = start;
  return train;
}

TEST(BatchRamp, GrowsLinearlyInTokensInWholeMicroBatches) {
  // 8 sequences a micro-batch, 2 ranks: from 32 sequences (2 per rank) to 128 (8 per rank)
  // over 6000 tokens.
  const BatchRamp ramp(ramp_config(8, 8, 6000, 32), 2);
  EXPECT_EQ(ramp.micro_batches(0), 2);
  EXPECT_EQ(ramp.micro_batches(999), 2);    // 2 + 6 x 999/6000 = 2.999
  EXPECT_EQ(ramp.micro_batches(1000), 3);
  EXPECT_EQ(ramp.micro_batches(3000), 5);
  EXPECT_EQ(ramp.micro_batches(5999), 7);
  EXPECT_EQ(ramp.micro_batches(6000), 8);
  EXPECT_EQ(ramp.micro_batches(1000000), 8);
  const BatchRamp off(ramp_config(8, 4, 0, 0), 2);
  EXPECT_EQ(off.micro_batches(0), 4);
}

TEST(BatchRamp, StartMustBeWholeMicroBatchesOnEveryRank) {
  try {
    BatchRamp ramp(ramp_config(8, 8, 6000, 24), 2);
    FAIL() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "train.batch_warmup_start");
    EXPECT_NE(std::string(e.what()).find("8 x 2 = 16"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(BatchRamp(ramp_config(8, 8, 6000, 24), 3));
}

TEST(MaskingRate, GoesFromStartToEndOverItsSpan) {
  config::MaskingConfig masking;
  masking.mlm_probability = 0.3;
  masking.final_mlm_probability = 0.1;
  masking.rate_schedule = config::MaskingRateSchedule::linear;
  const MaskingRate linear(masking, 100, 5);  // steps 101..105
  EXPECT_DOUBLE_EQ(*linear.at(101), 0.3);
  EXPECT_NEAR(*linear.at(103), 0.2, 1e-15);
  EXPECT_DOUBLE_EQ(*linear.at(105), 0.1);
  EXPECT_DOUBLE_EQ(*linear.at(200), 0.1);  // held after
  masking.rate_schedule = config::MaskingRateSchedule::cosine;
  const MaskingRate cosine(masking, 100, 5);
  EXPECT_DOUBLE_EQ(*cosine.at(101), 0.3);
  EXPECT_NEAR(*cosine.at(102), 0.3 - 0.2 * 0.5 * (1 - std::cos(M_PI / 4)), 1e-15);
  EXPECT_NEAR(*cosine.at(103), 0.2, 1e-15);
  EXPECT_DOUBLE_EQ(*cosine.at(105), 0.1);
  masking.rate_schedule = config::MaskingRateSchedule::constant;
  EXPECT_FALSE(MaskingRate(masking, 0, 5).at(3));
}

}  // namespace
}  // namespace mlm::train
