#pragma once
#include "mlm/config/run_config.h"
#include "mlm/config/validate_masking.h"

namespace mlm::config {

/// Throws ConfigError (with key()) for the first out-of-range or inconsistent value,
/// saying what would be valid.
void validate_config(const RunConfig& config);

/// Throws ConfigError naming data.train_files when it is empty. Separate from
/// validate_config because only commands that read the corpus need it (--print-config,
/// mlm-export and mlm-eval on a checkpoint do not).
void require_training_data(const RunConfig& config);

}  // namespace mlm::config
