#pragma once
// Probes during pretraining (eval.probes): at evaluation steps, each task fine-tunes a copy of
// the run's current weights (finetune.h) and reports its scores. The run's model, optimizer
// and random generators are left as they were, so a run with probes trains exactly as one
// without (and resumes bit for bit). A suite file among them (suite_config.h) adds each of its
// tasks, fine-tuned over the suite's seeds and reported as their mean and standard deviation.
#include <torch/torch.h>

#include <memory>
#include <vector>

#include "mlm/config/task_config.h"
#include "mlm/model/masked_lm.h"
#include "mlm/text/tokenizer.h"
#include "mlm/train/finetune/finetune.h"
#include "mlm/train/loop/probe_score.h"

namespace mlm::train::finetune {

class Probes {
 public:
  /// Reads every task and suite file now (ConfigError naming eval.probes and the file, also
  /// for a max_seq_len beyond the model's `positions`); the splits are read and tokenized at
  /// the first run() and kept for the process (split_cache.h): the later probes, and a later
  /// phase's, reuse them.
  Probes(const std::vector<std::string>& files, int64_t positions);

  bool empty() const { return tasks_.empty(); }

  /// Fine-tunes a copy of `model` on each task (over its suite's seeds), on `device`, under
  /// autocast to `compute_dtype` (as the run's own steps), except fp16, which fine-tunes in
  /// fp32: fine-tuning has no loss scaler, and unscaled fp16 gradients underflow.
  std::vector<ProbeScore> run(model::MaskedLm model, const text::Tokenizer& tokenizer, const torch::Device& device,
                              torch::Dtype compute_dtype);

 private:
  struct Task {
    config::TaskConfig config;
    std::string suite;                 // the suite's name ("" for a task file of its own)
    std::vector<int64_t> seeds;        // the suite's, or the task's finetune.seed
    std::shared_ptr<const TaskSplits> splits;  // encoded at the first run
  };
  std::vector<Task> tasks_;
};

/// A fresh model of `model`'s architecture holding a copy of its weights, on `device` (its
/// initialisation draws from the default generator).
model::MaskedLm copy_model(model::MaskedLm model, const torch::Device& device);

/// The classifier of a task on `encoder`, its head drawn under the task's seed (the default
/// generator restored afterwards).
Classifier make_classifier(model::MaskedLm encoder, const config::TaskConfig& task);

}  // namespace mlm::train::finetune
