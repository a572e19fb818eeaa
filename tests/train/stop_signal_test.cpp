// SIGTERM/SIGINT against the real mlm-train binary: a checkpoint at the next step boundary,
// exit 143/130, and `--resume latest` finishing the run exactly as an uninterrupted one.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <thread>

#include "mlm/train/checkpoint/checkpoint_dir.h"
#include "mlm/train/run/trainer.h"
#include "train_test_util.h"

namespace mlm::train {
namespace {

using namespace mlm::train::testing;

int64_t last_logged_step(const fs::path& run) {
  int64_t step = 0;
  for (const auto& row : read_metrics(run)) {
    if (row.contains("loss")) step = row["step"].get<int64_t>();
  }
  return step;
}

std::vector<double> train_losses(const fs::path& run) {
  std::vector<double> losses;
  for (const auto& row : read_metrics(run)) {
    if (row.contains("loss")) losses.push_back(row["loss"].get<double>());
  }
  return losses;
}

void stop_and_resume(int signal, int expected_exit, const std::string& name, bool compare) {
  const std::vector<std::string> sets = {"train.max_steps=30", "checkpoint.every_steps=0",
                                         "eval.every_steps=0", "eval.max_batches=1"};
  const auto straight_dir = fresh_dir(name + "_straight");
  const auto logs = straight_dir.parent_path();
  if (compare) {
    ASSERT_EQ(wait_exit_code(spawn(tiny_command("mlm-train", tiny_overrides(straight_dir, sets)),
                                   logs / (name + "_straight.out"), logs / (name + "_straight.err"))),
              0)
        << read_text(logs / (name + "_straight.err"));
  }

  const auto dir = fresh_dir(name);
  const auto argv = tiny_command("mlm-train", tiny_overrides(dir, sets));
  const pid_t pid = spawn(argv, logs / (name + ".out"), logs / (name + ".err"));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (last_logged_step(dir) < 3 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_GE(last_logged_step(dir), 3) << read_text(logs / (name + ".err"));
  kill(pid, signal);
  ASSERT_EQ(wait_exit_code(pid), expected_exit) << read_text(logs / (name + ".err"));

  const auto latest = find_latest_checkpoint(dir / "checkpoints", checkpoint_required_files());
  ASSERT_TRUE(latest) << read_text(logs / (name + ".err"));
  const int64_t stopped_at = *parse_checkpoint_step(latest->filename().string());
  EXPECT_GE(stopped_at, 3);
  ASSERT_LT(stopped_at, 30) << "the run finished before the signal; make it longer";

  auto resume = argv;
  resume.insert(resume.end(), {"--resume", "latest"});
  ASSERT_EQ(wait_exit_code(spawn(resume, logs / (name + "_resume.out"), logs / (name + "_resume.err"))), 0)
      << read_text(logs / (name + "_resume.err"));
  EXPECT_EQ(last_logged_step(dir), 30);
  if (compare) EXPECT_EQ(train_losses(dir), train_losses(straight_dir));  // bit-equal, per step
}

TEST(StopSignal, SigtermCheckpointsExits143AndResumeContinuesExactly) {
  stop_and_resume(SIGTERM, 143, "sigterm", /*compare=*/true);
}

TEST(StopSignal, SigintCheckpointsAndExits130) {
  stop_and_resume(SIGINT, 130, "sigint", /*compare=*/false);
}

}  // namespace
}  // namespace mlm::train
