#pragma once
#include "mlm/config/run_config.h"

namespace mlm::config {

/// Throws ConfigError (with key()) for the first out-of-range or inconsistent value,
/// saying what would be valid.
void validate_config(const RunConfig& config);

}  // namespace mlm::config
