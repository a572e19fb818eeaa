// The training loop end to end on the tiny config: accumulation equivalence, exact resume,
// the non-finite guard, checkpoint validation on resume, and mlm-eval against the
// in-training evaluation.
#include "mlm/train/run/trainer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "mlm/train/checkpoint/checkpoint_dir.h"
#include "mlm/util/errors.h"
#include "tools/poison_gradient.h"
#include "train_test_util.h"

namespace mlm::train {
namespace {

using namespace mlm::train::testing;

const std::vector<std::string> kNoDropout = {"model.hidden_dropout_prob=0.0",
                                             "model.attention_probs_dropout_prob=0.0"};

std::vector<std::string> concat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

struct RunRecord {
  std::vector<StepStats> steps;
  std::vector<torch::Tensor> params;
  nlohmann::json position;
  int exit_code = -1;
};

/// Runs a trainer to its end, recording every step; `on_step` may interrupt it.
RunRecord train(const config::RunConfig& config, const std::string& resume = "",
                std::function<void(const StepStats&)> on_step = nullptr) {
  Trainer trainer(config, {resume, nullptr});
  RunRecord record;
  trainer.on_step([&](const StepStats& s) {
    record.steps.push_back(s);
    if (on_step) on_step(s);
  });
  record.exit_code = trainer.run();
  for (const auto& p : trainer.model()->parameters()) record.params.push_back(p.detach().clone());
  record.position = trainer.data_position();
  return record;
}

void expect_params_near(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b,
                        double atol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const double diff = (a[i] - b[i]).abs().max().item<double>();
    EXPECT_LE(diff, atol) << "parameter " << i << " differs by " << diff;
  }
}

TEST(Trainer, AccumulationEqualsOneBigBatch) {
  const auto common = concat(kNoDropout, {"train.max_steps=2", "checkpoint.every_steps=0",
                                          "eval.every_steps=0", "eval.max_batches=1"});
  const auto one_by_eight = train(tiny_config(
      fresh_dir("accum_1x8"), concat(common, {"train.micro_batch_size=8", "train.grad_accum_steps=1"})));
  const auto four_by_two = train(tiny_config(
      fresh_dir("accum_4x2"), concat(common, {"train.micro_batch_size=2", "train.grad_accum_steps=4"})));
  ASSERT_EQ(one_by_eight.steps.size(), 2u);
  ASSERT_EQ(four_by_two.steps.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(one_by_eight.steps[i].num_masked, four_by_two.steps[i].num_masked);
    EXPECT_NEAR(one_by_eight.steps[i].loss, four_by_two.steps[i].loss, 1e-6);
    EXPECT_NEAR(one_by_eight.steps[i].grad_norm, four_by_two.steps[i].grad_norm,
                1e-5 * one_by_eight.steps[i].grad_norm);
  }
  expect_params_near(one_by_eight.params, four_by_two.params, 1e-6);
  EXPECT_EQ(one_by_eight.position, four_by_two.position);
}

TEST(Trainer, ResumeContinuesExactly) {
  // Dropout on: the RNG state must come back too.
  const std::vector<std::string> sets = {"train.max_steps=8", "checkpoint.every_steps=0",
                                         "eval.every_steps=0", "eval.max_batches=1"};
  const auto straight_dir = fresh_dir("resume_straight");
  const auto straight = train(tiny_config(straight_dir, sets));
  ASSERT_EQ(straight.exit_code, 0);
  ASSERT_EQ(straight.steps.size(), 8u);

  const auto dir = fresh_dir("resume_split");
  const auto first = train(tiny_config(dir, sets), "", [](const StepStats& s) {
    if (s.step == 4) std::raise(SIGTERM);  // noticed at the step boundary
  });
  EXPECT_EQ(first.exit_code, kExitSigterm);
  ASSERT_EQ(first.steps.size(), 4u);
  EXPECT_TRUE(fs::exists(dir / "checkpoints" / "step_00000004" / "DONE"));

  const auto second = train(tiny_config(dir, sets), "latest");
  ASSERT_EQ(second.exit_code, 0);
  ASSERT_EQ(second.steps.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(first.steps[i].loss, straight.steps[i].loss) << "step " << i + 1;
    EXPECT_EQ(second.steps[i].step, straight.steps[i + 4].step);
    EXPECT_EQ(second.steps[i].loss, straight.steps[i + 4].loss) << "step " << i + 5;  // bit-equal
    EXPECT_EQ(second.steps[i].grad_norm, straight.steps[i + 4].grad_norm);
  }
  expect_params_near(straight.params, second.params, 0.0);
  EXPECT_EQ(straight.position, second.position);

  // metrics.jsonl reads as one run: the same train rows as the straight run's.
  std::vector<double> straight_losses, resumed_losses;
  for (const auto& row : read_metrics(straight_dir))
    if (row.contains("loss")) straight_losses.push_back(row["loss"].get<double>());
  for (const auto& row : read_metrics(dir))
    if (row.contains("loss")) resumed_losses.push_back(row["loss"].get<double>());
  EXPECT_EQ(resumed_losses.size(), 8u);
  EXPECT_EQ(resumed_losses, straight_losses);
}

TEST(Trainer, Bf16AutocastTrainsAndResumesWithinTolerance) {
  const std::vector<std::string> sets = {"train.precision=bf16", "train.max_steps=6",
                                         "checkpoint.every_steps=0", "eval.every_steps=0",
                                         "eval.max_batches=1"};
  const auto straight = train(tiny_config(fresh_dir("bf16_straight"), sets));
  ASSERT_EQ(straight.steps.size(), 6u);
  for (const auto& s : straight.steps) EXPECT_TRUE(std::isfinite(s.loss)) << "step " << s.step;
  // fp32 master weights: autocast must not leave bf16 parameters behind.
  for (const auto& p : straight.params) EXPECT_EQ(p.scalar_type(), torch::kFloat32);

  const auto dir = fresh_dir("bf16_split");
  train(tiny_config(dir, sets), "", [](const StepStats& s) {
    if (s.step == 3) std::raise(SIGTERM);
  });
  const auto resumed = train(tiny_config(dir, sets), "latest");
  ASSERT_EQ(resumed.steps.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_NEAR(resumed.steps[i].loss, straight.steps[i + 3].loss, 1e-4 * straight.steps[i + 3].loss);
  }
}

TEST(Trainer, NonFiniteStepIsSkippedAndRunContinues) {
  const auto config = tiny_config(fresh_dir("poison"), {"train.max_steps=6", "checkpoint.every_steps=0",
                                                        "eval.every_steps=0", "eval.max_batches=1"});
  Trainer trainer(config, {"", nullptr, poison_gradient_at(3)});
  std::vector<StepStats> steps;
  std::vector<torch::Tensor> after_step2;
  bool unchanged_by_step3 = false;
  trainer.on_step([&](const StepStats& s) {
    steps.push_back(s);
    const auto params = trainer.model()->parameters();
    if (s.step == 2) {
      for (const auto& p : params) after_step2.push_back(p.detach().clone());
    }
    if (s.step == 3) {
      unchanged_by_step3 = true;
      for (size_t i = 0; i < params.size(); ++i) {
        unchanged_by_step3 = unchanged_by_step3 && torch::equal(params[i], after_step2[i]);
      }
    }
  });
  EXPECT_EQ(trainer.run(), 0);
  ASSERT_EQ(steps.size(), 6u);
  for (const auto& s : steps) {
    EXPECT_EQ(s.skipped, s.step == 3) << "step " << s.step;
    if (s.step != 3) EXPECT_TRUE(std::isfinite(s.grad_norm) && std::isfinite(s.loss));
  }
  EXPECT_TRUE(unchanged_by_step3);
  EXPECT_EQ(trainer.state().skipped_steps, 1);
  EXPECT_LT(steps.back().loss, steps.front().loss);  // and it still learns
}

TEST(Trainer, TooManyNonFiniteStepsInARowStopTheRun) {
  const auto config = tiny_config(fresh_dir("poison_many"),
                                  {"train.max_steps=8", "train.max_skipped_steps=3",
                                   "checkpoint.every_steps=1", "eval.every_steps=0"});
  Trainer trainer(config, {"", nullptr, poison_gradient_at(3, 6)});
  try {
    trainer.run();
    FAIL() << "expected the run to stop";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("3 non-finite steps in a row"), std::string::npos) << e.what();
  }
  // The last good checkpoint is the one before the failing step.
  const auto latest = find_latest_checkpoint(trainer.output_dir() / "checkpoints",
                                             checkpoint_required_files());
  ASSERT_TRUE(latest);
  EXPECT_EQ(latest->filename(), "step_00000004");
}

class TrainerCheckpoints : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // ctest runs every test of the suite in a process of its own, two at a time: each trains
    // its own run (one shared directory was emptied by the other process mid-test).
    dir_ = fresh_dir("checkpoints-" + std::to_string(::getpid()));
    sets_ = {"train.max_steps=4", "checkpoint.every_steps=2", "checkpoint.keep_last=0",
             "eval.every_steps=0", "eval.max_batches=2"};
    Trainer trainer(tiny_config(dir_, sets_));
    ASSERT_EQ(trainer.run(), 0);
    ASSERT_TRUE(trainer.last_eval());
    final_eval_ = *trainer.last_eval();
  }
  /// A copy of the trained run to damage.
  static fs::path copy_run(const std::string& name) {
    const auto copy = fresh_dir(name);
    fs::copy(dir_, copy, fs::copy_options::recursive | fs::copy_options::overwrite_existing);
    return copy;
  }
  static std::string resume_error(const fs::path& run, const std::string& resume,
                                  std::vector<std::string> extra = {}) {
    try {
      Trainer trainer(tiny_config(run, concat(sets_, extra)), {resume, nullptr});
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  }
  static inline fs::path dir_;
  static inline std::vector<std::string> sets_;
  static inline EvalResult final_eval_;
};

TEST_F(TrainerCheckpoints, LayoutAndContents) {
  const auto ckpt = dir_ / "checkpoints" / "step_00000004";
  for (const char* name : {"model.pt", "optimizer.pt", "trainer_state.json", "config.yaml",
                           "tokenizer.model", "DONE"}) {
    EXPECT_TRUE(fs::exists(ckpt / name)) << name;
  }
  EXPECT_TRUE(fs::exists(dir_ / "checkpoints" / "step_00000002" / "DONE"));
  EXPECT_TRUE(fs::exists(dir_ / "config.yaml"));
  const auto state = TrainerState::load(ckpt / "trainer_state.json");
  EXPECT_EQ(state.step, 4);
  EXPECT_EQ(state.world_size, 1);
  ASSERT_EQ(state.ranks.size(), 1u);
  EXPECT_TRUE(state.ranks[0].rng.contains("torch_cpu"));
  EXPECT_GT(state.tokens_seen, 4 * 8 * 32);
  const auto rows = read_metrics(dir_);
  ASSERT_FALSE(rows.empty());
  EXPECT_TRUE(rows.back().contains("eval_loss"));
  for (const char* key : {"step", "tokens", "loss", "mlm_accuracy", "lr", "grad_norm", "tokens_per_s"}) {
    EXPECT_TRUE(rows.front().contains(key)) << key;
  }
}

TEST_F(TrainerCheckpoints, LatestSkipsACorruptCheckpointExplicitResumeNamesTheFile) {
  const auto run = copy_run("checkpoints_corrupt");
  const auto step4 = run / "checkpoints" / "step_00000004";
  {
    std::fstream f(step4 / "model.pt", std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(200);
    char c = 0;
    f.get(c);
    f.seekp(200);
    f.put(static_cast<char>(c ^ 0x5a));
  }
  {
    Trainer trainer(tiny_config(run, sets_), {"latest", nullptr});
    EXPECT_EQ(trainer.state().step, 2);
  }
  const auto error = resume_error(run, step4.string());
  EXPECT_NE(error.find((step4 / "model.pt").string()), std::string::npos) << error;

  fs::remove(step4 / "DONE");
  EXPECT_NE(resume_error(run, step4.string()).find("DONE is missing"), std::string::npos);

  const auto step2 = run / "checkpoints" / "step_00000002";
  fs::resize_file(step2 / "optimizer.pt", 100);
  EXPECT_NE(resume_error(run, step2.string()).find("optimizer.pt is truncated"), std::string::npos);
  // Nothing usable left: latest starts a new run.
  Trainer fresh(tiny_config(run, sets_), {"latest", nullptr});
  EXPECT_EQ(fresh.state().step, 0);
}

TEST_F(TrainerCheckpoints, ModelShapeChangeIsRefusedOtherChangesAllowed) {
  const auto run = copy_run("checkpoints_shape");
  const auto error = resume_error(run, "latest", {"model.intermediate_size=256", "model.num_hidden_layers=3"});
  EXPECT_NE(error.find("model.intermediate_size: 512 -> 256"), std::string::npos) << error;
  EXPECT_NE(error.find("model.num_hidden_layers: 2 -> 3"), std::string::npos) << error;
  Trainer longer(tiny_config(run, concat(sets_, {"train.max_steps=6", "logging.every_steps=2"})),
                 {"latest", nullptr});
  EXPECT_EQ(longer.state().step, 4);
  EXPECT_EQ(longer.run(), 0);
  EXPECT_EQ(longer.state().step, 6);
}

TEST_F(TrainerCheckpoints, FreshRunRefusesADirectoryWithCheckpoints) {
  EXPECT_THROW(Trainer(tiny_config(dir_, sets_)), UsageError);
  EXPECT_NE(resume_error(dir_, (dir_ / "nope").string()).find("no such checkpoint"), std::string::npos);
}

TEST_F(TrainerCheckpoints, MlmEvalMatchesTheInTrainingEvaluation) {
  const auto ckpt = dir_ / "checkpoints" / "step_00000004";
  auto argv = tiny_command("mlm-eval", tiny_overrides(dir_, sets_));
  argv.insert(argv.end(), {"--checkpoint", ckpt.string(), "--json"});
  const auto out = dir_.parent_path() / "mlm_eval.out";
  const auto err = dir_.parent_path() / "mlm_eval.err";
  ASSERT_EQ(wait_exit_code(spawn(argv, out, err)), 0) << read_text(err);
  const auto json = nlohmann::json::parse(read_text(out));
  EXPECT_EQ(json["num_masked"].get<int64_t>(), final_eval_.num_masked);
  EXPECT_EQ(json["step"].get<int64_t>(), 4);
  EXPECT_NEAR(json["masked_accuracy"].get<double>(), final_eval_.masked_accuracy(), 1e-12);
  EXPECT_NEAR(json["mlm_loss"].get<double>(), final_eval_.mlm_loss(), 1e-6);
  EXPECT_NEAR(json["perplexity"].get<double>(), final_eval_.perplexity(), 1e-4);
  EXPECT_NEAR(json["unigram_accuracy"].get<double>(), final_eval_.unigram_accuracy(), 1e-12);
}

// The unigram baseline counted independently: the labels of the batches evaluation scores,
// as mlm-data prints them (eval.max_batches = 2).
TEST_F(TrainerCheckpoints, UnigramBaselineIsTheShareOfTheMostFrequentScoredToken) {
  auto argv = tiny_command("mlm-data", tiny_overrides(dir_, sets_));
  argv.insert(argv.end(), {"--split", "valid", "--batches", "2", "--json"});
  const auto out = dir_.parent_path() / "mlm_data.out";
  const auto err = dir_.parent_path() / "mlm_data.err";
  ASSERT_EQ(wait_exit_code(spawn(argv, out, err)), 0) << read_text(err);
  std::map<int64_t, int64_t> counts;
  int64_t scored = 0;
  std::istringstream lines(read_text(out));
  for (std::string line; std::getline(lines, line);) {
    const auto batch = nlohmann::json::parse(line);
    for (const auto& row : batch.at("labels")) {
      for (const auto& label : row) {
        if (label.get<int64_t>() < 0) continue;
        ++counts[label.get<int64_t>()];
        ++scored;
      }
    }
  }
  ASSERT_EQ(scored, final_eval_.num_masked);
  int64_t most = 0;
  for (const auto& [label, count] : counts) most = std::max(most, count);
  EXPECT_EQ(final_eval_.unigram_correct, most);
  EXPECT_GT(final_eval_.unigram_accuracy(), 0.0);
  EXPECT_LT(final_eval_.unigram_accuracy(), 1.0);
}

}  // namespace
}  // namespace mlm::train
