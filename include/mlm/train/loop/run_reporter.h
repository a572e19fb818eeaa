#pragma once
// What the training loop tells the layer above it (the log lines, metrics.jsonl, the progress
// line), and the one thing it asks of it: whether a stop signal arrived. The loop draws
// nothing and handles no signal; run/run_log.h and run/stop_signals.h do, above it.
#include <filesystem>

#include "mlm/train/checkpoint/trainer_state.h"
#include "mlm/train/loop/eval_result.h"
#include "mlm/train/loop/probe_score.h"
#include "mlm/train/loop/run_clock.h"
#include "mlm/train/loop/run_schedule.h"
#include "mlm/train/loop/training_step.h"

namespace mlm::train {

class RunReporter {
 public:
  virtual ~RunReporter() = default;

  /// The loop starts from `state` (a resumed run's ETA counts only its own steps and tokens);
  /// `clock` runs until finished().
  virtual void started(const TrainerState& state, const RunClock& clock) = 0;
  /// After each step; `closes_window` on the steps of logging.every_steps. Steps are read
  /// from the device only at such steps (and before evaluations, checkpoints and the end), so
  /// the ones between arrive together, in order, unless wants_every_step().
  virtual void stepped(const StepStats& stats, const TrainerState& state, bool closes_window) = 0;
  /// Whether stepped() should come right after every step (a progress line the user watches),
  /// at the cost of a host synchronisation per step.
  virtual bool wants_every_step() const { return false; }
  /// `seconds` spent off training (an evaluation, a checkpoint): not counted in tokens/s.
  virtual void paused(double seconds) = 0;
  /// `ema`: the EMA weights' score on the same batches (train.ema_decay > 0), else null.
  virtual void evaluated(const EvalResult& result, const TrainerState& state, const EvalResult* ema = nullptr) = 0;
  /// The probes' scores (eval.probes) at an evaluation, on the main rank.
  virtual void probed(const std::vector<ProbeScore>& scores, const TrainerState& state) {}
  virtual void checkpointed(const std::filesystem::path& dir, double seconds) = 0;
  /// The loop ends for `reason` (none: the schedule's end) at `state`.
  virtual void stopping(StopReason reason, const TrainerState& state) = 0;
  /// The run is over: its last evaluation and checkpoint are written.
  virtual void finished(const TrainerState& state) = 0;

  /// SIGINT or SIGTERM when one has arrived since the loop started, else 0.
  virtual int pending_signal() const = 0;
};

}  // namespace mlm::train
