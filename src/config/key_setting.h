#pragma once
// One "section.key" set to a value given as YAML text, read with the key's own codec: what
// `--set section.key=value` and a phase's `set:` entries do.
#include <string>

#include "mlm/config/run_config.h"

namespace mlm::config::detail {

/// ConfigError prefixed with `location` (the "--set '...'" argument, or the phase's entry)
/// for an unknown key (with a "did you mean"), a value that is not YAML or of the wrong type.
void apply_key_setting(RunConfig& config, const std::string& key, const std::string& value_text,
                       const std::string& location);

}  // namespace mlm::config::detail
