#pragma once
// What a user sees of a training run, on rank 0: a log line and a metrics.jsonl row every
// logging.every_steps, the evaluation rows, the checkpoint and stop messages, and the progress
// line between them. Stop signals are the ones StopSignals recorded (run/stop_signals.h).
#include <filesystem>
#include <memory>
#include <optional>

#include "mlm/config/run_config.h"
#include "mlm/train/loop/collapse_watch.h"
#include "mlm/train/loop/run_phase.h"
#include "mlm/train/loop/run_reporter.h"
#include "mlm/train/run/metrics_log.h"
#include "mlm/train/run/metrics_window.h"
#include "mlm/train/run/progress.h"
#include "mlm/train/run/tensorboard_log.h"

namespace mlm::train {

class RunLog : public RunReporter {
 public:
  /// `is_main`: this rank reports (the others only count). Rank 0 opens metrics.jsonl in the
  /// run directory, dropping rows after `resumed_step` (see MetricsLog).
  RunLog(const config::RunConfig& config, bool is_main, std::optional<int64_t> resumed_step);

  void started(const TrainerState& state, const RunClock& clock) override;
  void stepped(const StepStats& stats, const TrainerState& state, bool closes_window) override;
  /// When the progress line is drawn (on a terminal the user watches each step).
  bool wants_every_step() const override { return progress_.enabled(); }
  void paused(double seconds) override;
  /// One metrics.jsonl row: eval_* of the weights and, with the EMA, eval_*_ema of its shadow.
  void evaluated(const EvalResult& result, const TrainerState& state, const EvalResult* ema = nullptr) override;
  void probed(const std::vector<ProbeScore>& scores, const TrainerState& state) override;
  void checkpointed(const std::filesystem::path& dir, double seconds) override;
  void stopping(StopReason reason, const TrainerState& state) override;
  void finished(const TrainerState& state) override;
  int pending_signal() const override;

  /// From here on every metrics.jsonl row names `phase` (a phased run), which the log
  /// announces.
  void begin_phase(const RunPhase& phase, int64_t phase_count);

 private:
  /// A row of metrics.jsonl, with the phase's name in a phased run.
  void write_row(nlohmann::json row);

  const config::RunConfig& config_;
  bool is_main_;
  std::unique_ptr<MetricsLog> metrics_;  // rank 0
  std::unique_ptr<TensorBoardLog> tensorboard_;  // rank 0, with logging.tensorboard
  ProgressLine progress_;
  std::optional<MetricsWindow> window_;  // from started()
  std::string phase_name_;               // "" in an unphased run
  CollapseWatch collapse_;
};

}  // namespace mlm::train
