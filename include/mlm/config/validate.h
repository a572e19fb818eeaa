#pragma once
#include "mlm/config/run_config.h"

namespace mlm::config {

/// Throws ConfigError (with key()) for the first out-of-range or inconsistent value,
/// saying what would be valid.
void validate_config(const RunConfig& config);

/// The masking section's rules alone (part of validate_config), for the collator, which is
/// also built from a MaskingConfig without a whole RunConfig.
void validate_masking(const MaskingConfig& masking);

/// Throws ConfigError naming data.train_files when it is empty. Separate from
/// validate_config because only commands that read the corpus need it (--print-config,
/// mlm-export and mlm-eval on a checkpoint do not).
void require_training_data(const RunConfig& config);

}  // namespace mlm::config
