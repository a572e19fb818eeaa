#pragma once
// What one probe reports (a task fine-tuned on a copy of the run's weights, its scores), or a
// suite's average over its tasks, as the loop hands them to its reporter (run_reporter.h); the
// probes themselves live in finetune/.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlm::train {

struct ProbeScore {
  std::string task;    // the task's name
  std::string metric;  // the task's metric ("accuracy", "span_f1", ...)
  bool higher_is_better = true;  // false for mse: such a task stays out of a suite's average
  std::string suite;   // the suite it was run for ("" for a task file named on its own)
  double validation = 0;         // the best epoch's validation score (a suite's: mean over seeds)
  std::optional<double> test;    // with the best epoch's weights, when the task has a test split
  double validation_std = 0;     // over a suite's seeds: sample standard deviation (n - 1)
  std::optional<double> test_std;
  std::vector<double> validation_per_seed, test_per_seed;  // one per seed (one seed: the values)
  double best_epoch = 0;         // (the first seed's)
  int64_t steps = 0;             // of one fine-tuning
  double seconds = 0;            // over every seed
  double eval_seconds = 0;       // of which scoring the validation and test splits
  int64_t tasks = 0;             // a suite's average (metric "average"): over how many tasks; else 0
};

}  // namespace mlm::train
