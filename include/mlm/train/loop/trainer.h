#pragma once
// The training loop: each step draws its micro-batches from the train split, trains on them
// (training_step.h) and reports; the run schedule says when to evaluate, checkpoint and stop.
// A run resumes exactly from any checkpoint it wrote, and stops cleanly on SIGINT/SIGTERM.
#include <torch/torch.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mlm/config/run_config.h"
#include "mlm/dist/communicator.h"
#include "mlm/masking/batch_stream.h"
#include "mlm/masking/validation_batches.h"
#include "mlm/model/masked_lm.h"
#include "mlm/text/tokenizer.h"
#include "mlm/train/app/metrics_log.h"
#include "mlm/train/app/metrics_window.h"
#include "mlm/train/app/progress.h"
#include "mlm/train/checkpoint/run_lock.h"
#include "mlm/train/checkpoint/trainer_state.h"
#include "mlm/train/loop/eval_result.h"
#include "mlm/train/loop/lr_schedule.h"
#include "mlm/train/loop/run_schedule.h"
#include "mlm/train/loop/training_step.h"

namespace mlm::train {

/// The files a checkpoint written by the trainer must contain (besides DONE).
const std::vector<std::string>& checkpoint_required_files();

struct TrainerOptions {
  std::string resume;  // overrides train.resume: auto, latest or a checkpoint directory
  std::shared_ptr<dist::Communicator> comm;  // null = from the environment (torchrun variables)
  GradientHook gradient_hook;                // tests: runs after each step's backward passes
};

class Trainer {
 public:
  /// Sets up the process, the tokenizer, the model, the step and the data, and resumes when
  /// asked. Throws ConfigError / CheckpointError / DataError.
  Trainer(config::RunConfig config, TrainerOptions options = {});
  ~Trainer();

  /// Trains until the schedule ends the run; returns the exit code: 0 done, 130/143 stopped
  /// by SIGINT/SIGTERM after writing a checkpoint. Throws on failure (e.g. too many
  /// non-finite steps in a row, a checkpoint that cannot be written).
  int run();

  /// Called on every rank after each step (tests, tools).
  void on_step(std::function<void(const StepStats&)> callback) { on_step_ = std::move(callback); }

  model::MaskedLm model() { return model_; }
  const TrainerState& state() const { return state_; }
  nlohmann::json data_position() const { return batches_->source().resume_state(); }
  const std::optional<EvalResult>& last_eval() const { return last_eval_; }
  const torch::Device& device() const { return device_; }
  const std::filesystem::path& output_dir() const { return output_dir_; }

  /// Evaluates now (collective) and logs/records the result; run() does so on eval.every_steps
  /// and at the end.
  EvalResult evaluate_and_log();

 private:
  void log_start();
  StepStats train_step();
  /// Counts a step in the state; too many skipped steps in a row end the run.
  void count_step(const StepStats& stats);
  void report(MetricsWindow& window, const StepStats& stats);
  int finish(StopReason stop, const MetricsWindow& window);
  /// Writes a checkpoint of the current step (collective; rank 0 writes).
  std::filesystem::path save_checkpoint();

  /// Takes the output directory's lock on rank 0 (UsageError on every rank when it is held).
  void lock_output_dir();
  /// --resume, else train.resume, else auto in a restarted worker group, else "" (new run).
  std::string resume_mode(int restart_count) const;
  /// The checkpoint to resume from, if any.
  std::optional<std::filesystem::path> resolve_resume();
  /// Restores weights, optimizer, RNG and counters; returns this rank's data position.
  nlohmann::json resume_from(const std::filesystem::path& dir);
  void refuse_existing_checkpoints() const;

  config::RunConfig config_;
  TrainerOptions options_;
  std::shared_ptr<dist::Communicator> comm_;
  torch::Device device_{torch::kCPU};
  bool bf16_ = false;
  std::filesystem::path output_dir_;
  std::optional<RunLock> run_lock_;  // rank 0: this run is the directory's one writer
  std::string resume_;               // resume_mode()
  std::optional<text::Tokenizer> tokenizer_;
  model::MaskedLm model_{nullptr};
  std::unique_ptr<TrainingStep> step_;
  std::unique_ptr<LrSchedule> lr_;
  std::unique_ptr<RunSchedule> schedule_;
  std::unique_ptr<masking::BatchStream> batches_;
  std::unique_ptr<masking::ValidationBatches> valid_batches_;  // read at the first evaluation
  std::unique_ptr<MetricsLog> metrics_;
  std::unique_ptr<ProgressLine> progress_;
  TrainerState state_;
  std::optional<EvalResult> last_eval_;
  int64_t last_eval_step_ = -1;
  int64_t last_checkpoint_step_ = -1;
  std::optional<int64_t> resumed_step_;
  std::function<void(const StepStats&)> on_step_;
};

}  // namespace mlm::train
