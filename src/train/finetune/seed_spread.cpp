#include "mlm/train/finetune/seed_spread.h"

#include <cmath>
#include <stdexcept>

#include "mlm/train/finetune/probes.h"

namespace mlm::train::finetune {

Spread spread_of(const std::vector<double>& values) {
  Spread s;
  if (values.empty()) return s;
  const auto n = static_cast<double>(values.size());
  for (const auto v : values) s.mean += v / n;
  if (values.size() < 2) return s;
  double squares = 0;
  for (const auto v : values) squares += (v - s.mean) * (v - s.mean);
  s.std = std::sqrt(squares / (n - 1));
  return s;
}

std::vector<double> mean_over_tasks(const std::vector<std::vector<double>>& per_task) {
  if (per_task.empty()) return {};
  std::vector<double> per_seed(per_task.front().size(), 0.0);
  for (const auto& scores : per_task) {
    if (scores.size() != per_seed.size()) throw std::logic_error("mean_over_tasks: tasks scored over different seeds");
    for (size_t s = 0; s < scores.size(); ++s) per_seed[s] += scores[s] / static_cast<double>(per_task.size());
  }
  return per_seed;
}

SuiteAverage suite_average(const std::vector<std::vector<double>>& validations,
                           const std::vector<std::vector<double>>& tests) {
  SuiteAverage average;
  average.tasks = static_cast<int64_t>(validations.size());
  average.validation_per_seed = mean_over_tasks(validations);
  average.validation = spread_of(average.validation_per_seed);
  if (!tests.empty() && tests.size() == validations.size()) {
    average.test_per_seed = mean_over_tasks(tests);
    average.test = spread_of(average.test_per_seed);
  }
  return average;
}

SeededScores finetune_over_seeds(model::MaskedLm model, const config::TaskConfig& task, const TaskSplits& splits,
                                 const std::vector<int64_t>& seeds, int64_t pad_id, const torch::Device& device,
                                 torch::Dtype compute_dtype) {
  // The copies' initialisation and the fine-tuning draw from the default generator.
  const GeneratorStateGuard keep_the_generator;
  SeededScores out;
  out.seeds = seeds;
  for (const auto seed : seeds) {
    auto seeded = task;
    seeded.finetune.seed = seed;
    auto classifier = make_classifier(copy_model(model, device), seeded);
    classifier->to(device);
    const auto result = run_finetune(classifier, seeded, splits, pad_id, device, compute_dtype);
    out.validation.push_back(result.best_validation);
    if (result.test) out.test.push_back(result.test->value);
    if (out.validation.size() == 1) out.best_epoch = result.best_epoch;
    out.steps = result.steps;
    out.seconds += result.seconds;
    out.eval_seconds += result.eval_seconds;
  }
  return out;
}

}  // namespace mlm::train::finetune
