#include "mlm/train/loop/run_schedule.h"

#include <csignal>

#include "mlm/util/errors.h"

namespace mlm::train {

int exit_code_for(StopReason reason) {
  switch (reason) {
    case StopReason::sigint: return kExitSigint;
    case StopReason::sigterm: return kExitSigterm;
    case StopReason::none:
    case StopReason::out_of_time: return kExitOk;
  }
  return kExitOk;
}

RunSchedule::RunSchedule(const config::RunConfig& run, const RunPhase& phase)
    : phase_(phase),
      max_steps_(run.train.max_steps),
      max_tokens_(run.train.max_tokens),
      max_time_s_(run.train.max_time_s),
      logging_(phase.config.logging.every_steps),
      eval_(phase.config.eval.every_steps),
      checkpoint_(phase.config.checkpoint.every_steps) {}

bool RunSchedule::run_finished(int64_t step, int64_t tokens_seen) const {
  return (max_steps_ > 0 && step >= max_steps_) || (max_tokens_ > 0 && tokens_seen >= max_tokens_);
}

StopReason RunSchedule::agree_to_stop(dist::Communicator& comm, double run_seconds,
                                      int signal) const {
  const bool out_of_time = max_time_s_ > 0 && run_seconds >= max_time_s_;
  const auto any = comm.sum_across_ranks({signal == SIGINT ? 1.0 : 0.0,
                                          signal == SIGTERM ? 1.0 : 0.0, out_of_time ? 1.0 : 0.0});
  if (any[1] > 0) return StopReason::sigterm;
  if (any[0] > 0) return StopReason::sigint;
  if (any[2] > 0) return StopReason::out_of_time;
  return StopReason::none;
}

}  // namespace mlm::train
