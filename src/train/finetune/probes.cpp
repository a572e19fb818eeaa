#include "mlm/train/finetune/probes.h"

#include "mlm/model/make_masked_lm.h"
#include "mlm/util/errors.h"

namespace mlm::train::finetune {

Probes::Probes(const std::vector<std::string>& task_files, int64_t positions) {
  for (const auto& file : task_files) {
    try {
      tasks_.push_back({config::load_task_config(file), std::nullopt});
      require_fits(tasks_.back().config, positions);
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
  Classifier classifier(std::move(encoder), task.task.kind, static_cast<int64_t>(task.task.labels.size()));
  return classifier;
}

std::vector<ProbeScore> Probes::run(model::MaskedLm model, const text::Tokenizer& tokenizer,
                                    const torch::Device& device) {
  // The copies' initialisation and the fine-tuning draw from the default generator: the run's
  // next draws must not see that.
  const GeneratorStateGuard keep_the_generator;
  std::vector<ProbeScore> scores;
  for (auto& task : tasks_) {
    const auto& t = task.config.task;
    if (!task.splits) task.splits = load_task_splits(task.config, tokenizer);
    auto classifier = make_classifier(copy_model(model, device), task.config);
    classifier->to(device);
    const auto result = run_finetune(classifier, task.config, *task.splits, tokenizer.vocab().ids.pad, device);
    ProbeScore s;
    s.task = t.name;
    s.metric = config::to_string(t.metric);
    s.validation = result.best_validation;
    if (result.test) s.test = result.test->value;
    s.best_epoch = result.best_epoch;
    s.steps = result.steps;
    s.seconds = result.seconds;
    scores.push_back(s);
  }
  return scores;
}

}  // namespace mlm::train::finetune
