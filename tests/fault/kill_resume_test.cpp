// A requeue loop: a job script's one command line (`--resume auto`), SIGKILLed at a random
// moment of a short run, half of the trials while a checkpoint is being written, then simply
// run again. The second start must find a complete checkpoint and log the same losses and end
// with the same weights, bit for bit, as a run that was never interrupted (fp32 on CPU, one
// thread: resume is exact).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <random>
#include <thread>

#include "fault_util.h"
#include "mlm/train/checkpoint/checkpoint_dir.h"
#include "tiny_run.h"

namespace mlm::fault {
namespace {

constexpr int64_t kKillRunSteps = 12;
constexpr int64_t kKillRunEvery = 2;

std::vector<std::string> kill_settings() {
  return {"train.max_steps=" + std::to_string(kKillRunSteps),
          "checkpoint.every_steps=" + std::to_string(kKillRunEvery), "checkpoint.keep_last=2"};
}

bool has_temporary_dir(const fs::path& checkpoints) {
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(checkpoints, error)) {
    if (entry.path().filename().string().rfind(".tmp-", 0) == 0) return true;
  }
  return false;
}

struct TrialCounts {
  int killed = 0;
  int killed_mid_checkpoint = 0;  // a temporary checkpoint directory existed after the kill
  int finished_first = 0;         // the run ended before the kill was sent
};

void run_kill_trials(int trials, uint32_t seed) {
  ScratchDir base("kill");
  // The uninterrupted reference, timed: when its first checkpoint appears and when it ends.
  const TinyRun reference(base / "reference", kill_settings());
  Child ref_child(reference.command());
  const auto ref_start = std::chrono::steady_clock::now();
  ASSERT_TRUE(ref_child.wait_until(
      [&] { return fs::exists(reference.checkpoint(kKillRunEvery)); }, 180));
  const double first_checkpoint_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - ref_start).count();
  const auto ref = ref_child.wait();
  ASSERT_EQ(ref.exit_code, 0) << ref.status() << "\n" << ref.err;
  const Metrics want = read_metrics(reference.run_dir());
  ASSERT_TRUE(want.bad_lines.empty());
  ASSERT_EQ(want.train.size(), static_cast<size_t>(kKillRunSteps));
  const fs::path want_model = reference.checkpoint(kKillRunSteps) / "model.pt";
  ASSERT_TRUE(fs::exists(want_model));
  const double rest_s = std::max(0.05, ref.wall_s - first_checkpoint_s);

  std::mt19937 rng(seed);
  TrialCounts counts;
  for (int trial = 0; trial < trials; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial) + " (seed " + std::to_string(seed) + ")");
    const TinyRun run(base / ("trial_" + std::to_string(trial)), kill_settings());
    Child child(run.command({"--resume", "auto"}));
    // Always after the first complete checkpoint, so that there is something to resume.
    ASSERT_TRUE(child.wait_until([&] { return fs::exists(run.checkpoint(kKillRunEvery)); }, 180));
    if (trial % 2 == 0) {
      // Anywhere in the rest of the run.
      std::uniform_real_distribution<double> at(0, rest_s);
      std::this_thread::sleep_for(std::chrono::duration<double>(at(rng)));
    } else {
      // While checkpoint `target` is being written: as soon as its temporary directory
      // appears, plus up to 3 ms.
      std::uniform_int_distribution<int64_t> pick(2, kKillRunSteps / kKillRunEvery);
      const int64_t target = pick(rng) * kKillRunEvery;
      const fs::path tmp = run.checkpoints() / (".tmp-" + train::checkpoint_dir_name(target));
      child.wait_until([&] { return fs::exists(tmp) || fs::exists(run.checkpoint(target)); },
                       180);
      std::uniform_int_distribution<int> micros(0, 3000);
      std::this_thread::sleep_for(std::chrono::microseconds(micros(rng)));
    }
    child.kill(SIGKILL);
    const auto killed = child.wait();
    if (killed.term_signal == SIGKILL) {
      ++counts.killed;
      counts.killed_mid_checkpoint += has_temporary_dir(run.checkpoints());
    } else {
      ASSERT_EQ(killed.exit_code, 0) << killed.status() << "\n" << killed.err;
      ++counts.finished_first;
    }
    ASSERT_FALSE(complete_checkpoints(run.checkpoints()).empty())
        << "no complete checkpoint after the kill";

    const auto resumed = run.run({"--resume", "auto"});
    ASSERT_EQ(resumed.exit_code, 0) << resumed.status() << "\n" << resumed.err;
    const Metrics got = read_metrics(run.run_dir());
    EXPECT_TRUE(got.bad_lines.empty()) << "metrics.jsonl has a broken line: " << got.bad_lines[0];
    EXPECT_EQ(compare_train_rows(want, got), "");
    const fs::path got_model = run.checkpoint(kKillRunSteps) / "model.pt";
    ASSERT_TRUE(fs::exists(got_model));
    EXPECT_EQ(compare_weights(want_model, got_model), "");
    EXPECT_FALSE(has_temporary_dir(run.checkpoints())) << "a stale temporary directory remains";
  }
  std::printf("kill trials: %d, killed %d (%d with a checkpoint half written), finished before "
              "the kill %d\n",
              trials, counts.killed, counts.killed_mid_checkpoint, counts.finished_first);
  ::testing::Test::RecordProperty("killed", counts.killed);
  ::testing::Test::RecordProperty("killed_mid_checkpoint", counts.killed_mid_checkpoint);
  EXPECT_GE(counts.killed, trials / 2) << "most kills should land during the run";
}

TEST(KillResume, ThreeRandomKillsResumeExactly) { run_kill_trials(3, 20260101); }

TEST(KillResumeSlow, TwentyRandomKillsResumeExactly) { run_kill_trials(20, 424242); }

}  // namespace
}  // namespace mlm::fault
