#pragma once
// The masking section's rules alone (part of validate_config, validate.h): the collator is
// also built from a bare MaskingConfig, and checks it by the same rules.
#include "mlm/config/sections/masking.h"

namespace mlm::config {

/// Throws ConfigError naming the masking.* key of the first out-of-range or inconsistent value.
void validate_masking(const MaskingConfig& masking);

}  // namespace mlm::config
