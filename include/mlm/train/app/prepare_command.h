#pragma once
// mlm-data prepare: the command behind the main, without LibTorch headers (see commands.h).
#include "mlm/config/run_config.h"
#include "mlm/data/store_writer.h"

namespace mlm::train {

/// Prepares config.data.store (data/store_writer.h) with the run's tokenizer (trained first
/// when tokenizer.model does not exist yet, as every command does) and prints the one-line
/// JSON summary on stdout. UsageError naming data.store when it is not set. Returns 0.
int prepare_command(const config::RunConfig& config, const data::PrepareOptions& options);

}  // namespace mlm::train
