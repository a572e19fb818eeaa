#include "mlm/train/loop/run_phase.h"

#include <algorithm>

#include "mlm/config/phases.h"

namespace mlm::train {
namespace {

int64_t global_batch_tokens(const config::RunConfig& config, int world_size) {
  return config.train.micro_batch_size * config.train.grad_accum_steps * world_size *
         config.data.seq_len;
}

// A phase's length in steps: its steps, or its tokens at its own global batch.
int64_t phase_steps(const config::RunConfig& run, int64_t index, int world_size) {
  const auto& phase = run.phases.at(static_cast<size_t>(index));
  if (phase.steps > 0) return phase.steps;
  return steps_for_tokens(config::phase_config(run, index), world_size, phase.tokens);
}

}  // namespace

int64_t steps_for_tokens(const config::RunConfig& config, int world_size, int64_t tokens) {
  const int64_t per_step = global_batch_tokens(config, world_size);
  return (tokens + per_step - 1) / per_step;
}

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
  const int64_t max_steps = run.train.max_steps;
  if (run.phases.empty()) {
    if (max_steps > 0) return max_steps;
    if (run.train.max_tokens > 0) return steps_for_tokens(run, world_size, run.train.max_tokens);
    return 0;
  }
  int64_t total = 0;
  for (int64_t i = 0; i < config::phase_count(run); ++i) total += phase_steps(run, i, world_size);
  return max_steps > 0 ? std::min(total, max_steps) : total;
}

int64_t phase_length(const config::RunConfig& run, const RunPhase& phase, int world_size) {
  return run.phases.empty() ? run_horizon(run, world_size) : phase_steps(run, phase.index, world_size);
}

LrSchedule phase_learning_rate(const config::RunConfig& run, const RunPhase& phase,
                               int world_size) {
  if (!phase.restarts_schedule) {
    return LrSchedule(run.schedule, run.optim.learning_rate, run_horizon(run, world_size));
  }
  return LrSchedule(phase.config.schedule, phase.config.optim.learning_rate,
                    phase_steps(run, phase.index, world_size), phase.start_step);
}

}  // namespace mlm::train
