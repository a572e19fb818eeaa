// train.precision fp16 end to end on the tiny config (CPU autocast to fp16): fp32 master
// weights and a loss close to fp32's, a loss scale that backs off from an overflowing start
// without counting as divergence, and a resume that continues the scale and its count.
#include <gtest/gtest.h>

#include <cmath>
#include <csignal>

#include "mlm/train/run/trainer.h"
#include "train_test_util.h"

namespace mlm::train {
namespace fp16_trainer_test {

using namespace mlm::train::testing;

struct Fp16Run {
  std::vector<StepStats> steps;
  std::vector<torch::Tensor> params;
  int exit_code = -1;
};

Fp16Run run(const std::filesystem::path& dir, std::vector<std::string> sets, const std::string& resume = "",
            int64_t stop_after = 0) {
  sets.insert(sets.end(), {"checkpoint.every_steps=0", "eval.every_steps=0", "eval.max_batches=1",
                           "model.hidden_dropout_prob=0.0", "model.attention_probs_dropout_prob=0.0"});
  Trainer trainer(tiny_config(dir, sets), {resume, nullptr});
  Fp16Run r;
  trainer.on_step([&](const StepStats& s) {
    r.steps.push_back(s);
    if (stop_after > 0 && s.step == stop_after) std::raise(SIGTERM);
  });
  r.exit_code = trainer.run();
  for (const auto& p : trainer.model()->parameters()) r.params.push_back(p.detach().clone());
  return r;
}

TEST(Fp16Trainer, TrainsCloseToFp32WithFp32MasterWeights) {
  const auto fp32 = run(fresh_dir("fp16_vs_fp32_a"), {"train.precision=fp32", "train.max_steps=10"});
  const auto fp16 = run(fresh_dir("fp16_vs_fp32_b"), {"train.precision=fp16", "train.max_steps=10"});
  ASSERT_EQ(fp16.steps.size(), 10u);
  for (const auto& p : fp16.params) EXPECT_EQ(p.scalar_type(), torch::kFloat32);
  // fp16 really ran (its products round to 11 bits), and from the first step on at the
  // configured scale.
  EXPECT_NE(fp16.steps[0].loss, fp32.steps[0].loss);
  EXPECT_EQ(fp16.steps[0].loss_scale, 65536);
  EXPECT_EQ(fp32.steps[0].loss_scale, 0);
  // fp16 rounding (2^-11 relative) moves the 10-step trajectory by far less than a percent;
  // a wrong unscaling (gradients left 65536 times too large) would diverge at once.
  for (size_t i = 0; i < 10; ++i) {
    if (fp16.steps[i].skipped) continue;
    EXPECT_NEAR(fp16.steps[i].loss, fp32.steps[i].loss, 0.01 * fp32.steps[i].loss) << "step " << i + 1;
    EXPECT_NEAR(fp16.steps[i].grad_norm, fp32.steps[i].grad_norm, 0.02 * fp32.steps[i].grad_norm)
        << "step " << i + 1;
  }
  EXPECT_LT(fp16.steps.back().loss, fp16.steps.front().loss);
}

TEST(Fp16Trainer, AnOverflowingScaleBacksOffWithoutCountingAsDivergence) {
  // 2^40 overflows fp16's gradients (max 65504) by far: the scale halves each step until they
  // fit. Those steps are skipped but do not count against train.max_skipped_steps (2 here).
  const auto dir = fresh_dir("fp16_backoff");
  const auto r = run(dir, {"train.precision=fp16", "train.loss_scale_init=1099511627776", "train.max_steps=40",
                           "train.max_skipped_steps=2"});
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_EQ(r.steps.size(), 40u);
  size_t overflowed = 0;
  while (overflowed < r.steps.size() && r.steps[overflowed].skipped) {
    EXPECT_EQ(r.steps[overflowed].loss_scale, std::ldexp(1.0, 40 - static_cast<int>(overflowed)));
    EXPECT_TRUE(std::isfinite(r.steps[overflowed].loss));
    ++overflowed;
  }
  EXPECT_GT(overflowed, 2u) << "the start must overflow more often than max_skipped_steps allows";
  ASSERT_LT(overflowed, r.steps.size()) << "the scale never came down far enough";
  // Later steps may overflow again at the scale that first fitted (a larger gradient): each
  // skip halves the scale for the next step, and a step that runs keeps it (interval 2000).
  int64_t skipped = 0;
  for (size_t i = 0; i < r.steps.size(); ++i) {
    EXPECT_TRUE(std::isfinite(r.steps[i].loss)) << "step " << i + 1;
    skipped += r.steps[i].skipped ? 1 : 0;
    if (i + 1 < r.steps.size()) {
      EXPECT_EQ(r.steps[i + 1].loss_scale, r.steps[i].loss_scale * (r.steps[i].skipped ? 0.5 : 1.0))
          << "step " << i + 2;
    }
  }
  // The skips are counted and the scale is logged.
  const auto rows = read_metrics(dir);
  const auto& last = rows.back().contains("loss") ? rows.back() : rows[rows.size() - 2];
  EXPECT_EQ(last.value("skipped_steps", int64_t{0}), skipped);
  EXPECT_EQ(last.value("loss_scale", 0.0), r.steps.back().loss_scale);
}

TEST(Fp16Trainer, ResumeContinuesTheScaleAndItsCountExactly) {
  // Growth every 2 good steps makes the count matter: a resume that lost it would double the
  // scale one step late.
  const std::vector<std::string> sets = {"train.precision=fp16", "train.max_steps=8",
                                         "train.loss_scale_growth_interval=2"};
  const auto straight = run(fresh_dir("fp16_straight"), sets);
  ASSERT_EQ(straight.steps.size(), 8u);
  const auto dir = fresh_dir("fp16_split");
  run(dir, sets, "", /*stop_after=*/3);
  const auto checkpoint_state = read_text(dir / "checkpoints" / "step_00000003" / "trainer_state.json");
  EXPECT_NE(checkpoint_state.find("\"loss_scale\""), std::string::npos);
  const auto resumed = run(dir, sets, "latest");
  ASSERT_EQ(resumed.steps.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(resumed.steps[i].loss_scale, straight.steps[i + 3].loss_scale) << "step " << i + 4;
    EXPECT_EQ(resumed.steps[i].loss, straight.steps[i + 3].loss) << "step " << i + 4;
  }
  EXPECT_GT(straight.steps.back().loss_scale, straight.steps.front().loss_scale) << "the scale grew";
}

}  // namespace fp16_trainer_test
}  // namespace mlm::train
