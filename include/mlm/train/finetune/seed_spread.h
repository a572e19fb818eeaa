#pragma once
// One task fine-tuned over several seeds (a probe suite's): the scores of each seed, and their
// mean and sample standard deviation, as GLUE-style reports give them.
#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "mlm/config/task_config.h"
#include "mlm/model/masked_lm.h"
#include "mlm/train/finetune/finetune.h"

namespace mlm::train::finetune {

struct Spread {
  double mean = 0;
  double std = 0;  // sample standard deviation (n - 1 in the denominator); 0 for one value
};
Spread spread_of(const std::vector<double>& values);

/// A suite's average per seed: each seed's mean over the tasks' scores (`per_task[t][s]`, every
/// task run over the same seeds). Its spread_of is the average as GLUE-style reports give it: the
/// mean of the tasks' means, ± the standard deviation over the seeds.
std::vector<double> mean_over_tasks(const std::vector<std::vector<double>>& per_task);

/// A suite's average over the tasks it averages (those whose higher score is better), per split.
struct SuiteAverage {
  int64_t tasks = 0;
  std::vector<double> validation_per_seed, test_per_seed;  // each seed's mean over the tasks
  Spread validation;
  std::optional<Spread> test;  // when every averaged task has a test split
};
/// `validations[t]`, `tests[t]`: task t's scores per seed (tests: of the tasks that have a split).
SuiteAverage suite_average(const std::vector<std::vector<double>>& validations,
                           const std::vector<std::vector<double>>& tests);

struct SeededScores {
  std::vector<int64_t> seeds;
  std::vector<double> validation, test;  // the task's metric per seed (test: when it has one)
  int64_t steps = 0;                     // of each seed's fine-tuning
  double best_epoch = 0;                 // the first seed's
  double seconds = 0, eval_seconds = 0;  // over all seeds
};

/// Fine-tunes a copy of `model` on `task` once per seed (each replacing finetune.seed: the head,
/// dropout and order), on `device`, autocast to `compute_dtype`. `model` and the default
/// generators are left as they were.
SeededScores finetune_over_seeds(model::MaskedLm model, const config::TaskConfig& task, const TaskSplits& splits,
                                 const std::vector<int64_t>& seeds, int64_t pad_id, const torch::Device& device,
                                 torch::Dtype compute_dtype);

}  // namespace mlm::train::finetune
