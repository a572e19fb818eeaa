// mlm-finetune --suite: one pretrained model fine-tuned on each task of a suite over its seeds,
// reported per task as mean ± standard deviation and averaged over the tasks (GLUE-style).
#include <torch/torch.h>

#include <chrono>

#include "mlm/config/suite_config.h"
#include "mlm/train/finetune/seed_spread.h"
#include "mlm/train/run/device.h"
#include "mlm/train/tools/commands.h"
#include "mlm/train/checkpoint/saved_model.h"

namespace mlm::train {
namespace fs = std::filesystem;
using namespace finetune;

namespace {

nlohmann::json spread_json(const std::vector<double>& values) {
  const auto s = spread_of(values);
  return {{"mean", s.mean}, {"std", s.std}, {"per_seed", values}};
}

// The mean over the tasks of their means, its spread over the seeds and each seed's mean.
nlohmann::json average_json(const SuiteAverage& a) {
  nlohmann::json average = {{"tasks", a.tasks}};
  const auto add = [&](const std::string& split, const Spread& s, const std::vector<double>& per_seed) {
    average[split] = s.mean;
    average[split + "_std"] = s.std;
    average[split + "_per_seed"] = per_seed;
  };
  if (a.tasks > 0) add("validation", a.validation, a.validation_per_seed);
  if (a.test) add("test", *a.test, a.test_per_seed);
  return average;
}

}  // namespace

nlohmann::json finetune_suite(const fs::path& model_dir, const std::string& suite_file,
                              const std::vector<int64_t>& seeds, config::Precision precision) {
  const auto started = std::chrono::steady_clock::now();
  auto suite = config::load_suite_config(suite_file);
  if (!seeds.empty()) suite.seeds = seeds;
  const auto tasks = config::load_suite_tasks(suite);
  model::TensorDict file_weights;  // a classification directory's head is not used: each seed draws one
  auto saved = open_saved_encoder(model_dir, config::RunConfig{}, file_weights);
  for (const auto& task : tasks) require_fits(task, saved.model->max_sequence_length());
  // Every split read (and tokenized once, for all seeds) before the first fine-tuning.
  std::vector<TaskSplits> splits;
  std::vector<double> tokenize_seconds;
  for (const auto& task : tasks) {
    const auto reading = std::chrono::steady_clock::now();
    splits.push_back(load_task_splits(task, saved.tokenizer));
    tokenize_seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - reading).count());
  }

  const torch::Device device(torch::kCPU);
  const auto dtype = compute_dtype(precision, device);
  nlohmann::json report = {{"suite", suite.name},
                           {"suite_file", suite_file},
                           {"model_dir", model_dir.string()},
                           {"precision", precision_name(dtype)},
                           {"seeds", suite.seeds}};
  auto rows = nlohmann::json::array();
  std::vector<std::vector<double>> validations, tests;  // per seed, of the tasks averaged
  for (size_t i = 0; i < tasks.size(); ++i) {
    const auto& task = tasks[i];
    const auto scores = finetune_over_seeds(saved.model, task, splits[i], suite.seeds,
                                            saved.tokenizer.vocab().ids.pad, device, dtype);
    nlohmann::json row = {{"task", task.task.name},
                          {"task_file", task.origin},
                          {"metric", config::to_string(task.task.metric)},
                          {"higher_is_better", config::higher_is_better(task.task.metric)},
                          {"validation", spread_json(scores.validation)},
                          {"train_examples", splits[i].train.examples.size()},
                          {"steps", scores.steps},
                          {"seconds", scores.seconds},
                          {"eval_seconds", scores.eval_seconds},
                          {"tokenize_seconds", tokenize_seconds[i]}};
    if (!scores.test.empty()) row["test"] = spread_json(scores.test);
    if (config::higher_is_better(task.task.metric)) {  // mse, on another scale, stays out of the average
      validations.push_back(scores.validation);
      if (!scores.test.empty()) tests.push_back(scores.test);
    }
    rows.push_back(row);
  }
  report["tasks"] = rows;
  report["average"] = average_json(suite_average(validations, tests));
  report["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

}  // namespace mlm::train
