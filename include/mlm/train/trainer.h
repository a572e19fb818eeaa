#pragma once
// The training loop: micro-batches from the streaming dataset through the masking collator
// into the model; loss normalised by the masked-token count of the whole step (all
// micro-batches, all ranks), so accumulation and data parallelism equal one big batch;
// AdamW with a step-function learning rate, global-norm clipping, bf16 autocast with fp32
// master weights, a guard against non-finite steps, periodic evaluation, metrics,
// checkpoints and exact resume, and a clean stop on SIGINT/SIGTERM.
#include <torch/torch.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mlm/config/run_config.h"
#include "mlm/data/streaming_dataset.h"
#include "mlm/dist/communicator.h"
#include "mlm/dist/gradient_reducer.h"
#include "mlm/masking/masking_collator.h"
#include "mlm/model/bert.h"
#include "mlm/text/tokenizer.h"
#include "mlm/train/evaluator.h"
#include "mlm/train/lr_schedule.h"
#include "mlm/train/metrics_log.h"
#include "mlm/train/progress.h"
#include "mlm/train/trainer_state.h"

namespace mlm::train {

/// Test hook: MLM_TEST_POISON_STEP=N (or N-M) fills one gradient with NaN at those steps.
inline constexpr const char* kPoisonStepEnv = "MLM_TEST_POISON_STEP";

/// The files a checkpoint written by the trainer must contain (besides DONE).
const std::vector<std::string>& checkpoint_required_files();

struct StepStats {
  int64_t step = 0;
  double loss = 0;           // MLM (+ NSP/SOP) loss of the whole step
  double mlm_accuracy = 0;   // over the step's selected positions
  int64_t num_masked = 0;    // selected positions in the step, all ranks
  double lr = 0;
  double grad_norm = 0;      // before clipping
  int64_t tokens = 0;        // non-padding tokens in the step, all ranks
  bool skipped = false;      // non-finite loss or gradient: no update
};

struct TrainerOptions {
  std::string resume;  // "" = fresh run, "latest" = newest complete checkpoint, or a directory
  std::shared_ptr<dist::Communicator> comm;  // null = from the environment (torchrun variables)
};

class Trainer {
 public:
  /// Sets up everything (device, threads, communicator, tokenizer, model, optimizer,
  /// datasets) and resumes when asked. Throws ConfigError / CheckpointError / DataError.
  Trainer(config::RunConfig config, TrainerOptions options = {});
  ~Trainer();

  /// Trains until a stop condition; returns the exit code: 0 done, 130/143 stopped by
  /// SIGINT/SIGTERM after writing a checkpoint. Throws on failure (e.g. too many non-finite
  /// steps in a row, a checkpoint that cannot be written).
  int run();

  /// Called on every rank after each step (tests, tools).
  void on_step(std::function<void(const StepStats&)> callback) { on_step_ = std::move(callback); }

  model::BertForPreTraining& model() { return model_; }
  const TrainerState& state() const { return state_; }
  data::DataPosition data_position() const { return dataset_->position(); }
  const std::optional<EvalResult>& last_eval() const { return last_eval_; }
  const torch::Device& device() const { return device_; }
  const std::filesystem::path& output_dir() const { return output_dir_; }

  /// Evaluates now (collective) and logs/records the result.
  EvalResult evaluate_and_log();
  /// Writes a checkpoint of the current step (collective; rank 0 writes).
  std::filesystem::path save_checkpoint();

 private:
  void train_step(StepStats& stats);
  /// Restores weights, optimizer, RNG and counters; returns this rank's data position.
  data::DataPosition resume_from(const std::filesystem::path& dir);
  std::optional<std::filesystem::path> resolve_resume();
  void refuse_existing_checkpoints() const;
  void log_step(const StepStats& stats);
  void pause_window(std::chrono::steady_clock::time_point since);
  bool poisoned(int64_t step) const;

  config::RunConfig config_;
  TrainerOptions options_;
  std::shared_ptr<dist::Communicator> comm_;
  torch::Device device_{torch::kCPU};
  bool bf16_ = false;  // train.precision resolved for device_ (auto: see use_bf16)
  std::filesystem::path output_dir_;
  std::optional<text::Tokenizer> tokenizer_;
  model::BertForPreTraining model_{nullptr};
  std::vector<torch::Tensor> params_;
  std::unique_ptr<torch::optim::AdamW> optimizer_;
  std::unique_ptr<dist::GradientReducer> reducer_;
  std::unique_ptr<LrSchedule> schedule_;
  std::unique_ptr<data::StreamingDataset> dataset_;
  std::unique_ptr<masking::MaskingCollator> collator_;
  std::unique_ptr<MetricsLog> metrics_;
  std::unique_ptr<ProgressLine> progress_;
  TrainerState state_;
  std::optional<EvalResult> last_eval_;
  int64_t last_eval_step_ = -1;
  int64_t last_checkpoint_step_ = -1;
  std::optional<int64_t> resumed_step_;
  std::function<void(const StepStats&)> on_step_;
  std::pair<int64_t, int64_t> poison_steps_{-1, -1};

  // Logging window (since the last log line) and this process's clock.
  struct Window {
    double loss_sum = 0, correct = 0, masked = 0, tokens = 0;
    double nsp_loss_sum = 0, nsp_correct = 0, nsp_pairs = 0;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  } window_;
  std::chrono::steady_clock::time_point run_start_ = std::chrono::steady_clock::now();
  int64_t run_start_step_ = 0;
  int64_t run_start_tokens_ = 0;  // tokens seen before this run (a resumed run's ETA)
  double train_time_at_start_ = 0;
};

}  // namespace mlm::train
