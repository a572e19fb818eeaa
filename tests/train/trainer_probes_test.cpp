// Probes during pretraining (eval.probes): at evaluation steps a task fine-tunes a copy of the
// run's weights and its scores land in metrics.jsonl, while the run itself trains exactly as it
// would without them (same losses, same weights, bit for bit: dropout on, so the random
// generator must come back as it was).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "mlm/train/finetune/split_cache.h"
#include "mlm/train/run/trainer.h"
#include "mlm/util/errors.h"
#include "train_test_util.h"

// Named, not anonymous: the unity build compiles the train tests together.
namespace mlm::train::probes_test {
using namespace mlm::train::testing;

// A two-label task on the fixture corpus's lines (the labels alternate: the machinery, not
// the learning, is under test here).
fs::path write_probe_task(const fs::path& dir) {
  std::ifstream corpus(std::string(MLM_FIXTURES_DIR) + "/corpus/train.txt");
  std::ofstream train(dir / "train.jsonl"), valid(dir / "validation.jsonl");
  std::string line;
  for (int i = 0; std::getline(corpus, line) && i < 96;) {
    if (line.empty()) continue;
    (i < 64 ? train : valid) << nlohmann::json{{"text", line}, {"label", i % 2 ? "odd" : "even"}}.dump() << "\n";
    ++i;
  }
  const auto task = dir / "probe.yaml";
  std::ofstream(task) << "task:\n  name: parity\n  train: " << (dir / "train.jsonl").string()
                      << "\n  validation: " << (dir / "validation.jsonl").string()
                      << "\n  labels: [even, odd]\n  max_seq_len: 32\nfinetune:\n  epochs: 1\n  batch_size: 16\n"
                         "  learning_rate: 1.0e-3\n  max_train_examples: 48\n";
  return task;
}

struct ProbedRun {
  std::vector<StepStats> steps;
  std::vector<torch::Tensor> params;
};

ProbedRun train_recorded(const config::RunConfig& config) {
  Trainer trainer(config, {"", nullptr});
  ProbedRun run;
  trainer.on_step([&](const StepStats& s) { run.steps.push_back(s); });
  EXPECT_EQ(trainer.run(), 0);
  for (const auto& p : trainer.model()->parameters()) run.params.push_back(p.detach().clone());
  return run;
}

TEST(TrainerProbes, ScoresLandInTheMetricsAndTheRunTrainsAsWithout) {
  const std::vector<std::string> sets = {"train.max_steps=6", "checkpoint.every_steps=0", "eval.every_steps=3",
                                         "eval.max_batches=1"};
  const auto plain_dir = fresh_dir("probes_without");
  const auto plain = train_recorded(tiny_config(plain_dir, sets));

  const auto dir = fresh_dir("probes_with");
  auto with_sets = sets;
  // The task on its own, and a suite running it over two seeds (mean and spread rows).
  const auto task = write_probe_task(dir);
  std::ofstream(dir / "suite.yaml") << "suite:\n  name: mini\n  seeds: [1, 2]\n  tasks: [probe.yaml]\n";
  with_sets.push_back("eval.probes=[" + task.string() + "," + (dir / "suite.yaml").string() + "]");
  with_sets.push_back("eval.on_start=true");  // the step-0 baseline leaves the run alone too
  const auto probed = train_recorded(tiny_config(dir, with_sets));

  ASSERT_EQ(probed.steps.size(), plain.steps.size());
  for (size_t i = 0; i < plain.steps.size(); ++i) EXPECT_EQ(probed.steps[i].loss, plain.steps[i].loss) << "step " << i;
  ASSERT_EQ(probed.params.size(), plain.params.size());
  for (size_t i = 0; i < plain.params.size(); ++i) EXPECT_TRUE(torch::equal(probed.params[i], plain.params[i])) << i;

  std::vector<int64_t> probe_steps, suite_steps, average_steps;
  std::vector<nlohmann::json> suite_rows;
  for (const auto& row : read_metrics(dir)) {
    if (!row.contains("probe")) continue;
    if (row["probe_metric"] == "average") {  // the suite's average over its tasks: here the one task's scores
      EXPECT_EQ(row["probe"], "mini");
      EXPECT_EQ(row["probe_tasks"], 1);
      ASSERT_FALSE(suite_rows.empty());
      const auto& task = suite_rows.back();  // its task's row, just before it
      EXPECT_EQ(row["probe_validation_per_seed"], task["probe_validation_per_seed"]);
      EXPECT_NEAR(row["probe_validation"].get<double>(), task["probe_validation"].get<double>(), 1e-12);
      EXPECT_NEAR(row["probe_validation_std"].get<double>(), task["probe_validation_std"].get<double>(), 1e-12)
          << "the spread over the seeds of their means over the tasks";
      average_steps.push_back(row["step"]);
      continue;
    }
    EXPECT_EQ(row["probe"], "parity");
    EXPECT_EQ(row["probe_metric"], "accuracy");
    EXPECT_GE(row["probe_validation"].get<double>(), 0.0);
    EXPECT_EQ(row["probe_steps"], 3);  // 48 examples in batches of 16, one epoch
    EXPECT_GE(row["probe_eval_time_s"].get<double>(), 0.0);
    if (!row.contains("probe_suite")) {
      EXPECT_FALSE(row.contains("probe_seeds"));
      probe_steps.push_back(row["step"]);
      continue;
    }
    EXPECT_EQ(row["probe_suite"], "mini");
    EXPECT_EQ(row["probe_seeds"], 2);
    const auto per_seed = row["probe_validation_per_seed"].get<std::vector<double>>();
    ASSERT_EQ(per_seed.size(), 2u);
    EXPECT_NEAR(row["probe_validation"].get<double>(), (per_seed[0] + per_seed[1]) / 2, 1e-12) << "the mean";
    EXPECT_NEAR(row["probe_validation_std"].get<double>(), std::abs(per_seed[0] - per_seed[1]) / std::sqrt(2.0),
                1e-12)
        << "the sample standard deviation of two values";
    suite_steps.push_back(row["step"]);
    suite_rows.push_back(row);
  }
  EXPECT_EQ(probe_steps, (std::vector<int64_t>{0, 3, 6}));
  EXPECT_EQ(suite_steps, (std::vector<int64_t>{0, 3, 6}));
  EXPECT_EQ(average_steps, (std::vector<int64_t>{0, 3, 6}));
  std::vector<int64_t> eval_steps;
  for (const auto& row : read_metrics(dir)) {
    if (row.contains("eval_mlm_accuracy")) eval_steps.push_back(row["step"]);
  }
  EXPECT_EQ(eval_steps, (std::vector<int64_t>{0, 3, 6}));
  for (const auto& row : read_metrics(plain_dir)) EXPECT_FALSE(row.contains("probe"));

  // The probes' splits are tokenized once for the process: the same files and tokenizer get the
  // same encoded splits; a file changed since is read again.
  const auto tokenizer = text::Tokenizer::load(tiny_config(dir, with_sets).tokenizer.model);
  const auto task_config = config::load_task_config(task.string());
  const auto first = finetune::cached_task_splits(task_config, tokenizer);
  EXPECT_EQ(finetune::cached_task_splits(task_config, tokenizer), first);
  std::ofstream(dir / "train.jsonl", std::ios::app) << R"({"text": "one more line", "label": "odd"})" << "\n";
  const auto changed = finetune::cached_task_splits(task_config, tokenizer);
  EXPECT_NE(changed, first);
  EXPECT_EQ(changed->train.examples.size(), 48u) << "max_train_examples still applies";
}

TEST(TrainerProbes, ABadTaskFileStopsTheRunBeforeItTrains) {
  const auto dir = fresh_dir("probes_bad");
  std::ofstream(dir / "bad.yaml") << "task:\n  name: x\n  labels: [a]\n";
  const auto config = tiny_config(dir, {"eval.probes=[" + (dir / "bad.yaml").string() + "]"});
  try {
    Trainer trainer(config, {"", nullptr});
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("eval.probes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bad.yaml"), std::string::npos) << e.what();
  }
  // A task longer than the model's positions is refused before training, not mid-run.
  std::ofstream(dir / "long.yaml") << "task:\n  name: x\n  train: a.jsonl\n  validation: b.jsonl\n"
                                      "  labels: [a, b]\n  max_seq_len: 100000\n";
  try {
    Trainer trainer(tiny_config(dir, {"eval.probes=[" + (dir / "long.yaml").string() + "]"}), {"", nullptr});
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("eval.probes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("task.max_seq_len 100000 exceeds the model's"), std::string::npos)
        << e.what();
  }
}

}  // namespace mlm::train::probes_test
