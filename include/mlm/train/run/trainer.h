#pragma once
// A training run, assembled: the process (bootstrap.h), the checkpoint component (which takes
// the run directory's lock and resumes), the tokenizer, the model, the step, the schedules,
// the data, what the user sees (run_log.h) and the stop signals, around the training loop
// (loop/training_loop.h), which it runs once per phase (config/phases.h): a new phase gets
// its own data, step, schedules and loop around the same model, optimizer moments carried
// over unless it resets them.
#include <torch/torch.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "mlm/config/data_plan.h"
#include "mlm/config/run_config.h"
#include "mlm/dist/communicator.h"
#include "mlm/masking/batch_stream.h"
#include "mlm/model/masked_lm.h"
#include "mlm/text/tokenizer.h"
#include "mlm/train/checkpoint/run_checkpoints.h"
#include "mlm/train/checkpoint/trainer_state.h"
#include "mlm/train/optim/ema_weights.h"
#include "mlm/train/loop/eval_result.h"
#include "mlm/train/loop/run_phase.h"
#include "mlm/train/loop/run_schedule.h"
#include "mlm/train/loop/training_loop.h"
#include "mlm/train/distill/distiller.h"
#include "mlm/train/loop/training_step.h"
#include "mlm/train/optim/lr_schedule.h"
#include "mlm/train/run/run_log.h"

namespace mlm::train::finetune {
class Probes;
}  // namespace mlm::train::finetune

namespace mlm::train {

struct TrainerOptions {
  std::string resume;  // overrides train.resume: auto, latest or a checkpoint directory
  std::shared_ptr<dist::Communicator> comm;  // null = from the environment (torchrun variables)
  GradientHook gradient_hook;                // tests: runs after each step's backward passes
};

class Trainer {
 public:
  /// Sets up the process, the tokenizer, the model, the step and the data, and resumes when
  /// asked. Throws ConfigError / CheckpointError / DataError / UsageError.
  Trainer(config::RunConfig config, TrainerOptions options = {});
  ~Trainer();

  /// Trains until the schedule ends the run, with SIGINT/SIGTERM handled; returns the exit
  /// code (TrainingLoop::run).
  int run();

  /// Evaluates now (collective) and logs/records the result.
  EvalResult evaluate_and_log() { return loop_->evaluate_and_report(); }

  /// Called on every rank after each step (tests, tools).
  void on_step(std::function<void(const StepStats&)> callback);

  model::MaskedLm model() { return model_; }
  /// distill.teacher's distiller (null without one): tests read its teacher.
  const distill::Distiller* distiller() const { return distiller_.get(); }
  /// The EMA of the weights; null without train.ema_decay.
  const EmaWeights* ema() const { return ema_.get(); }
  const TrainerState& state() const { return state_; }
  nlohmann::json data_position() const { return batches_->source().resume_state(); }
  const std::optional<EvalResult>& last_eval() const { return loop_->last_eval(); }
  const std::optional<EvalResult>& last_eval_ema() const { return loop_->last_eval_ema(); }
  const torch::Device& device() const { return device_; }
  torch::Dtype compute_dtype() const { return compute_dtype_; }
  const std::filesystem::path& output_dir() const { return output_dir_; }
  const RunPhase& phase() const { return phase_; }

 private:
  void log_start();
  /// Builds what `phase` trains with (its data plan, step, schedules), taking the optimizer
  /// moments of the previous phase's step unless the phase resets them.
  void enter_phase(RunPhase phase);
  /// The phase's train batches from `position` (a checkpoint's) or its start: the corpus
  /// resolved and its files checked, so a bad corpus stops a run before it writes.
  void open_batches(const nlohmann::json* position);
  /// The phase's probes and loop over the batches open_batches() opened.
  void start_loop();
  CheckpointContents contents();

  config::RunConfig config_;
  TrainerOptions options_;
  std::shared_ptr<dist::Communicator> comm_;
  torch::Device device_{torch::kCPU};
  torch::Dtype compute_dtype_ = torch::kFloat32;
  std::filesystem::path output_dir_;
  RunPhase phase_;         // the phase being trained (the whole run when unphased)
  config::DataPlan plan_;  // this rank's data and masking settings of the phase
  std::unique_ptr<RunCheckpoints> checkpoints_;
  std::optional<text::Tokenizer> tokenizer_;
  model::MaskedLm model_{nullptr};
  std::shared_ptr<distill::Distiller> distiller_;  // distill.teacher only, and not for an init alone
  std::unique_ptr<EmaWeights> ema_;  // train.ema_decay > 0: kept across the phases
  std::unique_ptr<TrainingStep> step_;
  std::unique_ptr<LrSchedule> lr_;
  std::unique_ptr<MaskingRate> masking_rate_;
  std::unique_ptr<BatchRamp> batch_ramp_;
  std::unique_ptr<RunSchedule> schedule_;
  TrainerState state_;
  std::unique_ptr<masking::BatchStream> batches_;
  std::unique_ptr<RunLog> log_;
  std::unique_ptr<finetune::Probes> probes_;  // the phase's eval.probes, run by its loop
  std::unique_ptr<TrainingLoop> loop_;
  std::function<void(const StepStats&)> on_step_;
};

}  // namespace mlm::train
