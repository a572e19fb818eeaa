// train.ema_*: the update rule against a float64 computation of the documented formula, the
// training it leaves alone, the shadow through a stop and resume (the bytes of ema.pt), the
// eval_*_ema rows, mlm-eval/mlm-export --ema, and the keys' validation.
#include "mlm/train/optim/ema_weights.h"

#include <gtest/gtest.h>

#include <cmath>
#include <csignal>

#include "mlm/config/config_loader.h"
#include "mlm/train/run/trainer.h"
#include "mlm/train/tools/commands.h"
#include "mlm/train/checkpoint/saved_model.h"
#include "mlm/util/errors.h"
#include "train_test_util.h"

namespace mlm::train::ema_test {
namespace {

using namespace mlm::train::testing;

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const std::vector<std::string> kShort = {"train.max_steps=6", "checkpoint.every_steps=0", "eval.every_steps=3",
                                         "eval.max_batches=1"};

std::vector<torch::Tensor> trainable(model::MaskedLm model) {
  std::vector<torch::Tensor> out;
  for (const auto& p : model->named_parameters())
    if (p.value().requires_grad()) out.push_back(p.value().detach().clone());
  return out;
}

struct EmaRun {
  std::vector<std::vector<torch::Tensor>> weights;  // [0]: initial, [s]: after step s
  std::vector<torch::Tensor> shadow;                // at the end
  std::vector<torch::Tensor> final_weights;
  int exit_code = -1;
};

EmaRun run(const config::RunConfig& config, const std::string& resume = "", int64_t stop_after = 0) {
  Trainer trainer(config, {resume, nullptr});
  EmaRun out;
  out.weights.push_back(trainable(trainer.model()));
  trainer.on_step([&](const StepStats& s) {
    out.weights.push_back(trainable(trainer.model()));
    if (s.step == stop_after) std::raise(SIGTERM);
  });
  out.exit_code = trainer.run();
  if (trainer.ema()) {
    for (const auto& t : trainer.ema()->shadow()) out.shadow.push_back(t.clone());
  }
  out.final_weights = trainable(trainer.model());
  return out;
}

void expect_bit_equal(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << what << ": tensor " << i;
}

/// The documented rule in float64: shadow <- weights at `start`, then at s > start with
/// (s - start) % every == 0: shadow <- d^every shadow + (1 - d^every) weights.
std::vector<torch::Tensor> reference_shadow(const EmaRun& run, double decay, int64_t every, int64_t start) {
  std::vector<torch::Tensor> shadow;
  for (const auto& w : run.weights[static_cast<size_t>(start)]) shadow.push_back(w.to(torch::kFloat64));
  const double d = std::pow(decay, static_cast<double>(every));
  for (int64_t s = start + 1; s < static_cast<int64_t>(run.weights.size()); ++s) {
    if ((s - start) % every != 0) continue;
    for (size_t i = 0; i < shadow.size(); ++i)
      shadow[i] = d * shadow[i] + (1 - d) * run.weights[static_cast<size_t>(s)][i].to(torch::kFloat64);
  }
  return shadow;
}

void expect_matches_reference(const EmaRun& run, double decay, int64_t every, int64_t start) {
  const auto want = reference_shadow(run, decay, every, start);
  ASSERT_EQ(run.shadow.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(run.shadow[i].scalar_type(), torch::kFloat32);
    // fp32 rounding of a few lerps: a few ulps of the weights' magnitude.
    const double scale = want[i].abs().max().item<double>() + 1e-3;
    const double diff = (run.shadow[i].to(torch::kFloat64) - want[i]).abs().max().item<double>();
    EXPECT_LE(diff, 1e-6 * scale) << "tensor " << i;
  }
}

TEST(Ema, EveryStepFollowsTheFormula) {
  const auto got = run(tiny_config(fresh_dir("ema_every1"), with(kShort, {"train.ema_decay=0.9"})));
  ASSERT_EQ(got.exit_code, 0);
  ASSERT_EQ(got.weights.size(), 7u);
  expect_matches_reference(got, 0.9, 1, 0);
  // Not the weights themselves: the average lags them.
  EXPECT_FALSE(torch::equal(got.shadow.front(), got.final_weights.front()));
}

TEST(Ema, EveryNStepsWithAStartUsesTheDecayToTheN) {
  const auto got = run(tiny_config(fresh_dir("ema_every2"),
                                   with(kShort, {"train.ema_decay=0.8", "train.ema_every_steps=2",
                                                 "train.ema_start_step=1"})));
  ASSERT_EQ(got.exit_code, 0);
  expect_matches_reference(got, 0.8, 2, 1);  // copies at 1, updates at 3 and 5, not at 6
}

TEST(Ema, LeavesTheTrainingBitForBit) {
  // The EMA (its updates, the swaps around its evaluations and its saves) does not touch the
  // weights: a run with it trains the same weights as one without.
  const auto off = run(tiny_config(fresh_dir("ema_off"), kShort));
  const auto on = run(tiny_config(fresh_dir("ema_on"), with(kShort, {"train.ema_decay=0.9"})));
  EXPECT_TRUE(off.shadow.empty());
  expect_bit_equal(off.final_weights, on.final_weights, "weights");
}

TEST(Ema, StopAndResumeIsTheStraightRunShadowIncluded) {
  const auto sets = with(kShort, {"train.ema_decay=0.9", "train.ema_every_steps=2"});
  const auto straight_dir = fresh_dir("ema_straight");
  const auto straight = run(tiny_config(straight_dir, sets));
  const auto dir = fresh_dir("ema_resumed");
  const auto first = run(tiny_config(dir, sets), "", 3);
  ASSERT_EQ(first.exit_code, kExitSigterm);
  ASSERT_TRUE(fs::exists(dir / "checkpoints" / "step_00000003" / kEmaFileName));
  const auto second = run(tiny_config(dir, sets), "latest");
  ASSERT_EQ(second.exit_code, 0);
  expect_bit_equal(straight.final_weights, second.final_weights, "weights");
  expect_bit_equal(straight.shadow, second.shadow, "shadow");
  const auto last = fs::path("checkpoints") / "step_00000006" / kEmaFileName;
  EXPECT_EQ(read_text(straight_dir / last), read_text(dir / last)) << "ema.pt bytes";
}

TEST(Ema, EvaluationRowsExportAndEval) {
  const auto dir = fresh_dir("ema_rows");
  const auto config = tiny_config(dir, with(kShort, {"train.ema_decay=0.9", "logging.tensorboard=false"}));
  EvalResult in_training;
  std::vector<torch::Tensor> shadow, weights;
  {
    Trainer trainer(config, {"", nullptr});
    ASSERT_EQ(trainer.run(), 0);
    ASSERT_TRUE(trainer.last_eval_ema());
    in_training = *trainer.last_eval_ema();
    for (const auto& t : trainer.ema()->shadow()) shadow.push_back(t.clone());
    weights = trainable(trainer.model());
  }
  int eval_rows = 0;
  for (const auto& row : read_metrics(dir)) {
    if (!row.contains("eval_loss")) continue;
    ++eval_rows;
    for (const char* key : {"eval_loss_ema", "eval_mlm_accuracy_ema", "eval_perplexity_ema", "eval_time_s_ema"})
      EXPECT_TRUE(row.contains(key)) << key << " in " << row.dump();
    EXPECT_FALSE(row.contains("eval_num_masked_ema"));
    EXPECT_NE(row["eval_loss"], row["eval_loss_ema"]);
  }
  EXPECT_EQ(eval_rows, 2);  // steps 3 and 6

  // mlm-eval --ema scores the checkpoint's shadow as the run did.
  const auto checkpoint = dir / "checkpoints" / "step_00000006";
  const auto evaluated = evaluate_saved_model(config, checkpoint, /*ema=*/true);
  EXPECT_EQ(evaluated.result.num_masked, in_training.num_masked);
  EXPECT_NEAR(evaluated.result.masked_accuracy(), in_training.masked_accuracy(), 1e-12);
  EXPECT_NEAR(evaluated.result.mlm_loss(), in_training.mlm_loss(), 1e-6);
  const auto live = evaluate_saved_model(config, checkpoint);
  EXPECT_GT(std::abs(live.result.mlm_loss() - in_training.mlm_loss()), 1e-4) << "--ema read the weights";

  // mlm-export --ema writes the shadow; without --ema the weights.
  const auto exported = dir / "export_ema";
  export_checkpoint(checkpoint, exported, model::WeightFormat::safetensors, /*ema=*/true);
  expect_bit_equal(trainable(open_saved_model(exported, config).model), shadow, "exported EMA");
  const auto plain = dir / "export_plain";
  export_checkpoint(checkpoint, plain, model::WeightFormat::safetensors);
  expect_bit_equal(trainable(open_saved_model(plain, config).model), weights, "exported weights");
}

TEST(Ema, AskingForTheEmaOfACheckpointWithoutOneIsBadUsage) {
  const auto dir = fresh_dir("ema_absent");
  const auto config = tiny_config(dir, {"train.max_steps=2", "checkpoint.every_steps=0", "eval.every_steps=0",
                                        "eval.max_batches=1"});
  {
    Trainer trainer(config, {"", nullptr});
    ASSERT_EQ(trainer.run(), 0);
  }
  const auto checkpoint = dir / "checkpoints" / "step_00000002";
  const auto output = dir / "export";
  try {
    export_checkpoint(checkpoint, output, model::WeightFormat::safetensors, /*ema=*/true);
    FAIL() << "no UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("holds no EMA weights (ema.pt)"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(output)) << "nothing partial left behind";
  EXPECT_THROW(evaluate_saved_model(config, checkpoint, /*ema=*/true), UsageError);
}

TEST(Ema, BadValuesNameTheirKeys) {
  const auto bad = [](const std::string& set) {
    try {
      config::load_config_from_string("logging:\n  level: info\n", "<test>", {set});
    } catch (const ConfigError& e) {
      return e.key();
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(bad("train.ema_decay=-0.1"), "train.ema_decay");
  EXPECT_EQ(bad("train.ema_decay=1.0"), "train.ema_decay");
  EXPECT_EQ(bad("train.ema_decay=.nan"), "train.ema_decay");
  EXPECT_EQ(bad("train.ema_every_steps=0"), "train.ema_every_steps");
  EXPECT_EQ(bad("train.ema_start_step=-1"), "train.ema_start_step");
  EXPECT_EQ(bad("train.ema_decay=0.999"), "(no error)");
  EXPECT_EQ(bad("train.ema_decay=0"), "(no error)");  // off
}

TEST(Ema, APhaseMayChangeTheDecayNotSwitchItOnOrOff) {
  const auto phased = [](const std::string& run_decay, const std::string& phase_decay) {
    return tiny_config(fresh_dir("ema_phases"),
                       {"train.ema_decay=" + run_decay,
                        "phases=[{name: a, steps: 2}, {name: b, steps: 2, set: {train.ema_decay: " + phase_decay +
                            "}}]"});
  };
  EXPECT_NO_THROW(phased("0.9", "0.99"));
  EXPECT_THROW(phased("0.9", "0"), ConfigError);
  EXPECT_THROW(phased("0", "0.9"), ConfigError);
  EXPECT_THROW(tiny_config(fresh_dir("ema_phases"),
                           {"train.ema_decay=0.9",
                            "phases=[{name: a, steps: 2}, {name: b, steps: 2, set: {train.ema_start_step: 1}}]"}),
               ConfigError);
}

}  // namespace
}  // namespace mlm::train::ema_test
