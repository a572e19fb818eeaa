#pragma once
// What one probe reports (a task fine-tuned on a copy of the run's weights, its scores), as the
// loop hands it to its reporter (run_reporter.h); the probes themselves live in finetune/.
#include <cstdint>
#include <optional>
#include <string>

namespace mlm::train {

struct ProbeScore {
  std::string task;    // the task's name
  std::string metric;  // the task's metric ("accuracy", "span_f1", ...)
  double validation = 0;         // the best epoch's validation score
  std::optional<double> test;    // with the best epoch's weights, when the task has a test split
  double best_epoch = 0;
  int64_t steps = 0;
  double seconds = 0;
};

}  // namespace mlm::train
