#pragma once
// A phased run (the phases: list, sections/phases.h) as the trainer walks it: each phase's own
// config, resolved from the run's the same way every time, so a resume builds it bit for bit.
// An unphased run is one phase: the run's config as it is.
#include <cstdint>
#include <string>

#include "mlm/config/run_config.h"

namespace mlm::config {

/// The phases a run walks: phases.size(), or 1 for an unphased run.
int64_t phase_count(const RunConfig& run);

/// "name" of phase `index` ("" for an unphased run).
std::string phase_name(const RunConfig& run, int64_t index);

/// The config phase `index` trains with: the run's config with the phase's `set:` entries
/// applied in order (its phases list kept: the run it is a phase of). A phase after the first also draws its data order
/// and masks from a seed of its own (derived from train.seed and the index), so it does not
/// replay the first phase's documents in the first phase's order.
RunConfig phase_config(const RunConfig& run, int64_t index);

/// Optimizer steps of a global batch of `config` (train.micro_batch_size x grad_accum_steps x
/// `world_size` sequences of data.seq_len tokens) that `tokens` amount to, rounded up.
int64_t steps_for_tokens(const RunConfig& config, int world_size, int64_t tokens);

/// The steps phase `index` lasts: its steps, or its tokens at its own global batch; an
/// unphased run's: train.max_steps, or the steps train.max_tokens amounts to (0 when neither).
/// train.max_steps as a cap over a phased run is the trainer's (train/loop/run_phase.h).
int64_t phase_steps(const RunConfig& run, int64_t index, int world_size);

/// Every phase's rules, each failure one ConfigError naming `origin` and the phase's key
/// ("phases[1].set.model.hidden_size"): a name, steps or tokens (one of them), keys that exist
/// and may change between phases (not the architecture, tokenizer, run directory, device,
/// precision, seed, stop conditions or distributed settings), learning-rate keys only in a
/// phase that restarts its schedule, and each phase's resolved config valid.
void validate_phases(const RunConfig& run, const std::string& origin);

}  // namespace mlm::config
