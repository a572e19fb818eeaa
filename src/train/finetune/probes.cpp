#include "mlm/train/finetune/probes.h"

#include <algorithm>

#include "mlm/config/suite_config.h"
#include "mlm/model/make_masked_lm.h"
#include "mlm/train/finetune/seed_spread.h"
#include "mlm/train/finetune/split_cache.h"
#include "mlm/util/errors.h"

namespace mlm::train::finetune {

Probes::Probes(const std::vector<std::string>& files, int64_t positions) {
  for (const auto& file : files) {
    try {
      const auto first_new = tasks_.size();
      if (config::is_suite_file(file)) {
        const auto suite = config::load_suite_config(file);
        for (auto& task : config::load_suite_tasks(suite))
          tasks_.push_back({std::move(task), suite.name, suite.seeds, nullptr});
      } else {
        auto task = config::load_task_config(file);
        const auto seed = task.finetune.seed;
        tasks_.push_back({std::move(task), "", {seed}, nullptr});
      }
      for (auto i = first_new; i < tasks_.size(); ++i) require_fits(tasks_[i].config, positions);
    } catch (const ConfigError& e) {
      throw ConfigError(std::string("eval.probes: ") + e.what(), "eval.probes");
    }
  }
}

model::MaskedLm copy_model(model::MaskedLm model, const torch::Device& device) {
  auto copy = model::make_masked_lm(model->config(), model->vocab_size(), model->pad_id());
  copy->to(device);
  copy->load_hf_state_dict(model->hf_state_dict(), "the run's model");
  return copy;
}

Classifier make_classifier(model::MaskedLm encoder, const config::TaskConfig& task) {
  const GeneratorStateGuard keep_the_generator;
  torch::manual_seed(static_cast<uint64_t>(task.finetune.seed));
  Classifier classifier(std::move(encoder), task.task.kind, num_outputs(task.task));
  return classifier;
}

namespace {

// After the tasks' scores, each suite's average over its tasks as mlm-finetune --suite reports it
// (tasks scored by mse, lower better, left out).
void append_suite_averages(std::vector<ProbeScore>& scores) {
  std::vector<std::string> suites;
  for (const auto& s : scores)
    if (!s.suite.empty() && std::find(suites.begin(), suites.end(), s.suite) == suites.end()) suites.push_back(s.suite);
  for (const auto& suite : suites) {
    std::vector<std::vector<double>> validations, tests;
    for (const auto& s : scores) {
      if (s.suite != suite || !s.higher_is_better) continue;
      validations.push_back(s.validation_per_seed);
      if (s.test) tests.push_back(s.test_per_seed);
    }
    if (validations.empty()) continue;
    const auto a = suite_average(validations, tests);
    ProbeScore average;
    average.task = average.suite = suite;
    average.metric = "average";
    average.tasks = a.tasks;
    average.validation_per_seed = a.validation_per_seed;
    average.validation = a.validation.mean;
    average.validation_std = a.validation.std;
    if (a.test) {
      average.test_per_seed = a.test_per_seed;
      average.test = a.test->mean;
      average.test_std = a.test->std;
    }
    scores.push_back(average);
  }
}

}  // namespace

std::vector<ProbeScore> Probes::run(model::MaskedLm model, const text::Tokenizer& tokenizer,
                                    const torch::Device& device, torch::Dtype compute_dtype) {
  std::vector<ProbeScore> scores;
  if (compute_dtype == torch::kHalf) compute_dtype = torch::kFloat32;  // no loss scaler here
  for (auto& task : tasks_) {
    const auto& t = task.config.task;
    if (!task.splits) task.splits = cached_task_splits(task.config, tokenizer);
    const auto seeded = finetune_over_seeds(model, task.config, *task.splits, task.seeds, tokenizer.vocab().ids.pad,
                                            device, compute_dtype);
    ProbeScore s;
    s.task = t.name;
    s.metric = config::to_string(t.metric);
    s.higher_is_better = config::higher_is_better(t.metric);
    s.suite = task.suite;
    s.validation_per_seed = seeded.validation;
    s.test_per_seed = seeded.test;
    const auto validation = spread_of(seeded.validation);
    s.validation = validation.mean;
    s.validation_std = validation.std;
    if (!seeded.test.empty()) {
      const auto test = spread_of(seeded.test);
      s.test = test.mean;
      s.test_std = test.std;
    }
    s.best_epoch = seeded.best_epoch;
    s.steps = seeded.steps;
    s.seconds = seeded.seconds;
    s.eval_seconds = seeded.eval_seconds;
    scores.push_back(s);
  }
  append_suite_averages(scores);
  return scores;
}

}  // namespace mlm::train::finetune
