#pragma once
// A trainer run recorded step by step, and the check the trainer tests share: a run stopped by
// SIGTERM after some step and resumed from its checkpoint ("latest") is the uninterrupted run,
// bit for bit (every step's loss, gradient norm, NSP count and masked count; the weights).
#include <gtest/gtest.h>

#include <csignal>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mlm/train/run/trainer.h"
#include "mlm/util/errors.h"
#include "train_test_util.h"

namespace mlm::train::testing {

struct RecordedRun {
  std::vector<StepStats> steps;
  std::vector<std::pair<std::string, torch::Tensor>> params;
  std::optional<EvalResult> before;  // with eval_first: the untrained model's evaluation
  std::optional<EvalResult> eval;    // the last evaluation (at the end)
  int exit_code = -1;
};

/// Runs a trainer to its end (or SIGTERM after step `stop_after`), recording every step.
inline RecordedRun run_trainer(const config::RunConfig& config, const std::string& resume = "",
                               int64_t stop_after = 0, bool eval_first = false) {
  Trainer trainer(config, {resume, nullptr});
  RecordedRun run;
  if (eval_first) run.before = trainer.evaluate_and_log();
  trainer.on_step([&](const StepStats& s) {
    run.steps.push_back(s);
    if (s.step == stop_after) std::raise(SIGTERM);  // noticed at the step boundary
  });
  run.exit_code = trainer.run();
  for (const auto& p : trainer.model()->named_parameters()) {
    run.params.emplace_back(p.key(), p.value().detach().clone());
  }
  run.eval = trainer.last_eval();
  return run;
}

/// Runs `config` (in its own, fresh output directory) stopped after step `stop` and then
/// resumed, expects the two halves to be `straight` bit for bit, and returns the resumed half.
inline RecordedRun expect_stop_and_resume_equal(const config::RunConfig& config, int64_t stop,
                                                const RecordedRun& straight) {
  const auto first = run_trainer(config, "", stop);
  EXPECT_EQ(first.exit_code, kExitSigterm);
  const auto second = run_trainer(config, "latest");
  EXPECT_EQ(second.exit_code, 0);
  EXPECT_EQ(first.steps.size(), static_cast<size_t>(stop));
  EXPECT_EQ(first.steps.size() + second.steps.size(), straight.steps.size());
  for (size_t i = 0; i < straight.steps.size() && i < first.steps.size() + second.steps.size(); ++i) {
    const auto& got = i < first.steps.size() ? first.steps[i] : second.steps[i - first.steps.size()];
    const auto& want = straight.steps[i];
    EXPECT_EQ(got.step, want.step);
    EXPECT_EQ(got.loss, want.loss) << "step " << want.step;  // bit-equal
    EXPECT_EQ(got.grad_norm, want.grad_norm) << "step " << want.step;
    EXPECT_EQ(got.nsp_correct, want.nsp_correct) << "step " << want.step;
    EXPECT_EQ(got.num_masked, want.num_masked) << "step " << want.step;
  }
  EXPECT_EQ(second.params.size(), straight.params.size());
  for (size_t i = 0; i < straight.params.size() && i < second.params.size(); ++i) {
    EXPECT_TRUE(torch::equal(second.params[i].second, straight.params[i].second)) << straight.params[i].first;
  }
  return second;
}

}  // namespace mlm::train::testing
