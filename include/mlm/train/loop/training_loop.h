#pragma once
// The training loop: each step draws its micro-batches from the train split, trains on them
// (training_step.h) and reports; the run schedule says when to evaluate, checkpoint and stop.
// It is handed its parts, built and owned by the run's assembly (run/trainer.h), and saves
// through the checkpoint component; what it has to say goes to a RunReporter. With an EMA of the
// weights (contents.ema, ema_weights.h) each step ends with its update, and each evaluation
// scores its shadow too, on the same batches.
//
// A step's statistics stay on the device (step_stats.h) until the loop reads all the steps it
// has not read yet at once: at a logged step, before an evaluation or a checkpoint, at the end,
// and after every step when an on_step callback or the reporter (a progress line) wants every
// step. Each read step is then counted and reported in order, as if read at once; only a
// divergence (train.max_skipped_steps) may be noticed a few steps late, at the next read.
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "mlm/config/data_plan.h"
#include "mlm/config/run_config.h"
#include "mlm/dist/communicator.h"
#include "mlm/masking/batch_stream.h"
#include "mlm/masking/validation_batches.h"
#include "mlm/train/checkpoint/run_checkpoints.h"
#include "mlm/train/likelihood/run_pll.h"
#include "mlm/train/loop/batch_ramp.h"
#include "mlm/train/loop/eval_result.h"
#include "mlm/train/loop/masking_rate.h"
#include "mlm/train/loop/run_probes.h"
#include "mlm/train/loop/run_reporter.h"
#include "mlm/train/loop/run_schedule.h"
#include "mlm/train/loop/source_evaluation.h"
#include "mlm/train/loop/training_step.h"
#include "mlm/train/optim/lr_schedule.h"

namespace mlm::train {

/// What the loop runs on, by reference. `contents` is what a checkpoint holds: the model, the
/// optimizer, the trainer state the loop advances, the tokenizer and the data position.
struct LoopParts {
  const config::RunConfig& config;
  const config::DataPlan& plan;  // this rank's data settings (the valid split's batches)
  dist::Communicator& comm;
  torch::Device device;
  torch::Dtype compute_dtype;
  TrainingStep& step;
  const LrSchedule& lr;
  const MaskingRate& masking_rate;
  const BatchRamp& batch_ramp;
  const RunSchedule& schedule;
  masking::BatchStream& batches;
  RunCheckpoints& checkpoints;
  CheckpointContents contents;
  RunReporter& reporter;
  RunProbes run_probes;  // eval.probes, due at evaluations; empty: none
};

class TrainingLoop {
 public:
  explicit TrainingLoop(LoopParts parts);

  /// Trains until the schedule ends the run; returns the exit code: 0 done, 130/143 stopped
  /// by SIGINT/SIGTERM after writing a checkpoint. Throws on failure (e.g. too many
  /// non-finite steps in a row, a checkpoint that cannot be written).
  int run();

  /// Evaluates now (collective) and reports the result, then runs the probes when they are
  /// due (eval.probe_every_steps, or `at_end`); run() does so on eval.every_steps and at the end.
  EvalResult evaluate_and_report(bool at_end = false);

  /// Called on every rank after each step (tests, tools).
  void on_step(std::function<void(const StepStats&)> callback) { on_step_ = std::move(callback); }
  const std::optional<EvalResult>& last_eval() const { return last_eval_; }
  /// The EMA weights' score at the last evaluation (train.ema_decay > 0), else none.
  const std::optional<EvalResult>& last_eval_ema() const { return last_eval_ema_; }

 private:
  /// Trains the next step; its stats join the unread ones.
  void train_step();
  /// Reads the unread steps from the device (one transfer), then counts and reports each.
  void catch_up();
  /// Counts a step in the state; too many skipped steps in a row end the run.
  void count_step(const StepStats& stats);
  /// Runs an evaluation or a checkpoint off the training clock.
  template <typename F>
  void pause_for(F&& work);
  int finish(StopReason stop, const RunClock& clock);
  void save_checkpoint();

  LoopParts parts_;
  TrainerState& state_;
  std::unique_ptr<masking::ValidationBatches> valid_batches_;  // read at the first evaluation
  std::unique_ptr<SourceEvaluation> source_evaluation_;        // likewise
  std::optional<likelihood::RunPll> pll_;  // eval.pll_*, on rank 0: read when the loop is built
  std::optional<EvalResult> last_eval_;
  std::optional<EvalResult> last_eval_ema_;
  int64_t last_eval_step_ = -1;
  std::function<void(const StepStats&)> on_step_;
  std::vector<DeviceStepStats> unread_;  // trained, not yet counted in state_ nor reported
  int64_t trained_step_ = 0, trained_tokens_ = 0;  // state_'s step and tokens once read
};

}  // namespace mlm::train
