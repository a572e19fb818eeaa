#pragma once
// Loading the RunConfig: YAML file -> `--set` overrides -> typed tree -> validation.
// Every error is a ConfigError naming the file, the dotted key, the value and the YAML line.
#include <string>
#include <vector>

#include "mlm/config/run_config.h"

namespace mlm::config {

/// Loads `path`, applies `overrides` ("section.key=value", value parsed as YAML) and
/// validates the result.
RunConfig load_config(const std::string& path, const std::vector<std::string>& overrides = {});

/// The same from YAML text; `origin` names it in messages (a file name or "<string>").
RunConfig load_config_from_string(const std::string& yaml, const std::string& origin,
                                  const std::vector<std::string>& overrides = {});

/// The resolved config as YAML; load_config_from_string(dump_config(c)) == c.
std::string dump_config(const RunConfig& config);

/// Every dotted key the config accepts ("model.hidden_size", ...), in declaration order.
std::vector<std::string> known_keys();

}  // namespace mlm::config
