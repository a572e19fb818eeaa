#pragma once
// What changed between the config a checkpoint was written with and the one resuming it.
// Model shape and tokenizer changes make the checkpoint unusable (ConfigError listing them);
// everything else (max_steps, logging, eval, learning rate, ...) is allowed and logged.
#include <string>
#include <vector>

#include "mlm/config/run_config.h"

namespace mlm::train {

struct ConfigChange {
  std::string key;  // dotted, e.g. "model.hidden_size"
  std::string before;
  std::string after;
};

/// Every leaf that differs, in declaration order.
std::vector<ConfigChange> diff_configs(const config::RunConfig& before,
                                       const config::RunConfig& after);

/// True for keys that change the parameters' shapes or meaning (the model architecture),
/// which a checkpoint cannot be resumed across.
bool is_architecture_key(const std::string& key);

/// Logs allowed changes; throws ConfigError listing every architecture change, naming
/// `checkpoint_dir`.
void check_resume_compatible(const config::RunConfig& checkpoint_config,
                             const config::RunConfig& run_config,
                             const std::string& checkpoint_dir);

}  // namespace mlm::train
