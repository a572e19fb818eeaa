#pragma once
// Fine-tuning a Classifier on a task with the recipe of transformers' Trainer: AdamW (no decay
// on biases and norm weights), linear warmup then linear decay to 0, gradient clipping, a few
// epochs in batches padded to their longest example, the task's metric on the validation split
// after every epoch, early stopping, and the best epoch's weights scored on the test split.
#include <torch/torch.h>

#include <optional>
#include <vector>

#include "mlm/config/task_config.h"
#include "mlm/train/finetune/classifier.h"
#include "mlm/train/finetune/labelled_data.h"
#include "mlm/train/finetune/task_metrics.h"

namespace mlm::train::finetune {

struct TaskSplits {
  EncodedSplit train, validation;
  std::optional<EncodedSplit> test;
};

/// ConfigError naming the task file when task.max_seq_len exceeds the model's `positions`.
void require_fits(const config::TaskConfig& task, int64_t positions);

/// A task's splits read and tokenized (the first finetune.max_train_examples training examples
/// when it is set); DataError as read_labelled_split.
TaskSplits load_task_splits(const config::TaskConfig& task, const text::Tokenizer& tokenizer);

struct Evaluation {
  int64_t step = 0;
  double epoch = 0;
  TaskScores validation;
};

struct FinetuneResult {
  std::vector<double> losses, learning_rates, grad_norms;  // one per optimizer step
  std::vector<Evaluation> evaluations;
  double best_validation = 0, best_epoch = 0;
  std::optional<TaskScores> test;  // with the best weights
  int64_t steps = 0, total_steps = 0, warmup_steps = 0;
  double seconds = 0;       // all of it
  double eval_seconds = 0;  // of which scoring the validation and test splits
};

/// Fine-tunes `classifier` (its encoder's dropout unless task.finetune.dropout is false) and
/// leaves it holding the best epoch's weights. The default generators' states are restored
/// afterwards: a probe inside a pretraining run leaves the run's random draws as they were.
/// `compute_dtype`: the forwards autocast to it (as a bf16 run's steps); weights, AdamW and the loss
/// in fp32.
FinetuneResult run_finetune(Classifier& classifier, const config::TaskConfig& task, const TaskSplits& splits,
                            int64_t pad_id, const torch::Device& device, torch::Dtype compute_dtype = torch::kFloat32);

/// Predictions of `classifier` (eval mode) on `split`, in batches of `batch_size`, scored.
TaskScores evaluate_split(Classifier& classifier, const config::TaskSection& task, const EncodedSplit& split,
                          int64_t batch_size, int64_t pad_id, const torch::Device& device, torch::Dtype compute_dtype = torch::kFloat32);

/// The batch of examples [first, first + count) of `order` (indices into `examples`): ids, token
/// types and mask padded to the longest on the right, and labels [B] or [B, S] (-100 padding),
/// or for regression the targets [B] in fp32.
struct ClassifierBatch {
  model::MlmInputs inputs;
  torch::Tensor labels;
};
ClassifierBatch make_batch(const std::vector<EncodedExample>& examples, const std::vector<int64_t>& order,
                           size_t first, size_t count, int64_t pad_id, config::TaskKind kind,
                           const torch::Device& device);

/// Restores the default generators' states (the CPU's and every GPU's) when it goes out of
/// scope: what fine-tuning draws (the head's initialisation, dropout) leaves a pretraining
/// run's draws as they were.
class GeneratorStateGuard {
 public:
  GeneratorStateGuard();
  ~GeneratorStateGuard();
  GeneratorStateGuard(const GeneratorStateGuard&) = delete;
  GeneratorStateGuard& operator=(const GeneratorStateGuard&) = delete;

 private:
  std::vector<std::pair<at::Generator, at::Tensor>> saved_;
};

/// The learning rate of optimizer step `step` (0-based): linear from 0 over `warmup` steps,
/// then linearly down to 0 at `total` (transformers' get_linear_schedule_with_warmup).
double linear_warmup_decay(double peak, int64_t step, int64_t warmup, int64_t total);

}  // namespace mlm::train::finetune
