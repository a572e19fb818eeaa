#include "mlm/train/loop/run_phase.h"

#include <algorithm>

#include "mlm/config/phases.h"

namespace mlm::train {
RunPhase run_phase(const config::RunConfig& run, int64_t index, int64_t start_step,
                   int64_t start_tokens) {
  RunPhase phase;
  phase.index = index;
  phase.name = config::phase_name(run, index);
  phase.config = config::phase_config(run, index);
  phase.start_step = start_step;
  phase.start_tokens = start_tokens;
  phase.last = index + 1 >= config::phase_count(run);
  if (!run.phases.empty()) {
    const auto& settings = run.phases.at(static_cast<size_t>(index));
    phase.steps = settings.steps;
    phase.tokens = settings.tokens;
    phase.restarts_schedule = settings.lr_schedule == config::PhaseSchedule::restart;
    phase.resets_optimizer = settings.optimizer == config::PhaseOptimizer::reset;
  }
  return phase;
}

int64_t run_horizon(const config::RunConfig& run, int world_size) {
  if (run.phases.empty()) return config::phase_steps(run, 0, world_size);
  int64_t total = 0;
  for (int64_t i = 0; i < config::phase_count(run); ++i) total += config::phase_steps(run, i, world_size);
  return run.train.max_steps > 0 ? std::min(total, run.train.max_steps) : total;
}

int64_t phase_length(const config::RunConfig& run, const RunPhase& phase, int world_size) {
  return run.phases.empty() ? run_horizon(run, world_size) : config::phase_steps(run, phase.index, world_size);
}

LrSchedule phase_learning_rate(const config::RunConfig& run, const RunPhase& phase,
                               int world_size) {
  if (!phase.restarts_schedule) {
    return LrSchedule(run.schedule, run.optim.learning_rate, run_horizon(run, world_size));
  }
  return LrSchedule(phase.config.schedule, phase.config.optim.learning_rate,
                    config::phase_steps(run, phase.index, world_size), phase.start_step);
}

}  // namespace mlm::train
