#pragma once
// When a run does what: the steps that log, evaluate and checkpoint, and what ends it or its
// phase: the phase's steps or tokens done, train.max_steps or train.max_tokens reached,
// train.max_time_s passed, SIGINT or SIGTERM.
// The clock and the signals are agreed on by every rank at the step boundary, so all ranks
// stop after the same step.
#include <cstdint>

#include "mlm/config/run_config.h"
#include "mlm/dist/communicator.h"
#include "mlm/train/loop/run_phase.h"

namespace mlm::train {

enum class StopReason { none, out_of_time, sigint, sigterm };

/// 0 for none and out_of_time (the run ended as configured), 130 for SIGINT, 143 for SIGTERM.
int exit_code_for(StopReason reason);

class RunSchedule {
 public:
  /// The schedule of `phase` of `run` (run_phase.h): the phase's logging, evaluation and
  /// checkpoint periods, the run's stop conditions.
  RunSchedule(const config::RunConfig& run, const RunPhase& phase);

  /// The phase is over: its steps or tokens are done, or the run's are.
  bool finished(int64_t step, int64_t tokens_seen) const {
    return phase_.over(step, tokens_seen) || run_finished(step, tokens_seen);
  }
  /// train.max_steps or train.max_tokens reached: no phase follows.
  bool run_finished(int64_t step, int64_t tokens_seen) const;
  bool log_at(int64_t step) const { return every(logging_, step); }
  bool evaluate_at(int64_t step) const { return every(eval_, step); }
  bool checkpoint_at(int64_t step) const { return every(checkpoint_, step); }

  /// Collective: a signal any rank received (`pending_signal`: SIGINT, SIGTERM or 0), or
  /// train.max_time_s passed on any rank.
  StopReason agree_to_stop(dist::Communicator& comm, double run_seconds, int pending_signal) const;

 private:
  static bool every(int64_t period, int64_t step) { return period > 0 && step % period == 0; }

  RunPhase phase_;
  int64_t max_steps_, max_tokens_;
  double max_time_s_;
  int64_t logging_, eval_, checkpoint_;
};

}  // namespace mlm::train
