#pragma once
// What a run reports between two log rows: the window's averages (loss, accuracy, tokens/s;
// skipped steps leave no loss behind), this run's clock and the time left.
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "mlm/config/run_config.h"
#include "mlm/train/checkpoint/trainer_state.h"
#include "mlm/train/loop/run_clock.h"
#include "mlm/train/loop/training_step.h"
#include "mlm/util/elapsed.h"

namespace mlm::train {

class MetricsWindow {
 public:
  /// Starts at `start`, the state the run begins from on `clock` (a resumed run's ETA counts
  /// only its own steps and tokens).
  MetricsWindow(const config::TrainConfig& train, const TrainerState& start, const RunClock& clock);

  void add(const StepStats& stats);

  /// Takes `seconds` (an evaluation, a checkpoint) off the window: tokens/s measures training
  /// alone.
  void pause(double seconds) {
    window_start_ += std::chrono::duration_cast<SteadyClock::duration>(
        std::chrono::duration<double>(seconds));
  }

  double run_seconds() const { return clock_.run_seconds(); }

  /// Seconds left from this run's pace (steps or tokens left), bounded by train.max_time_s;
  /// NaN before there is a pace.
  double eta_s(const TrainerState& state) const;

  /// The one-line progress between log rows.
  std::string progress_text(const StepStats& last, const TrainerState& state) const;

  /// The window's metrics.jsonl row and its log line; starts the next window.
  struct Row {
    nlohmann::json json;
    std::string line;
    std::optional<RtdCounts> rtd;  // objective rtd: the discriminator's counts over
    double rtd_tokens = 0;         //   rtd_tokens scored tokens
  };
  Row close(const StepStats& last, const TrainerState& state);

 private:
  std::string total_steps() const;

  const config::TrainConfig& train_;
  const RunClock& clock_;
  SteadyClock::time_point window_start_ = SteadyClock::now();
  int64_t start_step_, start_tokens_;
  double loss_sum_ = 0, correct_ = 0, masked_ = 0, tokens_ = 0;
  double nsp_loss_sum_ = 0, nsp_correct_ = 0, nsp_pairs_ = 0;
  double distill_steps_ = 0, distill_kl_ = 0, distill_cos_ = 0, distill_relation_ = 0, teacher_s_ = 0;
  double rtd_weight_ = 0, scored_tokens_ = 0;  // objective rtd: lambda, tokens of unskipped steps
  RtdCounts rtd_;
};

}  // namespace mlm::train
