#pragma once
// The phase a run is in (config/phases.h): its config, where it began and how long it lasts,
// and the learning-rate schedule it trains with. An unphased run is one phase that lasts
// until the run's own stop conditions.
#include <cstdint>
#include <string>

#include "mlm/config/run_config.h"
#include "mlm/train/optim/lr_schedule.h"

namespace mlm::train {

struct RunPhase {
  int64_t index = 0;
  std::string name;              // "" for an unphased run
  config::RunConfig config;      // what this phase trains with (config::phase_config)
  int64_t start_step = 0;        // the run's step and tokens seen when it began
  int64_t start_tokens = 0;
  int64_t steps = 0;             // its length in steps or in tokens (both 0: until the run's
  int64_t tokens = 0;            // train.max_steps / max_tokens)
  bool last = true;              // no phase follows it
  bool restarts_schedule = false;  // lr_schedule: restart
  bool resets_optimizer = false;   // optimizer: reset (the first phase starts fresh anyway)

  /// Whether the phase has run its steps or tokens by the run's `step` and `tokens_seen`.
  bool over(int64_t step, int64_t tokens_seen) const {
    return (steps > 0 && step - start_step >= steps) ||
           (tokens > 0 && tokens_seen - start_tokens >= tokens);
  }
};

/// Phase `index` of `run`, begun at the run's `start_step` and `start_tokens`.
RunPhase run_phase(const config::RunConfig& run, int64_t index, int64_t start_step,
                   int64_t start_tokens);

/// The steps `phase` lasts (config::phase_steps); an unphased run's are run_horizon().
int64_t phase_length(const config::RunConfig& run, const RunPhase& phase, int world_size);

/// The steps the run's learning-rate schedule spans: every phase's steps (a phase given in
/// tokens estimated at its global batch), at most train.max_steps; an unphased run:
/// train.max_steps, or the steps train.max_tokens amounts to; 0 when unknown.
int64_t run_horizon(const config::RunConfig& run, int world_size);

/// The schedule `phase` trains with: its own schedule.* and optim.learning_rate over its own
/// steps when it restarts the schedule, else the run's over run_horizon().
LrSchedule phase_learning_rate(const config::RunConfig& run, const RunPhase& phase,
                               int world_size);

}  // namespace mlm::train
