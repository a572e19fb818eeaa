// Non-finite gradients (mlm-train-poisoned, mlm-train with a gradient hook that fills one
// gradient with NaN at the given steps) and resource use over a long run (RSS, open file descriptors).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <thread>

#include "fault_util.h"
#include "mlm/model/hf/tensor_file.h"
#include "mlm/util/errors.h"
#include "tiny_run.h"

namespace mlm::fault {
namespace {

double mean_loss(const Metrics& metrics, int64_t first, int64_t last) {
  double sum = 0;
  int n = 0;
  for (const auto& [step, row] : metrics.train) {
    if (step >= first && step <= last && row["loss"].is_number()) {
      sum += row["loss"].get<double>();
      ++n;
    }
  }
  return n ? sum / n : std::nan("");
}

bool all_finite(const fs::path& model_pt) {
  for (const auto& [name, tensor] : model::read_tensor_file(model_pt.string())) {
    if (!torch::isfinite(tensor).all().item<bool>()) return false;
  }
  return true;
}

// One poisoned step: skipped (a warning, counted in metrics), no NaN reaches the weights,
// and the run learns as well as a clean one.
TEST(NonFinite, PoisonedStepIsSkippedAndTheRunConverges) {
  ScratchDir dir("nonfinite");
  const std::vector<std::string> settings = {"train.max_steps=30", "checkpoint.every_steps=0"};
  const TinyRun clean(dir / "clean", settings);
  TinyRun poisoned(dir / "poisoned", settings);
  poisoned.tool = "train-poisoned";
  const auto clean_result = clean.run();
  ASSERT_EQ(clean_result.exit_code, 0) << clean_result.err;
  const auto result = poisoned.run({"--poison-steps", "5"});
  ASSERT_EQ(result.exit_code, 0) << result.status() << "\n" << result.err;

  int warnings = 0;
  for (const auto& line : result.err_lines()) {
    warnings += line.find("warn") != std::string::npos && line.find("step 5") != std::string::npos;
  }
  EXPECT_EQ(warnings, 1) << result.err;
  const Metrics got = read_metrics(poisoned.run_dir());
  const Metrics want = read_metrics(clean.run_dir());
  ASSERT_EQ(got.train.size(), 30u);
  EXPECT_EQ(got.train.at(30).value("skipped_steps", 0), 1);
  // The skipped step has no loss to report (null, not a made-up number).
  EXPECT_TRUE(got.train.at(5)["loss"].is_null()) << got.train.at(5).dump();
  // Steps before the poisoned one are unaffected.
  for (int64_t step = 1; step < 5; ++step) {
    EXPECT_EQ(got.train.at(step)["loss"], want.train.at(step)["loss"]) << "step " << step;
  }
  EXPECT_TRUE(all_finite(poisoned.checkpoint(30) / "model.pt"));
  // Converges: the mean loss of the last 5 steps is well below the first 5 (the clean run
  // falls by ~0.5 nats; a 5-step mean varies by ~0.05) and within 3% of the clean run's.
  const double first = mean_loss(got, 1, 5), last = mean_loss(got, 26, 30);
  const double clean_first = mean_loss(want, 1, 5), clean_last = mean_loss(want, 26, 30);
  std::printf("loss: first 5 steps %.4f, last 5 %.4f (clean run %.4f, %.4f)\n", first, last,
              clean_first, clean_last);
  EXPECT_LT(last, first - 0.25);
  EXPECT_LT(std::abs(last - clean_last), 0.03 * clean_last);
}

// Non-finite steps in a row beyond train.max_skipped_steps: exit 1 with one clear error, and
// the checkpoints on disk hold finite weights.
TEST(NonFinite, TooManySkippedStepsInARowStopsWithOneClearError) {
  ScratchDir dir("nonfinite");
  TinyRun run(dir.path(), {"train.max_steps=20", "checkpoint.every_steps=2",
                           "train.max_skipped_steps=3"});
  run.tool = "train-poisoned";
  const auto result = run.run({"--poison-steps", "5-20"});
  EXPECT_TRUE(clean_failure(result, kExitRuntimeFailure, {"train.max_skipped_steps"},
                            Preceding::any_logs))
      << "expected the error to name the limit that was reached";
  const auto complete = complete_checkpoints(run.checkpoints());
  ASSERT_FALSE(complete.empty());
  for (const auto& name : complete) {
    EXPECT_TRUE(all_finite(run.checkpoints() / name / "model.pt")) << name;
  }
}

struct Sample {
  int64_t rss_kb = 0;
  int fds = 0;
};

// Median of a few samples taken over the next steps (smooths a checkpoint or an allocation
// that happens to be in flight).
Sample sample_around(Child& child, const fs::path& run_dir, int64_t step) {
  std::vector<int64_t> rss;
  std::vector<int> fds;
  child.wait_until([&] { return last_logged_step(run_dir) >= step; }, 600);
  for (int i = 0; i < 7 && child.running(); ++i) {
    rss.push_back(current_rss_kb(child.pid()));
    fds.push_back(open_fd_count(child.pid()));
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  if (rss.empty()) return {};
  std::sort(rss.begin(), rss.end());
  std::sort(fds.begin(), fds.end());
  return {rss[rss.size() / 2], fds[fds.size() / 2]};
}

// 520 steps of the tiny config with evaluation and checkpoints every 100: RSS after 500 steps
// within 10% of RSS after 50, and no more open file descriptors.
TEST(ResourcesSlow, RssAndOpenFilesDoNotGrowOver500Steps) {
  ScratchDir dir("resources");
  const TinyRun run(dir.path(), {"train.max_steps=520", "checkpoint.every_steps=100",
                                 "eval.every_steps=100", "logging.every_steps=5"});
  Child child(run.command({}, 900));
  const Sample at50 = sample_around(child, run.run_dir(), 50);
  const Sample at500 = sample_around(child, run.run_dir(), 500);
  const auto result = child.wait();
  ASSERT_EQ(result.exit_code, 0) << result.status() << "\n" << result.err;
  ASSERT_GT(at50.rss_kb, 0);
  ASSERT_GT(at500.rss_kb, 0);
  std::printf("after 50 steps: RSS %lld KiB, %d fds; after 500: RSS %lld KiB, %d fds\n",
              static_cast<long long>(at50.rss_kb), at50.fds,
              static_cast<long long>(at500.rss_kb), at500.fds);
  RecordProperty("rss_kb_step50", std::to_string(at50.rss_kb));
  RecordProperty("rss_kb_step500", std::to_string(at500.rss_kb));
  EXPECT_LE(at500.rss_kb, at50.rss_kb * 11 / 10);
  EXPECT_LE(at500.fds, at50.fds);
}

}  // namespace
}  // namespace mlm::fault
