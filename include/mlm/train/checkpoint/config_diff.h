#pragma once
// What changed between the config a checkpoint was written with and the one resuming it.
// Model shape changes make the checkpoint unusable (ConfigError listing them); so do data and
// masking changes where the resume must continue the same run (--resume auto); everything
// else (max_steps, logging, eval, learning rate, ...) is allowed and logged.
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

/// True for keys that decide which tokens the model sees (data.*, masking.*, the phases).
bool is_data_key(const std::string& key);

enum class ResumeRule {
  same_model,           // --resume latest / DIR: the architecture must match
  same_model_and_data,  // --resume auto: the architecture and the data/masking settings
};

/// Logs allowed changes; throws ConfigError listing every refused change (key: before ->
/// after), naming `checkpoint_dir`.
void check_resume_compatible(const config::RunConfig& checkpoint_config,
                             const config::RunConfig& run_config,
                             const std::string& checkpoint_dir, ResumeRule rule);

}  // namespace mlm::train
