// A phased run (phases:) end to end on the tiny config: each phase trains with its own
// sequence length and batch, metrics.jsonl names the phase of every row, a checkpoint is
// written at each phase's end and knows its phase, the learning rate continues or restarts
// as configured, and a run stopped inside a phase or at a phase boundary resumes bit for bit.
#include <gtest/gtest.h>

#include "mlm/config/config_loader.h"
#include "mlm/train/checkpoint/checkpoint_dir.h"
#include "mlm/train/optim/lr_schedule.h"
#include "recorded_run.h"

namespace mlm::train {
namespace {

using namespace mlm::train::testing;

// Short sequences in big batches, then long ones in small batches (BERT's 128 -> 512 recipe,
// scaled down), each 4 steps; `second_phase` replaces the second phase's keys after its steps.
config::RunConfig phased_config(
    const fs::path& dir,
    const std::string& second_phase = "    set: {data.seq_len: 64, train.micro_batch_size: 4}\n",
    std::vector<std::string> extra = {}) {
  std::string yaml = read_text(fs::path(MLM_SOURCE_DIR) / "configs" / "tiny.yaml");
  yaml += "\nphases:\n"
          "  - name: short\n"
          "    steps: 4\n"
          "    set: {data.seq_len: 32, train.micro_batch_size: 8}\n"
          "  - name: long\n"
          "    steps: 4\n" +
          second_phase;
  std::vector<std::string> sets = {"train.max_steps=0", "checkpoint.every_steps=0",
                                   "eval.every_steps=0", "eval.max_batches=1"};
  sets.insert(sets.end(), extra.begin(), extra.end());
  return config::load_config_from_string(yaml, "phased.yaml", tiny_overrides(dir, sets));
}

TEST(TrainerPhases, EachPhaseTrainsWithItsSettingsAndEndsWithACheckpointOfItsPhase) {
  const auto dir = fresh_dir("phases_straight");
  const auto run = run_trainer(phased_config(dir));
  ASSERT_EQ(run.exit_code, 0);
  ASSERT_EQ(run.steps.size(), 8u);

  // Rows name their phase; a step of the second phase holds half the sequences, each twice
  // as long (tokens per step within the packing's slack of the first phase's).
  std::map<int64_t, std::string> phase_of_step;
  for (const auto& row : read_metrics(dir)) {
    ASSERT_TRUE(row.contains("phase")) << row.dump();
    if (row.contains("loss")) phase_of_step[row["step"].get<int64_t>()] = row["phase"].get<std::string>();
  }
  for (int64_t step = 1; step <= 8; ++step) {
    EXPECT_EQ(phase_of_step[step], step <= 4 ? "short" : "long") << "step " << step;
  }
  for (size_t i = 0; i < 8; ++i) {
    const double per_sequence = run.steps[i].tokens / (i < 4 ? 8.0 : 4.0);
    EXPECT_LE(per_sequence, i < 4 ? 32 : 64) << "step " << i + 1;
    EXPECT_GT(per_sequence, i < 4 ? 16 : 32) << "step " << i + 1;
  }

  // One checkpoint per phase end, each knowing its phase.
  const auto short_end = TrainerState::load(dir / "checkpoints" / "step_00000004" / "trainer_state.json");
  EXPECT_EQ(short_end.phase, 0);
  EXPECT_EQ(short_end.phase_name, "short");
  const auto long_end = TrainerState::load(dir / "checkpoints" / "step_00000008" / "trainer_state.json");
  EXPECT_EQ(long_end.phase, 1);
  EXPECT_EQ(long_end.phase_name, "long");
  EXPECT_EQ(long_end.phase_start_step, 4);
  EXPECT_EQ(long_end.phase_start_tokens, short_end.tokens_seen);

  // lr_schedule: continue (the default): the run's schedule over both phases' 8 steps.
  const auto config = phased_config(dir);
  const LrSchedule schedule(config.schedule, config.optim.learning_rate, 8);
  for (const auto& s : run.steps) EXPECT_DOUBLE_EQ(s.lr, schedule.at(s.step)) << "step " << s.step;
}

TEST(TrainerPhases, ARestartedScheduleStartsOverAtThePhase) {
  const auto dir = fresh_dir("phases_restart");
  const auto run = run_trainer(phased_config(
      dir, "    lr_schedule: restart\n    optimizer: reset\n"
           "    set: {data.seq_len: 64, train.micro_batch_size: 4, optim.learning_rate: 5.0e-4, "
           "schedule.warmup_steps: 2, schedule.decay: constant}\n"));
  ASSERT_EQ(run.exit_code, 0);
  ASSERT_EQ(run.steps.size(), 8u);
  const auto config = phased_config(dir);
  const LrSchedule first(config.schedule, config.optim.learning_rate, 8);
  for (size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(run.steps[i].lr, first.at(i + 1));
  // Warmup over the phase's own steps 5 and 6, then held at the phase's rate.
  EXPECT_DOUBLE_EQ(run.steps[4].lr, 2.5e-4);
  EXPECT_DOUBLE_EQ(run.steps[5].lr, 5e-4);
  EXPECT_DOUBLE_EQ(run.steps[7].lr, 5e-4);
}

TEST(TrainerPhases, ResumeInsideAPhaseIsExact) {
  const auto straight = run_trainer(phased_config(fresh_dir("phases_inside_straight")));
  expect_stop_and_resume_equal(phased_config(fresh_dir("phases_inside_split")), 6, straight);
}

TEST(TrainerPhases, ResumeAtAPhaseBoundaryIsExact) {
  const auto straight = run_trainer(phased_config(fresh_dir("phases_boundary_straight")));
  const auto dir = fresh_dir("phases_boundary_split");
  expect_stop_and_resume_equal(phased_config(dir), 4, straight);
  // metrics.jsonl reads as one run: each train step once, in order.
  std::vector<int64_t> steps;
  for (const auto& row : read_metrics(dir))
    if (row.contains("loss")) steps.push_back(row["step"].get<int64_t>());
  EXPECT_EQ(steps, (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(TrainerPhases, ResumeWithOtherPhasesIsRefusedUnderAuto) {
  const auto dir = fresh_dir("phases_changed");
  ASSERT_EQ(run_trainer(phased_config(dir), "", 2).exit_code, kExitSigterm);
  try {
    Trainer trainer(phased_config(dir, "    optimizer: reset\n    set: {data.seq_len: 64, train.micro_batch_size: 4}\n"),
                    {"auto", nullptr});
    FAIL() << "expected the changed phases to be refused";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("phases"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mlm::train
