// ELECTRA (objective rtd) through the trainer: the same step, accumulation, checkpoints and
// resume as MLM, the discriminator's figures in every metrics row and evaluation, and an
// evaluation that draws the same samples whenever it runs.
#include "mlm/train/run/trainer.h"

#include <gtest/gtest.h>

#include <cmath>

#include "recorded_run.h"

// A named namespace: the unity build compiles this file with the other trainer tests.
namespace mlm::train::electra_run {

using namespace mlm::train::testing;

std::vector<std::string> electra_settings(int64_t steps, const std::string& sharing = "shared") {
  return {"model.architecture=electra", "model.objective=rtd", "model.embedding_size=64",
          "model.generator_hidden_ratio=0.25", "model.embedding_sharing=" + sharing,
          "masking.mask_replace_prob=0.85", "masking.random_replace_prob=0",
          "train.max_steps=" + std::to_string(steps), "train.grad_accum_steps=2", "checkpoint.every_steps=0",
          "eval.every_steps=0", "eval.max_batches=2", "logging.every_steps=2"};
}

void expect_rtd_figures(const nlohmann::json& row, const std::string& prefix) {
  for (const char* name : {"rtd_loss", "rtd_accuracy", "rtd_precision", "rtd_recall", "rtd_f1",
                           "generator_sample_accuracy", "rtd_replaced_share", "rtd_prior_loss"}) {
    ASSERT_TRUE(row.contains(prefix + name)) << prefix + name << " missing in " << row.dump();
    const double v = row[prefix + name].get<double>();
    EXPECT_TRUE(std::isfinite(v)) << name;
    if (std::string(name).find("loss") == std::string::npos) EXPECT_TRUE(v >= 0 && v <= 1) << name << " " << v;
  }
}

TEST(TrainerElectra, TrainsTheDiscriminatorAndResumesBitExactly) {
  const auto sets = electra_settings(8);
  const auto straight_dir = fresh_dir("electra_straight");
  const auto config = tiny_config(straight_dir, sets);
  const auto straight = run_trainer(config, "", 0, /*eval_first=*/true);
  ASSERT_EQ(straight.exit_code, 0);
  ASSERT_EQ(straight.steps.size(), 8u);
  for (const auto& s : straight.steps) {
    EXPECT_FALSE(s.skipped);
    EXPECT_EQ(s.rtd_weight, 50.0);
    // Every non-padding token is scored; the replaced ones are masked positions.
    EXPECT_GT(s.rtd.replaced, 0);
    EXPECT_LE(s.rtd.replaced + s.rtd.generator_hits, static_cast<double>(s.num_masked));
    EXPECT_LE(s.rtd.correct, static_cast<double>(s.tokens));
    // The step's loss is the generator's MLM loss plus 50 x the RTD loss per token.
    const double want = s.loss_sum / s.num_masked + 50.0 * s.rtd.loss_sum / s.tokens;
    EXPECT_NEAR(s.loss, want, 1e-12 * want);
  }
  // The discriminator learns: its loss per token falls from the first steps to the last.
  auto rtd_loss = [&](size_t i) { return straight.steps[i].rtd.loss_sum / straight.steps[i].tokens; };
  EXPECT_LT(rtd_loss(6) + rtd_loss(7), rtd_loss(0) + rtd_loss(1));
  ASSERT_TRUE(straight.before && straight.eval);
  EXPECT_TRUE(straight.eval->rtd);
  EXPECT_LT(straight.eval->rtd_counts.loss(straight.eval->tokens),
            straight.before->rtd_counts.loss(straight.before->tokens));
  int train_rows = 0, eval_rows = 0;
  for (const auto& row : read_metrics(straight_dir)) {
    if (row.contains("loss")) {
      ++train_rows;
      expect_rtd_figures(row, "");
      EXPECT_TRUE(row.contains("mlm_loss"));
    }
    if (row.contains("eval_loss")) {
      ++eval_rows;
      expect_rtd_figures(row, "eval_");
    }
  }
  EXPECT_EQ(train_rows, 4);
  EXPECT_GE(eval_rows, 1);

  const auto second = expect_stop_and_resume_equal(tiny_config(fresh_dir("electra_split"), sets), 3, straight);
  ASSERT_TRUE(second.eval);
  // The evaluation's samples come from eval.seed: the same figures after a resume.
  EXPECT_EQ(second.eval->rtd_counts.loss_sum, straight.eval->rtd_counts.loss_sum);
  EXPECT_EQ(second.eval->rtd_counts.true_positives, straight.eval->rtd_counts.true_positives);
}

// The discriminator learns to find replacements, not only their share: with samples nearly
// uniform over the vocabulary (temperature 100), after 150 steps its loss per token is well
// below the entropy of the replaced share (what calling every token original scores) and it
// calls replaced tokens replaced.
TEST(TrainerElectra, DiscriminatorFindsUniformReplacements) {
  auto sets = electra_settings(150);
  sets.insert(sets.end(), {"model.rtd_temperature=100", "train.grad_accum_steps=1", "logging.every_steps=25"});
  const auto run = run_trainer(tiny_config(fresh_dir("electra_uniform"), sets));
  ASSERT_EQ(run.exit_code, 0);
  ASSERT_EQ(run.steps.size(), 150u);
  RtdCounts last;
  double tokens = 0;
  for (size_t i = 125; i < 150; ++i) {
    last.add(run.steps[i].rtd);
    tokens += static_cast<double>(run.steps[i].tokens);
  }
  const double p = last.replaced / tokens;
  const double prior = -p * std::log(p) - (1 - p) * std::log(1 - p);
  EXPECT_LT(last.loss(tokens), 0.92 * prior) << "replaced share " << p;
  EXPECT_GT(last.f1(), 0.1);
}

// GDES trains, and only its delta moves the discriminator's token embeddings away from the
// generator's.
TEST(TrainerElectra, GdesTrainsItsDelta) {
  const auto config = tiny_config(fresh_dir("electra_gdes"), electra_settings(4, "gdes"));
  const auto run = run_trainer(config);
  ASSERT_EQ(run.exit_code, 0);
  for (const auto& s : run.steps) EXPECT_TRUE(std::isfinite(s.loss));
  bool found = false;
  for (const auto& [name, value] : run.params) {
    if (name != "word_embeddings_delta") continue;
    found = true;
    EXPECT_GT(value.abs().sum().item<double>(), 0);
  }
  EXPECT_TRUE(found);
}

}  // namespace mlm::train::electra_run
