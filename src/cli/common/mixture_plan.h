#pragma once
// `mlm-data --plan`: a mixture's schedule as the trainer will draw it, phase by phase.
#include "mlm/config/run_config.h"

namespace mlm::cli {

/// For each phase of `config` (one for an unphased run): its positions (steps x the global
/// batch of `world_size` ranks; a phase of tokens at its full batch), and for each source its
/// size in tokens (mixture_weights.h), weight, target share w_s / sum w and the share realised
/// by running the mixture's draw (mixture_draw) over those positions under the phase's seed.
/// Text on stdout, or one JSON object per phase with `json`. UsageError when config.data has
/// no sources. Returns 0.
int plan_command(const config::RunConfig& config, int world_size, bool json);

}  // namespace mlm::cli
