// Batch-size warmup and the masking-rate schedule in a run on the tiny config: a step of the
// warmup is exactly a run with that many micro-batches, the masked share follows the rate,
// and a run stopped inside either schedule resumes bit for bit.
#include <gtest/gtest.h>

#include "mlm/train/loop/batch_ramp.h"
#include "recorded_run.h"

namespace mlm::train {
namespace {

using namespace mlm::train::testing;

std::vector<std::string> with(std::vector<std::string> sets, const std::vector<std::string>& more) {
  sets.insert(sets.end(), more.begin(), more.end());
  return sets;
}

const std::vector<std::string> kShort = {"train.max_steps=8", "checkpoint.every_steps=0",
                                         "eval.every_steps=0", "eval.max_batches=1",
                                         "model.hidden_dropout_prob=0.0",
                                         "model.attention_probs_dropout_prob=0.0"};
// 2 sequences a micro-batch, up to 4 a step: from 1 micro-batch to 4 over 1000 tokens.
const std::vector<std::string> kRamp = {"train.micro_batch_size=2", "train.grad_accum_steps=4",
                                        "train.batch_warmup_tokens=1000", "train.batch_warmup_start=2"};

TEST(TrainerSchedules, BatchWarmupGrowsTheStepInWholeMicroBatches) {
  const auto ramp = run_trainer(tiny_config(fresh_dir("ramp_straight"), with(kShort, kRamp)));
  ASSERT_EQ(ramp.steps.size(), 8u);
  // Each step holds the ramp's micro-batches of 2 sequences at the tokens seen before it.
  int64_t seen = 0;
  const BatchRamp expected(tiny_config(fresh_dir("ramp_unused"), with(kShort, kRamp)).train, 1);
  for (const auto& s : ramp.steps) {
    EXPECT_EQ(s.sequences, 2 * expected.micro_batches(seen)) << "step " << s.step;
    seen += s.tokens;
  }
  EXPECT_EQ(expected.micro_batches(0), 1);
  EXPECT_EQ(expected.micro_batches(seen), 4);  // reached the full batch within the run

  // The first step (one micro-batch) is a run of one micro-batch a step, bit for bit: the
  // loss is normalised by the step's own masked count.
  const auto single = run_trainer(tiny_config(
      fresh_dir("ramp_single"), with(kShort, {"train.micro_batch_size=2", "train.grad_accum_steps=1"})));
  EXPECT_EQ(ramp.steps[0].loss, single.steps[0].loss);
  EXPECT_EQ(ramp.steps[0].grad_norm, single.steps[0].grad_norm);
  EXPECT_EQ(ramp.steps[0].num_masked, single.steps[0].num_masked);

  expect_stop_and_resume_equal(tiny_config(fresh_dir("ramp_split"), with(kShort, kRamp)), 3, ramp);
}

TEST(TrainerSchedules, MaskingRateFollowsItsScheduleAndResumesExactly) {
  const auto sets = with(kShort, {"masking.mlm_probability=0.1", "masking.rate_schedule=linear",
                                  "masking.final_mlm_probability=0.5", "masking.count=exact"});
  const auto run = run_trainer(tiny_config(fresh_dir("rate_straight"), sets));
  ASSERT_EQ(run.steps.size(), 8u);
  // The masked share of the tokens climbs from about 0.1 to about 0.5 (exact counts per row,
  // up to rounding and special tokens).
  const double first = static_cast<double>(run.steps.front().num_masked) / run.steps.front().tokens;
  const double last = static_cast<double>(run.steps.back().num_masked) / run.steps.back().tokens;
  EXPECT_NEAR(first, 0.1, 0.03);
  EXPECT_NEAR(last, 0.5, 0.05);
  for (size_t i = 1; i < run.steps.size(); ++i) {
    EXPECT_GT(static_cast<double>(run.steps[i].num_masked) / run.steps[i].tokens,
              static_cast<double>(run.steps[i - 1].num_masked) / run.steps[i - 1].tokens - 0.01);
  }
  expect_stop_and_resume_equal(tiny_config(fresh_dir("rate_split"), sets), 5, run);
}

}  // namespace
}  // namespace mlm::train
